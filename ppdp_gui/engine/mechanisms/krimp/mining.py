"""KRIMP's candidates: frequent itemsets (all or closed) at an absolute minimum support, in KRIMP's standard order.

Which miner, and why (benchmarks/bench_krimp_mining.py prints the comparison on the shared data):
- **pyfim** (Borgelt's FIM library, C): all / closed / maximal itemsets, absolute support, by far the fastest of the
  candidates we tried (chess at min_sup 1, 373,363 itemsets, in well under a second) — the one we use.
- mlxtend (`fpgrowth` on a one-hot frame): no closed itemsets (only maximal), and returns frozensets in a frame,
  several times slower and far larger in memory;
- efficient-apriori: pure Python, no closed itemsets, minutes where pyfim takes a second;
- our own vectorised miner (`mine_table`): one group-by per attribute subset of a categorical table, exact and
  with no dependency, fine for narrow tables but exponential in the number of columns (no closed mining for wide
  tables such as mushroom). It stays as the fallback when pyfim is not installed and as the tests' oracle.

Standard candidate order (it decides ties, hence the exact code table): support descending, then length
descending, then lexicographic on the itemset's internal item ids sorted ascending; internal ids number items by
support descending, equal supports by original item number descending.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ppdp_gui.engine.errors import ParameterError
from ppdp_gui.engine.mechanisms.krimp.encoding import ItemTable

KINDS = ("all", "closed")
MAX_CANDIDATES = 3_000_000  # more does not fit a desktop's memory comfortably: ask for a higher min_sup


@dataclass(frozen=True)
class Candidates:
    """Itemsets in CSR form (items are indices of the ItemTable), with their supports."""

    indptr: np.ndarray
    items: np.ndarray
    support: np.ndarray

    def __len__(self) -> int:
        return int(self.support.size)

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.indptr)

    def itemset(self, i: int) -> tuple[int, ...]:
        return tuple(int(x) for x in self.items[self.indptr[i]:self.indptr[i + 1]])

    def as_set(self) -> dict[tuple[int, ...], int]:
        return {self.itemset(i): int(self.support[i]) for i in range(len(self))}

    def take(self, order: np.ndarray) -> "Candidates":
        lengths = self.lengths[order]
        indptr = np.zeros(len(order) + 1, dtype=np.int64)
        np.cumsum(lengths, out=indptr[1:])
        starts = self.indptr[:-1][order]
        flat = np.repeat(starts - indptr[:-1], lengths) + np.arange(int(indptr[-1]))
        return Candidates(indptr, self.items[flat], self.support[order])


def from_lists(itemsets, supports) -> Candidates:
    lengths = np.fromiter((len(s) for s in itemsets), dtype=np.int64, count=len(itemsets))
    indptr = np.zeros(len(itemsets) + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    items = np.fromiter(itertools.chain.from_iterable(sorted(s) for s in itemsets), dtype=np.int64,
                        count=int(indptr[-1]))
    return Candidates(indptr, items, np.asarray(supports, dtype=np.int64))


# ---- orders ---------------------------------------------------------------------------------------------------
def item_supports(table: ItemTable) -> np.ndarray:
    codes = table.codes[table.codes >= 0]
    return np.bincount(codes, minlength=table.n_items).astype(np.int64)


def internal_ids(supports: np.ndarray, numbers: np.ndarray) -> np.ndarray:
    """Internal id of every item: rank by support descending, equal supports by original number descending."""
    order = np.lexsort((-np.asarray(numbers), -np.asarray(supports)))
    ids = np.empty_like(order)
    ids[order] = np.arange(order.size)
    return ids


def padded(indptr: np.ndarray, values: np.ndarray, fill: int) -> np.ndarray:
    """CSR rows as an (n, longest) matrix, short rows filled with `fill`."""
    lengths = np.diff(indptr)
    n, width = len(lengths), int(lengths.max(initial=1))
    mat = np.full((n, width), fill, dtype=np.int64)
    row = np.repeat(np.arange(n), lengths)
    mat[row, np.arange(values.size) - np.repeat(indptr[:-1], lengths)] = values
    return mat


def packed_keys(mat: np.ndarray, base: int) -> list[np.ndarray]:
    """Lexicographic keys of the rows of `mat` (values in [0, base)), several columns packed per int64, most
    significant first — np.lexsort then sorts on a few keys instead of one per column."""
    per = max(1, int(62 // max(np.log2(base), 1.0)))
    keys = []
    for start in range(0, mat.shape[1], per):
        k = np.zeros(mat.shape[0], dtype=np.int64)
        for j in range(start, min(start + per, mat.shape[1])):
            k = k * base + mat[:, j]
        keys.append(k)
    return keys


def standard_order(cands: Candidates, internal: np.ndarray) -> np.ndarray:
    """Permutation putting `cands` in KRIMP's standard candidate order (see the module docstring)."""
    if len(cands) == 0:
        return np.zeros(0, dtype=np.int64)
    mat = padded(cands.indptr, internal[cands.items], int(internal.size))
    mat.sort(axis=1)
    keys = packed_keys(mat, int(internal.size) + 1)
    return np.lexsort(keys[::-1] + [-cands.lengths, -cands.support])


# ---- miners ---------------------------------------------------------------------------------------------------
def mine(table: ItemTable, min_sup: int, kind: str = "all", backend: str = "auto") -> Candidates:
    """Frequent itemsets of `table` with support >= min_sup (absolute), all or closed, singletons included."""
    if kind not in KINDS:
        raise ParameterError(f"candidate type must be one of {', '.join(KINDS)}, got {kind!r}")
    if min_sup < 1:
        raise ParameterError("the minimum support must be at least 1")
    if backend == "auto":
        try:
            import fim  # noqa: F401
            backend = "pyfim"
        except ImportError:  # pragma: no cover - pyfim is a dependency; the fallback keeps a broken install usable
            backend = "table"
    if backend == "pyfim":
        return mine_pyfim(table, min_sup, kind)
    if backend == "table":
        return mine_table(table, min_sup, kind)
    raise ParameterError(f"unknown mining backend {backend!r}")


def mine_pyfim(table: ItemTable, min_sup: int, kind: str) -> Candidates:
    import fim
    indptr, items = table.transactions()
    rows = [items[indptr[r]:indptr[r + 1]].tolist() for r in range(table.n_rows)]
    found = fim.fpgrowth(rows, target="s" if kind == "all" else "c", supp=-int(min_sup), zmin=1, report="a")
    # pyfim leaves out the itemsets made only of items every row has (support = all rows): add them back —
    # every such subset for "all", their union (the closure of the empty set) for "closed"
    full = np.flatnonzero(item_supports(table) == table.n_rows).tolist() if table.n_rows >= min_sup else []
    if full:
        if kind == "closed":
            found = list(found) + [(tuple(full), table.n_rows)]
        else:
            found = list(found) + [(c, table.n_rows) for k in range(1, len(full) + 1)
                                   for c in itertools.combinations(full, k)]
    if len(found) > MAX_CANDIDATES:
        raise ParameterError(f"{len(found):,} candidate itemsets at minimum support {min_sup}: too many; raise the "
                             "minimum support or use closed itemsets")
    return from_lists([f[0] for f in found], [f[1] for f in found])


def mine_table(table: ItemTable, min_sup: int, kind: str = "all") -> Candidates:
    """Our own vectorised miner for tables (one item per attribute): every attribute subset S is one group-by of
    the rows on S's codes; subsets grow depth-first from frequent ones only (a subset none of whose value
    combinations is frequent has no frequent superset). Closed itemsets are those no one-attribute extension
    matches in support (needs all frequent itemsets: fine for narrow tables only)."""
    codes = table.codes
    n, a = codes.shape
    sets: list[np.ndarray] = []  # (k, |S|) item matrices
    sups: list[np.ndarray] = []
    subsets: list[tuple[int, ...]] = []
    total = 0

    def grow(attrs: tuple[int, ...], key: np.ndarray, rows: np.ndarray) -> None:
        nonlocal total
        for j in range(attrs[-1] + 1 if attrs else 0, a):
            cj = codes[rows, j]
            ok = cj >= 0
            r2, c2 = rows[ok], cj[ok]
            k2 = (key[ok] * (table.n_items + 1) + c2) if attrs else c2
            uniq, inv, counts = np.unique(k2, return_inverse=True, return_counts=True)
            freq = counts >= min_sup
            if not freq.any():
                continue
            keep = freq[inv]
            new_attrs = attrs + (j,)
            first = np.unique(inv[keep], return_index=True)[1]
            rows_kept = r2[keep]
            sets.append(codes[np.ix_(rows_kept[first], list(new_attrs))])
            sups.append(counts[freq])
            subsets.append(new_attrs)
            total += int(freq.sum())
            if total > MAX_CANDIDATES:
                raise ParameterError(f"more than {MAX_CANDIDATES:,} candidate itemsets at minimum support "
                                     f"{min_sup}: raise it or use closed itemsets")
            grow(new_attrs, inv[keep].astype(np.int64), rows_kept)

    grow((), np.zeros(n, dtype=np.int64), np.arange(n))
    if not sets:
        return from_lists([], [])
    if kind == "closed":
        sets, sups = _closed_only(sets, sups, subsets, table.n_items)
    lengths = np.concatenate([np.full(len(s), s.shape[1], dtype=np.int64) for s in sets])
    indptr = np.zeros(lengths.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    items = np.concatenate([s.ravel() for s in sets]).astype(np.int64)
    return Candidates(indptr, items, np.concatenate(sups).astype(np.int64))


def _closed_only(sets, sups, subsets, n_items):
    """Drop every itemset that has a one-item extension of equal support."""
    index = {s: i for i, s in enumerate(subsets)}
    base = n_items + 1
    keys = []
    for s in sets:  # a hash of each itemset (items ascending within an attribute subset)
        k = np.zeros(len(s), dtype=object)
        for col in range(s.shape[1]):
            k = k * base + s[:, col].astype(object)
        keys.append(pd.Index(k))
    closed = [np.ones(len(s), dtype=bool) for s in sets]
    for i, attrs in enumerate(subsets):
        if len(attrs) < 2:
            continue
        for drop in range(len(attrs)):
            parent = attrs[:drop] + attrs[drop + 1:]
            p = index.get(parent)
            if p is None:
                continue
            cols = [c for c in range(len(attrs)) if c != drop]
            k = np.zeros(len(sets[i]), dtype=object)
            for col in cols:
                k = k * base + sets[i][:, col].astype(object)
            pos = keys[p].get_indexer(k)
            same = sups[p][pos] == sups[i]
            closed[p][pos[same]] = False
    return [s[c] for s, c in zip(sets, closed)], [u[c] for u, c in zip(sups, closed)]
