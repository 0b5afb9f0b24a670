"""Privacy models evaluated on the equivalence classes of one lattice node, and which of them suppression keeps
monotone (what lets the search infer a whole region of the lattice from one node).

A class is an *outlier* when it fails any per-class model — fewer than k rows, fewer than l well-represented
sensitive values (distinct, entropy, recursive (c, l)), a sensitive distribution farther than t from the whole
table's (earth mover's distance with equal, ordered or hierarchical ground distance, Li et al. 2007), or a
prosecutor risk 1/|class| above the highest-risk threshold. Outliers are suppressed. The average-risk threshold
(classes / released rows) is a property of the whole release: when it is exceeded, further classes are suppressed,
smallest first (each removed class lowers the average most per row removed), until it holds. A node is anonymous
when all that needs at most the suppression limit.

Monotone means: if a node is not anonymous, no specialisation of it is. Without suppression every model here is
(merging classes never breaks k, distinct / entropy / recursive diversity, EMD ≤ t, or raises classes / rows).
With suppression only k, distinct l and highest risk are: merging an outlier into a good class yields a good class.
For entropy / recursive diversity, t-closeness and average risk it does not (the merged class may fail, and its
good rows become outliers), so the search then evaluates every node its lower bound cannot exclude — as ARX does.

Persons. With a person column the tuples carry their person (`Encoded.person`) and a class's size for k and the
risks is its distinct persons; a sensitive value weighs the distinct persons holding it in the class (entropy,
recursive, t-closeness; the whole table's distribution counts each (person, value) once). The suppression limit
stays a share of rows. Merging classes never lowers their persons, so k stays monotone as above.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ppdp_gui.engine.taxonomy.tree import Taxonomy

EPS = 1e-12
DIVERSITIES = ("distinct", "entropy", "recursive")
DISTANCES = ("equal", "ordered", "hierarchical")


@dataclass(frozen=True)
class PrivacyModels:
    """The combined requirement; 0 (or 1 for k) switches a model off. Risks and the limit are shares (0..1)."""

    k: int = 1
    l: int = 0
    diversity: str = "distinct"
    c: float = 3.0
    t: float = 0.0
    distance: str = "equal"
    max_risk: float = 0.0
    avg_risk: float = 0.0
    limit: float = 0.0

    @property
    def uses_l(self) -> bool:
        return self.l > 1

    @property
    def uses_t(self) -> bool:
        return self.t > 0

    @property
    def needs_sensitive(self) -> bool:
        return self.uses_l or self.uses_t

    @property
    def monotone(self) -> bool:
        """Whether a node that is not anonymous makes every specialisation not anonymous (see module)."""
        if self.limit <= 0:
            return True
        if self.uses_t or self.avg_risk > 0:
            return False
        return not (self.uses_l and self.diversity != "distinct")

    @property
    def min_size(self) -> int:
        """Smallest class size the k and highest-risk models allow."""
        size = max(1, int(self.k))
        if self.max_risk > 0:
            size = max(size, int(np.ceil(1.0 / self.max_risk - 1e-9)))
        return size

    def limit_rows(self, n_rows: int) -> int:
        return int(math.floor(self.limit * n_rows + 1e-9))


class SensitiveDistance:
    """What the t-closeness test needs of the sensitive column: the whole table's distribution and the ground
    distance (a value order, or the tree's inner nodes with their heights)."""

    def __init__(self, distance: str, values: list[str], whole: np.ndarray, *, numeric: bool = False,
                 order: list[str] | None = None, taxonomy: Taxonomy | None = None):
        self.distance = distance
        self.values = values
        if distance == "ordered":
            if order:
                rank = {v: i for i, v in enumerate(order)}
                pos = np.array([rank[v] for v in values])
            elif numeric:
                pos = np.argsort(np.argsort(pd.to_numeric(pd.Series(values)).to_numpy(), kind="stable"),
                                 kind="stable")
            else:
                pos = np.arange(len(values))
            self.pos = pos  # place of each value code in the ground order
            self.m = len(order) if order else len(values)
        self.q = whole / whole.sum()
        if distance == "hierarchical":
            self._tree(taxonomy)

    def _tree(self, tax: Taxonomy) -> None:
        leaf_ids = [tax.leaf_node(v) for v in self.values]
        height = max(tax.depth(n) for n in tax.leaves())
        inner = [n for n in range(len(tax)) if not tax.is_leaf(n)]
        col = {n: i for i, n in enumerate(inner)}
        member = np.zeros((len(self.values), len(inner)))  # value under inner node
        for i, leaf in enumerate(leaf_ids):
            for a in tax.ancestors(leaf)[1:]:
                member[i, col[a]] = 1.0
        child_of = np.zeros((len(self.values) + len(inner), len(inner)))  # (leaf columns, inner nodes) -> parent
        for i, leaf in enumerate(leaf_ids):
            child_of[i, col[tax.parent(leaf)]] = 1.0
        for n in inner:
            if tax.parent(n) >= 0:
                child_of[len(self.values) + col[n], col[tax.parent(n)]] = 1.0
        self.member, self.child_of = member, child_of
        self.weight = np.array([(height - tax.depth(n)) / height if height else 0.0 for n in inner])

    def emd(self, counts: np.ndarray) -> np.ndarray:
        """EMD of each row of a classes x values count matrix from the whole table's distribution."""
        p = counts / counts.sum(axis=1, keepdims=True)
        diff = p - self.q[None, :]
        if self.distance == "equal":
            return 0.5 * np.abs(diff).sum(axis=1)
        if self.distance == "ordered":
            full = np.zeros((diff.shape[0], self.m))
            full[:, self.pos] = diff
            return np.abs(np.cumsum(full, axis=1)[:, :-1]).sum(axis=1) / max(1, self.m - 1)
        extra = np.concatenate([diff, diff @ self.member], axis=1)  # leaves, then inner nodes
        pos = np.maximum(extra, 0) @ self.child_of
        neg = np.maximum(-extra, 0) @ self.child_of
        return (np.minimum(pos, neg) * self.weight).sum(axis=1)


@dataclass
class ClassVerdict:
    """One node's classes: sizes, which are suppressed, and the figures the release record keeps."""

    sizes: np.ndarray  # rows per class (classes with rows only are meaningful)
    suppressed: np.ndarray  # bool per class
    n_suppressed: int
    anonymous: bool
    units: np.ndarray | None = None  # distinct persons per class with a person column (None: k counts rows)

    @property
    def unit_sizes(self) -> np.ndarray:
        """What k and the risks count per class: persons with a person column, else rows."""
        return self.sizes if self.units is None else self.units


def first_of_pairs(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Whether each (a, b) pair of non-negative integers is the first of its kind: one int64 key per pair and a
    hash lookup (a large table's tuples can be as many as its rows; a two-column `duplicated` is several times
    slower)."""
    a, b = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
    span = int(b.max()) + 1 if b.size else 1
    if a.size and int(a.max()) >= (2**62) // span:
        return ~pd.DataFrame({"a": a, "b": b}).duplicated().to_numpy()
    return ~pd.Series(a * span + b).duplicated().to_numpy()


def distinct_per_class(cls: np.ndarray, persons: np.ndarray, n_classes: int,
                       weight: np.ndarray | None = None) -> np.ndarray:
    """Distinct persons per class (tuples may repeat a person). `weight`: a tuple whose person is -1 stands for
    that many persons seen in no other tuple (`Encoded.from_counts`)."""
    if weight is None:
        first = first_of_pairs(cls, persons)
        return np.bincount(cls[first], minlength=n_classes).astype(float)
    lone = persons < 0
    out = np.bincount(cls[lone], weights=weight[lone], minlength=n_classes).astype(float)
    rest = np.flatnonzero(~lone)
    first = rest[first_of_pairs(cls[rest], persons[rest])]
    return out + np.bincount(cls[first], minlength=n_classes)


def first_person_values(cls: np.ndarray, sens: np.ndarray, n_sens: int, persons: np.ndarray,
                        weight: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(tuples, persons each stands for) counting each (class, value, person) once: the first tuple of every
    such triple, 1 person each; with `weight`, every tuple of persons seen nowhere else, its weight."""
    key = cls.astype(np.int64) * max(1, n_sens) + sens
    if weight is None:
        first = np.flatnonzero(first_of_pairs(key, persons))
        return first, np.ones(first.size)
    lone = persons < 0
    rest = np.flatnonzero(~lone)
    first = rest[first_of_pairs(key[rest], persons[rest])]
    alone = np.flatnonzero(lone)
    return np.r_[first, alone], np.r_[np.ones(first.size), weight[alone].astype(float)]


def _pairs(cls: np.ndarray, n_classes: int, sens: np.ndarray, n_sens: int,
           weight: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(class, value, rows) of every (class, sensitive value) pair present."""
    key = cls * n_sens + sens
    if n_classes * n_sens <= 4 * key.size + 1024:
        counts = np.bincount(key, weights=weight, minlength=n_classes * n_sens)
        present = np.flatnonzero(counts)
        return present // n_sens, present % n_sens, counts[present]
    ids, uniq = pd.factorize(key)
    counts = np.bincount(ids, weights=weight, minlength=len(uniq))
    return uniq // n_sens, uniq % n_sens, counts


def judge(models: PrivacyModels, cls: np.ndarray, n_classes: int, count: np.ndarray, sens: np.ndarray | None,
          n_sens: int, n_rows: int, distance: SensitiveDistance | None = None,
          persons: np.ndarray | None = None, person_weight: np.ndarray | None = None) -> ClassVerdict:
    """Apply the models to the classes `cls` (class id per tuple, tuples weighted by `count`); `persons` (the
    person of each tuple): k, risks and sensitive values count distinct persons (module docstring);
    `person_weight`: the persons a tuple of person -1 stands for (`Encoded.from_counts`)."""
    sizes = np.bincount(cls, weights=count, minlength=n_classes)
    units = None if persons is None else distinct_per_class(cls, persons, n_classes, person_weight)
    unit_sizes = sizes if units is None else units
    empty = sizes == 0
    fail = unit_sizes < models.min_size
    if models.needs_sensitive and sens is not None:
        if persons is None:
            pc, pv, pn = _pairs(cls, n_classes, sens, n_sens, count)
            totals = sizes
        else:  # each (class, value, person) once
            first, weight = first_person_values(cls, sens, n_sens, persons, person_weight)
            pc, pv, pn = _pairs(cls[first], n_classes, sens[first], n_sens, weight)
            totals = np.bincount(pc, weights=pn, minlength=n_classes)
        if models.uses_l:
            if models.diversity == "distinct":
                fail |= np.bincount(pc, minlength=n_classes) < models.l
            elif models.diversity == "entropy":
                p = pn / totals[pc]
                h = np.bincount(pc, weights=-p * np.log(p), minlength=n_classes)
                fail |= h < np.log(models.l) - EPS
            else:  # recursive (c, l): r1 < c (r_l + ... + r_m)
                order = np.lexsort((-pn, pc))
                pc_s, pn_s = pc[order], pn[order]
                start = np.r_[0, np.flatnonzero(pc_s[1:] != pc_s[:-1]) + 1]
                rank = np.arange(pc_s.size) - np.repeat(start, np.diff(np.r_[start, pc_s.size]))
                r1 = np.zeros(n_classes)
                r1[pc_s[start]] = pn_s[start]
                tail = np.bincount(pc_s[rank >= models.l - 1], weights=pn_s[rank >= models.l - 1],
                                   minlength=n_classes)
                fail |= ~(r1 < models.c * tail)
        if models.uses_t and distance is not None:
            live = np.flatnonzero(~empty & ~fail)
            if live.size:
                pos = np.full(n_classes, -1, dtype=np.int64)
                pos[live] = np.arange(live.size)
                keep = pos[pc] >= 0
                step = max(1, 4_000_000 // max(1, n_sens))
                far = np.zeros(live.size, dtype=bool)
                for lo in range(0, live.size, step):  # classes x values in chunks, memory stays bounded
                    sel = keep & (pos[pc] >= lo) & (pos[pc] < lo + step)
                    hi = min(live.size, lo + step)
                    flat = (pos[pc[sel]] - lo) * n_sens + pv[sel]
                    mat = np.bincount(flat, weights=pn[sel], minlength=(hi - lo) * n_sens).reshape(-1, n_sens)
                    far[lo:hi] = distance.emd(mat) > models.t + EPS
                fail[live[far]] = True
    fail &= ~empty
    if models.avg_risk > 0:
        fail = _average_risk(unit_sizes, fail, empty, models.avg_risk)
    n_supp = int(sizes[fail].sum())
    kept = int(n_rows - n_supp)
    anonymous = n_supp <= models.limit_rows(n_rows) and kept > 0
    return ClassVerdict(sizes, fail, n_supp, anonymous, units)


def _average_risk(sizes: np.ndarray, fail: np.ndarray, empty: np.ndarray, threshold: float) -> np.ndarray:
    """Also suppress the smallest remaining classes until classes / released rows <= threshold."""
    live = np.flatnonzero(~fail & ~empty)
    if live.size == 0:
        return fail
    s = np.sort(sizes[live], kind="stable")
    order = live[np.argsort(sizes[live], kind="stable")]
    removed_rows = np.r_[0.0, np.cumsum(s)]
    classes_left = live.size - np.arange(live.size + 1)
    rows_left = s.sum() - removed_rows
    with np.errstate(divide="ignore", invalid="ignore"):
        ok = (rows_left > 0) & (classes_left <= threshold * rows_left + EPS)
    if not ok.any():
        out = fail.copy()
        out[live] = True
        return out
    r = int(np.argmax(ok))
    out = fail.copy()
    out[order[:r]] = True
    return out
