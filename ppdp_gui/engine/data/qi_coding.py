"""Quasi-identifiers as numbers for partitioning, and groups of rows back to published labels.

Every QI becomes a numeric code whose order keeps generalisation groups contiguous:
- a column with a taxonomy (categorical or numeric): the position of its leaf in depth-first order, so every
  subtree is a run of positions and the smallest node covering a group is the lowest common ancestor of its
  leftmost and rightmost leaf;
- a numeric column without a taxonomy: the index of its cell on a public grid of width w (multiples of w from 0).
  Published ranges are unions of whole cells, so a range never shows a group's raw minimum or maximum;
- a categorical column without a taxonomy: a flat taxonomy (a group shows its value, or "*" when mixed).
- a numeric column without a taxonomy but with blank cells (kept by default, `blank_cells_ok`): a tree of intervals
  of the same width, each level joining two, with "(missing)" on its own branch under the root, so the blanks
  form groups of their own (or join others as '*') and the column's numbers are still published as ranges.
- a numeric column with a taxonomy and blank cells: its taxonomy with "(missing)" on its own branch under the
  root when it has none (`taxonomy_with_blanks`), each blank read as that value (`taxonomy_values`) — what TDS
  and global recoding code too (kanon/lattice.py).

Bounds for information loss are kept in one unit per QI: leaf positions for taxonomies (so NCP is
(leaves under node - 1)/(leaves - 1), ARX's loss metric) and the column's own unit for grids.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ppdp_gui.engine.data.schema import Dataset
from ppdp_gui.engine.taxonomy.tree import Taxonomy


def nice_width(span: float, parts: int = 10) -> float:
    """Smallest 1, 2 or 5 x 10^m at least span/parts: the automatic public grid (decades for ages)."""
    if not math.isfinite(span) or span <= 0:
        return 1.0
    raw = span / parts
    exp = math.floor(math.log10(raw))
    for m in (1, 2, 5, 10):
        w = m * 10.0 ** exp
        if w >= raw * (1 - 1e-12):
            return float(w)
    return float(10.0 ** (exp + 1))  # pragma: no cover


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


@dataclass
class TaxonomyIndex:
    """Depth-first leaf positions of a taxonomy and, per node, the range of leaf positions under it."""

    tax: Taxonomy
    leaf_pos: np.ndarray = field(init=False)  # node id -> position (leaves only)
    node_lo: np.ndarray = field(init=False)
    node_hi: np.ndarray = field(init=False)
    anc: np.ndarray = field(init=False)  # leaf position x level -> ancestor node id (padded with root)
    node_depth: np.ndarray = field(init=False)
    labels: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        tax = self.tax
        leaves = tax.leaves()
        n_nodes = len(tax)
        self.leaf_pos = np.full(n_nodes, -1, dtype=np.int64)
        self.leaf_pos[leaves] = np.arange(len(leaves))
        self.node_lo = np.full(n_nodes, len(leaves), dtype=np.int64)
        self.node_hi = np.full(n_nodes, -1, dtype=np.int64)
        chains = [tax.ancestors(leaf) for leaf in leaves]
        height = max(len(c) for c in chains)
        self.anc = np.zeros((len(leaves), height), dtype=np.int64)
        self.node_depth = np.zeros(n_nodes, dtype=np.int64)
        for pos, chain in enumerate(chains):
            self.node_depth[chain] = np.arange(len(chain) - 1, -1, -1)
            self.anc[pos, :len(chain)] = chain
            self.anc[pos, len(chain):] = 0
            for node in chain:
                self.node_lo[node] = min(self.node_lo[node], pos)
                self.node_hi[node] = max(self.node_hi[node], pos)
        self.labels = np.array([tax.label(i) for i in range(n_nodes)], dtype=object)

    @property
    def n_leaves(self) -> int:
        return self.anc.shape[0]

    def positions(self, values: pd.Series) -> np.ndarray:
        return self.leaf_pos[self.tax.node_codes(values)]

    def covering_node(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """Smallest node whose leaves include positions lo..hi (vectorised over groups)."""
        nodes = self.anc[lo]  # groups x levels, leaf first
        covers = self.node_hi[nodes] >= hi[:, None]
        first = covers.argmax(axis=1)
        return nodes[np.arange(len(lo)), first]

    def cover(self, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Depth and loss ((leaves under it - 1) / (leaves - 1)) of the covering node: `mondrian_core.Hierarchy`."""
        node = self.covering_node(np.asarray(lo).astype(np.int64), np.asarray(hi).astype(np.int64))
        loss = (self.node_hi[node] - self.node_lo[node]) / max(1, self.n_leaves - 1)
        return self.node_depth[node], loss


@dataclass
class QICode:
    """One quasi-identifier coded for partitioning, with what is needed to publish a group of its values."""

    name: str
    codes: np.ndarray  # float per row
    index: TaxonomyIndex | None = None
    width: float | None = None  # grid width when there is no taxonomy
    integer: bool = False
    domain: tuple[float, float] = (0.0, 0.0)  # bounds of the whole column, in loss units
    flat: bool = False  # a text column without a taxonomy: each group shows its value or '*'
    blanks: bool = False  # a numeric column with blank cells, coded on intervals of `width` with a "(missing)" leaf
    cell_lows: np.ndarray | None = None  # with `blanks`: the lower bound of each cell leaf, in leaf order

    @property
    def hierarchy(self) -> TaxonomyIndex | None:
        """What `mondrian_core.partition` follows when cutting this column (None: plain numbers)."""
        return self.index

    @property
    def how(self) -> str:
        if self.blanks:
            return f"intervals of width {_fmt(self.width)}, blanks as “(missing)”"
        if self.index is not None:
            return "no taxonomy: a value or '*'" if self.flat else "taxonomy"
        return f"grid of width {_fmt(self.width)}"

    def publish(self, cmin: np.ndarray, cmax: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Labels and loss bounds (lo, hi) of groups whose codes span cmin..cmax."""
        if self.index is not None:
            lo = cmin.astype(np.int64)
            hi = cmax.astype(np.int64)
            node = self.index.covering_node(lo, hi)
            return self.index.labels[node], self.index.node_lo[node].astype(float), \
                self.index.node_hi[node].astype(float)
        pairs, inv = np.unique(np.column_stack([cmin, cmax]), axis=0, return_inverse=True)
        inv = inv.reshape(-1)
        a = pairs[:, 0] * self.width
        b = (pairs[:, 1] + 1) * self.width
        if self.integer:
            hi = b - 1
            text = [_fmt(x) if x == y else f"{_fmt(x)}-{_fmt(y)}" for x, y in zip(a, hi)]
        else:
            hi = b
            text = [f"[{_fmt(x)}, {_fmt(y)})" for x, y in zip(a, b)]
        return np.array(text, dtype=object)[inv], a[inv].astype(float), hi[inv].astype(float)

    def raw_bounds(self, values: pd.Series) -> np.ndarray:
        """Unseen original values in loss units (for classifiers tested on original rows)."""
        if self.blanks:  # leaves are cells of `width` (their lower bounds in order), then "(missing)"
            numbers = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
            where = np.searchsorted(self.cell_lows, np.floor(numbers / self.width) * self.width, side="right") - 1
            out = np.clip(where, 0, max(len(self.cell_lows) - 1, 0)).astype(float)
            return np.where(np.isnan(numbers), float(self.index.n_leaves - 1), out)
        if self.index is not None:
            from ppdp_gui.engine.data.schema import MISSING_LABEL
            values = values.astype(str).where(values.notna(), MISSING_LABEL)  # a blank number: "(missing)"
            known = values.isin(set(self.index.tax.leaf_values()))
            out = np.full(len(values), np.nan)
            if known.any():
                out[known.to_numpy()] = self.index.positions(values[known])
            return out
        return pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)


def code_quasi_identifier(data: Dataset, name: str, grid_width: float = 0.0) -> QICode:
    """Code one QI column (see the module docstring); grid_width 0 means automatic (nice_width of the range)."""
    spec = data.spec(name)
    series = data.frame[name]
    tax = spec.taxonomy
    if tax is None and spec.kind != "numeric":
        tax = Taxonomy.flat(name, pd.unique(series.astype(str)))
    if tax is not None:
        index = TaxonomyIndex(taxonomy_with_blanks(data, name, tax))
        pos = index.positions(taxonomy_values(data, name)).astype(float)
        return QICode(name, pos, index=index, domain=(0.0, float(index.n_leaves - 1)),
                      flat=spec.taxonomy is None)
    values = pd.to_numeric(series).to_numpy(dtype=float)
    blank = np.isnan(values)
    present = values[~blank] if blank.any() else values
    vmin, vmax = (float(np.min(present)), float(np.max(present))) if len(present) else (0.0, 0.0)
    width = float(grid_width) if grid_width and grid_width > 0 else nice_width(vmax - vmin)
    if blank.any():
        return _with_blanks(name, series, width)
    integer = bool(np.all(np.mod(values, 1) == 0)) and float(width).is_integer()
    cells = np.floor(values / width)
    return QICode(name, cells, width=width, integer=integer, domain=(vmin, vmax))


def blank_cells_ok(data: Dataset, name: str) -> bool:
    """A numeric quasi-identifier whose blank cells `code_quasi_identifier` (and kanon/lattice.py) can code as
    "(missing)", a value of its own under the root (beside intervals, or beside its taxonomy's branches): an
    in-memory table's column. A large table's (mondrian_sql, globalrec_sql) is not: its cells are SQL values,
    and its engines refuse the blanks, naming the fix."""
    return data.spec(name).kind == "numeric" and getattr(data, "table", None) is None


def blank_numbers(data: Dataset, name: str) -> bool:
    """An in-memory number column with blank cells (rows are kept by default)."""
    return blank_cells_ok(data, name) and bool(data.frame[name].isna().any())


def taxonomy_with_blanks(data: Dataset, name: str, tax: Taxonomy) -> Taxonomy:
    """`tax`, with "(missing)" on its own branch directly under the root when the number column has blank cells
    and the tree has no place for them (a tree of Numeric intervals built from the numbers, an ARX file). The
    blanks then form groups of their own, of k persons like any value, or go up to the root with the rest."""
    from ppdp_gui.engine.data.schema import MISSING_LABEL
    if not blank_numbers(data, name) or tax.has_value(MISSING_LABEL):
        return tax
    from ppdp_gui.engine.taxonomy.from_spec import with_missing_leaf
    return with_missing_leaf(tax)


def taxonomy_values(data: Dataset, name: str) -> pd.Series:
    """The column's values as its taxonomy reads them: a blank number cell as "(missing)", the other numbers as
    the tree's leaves spell them (their text)."""
    series = data.frame[name]
    if not blank_numbers(data, name):
        return series
    from ppdp_gui.engine.data.schema import MISSING_LABEL
    return series.astype(str).where(series.notna(), MISSING_LABEL)


def _with_blanks(name: str, series: pd.Series, width: float) -> QICode:
    from ppdp_gui.engine.data.coltypes import typed_to_text
    from ppdp_gui.engine.data.schema import MISSING_LABEL
    from ppdp_gui.engine.taxonomy.builders import numeric_intervals
    from ppdp_gui.engine.taxonomy.from_spec import with_missing_leaf
    text = typed_to_text(series)
    blank = series.isna().to_numpy()
    numbers = series.to_numpy(dtype=float)
    lows = np.unique(np.floor(numbers[~blank] / width) * width)  # the cells the intervals' tree has, in order
    if blank.all():
        tax, cells = Taxonomy.flat(name, [MISSING_LABEL]), pd.Series(MISSING_LABEL, index=text.index)
    else:
        # the intervals' tree without its leaves: a group shows a cell of width w at the least, never one raw
        # value (as the grid without blanks)
        values = numeric_intervals(name, text[~blank], width=width)
        cell = {v: values.label(values.parent(values.leaf_node(v))) for v in values.leaf_values()}
        paths = list(dict.fromkeys(tuple(p[1:]) for p in values.to_paths()))
        tax = with_missing_leaf(Taxonomy.from_paths(name, [list(p) for p in paths]))
        cells = text.map(cell).where(~blank, MISSING_LABEL)
    index = TaxonomyIndex(tax)
    pos = index.positions(cells).astype(float)
    return QICode(name, pos, index=index, width=width, domain=(0.0, float(index.n_leaves - 1)), blanks=True,
                  cell_lows=lows)


def group_bounds(labels: np.ndarray, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per group (labels 0..C-1): min and max of `codes` (n x d), plus each group's size."""
    order = np.argsort(labels, kind="stable")
    sizes = np.bincount(labels)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    sorted_codes = codes[order]
    return np.minimum.reduceat(sorted_codes, starts, axis=0), np.maximum.reduceat(sorted_codes, starts, axis=0), sizes


def publish_groups(qis: list[QICode], labels: np.ndarray) -> tuple[dict[str, pd.Categorical], dict, np.ndarray]:
    """Published column per QI (categorical, one label per group) and {qi: {label: [lo, hi]}} for metrics."""
    codes = np.column_stack([q.codes for q in qis])
    cmin, cmax, sizes = group_bounds(labels, codes)
    columns, intervals = {}, {}
    for j, q in enumerate(qis):
        glabels, lo, hi = q.publish(cmin[:, j], cmax[:, j])
        gcodes, uniques = pd.factorize(glabels)
        columns[q.name] = pd.Categorical.from_codes(gcodes[labels], categories=pd.Index(uniques, dtype=object))
        first = np.unique(gcodes, return_index=True)[1]
        intervals[q.name] = {str(uniques[c]): [float(lo[i]), float(hi[i])] for c, i in zip(gcodes[first], first)}
    return columns, intervals, sizes
