"""The cells of each column, from public domains only (the Laplace histogram's rules, data/domains.py).

A numeric column is cut into equal-width bins over its public bounds (whole numbers with a span no larger than
the number of bins get one bin per value, as education-num does); a categorical column's cells are its public
list of values or its taxonomy's leaves. Nothing here reads a bound or a category from the records: a column
without a public domain is refused, naming the column, and the publish path offers to set it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ppdp_gui.engine.data.domains import category_set, numeric_bounds
from ppdp_gui.engine.data.schema import Dataset
from ppdp_gui.engine.errors import ParameterError
from ppdp_gui.engine.mechanisms.laplace import Axis, numeric_axis


@dataclass(frozen=True)
class Column:
    """One column's cells and how to turn a cell back into a value of the synthetic table."""

    axis: Axis
    numeric: bool
    integer: bool = False
    low: float = 0.0
    high: float = 0.0

    @property
    def name(self) -> str:
        return self.axis.column

    @property
    def size(self) -> int:
        return self.axis.size

    def codes(self, values: pd.Series) -> np.ndarray:
        if self.numeric:
            x = pd.to_numeric(values, errors="coerce")
            if x.isna().any():
                raise ParameterError(f"numeric column {self.name!r} has missing values: drop them (missing-value "
                                     "policy) or make the column categorical")
            return self.axis.codes(x)
        return self.axis.codes(values)

    def values(self, codes: np.ndarray, rng) -> pd.Series | pd.Categorical:
        """Values for cell codes: the category, or a number drawn uniformly inside the bin (post-processing)."""
        if not self.numeric:
            return pd.Categorical.from_codes(codes, categories=list(self.axis.labels))
        edges = self.axis.edges
        lo, width = edges[codes], edges[1] - edges[0]
        if self.integer:
            start = np.ceil(lo).astype(np.int64)
            stop = np.minimum(np.ceil(lo + width).astype(np.int64) - 1, int(self.high))
            span = np.maximum(stop - start + 1, 1)
            return start + (rng.uniform(0.0, 1.0, size=len(codes)) * span).astype(np.int64)
        return np.minimum(lo + rng.uniform(0.0, 1.0, size=len(codes)) * width, self.high)


def _refuse(column: str, message: str) -> ParameterError:
    exc = ParameterError(message)
    exc.column = column
    return exc


def build_columns(data: Dataset, names, bins: int) -> list[Column]:
    """Every chosen column's cells from its public domain; a ParameterError naming the column otherwise."""
    out = []
    for col in names:
        spec = data.spec(col)
        if spec.kind == "numeric":
            found = numeric_bounds(spec)
            if found is None:
                raise _refuse(col, f"column {col!r} has no public bounds: set its domain (e.g. 0 to 120 for an "
                                   "age) in the Columns step")
            lo, hi, integer = float(found.low), float(found.high), bool(found.integer)
            if integer and hi - lo + 1 <= bins:
                axis = numeric_axis(col, lo, hi, width=1, integer=True, source=found.source)
            else:
                axis = numeric_axis(col, lo, hi, bins=bins, integer=integer, source=found.source)
            out.append(Column(axis, True, integer, lo, hi))
        else:
            found = category_set(spec)
            if found is None:
                raise _refuse(col, f"column {col!r} has no public list of values: set its domain (or give it a "
                                   "taxonomy from a public code list) in the Columns step")
            axis = Axis(col, tuple(found.values), None, found.source)
            unknown = set(data.frame[col].astype(str).unique()) - set(axis.labels)
            if unknown:
                raise _refuse(col, f"column {col!r} has {len(unknown)} value(s) outside its domain; add them to "
                                   "the domain (or to its taxonomy)")
            out.append(Column(axis, False))
    return out
