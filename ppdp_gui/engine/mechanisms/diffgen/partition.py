"""One quasi-identifier as DiffGen sees it: integer-coded records, class counts, and its current cut.

DiffGen recodes each attribute globally (one cut per attribute), so the score of a candidate v of attribute A
depends only on the records whose A-value lies under v and their classes: the 1-D marginal A × class. Each
attribute therefore keeps that marginal once (categorical: counts per taxonomy node, summed up the tree;
numeric: cumulative class counts over the occupied cells of its public grid), and every score of every later
candidate is read from it in O(children) or O(log n) time without touching a record. This is the paper's
partition-tree bookkeeping (Section 4.3: scores from counts collected per candidate, only D_v matters) taken one
step further: records are visited once at the start and once at the end, when each is mapped to its leaf
partition.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ppdp_gui.engine.errors import TaxonomyError
from ppdp_gui.engine.mechanisms.diffgen.grid import Grid
from ppdp_gui.engine.taxonomy.tree import Taxonomy



@dataclass
class CategoricalAttr:
    """A categorical QI: leaf node id per record, class counts per taxonomy node, cut = taxonomy nodes."""

    column: str
    tax: Taxonomy
    leaf: np.ndarray  # leaf node id of every record
    counts: np.ndarray  # (nodes, K): class counts of the records under each node
    cut: list[int] = field(default_factory=lambda: [0])

    kind = "categorical"

    @classmethod
    def build(cls, column: str, tax: Taxonomy, values: pd.Series, y: np.ndarray, n_classes: int):
        leaf = tax.node_codes(values)
        counts = np.bincount(leaf * n_classes + y, minlength=len(tax) * n_classes).reshape(len(tax), n_classes)
        counts = counts.astype(np.int64)
        for node in tax.leaves():  # only leaves hold records; add each leaf's counts to all its ancestors
            for above in tax.ancestors(node)[1:]:
                counts[above] += counts[node]
        return cls(column, tax, leaf, counts)

    def children_counts(self, node: int) -> np.ndarray:
        return self.counts[self.tax.children(node)]

    def can_specialise(self, node: int) -> bool:
        return not self.tax.is_leaf(node)

    def specialise(self, node: int) -> list[int]:
        """Replace `node` in the cut by its children; returns the children (new candidates if not leaves)."""
        kids = self.tax.children(node)
        self.cut.remove(node)
        self.cut.extend(kids)
        return kids

    def fan_out(self, node: int) -> int:
        return len(self.tax.children(node))

    # -- the final cut ------------------------------------------------------------------------------------------
    def ordered_cut(self) -> list[int]:
        order = {leaf: i for i, leaf in enumerate(self.tax.leaves())}
        return sorted(self.cut, key=lambda n: order[self.tax.leaves(n)[0]])

    def labels(self) -> list[str]:
        return [self.tax.label(n) for n in self.ordered_cut()]

    def _lookup(self) -> np.ndarray:
        lookup = np.full(len(self.tax), -1, dtype=np.int64)
        for i, node in enumerate(self.ordered_cut()):
            lookup[self.tax.leaves(node)] = i
        return lookup

    def codes(self, values: pd.Series | None = None) -> np.ndarray:
        """Cut position of every record (of the training data, or of `values`)."""
        leaf = self.leaf if values is None else self.tax.node_codes(values)
        return self._lookup()[leaf]

    def describe_cut(self) -> dict:
        return {"kind": "categorical", "cut": self.labels()}


@dataclass
class NumericAttr:
    """A numeric QI on its public grid (see grid.py): the grid cell of every record, the sorted occupied cells
    with cumulative class counts, and the cut as sorted grid boundaries (integers g; interval i holds the cells
    [split_{i-1}, split_i), the last one reaching hi).

    Intervals are held as half-open ranges of cells [a, b), the root being [0, n_cells); split boundary g sends
    a record left iff its cell is < g. Only public things (the grid, integer boundaries) ever leave this class:
    the released values are the exact grid values lo + g·step."""

    column: str
    grid: Grid
    cell: np.ndarray  # grid cell of every record
    occupied: np.ndarray  # sorted distinct cells holding records
    cum: np.ndarray  # (len(occupied) + 1, K): class counts of the records in the occupied cells before position i
    splits: list[int] = field(default_factory=list)

    kind = "numeric"

    @classmethod
    def build(cls, column: str, values: np.ndarray, lo: float, hi: float, y: np.ndarray, n_classes: int,
              integer: bool = False, step=None):
        """`step`: the public grid step; None chooses it from the bounds (1 on an integer domain, else
        `grid_step(lo, hi)`)."""
        grid = Grid.make(lo, hi, step, integer)
        cell = grid.cells(values)
        occupied, inverse = np.unique(cell, return_inverse=True)
        per_cell = np.bincount(inverse.ravel() * n_classes + y, minlength=len(occupied) * n_classes)
        cum = np.zeros((len(occupied) + 1, n_classes), dtype=np.int64)
        np.cumsum(per_cell.reshape(len(occupied), n_classes), axis=0, out=cum[1:])
        return cls(column, grid, cell, occupied, cum)

    @property
    def lo(self) -> float:
        return self.grid.lo

    @property
    def hi(self) -> float:
        return self.grid.hi

    @property
    def integer(self) -> bool:
        return self.grid.integer

    @property
    def n_cells(self) -> int:
        return self.grid.n_cells

    def _span(self, a: int, b: int) -> tuple[int, int]:
        """Positions [i0, i1) of the occupied cells inside [a, b)."""
        return int(np.searchsorted(self.occupied, a)), int(np.searchsorted(self.occupied, b))

    def split_options(self, a: int, b: int) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """For the cells [a, b): the split boundaries are g = a + 1, …, b − 1. With the occupied cells
        c_1 < … < c_k of [a, b), every g in (E_j, E_{j+1}] of E = (a, c_1, …, c_k, b − 1) gives the same
        children, so the boundaries fall into k + 1 sub-intervals. Returns E, the number of boundaries in each
        sub-interval (int64, ≥ 0, summing to b − a − 1) and the children's class counts (k+1, 2, K) of each.
        None when [a, b) has no boundary (a single cell)."""
        if b - a < 2:
            return None
        i0, i1 = self._span(a, b)
        edges = np.concatenate(([a], self.occupied[i0:i1], [b - 1])).astype(np.int64)
        left = self.cum[i0:i1 + 1] - self.cum[i0]
        right = (self.cum[i1] - self.cum[i0]) - left
        return edges, np.diff(edges), np.stack([left, right], axis=-2)

    def specialise(self, g: int) -> None:
        self.splits.append(int(g))
        self.splits.sort()

    def split_values(self) -> list[int | float]:
        """The released split points: lo + g·step, exact, as ints when whole."""
        return [self.grid.number(g) for g in self.splits]

    def labels(self) -> list[str]:
        return self.grid.labels(self.splits)

    def codes(self, values=None) -> np.ndarray:
        """Cut position of every record (of the training data, or of raw `values`, through the same cells)."""
        cell = self.cell if values is None else self.grid.cells(values)
        return np.searchsorted(np.asarray(self.splits, dtype=np.int64), cell, side="right").astype(np.int64)

    def describe_cut(self) -> dict:
        """The public description: split i is grid.low + grid_indices[i]·grid.step exactly."""
        return {"kind": "numeric", "integer": self.integer, "bounds": [self.lo, self.hi],
                "grid": self.grid.describe(), "splits": self.split_values(), "grid indices": list(self.splits),
                "cut": self.labels()}


def check_values_in_taxonomy(tax: Taxonomy, values: pd.Series) -> list[str]:
    """Distinct values of a column missing from its taxonomy (checked on the few distinct values)."""
    distinct = pd.unique(values.astype(str))
    return [v for v in distinct if not tax.has_value(v)]


def numeric_values(series: pd.Series) -> np.ndarray:
    x = pd.to_numeric(series, errors="coerce").to_numpy(dtype=np.float64)
    if np.isnan(x).any():
        raise TaxonomyError(f"numeric column {series.name!r} has missing or non-numeric values")
    return x
