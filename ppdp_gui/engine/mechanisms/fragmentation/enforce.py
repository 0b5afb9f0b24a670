"""k-anonymity non-reconstructability (seed 002, §4.2): fragments must not re-identify when joined on the class.

Every fragment carries its own copy of the class column, and an attacker can join two fragments on it. Joining
equivalence class e_i (one fragment) with e_j (another) yields Σ_s c_i(s)·c_j(s) tuples that all share one
combined quasi-identifier, so the join is k-anonymous iff that sum is 0 (no common class value) or ≥ k
(Theorem 4.1). Checking pairs of fragments is enough: longer joins are chains of binary joins.

Three strategies, as the paper:
- naive: every equivalence class takes its majority class value (joins are then empty or ≥ k² tuples);
- dependency graph: breadth-first search over the graph whose nodes are equivalence classes and whose edges link
  classes of different fragments that share a class value (Algorithms 2-3); on a violating edge the neighbour's
  least frequent value is relabelled to its majority value one tuple at a time, then the neighbour's edges to
  already visited nodes are re-checked;
- ρ-selectivity: class values are published per equivalence class (the set of values, other slots ambiguous),
  and every edge must have equijoin selectivity privacy level ρ(e_i, e_j) ≥ ρ (Definitions 4.2-4.5,
  Algorithm 4); on a violating edge the neighbour's value with the lowest original frequency is removed.

Useful fact (proved in docs/reproduction/fragmentation.md): if the class values of e_i are a subset of those of
e_j, every join has ≥ |e_i| ≥ k tuples. So a violation needs both classes to hold a value the other lacks, which
is impossible with two class values: on a binary class only the naive strategy changes anything.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy.special import gammaln

# pairs of class-value vectors beyond which ρ is not enumerated and the edge is treated as violating (safe side)
RHO_PAIR_BUDGET = 50_000_000


# ---- counting ------------------------------------------------------------------------------------------------
def class_counts(ec: np.ndarray, y: np.ndarray, n_classes: int, persons: np.ndarray | None = None) -> np.ndarray:
    """(number of equivalence classes) x (number of class values) matrix of tuple counts; with `persons` (the
    person of each row) of distinct persons: a patient's several rows with one class value in one group count
    once, so a join on the class counts pairs of persons, not pairs of rows."""
    n_ec = int(ec.max()) + 1 if len(ec) else 0
    key = ec.astype(np.int64) * n_classes + y
    if persons is not None:
        _, who = np.unique(np.asarray(persons), return_inverse=True)
        pairs = np.unique(np.column_stack([key, who.astype(np.int64)]), axis=0)
        key = pairs[:, 0]
    return np.bincount(key, minlength=n_ec * n_classes).reshape(n_ec, n_classes)


def person_repair(ecs: list[np.ndarray], labels: list[np.ndarray], n_classes: int, k: int,
                  persons: np.ndarray, published: list[np.ndarray] | None = None, max_rounds: int = 50
                  ) -> tuple[list[np.ndarray], list[np.ndarray] | None]:
    """After a strategy that counted rows: every group of a pair whose join holds between 1 and k−1 pairs of
    distinct persons takes its majority value only (its published value set becomes that one value). A group of
    at least k persons (Mondrian counted persons) with one value joins any group into 0 or ≥ k person pairs, so
    each round fixes every pair it touches. Returns (labels, published sets)."""
    labels = [lab.copy() for lab in labels]
    published = None if published is None else [p.copy() for p in published]
    for _ in range(max_rounds):
        counts = []
        for f, ec in enumerate(ecs):
            c = class_counts(ec, labels[f], n_classes, persons)
            counts.append(c if published is None else c * published[f])
        hit = [np.zeros(c.shape[0], dtype=bool) for c in counts]
        for a in range(len(ecs)):
            for b in range(a + 1, len(ecs)):
                pairs = violating_pairs(counts[a], counts[b], k)
                hit[a][pairs[:, 0]] = True
        if not any(h.any() for h in hit):
            return labels, published
        for f, ec in enumerate(ecs):
            if not hit[f].any():
                continue
            majority = np.argmax(counts[f], axis=1)
            rows = hit[f][ec]
            if published is None:
                labels[f][rows] = majority[ec[rows]]
            else:
                groups = np.nonzero(hit[f])[0]
                published[f][groups] = False
                published[f][groups, majority[groups]] = True
    raise RuntimeError("the join condition in persons could not be met by giving groups their majority value")


def violating_pairs(counts_a: np.ndarray, counts_b: np.ndarray, k: int, block: int = 2048) -> np.ndarray:
    """(i, j) pairs of classes from two fragments whose join has between 1 and k−1 tuples (Theorem 4.1)."""
    out = []
    cb = counts_b.T.astype(np.int64)
    for start in range(0, len(counts_a), block):
        join = counts_a[start:start + block].astype(np.int64) @ cb
        i, j = np.nonzero((join > 0) & (join < k))
        out.append(np.column_stack((i + start, j)))
    return np.concatenate(out) if out else np.zeros((0, 2), dtype=np.int64)


def relabel_rows(ec: np.ndarray, y: np.ndarray, before: np.ndarray, after: np.ndarray) -> np.ndarray:
    """Row-level class values matching new per-class counts: the lost tuples of a value take the majority value.

    Only ever called with `after` = `before` with some tuples moved to each class's (unchanged) majority value.
    """
    loss = np.maximum(before - after, 0)
    if not loss.any():
        return y.copy()
    majority = np.argmax(after, axis=1)
    order = np.lexsort((np.arange(len(y)), y, ec))  # rows grouped by (class, value), in row order
    key = ec[order] * before.shape[1] + y[order]
    first = np.searchsorted(key, key, side="left")
    rank = np.empty(len(y), dtype=np.int64)
    rank[order] = np.arange(len(y)) - first  # position of each row within its (class, value) group
    new = y.copy()
    change = rank < loss[ec, y]
    new[change] = majority[ec[change]]
    return new


@dataclass(frozen=True)
class Enforced:
    """Class values after enforcement, per fragment: tuple-level labels, or per-class published value sets."""

    labels: list[np.ndarray]  # row-level class codes per fragment (for ρ-selectivity: unchanged true codes)
    published: list[np.ndarray] | None  # ρ-selectivity: bool (n_ec x n_classes) value sets per fragment
    distorted: list[int]  # tuples whose published class value is no longer their true value, per fragment


# ---- naive ----------------------------------------------------------------------------------------------------
def enforce_naive(ecs: list[np.ndarray], ys: list[np.ndarray], n_classes: int) -> Enforced:
    """Every equivalence class is relabelled to its majority class value (ties: the first value)."""
    labels, distorted = [], []
    for ec, y in zip(ecs, ys):
        counts = class_counts(ec, y, n_classes)
        after = np.zeros_like(counts)
        after[np.arange(len(counts)), np.argmax(counts, axis=1)] = counts.sum(axis=1)
        new = relabel_rows(ec, y, counts, after)
        labels.append(new)
        distorted.append(int((new != y).sum()))
    return Enforced(labels, None, distorted)


# ---- the dependency graph and its breadth-first walk ----------------------------------------------------------
def _stack(countss: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    counts = np.concatenate(countss).astype(np.int64)
    frag = np.concatenate([np.full(len(c), f) for f, c in enumerate(countss)])
    offsets = np.concatenate(([0], np.cumsum([len(c) for c in countss])))
    return counts, frag, offsets


def _bfs(counts: np.ndarray, frag: np.ndarray, violates, fix, order: np.ndarray) -> None:
    """Algorithm 3 / 4: BFS over the dependency graph, fixing unvisited neighbours of the current node."""
    n = len(counts)
    visited = np.zeros(n, dtype=bool)
    queued = np.zeros(n, dtype=bool)
    for start in order:
        if queued[start]:
            continue
        queue = deque([int(start)])
        queued[start] = True
        while queue:
            cur = queue.popleft()
            other = np.nonzero((frag != frag[cur]) & ~visited)[0]
            bad = violates(cur, other)
            for nb in other[bad]:
                guard = visited.copy()
                guard[cur] = True
                guard &= frag != frag[nb]
                while True:  # lines 9-14: fix against cur, then re-satisfy edges to visited nodes
                    against = np.nonzero(guard)[0]
                    if not violates(int(nb), against).any() or not fix(int(nb)):
                        break
            nbrs = other[((counts[other] > 0) & (counts[cur] > 0)).any(axis=1)]
            new = nbrs[~queued[nbrs]]
            queued[new] = True
            queue.extend(new.tolist())
            visited[cur] = True


def enforce_dependency_graph(ecs: list[np.ndarray], ys: list[np.ndarray], n_classes: int, k: int,
                             order: np.ndarray | None = None) -> Enforced:
    """Relabel as few tuples as the BFS heuristic finds so that no join of two fragments breaks k-anonymity."""
    before = [class_counts(ec, y, n_classes) for ec, y in zip(ecs, ys)]
    counts, frag, offsets = _stack(before)

    def violates(u: int, others: np.ndarray) -> np.ndarray:
        join = counts[others] @ counts[u]
        return (join > 0) & (join < k)

    def fix(u: int) -> bool:
        row = counts[u]
        nz = np.nonzero(row)[0]
        if len(nz) < 2:
            return False  # already one value: nothing left to change (cannot happen on k-anonymous fragments)
        high = int(np.argmax(row))  # the majority value (first one on ties) stays the majority
        nz = nz[nz != high]
        row[nz[np.argmin(row[nz])]] -= 1
        row[high] += 1
        return True

    _bfs(counts, frag, violates, fix, np.arange(len(counts)) if order is None else order)
    labels, distorted = [], []
    for f, (ec, y) in enumerate(zip(ecs, ys)):
        new = relabel_rows(ec, y, before[f], counts[offsets[f]:offsets[f + 1]])
        labels.append(new)
        distorted.append(int((new != y).sum()))
    return Enforced(labels, None, distorted)


# ---- ρ-selectivity --------------------------------------------------------------------------------------------
def _log_comb(n, r):
    return gammaln(np.asarray(n) + 1.0) - gammaln(np.asarray(r) + 1.0) - gammaln(np.asarray(n) - np.asarray(r) + 1.0)


@lru_cache(maxsize=4096)
def common_value_versions(n: int, m: int, t: int) -> tuple[np.ndarray, np.ndarray]:
    """Counts (a_1..a_t) of the t shared values over all versions of a class of n tuples with m published
    values, and each vector's probability (share of versions). Every value has ≥ 1 tuple; the m − t other
    values take the rest, which can be split C(rest−1, m−t−1) ways."""
    free = m - t
    top = n - free  # most tuples the shared values can hold together
    vecs = np.ones((1, 0), dtype=np.int64)
    for pos in range(t):
        used = vecs.sum(axis=1)
        room = top - used - (t - pos - 1)  # leave ≥ 1 for each later shared value
        reps = np.maximum(room, 0)
        base = np.repeat(vecs, reps, axis=0)
        starts = np.concatenate(([0], np.cumsum(reps)[:-1]))
        step = np.arange(int(reps.sum())) - np.repeat(starts, reps) + 1
        vecs = np.column_stack((base, step))
    used = vecs.sum(axis=1)
    if free == 0:
        keep = used == n
        vecs, used = vecs[keep], used[keep]
        logw = np.zeros(len(vecs))
    else:
        logw = _log_comb(n - used - 1, free - 1)
    logw = logw - _log_comb(n - 1, m - 1)
    return vecs, np.exp(logw)


def rho_level(n_i: int, set_i: np.ndarray, n_j: int, set_j: np.ndarray, k: int) -> float:
    """Equijoin selectivity privacy level ρ(e_i, e_j): share of version pairs whose join has ≥ k tuples.

    Sets are boolean masks over class values. Versions of a class of n tuples with m values are the
    C(n−1, m−1) ways to give every value ≥ 1 tuple (Appendix C.II); both are counted with equal weight.
    """
    common = set_i & set_j
    t = int(common.sum())
    if t == 0:
        return 1.0  # cannot be joined
    m_i, m_j = int(set_i.sum()), int(set_j.sum())
    if (t == m_i and n_i >= k) or (t == m_j and n_j >= k):
        return 1.0  # one side's values all shared: every join has ≥ its size tuples
    a, pa = common_value_versions(n_i, m_i, t)
    b, pb = common_value_versions(n_j, m_j, t)
    if len(a) * len(b) > RHO_PAIR_BUDGET:
        return 0.0  # too many versions to count exactly: treat as violating (more distortion, never less privacy)
    total = 0.0
    rows = max(1, 4_000_000 // max(len(b), 1))
    for s in range(0, len(a), rows):
        ok = (a[s:s + rows] @ b.T) >= k
        total += float(pa[s:s + rows] @ (ok @ pb))
    return min(total, 1.0)


def enforce_rho(ecs: list[np.ndarray], ys: list[np.ndarray], n_classes: int, k: int, rho: float,
                order: np.ndarray | None = None) -> Enforced:
    """Publish value sets per equivalence class and remove values until every edge has ρ(e_i, e_j) ≥ ρ."""
    before = [class_counts(ec, y, n_classes) for ec, y in zip(ecs, ys)]
    freq, frag, offsets = _stack(before)
    sets = freq > 0
    sizes = freq.sum(axis=1)
    cache: dict[tuple, float] = {}

    def level(u: int, v: int) -> float:
        key = (int(sizes[u]), sets[u].tobytes(), int(sizes[v]), sets[v].tobytes())
        if key not in cache:
            cache[key] = rho_level(int(sizes[u]), sets[u], int(sizes[v]), sets[v], k)
        return cache[key]

    def violates(u: int, others: np.ndarray) -> np.ndarray:
        out = np.zeros(len(others), dtype=bool)
        so, su = sets[others], sets[u]
        # only pairs that share a value and where each side has a value the other lacks can fall below 1
        maybe = (so & su).any(axis=1) & (so & ~su).any(axis=1) & (su & ~so).any(axis=1)
        for idx in np.nonzero(maybe)[0]:
            out[idx] = level(u, int(others[idx])) < rho
        return out

    def fix(u: int) -> bool:
        vals = np.nonzero(sets[u])[0]
        if len(vals) < 2:
            return False
        sets[u, vals[np.argmin(freq[u, vals])]] = False
        return True

    _bfs(sets, frag, violates, fix, np.arange(len(sets)) if order is None else order)
    published, distorted = [], []
    for f in range(len(ecs)):
        s = sets[offsets[f]:offsets[f + 1]]
        published.append(s)
        distorted.append(int((before[f] * ~s).sum()))
    return Enforced([y.copy() for y in ys], published, distorted)


def rho_violations(sizes_a, sets_a, sizes_b, sets_b, k: int, rho: float) -> list[tuple[int, int]]:
    """Independent recount for tests and checks: all pairs of classes below the ρ level."""
    out = []
    for i in range(len(sets_a)):
        for j in np.nonzero((sets_b & sets_a[i]).any(axis=1))[0]:
            if rho_level(int(sizes_a[i]), sets_a[i], int(sizes_b[j]), sets_b[j], k) < rho:
                out.append((i, int(j)))
    return out
