"""A table as itemsets: one item per attribute=value, as the original KRIMP's data conversion numbers them.

KRIMP works on transactions (sets of items). A categorical table becomes one by giving every (column, value) pair
an item; a row is the set of its items, exactly one per column. The numbering decides ties everywhere later (the
order of items, of candidates and of the code table), so it follows the conversion the original C++ release was
run with (../shared/reference/README.md, section 1): items column by column in table order, and within a column
the values in ascending order — numeric order when every value of the column parses as a number, else string
order. LUCS-KDD `.num` transaction files keep their own item numbers; their attributes (needed only by the
generator, which fills one value per attribute) are recovered as runs of consecutive item numbers that never occur
together in a row.

Numeric columns with many values are cut into equal-frequency bins (or generalised to a level of their taxonomy),
and each bin is one item; `ItemTable.decode` turns generated items back into the original columns.
"""

from __future__ import annotations

import gzip
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

MISSING = "(missing)"  # the item of an empty cell: KRIMP treats it as a value like any other


@dataclass(frozen=True)
class ColumnCoding:
    """How one column became items: the label of each of its items and, for a binned number, the bin edges."""

    name: str
    labels: tuple[str, ...]
    how: str = "values"  # "values" | "equal-frequency bins" | "taxonomy level N"
    edges: tuple[float, ...] | None = None  # numeric bins: len(labels) + 1 edges (missing item, if any, last)
    numeric: bool = False  # the column was numeric in the source


@dataclass(frozen=True)
class ItemTable:
    """Rows as item codes, one per attribute (-1: no item, only in transaction files with gaps).

    Items are numbered 0..m-1 in the conversion order; `item_numbers` keeps the numbers the original tool saw
    (1-based for converted tables, the file's own for `.num` files), which break ties between equal supports."""

    codes: np.ndarray  # (n, a) int64
    columns: tuple[ColumnCoding, ...]
    item_attr: np.ndarray  # (m,) attribute of each item
    item_numbers: np.ndarray  # (m,) original item numbers
    first_item: np.ndarray = field(default=None)  # (a,) first item of each attribute

    @property
    def n_rows(self) -> int:
        return int(self.codes.shape[0])

    @property
    def n_items(self) -> int:
        return int(self.item_attr.size)

    @property
    def n_attributes(self) -> int:
        return len(self.columns)

    def item_label(self, item: int) -> str:
        a = int(self.item_attr[item])
        return f"{self.columns[a].name}={self.columns[a].labels[item - int(self.first_item[a])]}"

    def transactions(self) -> tuple[np.ndarray, np.ndarray]:
        """CSR form (indptr, items) of the rows, items ascending within a row."""
        present = self.codes >= 0
        lengths = present.sum(axis=1)
        indptr = np.zeros(self.n_rows + 1, dtype=np.int64)
        np.cumsum(lengths, out=indptr[1:])
        items = self.codes[present]  # row-major: ascending, since items are numbered attribute by attribute
        return indptr, items.astype(np.int64)

    def with_codes(self, codes: np.ndarray) -> "ItemTable":
        return ItemTable(np.asarray(codes, dtype=np.int64), self.columns, self.item_attr, self.item_numbers,
                         self.first_item)

    def decode(self, codes: np.ndarray | None = None, *, numeric_output: str = "interval",
               rng=None) -> pd.DataFrame:
        """The rows (these codes, or the table's own) in the original columns: each item's value, a bin's interval
        label or (numeric_output="uniform value") a number drawn uniformly inside the bin."""
        codes = self.codes if codes is None else np.asarray(codes)
        out = {}
        for a, col in enumerate(self.columns):
            local = codes[:, a] - int(self.first_item[a])
            labels = np.asarray(col.labels, dtype=object)
            values = np.where(local >= 0, labels[np.clip(local, 0, len(labels) - 1)], None)
            if col.edges is not None and numeric_output == "uniform value" and rng is not None:
                edges = np.asarray(col.edges, dtype=float)
                nb = len(edges) - 1
                inside = (local >= 0) & (local < nb)
                lo, hi = edges[np.clip(local, 0, nb - 1)], edges[np.clip(local + 1, 1, nb)]
                draw = np.asarray(rng.uniform(0.0, 1.0, size=len(local)), dtype=float)
                number = lo + draw * (hi - lo)
                values = pd.Series(np.where(inside, number, np.nan), dtype=float)
            elif col.numeric and col.how == "values":
                values = pd.to_numeric(pd.Series(values).replace({MISSING: None}), errors="coerce")
            else:
                values = pd.Series(values, dtype=object).replace({MISSING: None})
            out[col.name] = pd.Series(values).reset_index(drop=True)
        return pd.DataFrame(out)


# ---- building -------------------------------------------------------------------------------------------------
def _sorted_values(values: Sequence[str]) -> list[str]:
    """Ascending: numerically when every value parses as a number, else as strings (the conversion's rule)."""
    vals = list(values)
    try:
        nums = [float(v) for v in vals]
        if all(math.isfinite(x) for x in nums):
            return [v for _, v in sorted(zip(nums, vals))]
    except ValueError:
        pass
    return sorted(vals)


def _number_text(x: float) -> str:
    return f"{x:.6g}"


def equal_frequency_edges(x: np.ndarray, bins: int) -> np.ndarray:
    """Edges of (at most) `bins` bins holding about as many values each: the quantiles at 0, 1/bins, …, 1 (linear
    interpolation), repeated edges dropped — pandas' `qcut(x, bins, duplicates="drop")`, the rule the reproduction's
    tables were binned with. Bins are closed on the right: a value on an inner edge goes to the lower bin, and the
    first bin also holds the minimum (`bin_codes`)."""
    x = np.asarray(x, dtype=float)
    if not x.size:
        return np.array([0.0, 0.0])
    edges = np.unique(np.quantile(x, np.linspace(0.0, 1.0, max(1, bins) + 1)))
    return edges if edges.size > 1 else np.repeat(edges, 2)


def bin_codes(x: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Each value's bin (0..) under `equal_frequency_edges`: (e_j, e_j+1], the first bin [e_0, e_1]."""
    nb = len(edges) - 1
    return np.clip(np.searchsorted(edges[1:-1], x, side="left"), 0, nb - 1)


def _bin_labels(edges: np.ndarray) -> list[str]:
    n = len(edges) - 1
    return [("[" if i == 0 else "(") + f"{_number_text(edges[i])}, {_number_text(edges[i + 1])}]" for i in range(n)]


def code_column(name: str, series: pd.Series, *, numeric: bool = False, bins: int = 0,
                generalise=None, how: str | None = None) -> tuple[np.ndarray, ColumnCoding]:
    """One column's local item codes (0..) and coding. `bins` > 0 cuts a numeric column into equal-frequency
    bins; `generalise` (values -> labels) maps values to a taxonomy level first."""
    miss = series.isna().to_numpy()
    if numeric and bins > 0 and generalise is None:
        x = pd.to_numeric(series, errors="coerce").to_numpy(dtype=float)
        ok = ~np.isnan(x)
        edges = equal_frequency_edges(x[ok], bins)
        nb = len(edges) - 1
        local = bin_codes(x, edges)
        labels = _bin_labels(edges)
        if (~ok).any():
            labels.append(MISSING)
            local = np.where(ok, local, nb)
        return local.astype(np.int64), ColumnCoding(name, tuple(labels), "equal-frequency bins",
                                                    tuple(float(e) for e in edges), True)
    text = series.astype(object).where(~miss, MISSING).astype(str)
    if generalise is not None:
        text = pd.Series(MISSING, index=series.index, dtype=object)
        if (~miss).any():
            text[~miss] = np.asarray(generalise(series[~miss]).astype(str), dtype=object)
    present = [v for v in pd.unique(text) if v != MISSING]
    labels = _sorted_values(present) + ([MISSING] if (text == MISSING).any() else [])
    local = pd.Categorical(text, categories=labels).codes.astype(np.int64)
    return local, ColumnCoding(name, tuple(labels), how or "values", None, numeric)


def from_codes(local_codes: list[np.ndarray], columns: list[ColumnCoding],
               item_numbers: np.ndarray | None = None) -> ItemTable:
    """Assemble per-column local codes into one numbering: column by column, in table order."""
    sizes = np.array([len(c.labels) for c in columns], dtype=np.int64)
    first = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    n = len(local_codes[0]) if local_codes else 0
    codes = np.empty((n, len(columns)), dtype=np.int64)
    for a, loc in enumerate(local_codes):
        codes[:, a] = np.where(loc >= 0, loc + first[a], -1)
    item_attr = np.repeat(np.arange(len(columns)), sizes)
    numbers = np.arange(1, int(sizes.sum()) + 1) if item_numbers is None else np.asarray(item_numbers)
    return ItemTable(codes, tuple(columns), item_attr, numbers.astype(np.int64), first)


def encode_frame(frame: pd.DataFrame, *, numeric: Sequence[str] = (), bins: int = 0,
                 max_values: int = 20, generalisers: dict | None = None) -> ItemTable:
    """Every column of `frame` as items. Columns named in `numeric` with more than `max_values` different values
    are cut into `bins` equal-frequency bins (bins = 0: never); `generalisers[col]` maps a column's values to a
    taxonomy level first."""
    generalisers = generalisers or {}
    local, cols = [], []
    for name in frame.columns:
        s = frame[name]
        is_num = name in numeric
        if name in generalisers:
            gen, how = generalisers[name]
            codes, col = code_column(name, s, numeric=is_num, generalise=gen, how=how)
        else:
            many = is_num and bins > 0 and s.nunique(dropna=True) > max_values
            codes, col = code_column(name, s, numeric=is_num, bins=bins if many else 0)
        local.append(codes)
        cols.append(col)
    return from_codes(local, cols)


def read_num(path: str | Path) -> ItemTable:
    """A LUCS-KDD `.num` file (one transaction per line, space-separated item numbers; `.gz` allowed). Items keep
    their numbers; attributes are runs of consecutive numbers never seen together in a row (`infer_attributes`)."""
    p = Path(path)
    opener = gzip.open if p.suffix == ".gz" else open
    with opener(p, "rt") as fh:
        rows = [sorted({int(t) for t in line.split()}) for line in fh if line.strip()]
    numbers = np.array(sorted({i for r in rows for i in r}), dtype=np.int64)
    index = {int(v): i for i, v in enumerate(numbers)}
    row_items = [[index[i] for i in r] for r in rows]
    groups = infer_attributes(row_items, len(numbers))
    item_attr = np.repeat(np.arange(len(groups)), [len(g) for g in groups])
    first = np.array([g[0] for g in groups], dtype=np.int64)
    codes = -np.ones((len(rows), len(groups)), dtype=np.int64)
    for r, items in enumerate(row_items):
        for i in items:
            codes[r, item_attr[i]] = i
    columns = tuple(ColumnCoding(f"attribute {a + 1}", tuple(str(int(numbers[i])) for i in g))
                    for a, g in enumerate(groups))
    return ItemTable(codes, columns, item_attr, numbers, first)


def infer_attributes(rows: list[list[int]], n_items: int) -> list[list[int]]:
    """Group items 0..n-1 into attributes: a new attribute starts at the first item that occurs in a row together
    with an item of the current one (values of one attribute never share a row)."""
    together = np.zeros((n_items, n_items), dtype=bool)
    for r in rows:
        idx = np.asarray(r, dtype=np.int64)
        together[np.ix_(idx, idx)] = True
    groups: list[list[int]] = []
    for i in range(n_items):
        if groups and not together[i, groups[-1]].any():
            groups[-1].append(i)
        else:
            groups.append([i])
    return groups
