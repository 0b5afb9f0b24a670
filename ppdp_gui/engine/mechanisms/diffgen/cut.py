"""The released cut as a small, self-contained transform: generalises any frame the way the release did.

It keeps only public things (the grid, its split boundaries, taxonomy and cut labels), not the training records,
so a Release can hold it for as long as the app shows results. The paper applies the training cut to the test set
before measuring classification accuracy (Section 5); `Release.apply_to` is this object.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ppdp_gui.engine.errors import DataError, TaxonomyError
from ppdp_gui.engine.mechanisms.diffgen.grid import Grid
from ppdp_gui.engine.mechanisms.diffgen.partition import CategoricalAttr, NumericAttr, numeric_values
from ppdp_gui.engine.taxonomy.tree import Taxonomy


@dataclass(frozen=True)
class ColumnCut:
    column: str
    labels: tuple[str, ...]
    splits: np.ndarray | None = None  # numeric: the split values lo + g·step (doubles nearest the exact values)
    grid: Grid | None = None  # numeric
    boundaries: np.ndarray | None = None  # numeric: the split grid boundaries g (int64)
    taxonomy: Taxonomy | None = None  # categorical
    lookup: np.ndarray | None = None  # categorical: taxonomy node -> cut position

    @classmethod
    def of(cls, attr) -> "ColumnCut":
        if isinstance(attr, NumericAttr):
            return cls(attr.column, tuple(attr.labels()), np.array(attr.split_values(), dtype=np.float64),
                       attr.grid, np.asarray(attr.splits, dtype=np.int64))
        assert isinstance(attr, CategoricalAttr)
        return cls(attr.column, tuple(attr.labels()), taxonomy=attr.tax, lookup=attr._lookup())

    def codes(self, values: pd.Series) -> np.ndarray:
        if self.grid is not None:  # through the grid cells, exactly as in training (NumericAttr.codes)
            cells = self.grid.cells(numeric_values(values))
            return np.searchsorted(self.boundaries, cells, side="right").astype(np.int64)
        return self.lookup[self.taxonomy.node_codes(values)]

    def generalise(self, values: pd.Series) -> pd.Categorical:
        return pd.Categorical.from_codes(self.codes(values), categories=list(self.labels))


@dataclass(frozen=True)
class CutTransform:
    """Callable frame -> frame: the quasi-identifiers replaced by their cut labels, the class column kept."""

    columns: tuple[ColumnCut, ...]
    class_column: str

    def __call__(self, frame: pd.DataFrame) -> pd.DataFrame:
        missing = [c.column for c in self.columns if c.column not in frame.columns]
        if missing:
            raise DataError(f"the table to generalise lacks the column(s) {', '.join(missing)}")
        out = {}
        for c in self.columns:
            try:
                out[c.column] = c.generalise(frame[c.column])
            except TaxonomyError as exc:
                raise DataError(str(exc), column=c.column) from None
        if self.class_column in frame.columns:
            out[self.class_column] = frame[self.class_column].to_numpy()
        return pd.DataFrame(out, index=frame.index)
