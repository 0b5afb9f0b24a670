"""Full-domain generalisation: every quasi-identifier at one level of its taxonomy, the lattice of level vectors,
and the input compressed to its distinct rows so a node is evaluated on thousands of tuples, not millions of rows.

Level ℓ of a QI is ARX's column ℓ of its hierarchy file: the ancestor ℓ steps above each leaf (a shallow leaf stops
at the root, as `Taxonomy.nodes_at_level`). A *node* of the lattice is one level per QI; node A is a
*generalisation* of B (A ≥ B) when every level of A is at least B's. Nodes are numbered in mixed radix, the last QI
fastest, so node 0 is the original table and node N − 1 the most general one.

`Encoded` holds, per distinct combination of (leaf of every QI, sensitive value), its row count — Adult's 30,162
rows become about 19,500 tuples, a million rows resampled from it the same number. Group ids of each half of the
QIs at given levels are cached (`Encoded.node_groups`), so grouping a node costs one multiply-add and one hash
factorisation over the tuples, whichever levels it has.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ppdp_gui.engine.data.schema import Dataset
from ppdp_gui.engine.data.qi_coding import TaxonomyIndex, taxonomy_values, taxonomy_with_blanks
from ppdp_gui.engine.taxonomy.tree import Taxonomy

MAX_EXACT_NODES = 100_000  # above this the search falls back to the heuristic (search.py)


def _widen(key: np.ndarray, radix: int) -> np.ndarray:
    """`key`, renumbered densely first if multiplying it by `radix` could overflow int64."""
    if key.size and int(key.max()) >= (2 ** 62) // max(int(radix), 1):
        return pd.factorize(key)[0].astype(np.int64)
    return key


def _dense(key: np.ndarray, span: int | None) -> tuple[np.ndarray, int]:
    """Keys renumbered 0..G-1 (G distinct keys). With few possible keys (`span`) a count and a running sum do it;
    otherwise a hash factorisation."""
    if span is not None and span <= 4 * key.size + 4096:
        used = np.zeros(span, dtype=np.int64)
        used[key] = 1
        dense = np.cumsum(used) - 1
        return dense[key], int(dense[-1]) + 1 if span else 0
    ids, uniq = pd.factorize(key)
    return ids.astype(np.int64), len(uniq)


@dataclass
class QILevels:
    """One quasi-identifier's generalisation hierarchy as arrays: the code of every leaf at every level, and per
    level the label, the leaves under each code and its depth in the tree."""

    name: str
    index: TaxonomyIndex
    code_of_leaf: np.ndarray  # (levels, leaves) int32: dense code of each leaf's ancestor at that level
    labels: list[np.ndarray]  # per level: label of each code
    leaves: list[np.ndarray]  # per level: number of leaves under each code
    node_ids: list[np.ndarray]  # per level: taxonomy node id of each code

    @property
    def height(self) -> int:
        return self.code_of_leaf.shape[0] - 1

    @property
    def n_leaves(self) -> int:
        return self.code_of_leaf.shape[1]

    def loss(self, level: int) -> np.ndarray:
        """ARX's loss of each code at `level`: (leaves under it − 1) / (leaves − 1)."""
        return (self.leaves[level] - 1) / max(1, self.n_leaves - 1)

    def bounds(self, level: int) -> tuple[np.ndarray, np.ndarray]:
        """Leaf-position bounds [lo, hi] of each code at `level` (the units of `metrics.information_loss`)."""
        nodes = self.node_ids[level]
        return self.index.node_lo[nodes].astype(float), self.index.node_hi[nodes].astype(float)


def qi_levels(name: str, taxonomy: Taxonomy) -> QILevels:
    index = TaxonomyIndex(taxonomy)
    height = index.anc.shape[1] - 1
    codes, labels, leaves, node_ids = [], [], [], []
    for level in range(height + 1):
        nodes = index.anc[:, level]  # padded with the root above a shallow leaf
        uniq, code = np.unique(nodes, return_inverse=True)
        codes.append(code.astype(np.int32))
        labels.append(index.labels[uniq])
        leaves.append((index.node_hi[uniq] - index.node_lo[uniq] + 1).astype(float))
        node_ids.append(uniq)
    return QILevels(name, index, np.stack(codes), labels, leaves, node_ids)


def taxonomy_for(data: Dataset, name: str) -> Taxonomy | None:
    """The QI's taxonomy; a categorical without one gets a flat tree (value or '*') built from its values."""
    spec = data.spec(name)
    if spec.taxonomy is not None:  # a number column's blanks: "(missing)" under the root (qi_coding)
        return taxonomy_with_blanks(data, name, spec.taxonomy)
    if spec.kind != "numeric":
        from ppdp_gui.engine.bigdata.large_dataset import distinct_typed, is_large
        values = distinct_typed(data, name) if is_large(data) else data.frame[name]
        return Taxonomy.flat(name, pd.unique(values.astype(str)), origin="data")
    return None


@dataclass
class Lattice:
    """All level vectors 0 ≤ ℓⱼ ≤ heightⱼ, numbered in mixed radix (last QI fastest)."""

    heights: tuple[int, ...]
    strides: np.ndarray = field(init=False)
    size: int = field(init=False)

    def __post_init__(self) -> None:
        radix = np.array([h + 1 for h in self.heights], dtype=np.int64)
        self.strides = np.ones(len(radix), dtype=np.int64)
        for j in range(len(radix) - 2, -1, -1):
            self.strides[j] = self.strides[j + 1] * radix[j + 1]
        self.size = int(np.prod(radix)) if len(radix) else 1

    def index(self, levels) -> int:
        return int(np.dot(np.asarray(levels, dtype=np.int64), self.strides))

    def levels(self, index: int) -> tuple[int, ...]:
        out = []
        for h, s in zip(self.heights, self.strides):
            out.append(int(index // s) % (h + 1))
        return tuple(out)

    def all_levels(self) -> np.ndarray:
        """(size, d) int8 levels of every node, in index order (only for lattices up to MAX_EXACT_NODES)."""
        grids = np.indices([h + 1 for h in self.heights]).reshape(len(self.heights), -1).T
        return grids.astype(np.int8)

    @property
    def top(self) -> tuple[int, ...]:
        return tuple(self.heights)


class Encoded:
    """The input as distinct tuples: leaf position of every QI, sensitive code, row count; and the map back."""

    def __init__(self, qis: list[QILevels], leaf_pos: list[np.ndarray], sensitive: np.ndarray | None,
                 n_sensitive: int, cache_entries: int = 256, persons: np.ndarray | None = None):
        self.qis = qis
        n = len(leaf_pos[0]) if leaf_pos else (len(sensitive) if sensitive is not None else 0)
        self.n_rows = n
        self.d = len(qis)
        cols = list(leaf_pos) + ([sensitive] if sensitive is not None else [])
        radixes = [q.n_leaves for q in qis] + ([n_sensitive] if sensitive is not None else [])
        if persons is not None:  # one tuple per person too: a class's persons are its distinct tuple persons
            persons = np.asarray(persons, dtype=np.int64)
            cols.append(persons)
            radixes.append(int(persons.max()) + 1 if persons.size else 1)
        key = np.zeros(n, dtype=np.int64)
        for c, m in zip(cols, radixes):
            key = _widen(key, m) * m + c
        self.row_tuple, uniq = pd.factorize(key)
        first = np.zeros(len(uniq), dtype=np.int64)
        first[self.row_tuple[::-1]] = np.arange(n - 1, -1, -1)
        self.leaf = np.column_stack([c[first] for c in leaf_pos]).astype(np.int32) if leaf_pos else \
            np.zeros((len(uniq), 0), dtype=np.int32)
        self._leaf_rows = np.ascontiguousarray(self.leaf.T)  # one contiguous row per QI: faster gathers
        self.count = np.bincount(self.row_tuple, minlength=len(uniq)).astype(np.int64)
        self.sensitive = None if sensitive is None else sensitive[first].astype(np.int64)
        self.n_sensitive = n_sensitive
        #: the person of every tuple (None: no person column, k counts rows)
        self.person = None if persons is None else persons[first]
        #: persons a tuple stands for when its person is -1 (`from_counts`); None: every tuple is one person's
        self.person_weight = None
        self._finish(cache_entries)

    @classmethod
    def from_counts(cls, qis: list[QILevels], leaf: np.ndarray, count: np.ndarray, sensitive: np.ndarray | None,
                    n_sensitive: int, cache_entries: int = 256, persons: np.ndarray | None = None,
                    person_weight: np.ndarray | None = None) -> "Encoded":
        """The distinct tuples already counted (by a SQL GROUP BY over a table larger than memory:
        kanon/globalrec_sql.py); there is no per-row map back (`row_tuple` is None). `persons`: the person of
        every tuple (the GROUP BY then has the person among its keys, as `Encoded`'s tuples do); -1 for a tuple
        standing for `person_weight` persons each of whom has no other tuple (their rows all share these values:
        they are counted, not listed, so a registry whose patients keep their values holds a tuple per value, not
        per patient)."""
        self = cls.__new__(cls)
        self.qis, self.d = qis, len(qis)
        self.leaf = np.asarray(leaf, dtype=np.int32).reshape(len(count), len(qis))
        self._leaf_rows = np.ascontiguousarray(self.leaf.T)
        self.count = np.asarray(count, dtype=np.int64)
        self.n_rows = int(self.count.sum())
        self.row_tuple = None
        self.person = None if persons is None else np.asarray(persons, dtype=np.int64)
        self.person_weight = None if person_weight is None else np.asarray(person_weight, dtype=np.int64)
        self.sensitive = None if sensitive is None else np.asarray(sensitive, dtype=np.int64)
        self.n_sensitive = n_sensitive
        self._finish(cache_entries)
        return self

    def _finish(self, cache_entries: int) -> None:
        self.sensitive_values: list[str] = []  # the text of each sensitive code
        self.n_tuples = len(self.count)
        # split the QIs in two halves with about as many level combinations each
        combos = [q.height + 1 for q in self.qis]
        best, split = None, 0
        for s in range(self.d + 1):
            cost = max(int(np.prod(combos[:s])), int(np.prod(combos[s:])))
            if best is None or cost < best:
                best, split = cost, s
        self.halves = (list(range(split)), list(range(split, self.d)))
        self._cache: OrderedDict = OrderedDict()
        self._cache_entries = cache_entries

    def codes(self, j: int, level: int) -> np.ndarray:
        """Code of QI j at `level` for every tuple."""
        return self.qis[j].code_of_leaf[level][self._leaf_rows[j]]

    def _half(self, part: int, levels: tuple[int, ...]) -> tuple[np.ndarray, int]:
        key = (part, levels)
        hit = self._cache.get(key)
        if hit is not None:
            self._cache.move_to_end(key)
            return hit
        cols = self.halves[part]
        if not cols:
            out = (np.zeros(self.n_tuples, dtype=np.int64), 1)
        else:
            k = np.zeros(self.n_tuples, dtype=np.int64)
            span = 1
            for j, level in zip(cols, levels):
                m = len(self.qis[j].labels[level])
                if span * m >= 2 ** 62:
                    k, span = _dense(k, None)
                k = k * m + self.codes(j, level)
                span *= m
            out = _dense(k, span)
        self._cache[key] = out
        if len(self._cache) > self._cache_entries:
            self._cache.popitem(last=False)
        return out

    def node_groups(self, levels) -> tuple[np.ndarray, int]:
        """(class id of every tuple, number of classes) at the node `levels`."""
        levels = tuple(int(x) for x in levels)
        a, na = self._half(0, tuple(levels[j] for j in self.halves[0]))
        b, nb = self._half(1, tuple(levels[j] for j in self.halves[1]))
        if na == 1 or nb == 1:
            key, n_keys = (a if nb == 1 else b), (na if nb == 1 else nb)
            return key, n_keys
        return _dense(a * nb + b, na * nb)


def encode(data: Dataset, names: list[str], sensitive: str | None) -> Encoded:
    """Code the QIs (`taxonomy_for`) and the sensitive column of `data` into an `Encoded` table; with a person
    column, the tuples also tell persons apart (`Encoded.person`)."""
    qis, pos = [], []
    for name in names:
        lev = qi_levels(name, taxonomy_for(data, name))
        qis.append(lev)
        pos.append(lev.index.positions(taxonomy_values(data, name)).astype(np.int32))
    s_codes, n_s, values = None, 0, []
    if sensitive:
        s_codes, uniq = pd.factorize(data.frame[sensitive].astype(str), sort=True)
        s_codes, n_s, values = s_codes.astype(np.int64), len(uniq), [str(v) for v in uniq]
    from ppdp_gui.engine.mechanisms.kanon import common  # the one place the k-anonymity family reads persons
    enc = Encoded(qis, pos, s_codes, n_s, persons=common.person_codes(data))
    enc.sensitive_values = values
    return enc
