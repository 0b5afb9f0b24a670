"""Mondrian multidimensional partitioning (LeFevre, DeWitt, Ramakrishnan 2006), vectorised level by level.

All partitions of one level are split at once. The active rows are kept in one array ordered so that each
partition is a contiguous segment, together with their value codes (one contiguous row per dimension, permuted with
the rows). To judge a dimension, the candidate rows' (partition, code) pairs are counted — a run-length view of
every segment sorted by that dimension, as long as the number of distinct pairs, not of rows — and medians, tie
counts, taxonomy boundaries and loss reductions are all read from those counts (`_Runs`). Rows are reordered only
once per level, along the dimension each partition is actually cut on. There is no Python loop over rows or over
partitions, only over levels (about log2(n / k)) and over the d dimensions tried in turn.

Strict mode without l-diversity or persons first collapses rows with equal quasi-identifiers into one row
weighted by their count (`_distinct_tuples`, when that at least halves the rows; `weights=` below): strict cuts never
separate equal values and every decision reads counts per (partition, value), so the classes — and their labels —
are the row-by-row ones, while each level works on the distinct tuples (Adult resampled to 10⁶ rows: about 30,000).

Choice of dimension: without hierarchies, the widest normalised range (range of the partition / range of the whole
table), then the next widest if that one cannot be split, as in the paper. With hierarchies (see `Hierarchy`) every
dimension is tried and the one promising the largest loss reduction per row is cut: for a taxonomy, the loss of the
partition's lowest common ancestor minus the mean loss left once its children are separated (children with fewer
than k rows counted at the ancestor's loss); for plain numbers, the reduction of normalised range by the cut itself.
This looks one level ahead because a cut between groups of children gains nothing at once but is needed.

Strict mode: each distinct value goes to one side. The two thresholds nearest the median ("< m" and "<= m", m the
lower median) are tried and the more balanced allowable one is taken; if neither leaves k rows on both sides no
threshold on that dimension can. Relaxed mode: the sorted segment is cut at its middle position, so rows equal to
the median may fall on both sides (children's ranges may touch); which of the tied rows go left follows their
current order.

Hierarchies: a median cut inside a taxonomy group leaves both halves published as the same ancestor and gains
nothing. For a dimension with a hierarchy, a partition is cut only between two of its values whose lowest common
ancestor is as shallow as possible (the boundaries between the children of the partition's own ancestor when one
leaves k rows on both sides, else the next level down), the most balanced such cut. Each side then covers fewer
children of that ancestor, so repeated cuts publish strictly lower nodes. In relaxed mode, a partition with no
allowable boundary is cut at its middle position, through a value.

With l-diversity a split is allowable only if both halves have at least k rows and are l-diverse on the sensitive
column (distinct: at least l distinct values; entropy: entropy >= log l).

With `persons` (the person id of every row: the table's person column) k counts distinct persons: a split is
allowable only if both halves hold the rows of at least k persons (counted like distinct l-diversity, on the
(half, person) pairs), and the entropy of the sensitive values weighs each value by the persons holding it in the
group. One person's rows may end in different classes (their quasi-identifiers differ between visits); they count
in each.
"""

from __future__ import annotations

from typing import Protocol, Sequence

import numpy as np
import pandas as pd

__all__ = ["Hierarchy", "partition", "is_l_diverse"]


class Hierarchy(Protocol):
    """What `partition` needs of a dimension's taxonomy (codes are leaf positions in depth-first order)."""

    def cover(self, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(depth, loss in [0, 1]) of the smallest group covering codes lo..hi, element-wise (lo <= hi)."""
        ...


def _code_columns(X: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """Dense value codes (d x n, int32, one contiguous row per column) and each column's sorted distinct values.

    Hash-based factorisation then ranking the few distinct values is much faster than sorting n values."""
    n, d = X.shape
    codes = np.empty((d, n), dtype=np.int32)
    uniques = []
    for j in range(d):
        first, values = pd.factorize(X[:, j], sort=False)
        order = np.argsort(values, kind="stable")
        rank = np.empty(len(values), dtype=np.int32)
        rank[order] = np.arange(len(values), dtype=np.int32)
        codes[j] = rank[first]
        uniques.append(np.asarray(values, dtype=float)[order])
    return codes, uniques


#: rows from which strict Mondrian (no l, no persons) first collapses equal QI tuples into one weighted row
_COLLAPSE_ROWS = 20_000


def _distinct_tuples(codes: np.ndarray, uniques: list[np.ndarray]):
    """(tuple id of every row, the first row of each tuple, rows per tuple) when the rows hold at most half as
    many distinct QI tuples as rows (else None: collapsing would save little). Ids follow first appearance."""
    d, n = codes.shape
    sizes = [max(len(u), 1) for u in uniques]
    if float(np.prod(np.asarray(sizes, dtype=float))) < 2.0**62:  # one mixed-radix key per row
        key = np.zeros(n, dtype=np.int64)
        for j in range(d):
            key = key * sizes[j] + codes[j]
        ids, uniq = pd.factorize(key)
        m = len(uniq)
    else:
        ids = pd.DataFrame(codes.T).groupby(list(range(d)), sort=False).ngroup().to_numpy()
        m = int(ids.max()) + 1 if n else 0
    if 2 * m > n:
        return None
    ids = ids.astype(np.int64)
    first = np.full(m, n, dtype=np.int64)
    np.minimum.at(first, ids, np.arange(n, dtype=np.int64))
    return ids, first, np.bincount(ids, minlength=m).astype(np.int64)


def _diversity(group: np.ndarray, s: np.ndarray, n_groups: int, n_sens: int, diversity: str,
               persons: np.ndarray | None = None) -> np.ndarray:
    """Per group: number of distinct sensitive values, or exp(entropy) (the 'effective' l). `persons`: a value
    counts the distinct persons holding it in the group, not its rows."""
    key = group.astype(np.int64) * n_sens + s
    if persons is not None and diversity != "distinct":
        ids = pd.factorize(key)[0].astype(np.int64)
        first = ~pd.DataFrame({"k": ids, "p": persons}).duplicated().to_numpy()
        key = key[first]
    if diversity == "distinct":  # distinct keys only: a hash lookup, not a sort
        return np.bincount(pd.unique(key) // n_sens, minlength=n_groups).astype(float)
    uk, counts = np.unique(key, return_counts=True)
    g = uk // n_sens
    sizes = np.bincount(g, weights=counts, minlength=n_groups)
    p = counts / sizes[g]
    h = np.bincount(g, weights=-p * np.log(p), minlength=n_groups)
    return np.exp(h)


def _persons_per(group: np.ndarray, persons: np.ndarray, n_groups: int, radix: int,
                 weight: np.ndarray | None) -> np.ndarray:
    """Distinct persons per group; `weight`: a row of person -1 stands for that many persons seen nowhere else."""
    if weight is None:
        return _diversity(group, persons, n_groups, radix, "distinct")
    lone = persons < 0
    out = np.bincount(group[lone], weights=weight[lone], minlength=n_groups).astype(float)
    return out + _diversity(group[~lone], persons[~lone], n_groups, max(radix, 1), "distinct")


class _Runs:
    """The candidate rows of each segment sorted by one dimension, as runs of equal codes: `seg`, `code` and
    `count` of every run in (segment, code) order, `end` its cumulative end position. Positions are those the rows
    would have if the segments were sorted (`cstart` = each segment's first position)."""

    def __init__(self, local: np.ndarray, code: np.ndarray, mult: int, csize: np.ndarray, n_codes: int,
                 weight: np.ndarray | None = None):
        n_seg = csize.size
        if n_seg * n_codes <= 4 * code.size + 4096:  # few possible pairs: count them in place, already sorted
            counts = np.bincount(local * n_codes + code, weights=weight, minlength=n_seg * n_codes)
            counts = counts.astype(np.int64)
            key = np.flatnonzero(counts)
            self.seg, self.code, self.count = key // n_codes, key % n_codes, counts[key]
        else:
            ids, uniq = pd.factorize(local * mult + code)
            count = np.bincount(ids, weights=weight, minlength=len(uniq)).astype(np.int64)
            order = np.argsort(uniq, kind="stable")
            key = uniq[order]
            self.seg, self.code, self.count = key // mult, key % mult, count[order]
        self.end = np.cumsum(self.count)
        self.csize = csize
        self.cstart = np.concatenate(([0], np.cumsum(csize)[:-1]))
        self.total = int(self.end[-1]) if self.end.size else 0

    def run_at(self, position: np.ndarray) -> np.ndarray:
        return np.searchsorted(self.end, position, side="right")

    def code_at(self, position: np.ndarray) -> np.ndarray:
        """Code of the row at each sorted position."""
        return self.code[self.run_at(position)]

    def run_start(self, run: np.ndarray) -> np.ndarray:
        return self.end[run] - self.count[run]


def _hierarchy_cuts(runs: _Runs, seg_dim: np.ndarray, k: int, uniques: list[np.ndarray],
                    hier: Sequence[Hierarchy | None]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per segment: left size of the best hierarchy-aligned cut, whether one leaves k rows on both sides, and the
    mean loss left once the children of the segment's common ancestor are separated (see `partition`).

    Candidate cuts are the boundaries between runs of a segment; a cut's depth is that of the lowest common
    ancestor of the codes either side. Cost: depth first, then imbalance (ties right of the median, like the plain
    strict split)."""
    csize, cstart = runs.csize, runs.cstart
    n_seg = csize.size
    nxt = np.flatnonzero(runs.seg[1:] == runs.seg[:-1]) + 1  # runs that start a boundary inside their segment
    seg = runs.seg[nxt]
    on = np.array([h is not None for h in hier])[seg_dim[seg]]
    nxt, seg = nxt[on], seg[on]
    chg = runs.run_start(nxt)  # sorted position of the first row right of the boundary
    dims = seg_dim[seg]
    depth = np.zeros(chg.size, dtype=np.int64)
    for j in np.unique(dims):
        at = np.flatnonzero(dims == j)
        depth[at] = hier[j].cover(uniques[j][runs.code[nxt[at] - 1]], uniques[j][runs.code[nxt[at]]])[0]
    # loss left if the segment were cut between all children of its common ancestor (runs between its
    # shallowest boundaries): what following this dimension down one level could gain at most
    top = np.full(n_seg, np.iinfo(np.int64).max)
    np.minimum.at(top, seg, depth)
    bound = chg[depth == top[seg]]
    run_start = np.unique(np.concatenate([cstart, bound]))
    run_end = np.r_[run_start[1:], runs.total] - 1
    rs = runs.seg[runs.run_at(run_start)]
    run_loss = np.zeros(run_start.size)
    rdim = seg_dim[rs]
    for j in np.unique(rdim):
        if hier[j] is None:
            continue
        at = np.flatnonzero(rdim == j)
        run_loss[at] = hier[j].cover(uniques[j][runs.code_at(run_start[at])], uniques[j][runs.code_at(run_end[at])])[1]
    # a child run smaller than k cannot stand alone: count it at the segment's own loss
    seg_loss = np.zeros(n_seg)
    for j in np.unique(seg_dim):
        if hier[j] is None:
            continue
        at = np.flatnonzero(seg_dim == j)
        seg_loss[at] = hier[j].cover(uniques[j][runs.code_at(cstart[at])],
                                     uniques[j][runs.code_at(cstart[at] + csize[at] - 1)])[1]
    small = (run_end - run_start + 1) < k
    run_loss[small] = seg_loss[rs[small]]
    child_loss = np.bincount(rs, weights=run_loss * (run_end - run_start + 1), minlength=n_seg) / csize
    offset = chg - cstart[seg]
    size = csize[seg]
    allow = (offset >= k) & (size - offset >= k)
    seg, offset, size, depth = seg[allow], offset[allow], size[allow], depth[allow]
    cost = depth * (4 * int(csize.max(initial=0)) + 4) + 2 * np.abs(2 * offset - size) + (2 * offset < size)
    order = np.lexsort((cost, seg))
    seg, offset = seg[order], offset[order]
    first = np.flatnonzero(np.r_[True, seg[1:] != seg[:-1]]) if seg.size else np.zeros(0, dtype=np.int64)
    left = np.zeros(n_seg, dtype=np.int64)
    found = np.zeros(n_seg, dtype=bool)
    left[seg[first]] = offset[first]
    found[seg[first]] = True
    return left, found, child_loss


def _cut_gain(runs: _Runs, left: np.ndarray, dims: np.ndarray, parent: np.ndarray, uniques: list[np.ndarray],
              span: np.ndarray, hier: Sequence[Hierarchy | None]) -> np.ndarray:
    """Loss reduction per row of cutting each sorted segment after `left` rows (plus a sliver of its width, so
    that among cuts gaining nothing at once the widest dimension still wins)."""
    cstart, csize = runs.cstart, runs.csize
    ends = cstart + csize - 1
    cut = cstart + np.clip(left, 1, csize - 1)
    wl = np.zeros(csize.size)
    wr = np.zeros(csize.size)
    for j in np.unique(dims):
        at = dims == j
        u = uniques[j]
        a, b = u[runs.code_at(cstart[at])], u[runs.code_at(cut[at] - 1)]
        c, e = u[runs.code_at(cut[at])], u[runs.code_at(ends[at])]
        if hier[j] is None:
            wl[at], wr[at] = (b - a) / span[j], (e - c) / span[j]
        else:
            wl[at], wr[at] = hier[j].cover(a, b)[1], hier[j].cover(c, e)[1]
    return (csize * parent - left * wl - (csize - left) * wr) / csize + 1e-3 * parent


def _left_side(runs: _Runs, local: np.ndarray, code: np.ndarray, left: np.ndarray) -> np.ndarray:
    """Whether each candidate row goes left when its segment is cut after `left` sorted rows: codes below the
    cut's code, and of the rows tied at it the first ones in their current order."""
    pos = runs.cstart + np.minimum(left, runs.csize - 1)
    run = runs.run_at(pos)
    cut_code = runs.code[run]
    extra = pos - runs.run_start(run) + (left >= runs.csize)  # tied rows that still go left
    tie = code == cut_code[local]
    rank = np.cumsum(tie) - 1
    first = np.flatnonzero(np.r_[True, local[1:] != local[:-1]])
    before = np.repeat(rank[first] - tie[first] + 1, np.diff(np.r_[first, local.size]))
    return (code < cut_code[local]) | (tie & (rank - before < extra[local]))


def is_l_diverse(sensitive, l: int, diversity: str = "distinct", persons: np.ndarray | None = None) -> bool:
    """Whether one group of sensitive values is l-diverse (used to check the whole table before partitioning)."""
    s = pd.factorize(np.asarray(sensitive), use_na_sentinel=False)[0]
    if s.size == 0:
        return False
    value = _diversity(np.zeros(s.size, dtype=np.int64), s, 1, int(s.max()) + 1, diversity, persons)[0]
    return bool(value >= l - 1e-9)


def partition(X: np.ndarray, k: int, *, mode: str = "strict", sensitive: np.ndarray | None = None,
              l: int | None = None, diversity: str = "distinct",
              hierarchies: Sequence[Hierarchy | None] | None = None,
              weights: np.ndarray | None = None, persons: np.ndarray | None = None,
              person_weight: np.ndarray | None = None) -> np.ndarray:
    """Equivalence-class id (0..C-1, int64) of every row of X (n x d numbers: quasi-identifiers coded).

    Every class has at least k rows (and is l-diverse on `sensitive` when l is given). `hierarchies` (one per
    column, None for plain numbers) makes cuts follow taxonomy groups. Raises ValueError when the whole table
    already violates the requirement (fewer than k rows, or not l-diverse).

    `weights` (strict mode, no l): each row of X stands for that many identical rows — the distinct tuples of a
    table larger than memory with their counts (kanon/mondrian_sql.py). Strict cuts never separate equal
    values, and every decision reads only counts per (partition, value), so the classes are those of the
    expanded table, tuple by tuple.

    `persons` (one id per row): every class holds the rows of at least k distinct persons (module docstring).
    With `weights` too (strict mode), each row of X is one (QI tuple, person) pair standing for that person's rows
    with those values: the cuts read rows (the weights) and the split test distinct persons (the pairs), as on the
    expanded table (kanon/mondrian_sql.py with a person column). `person_weight` (with weighted pairs): a pair
    whose person is -1 stands for that many persons whose rows all share its tuple (seen in no other pair).
    """
    X = np.asarray(X, dtype=float)
    if X.ndim == 1:
        X = X[:, None]
    n, d = X.shape
    if mode not in ("strict", "relaxed"):
        raise ValueError(f"mode must be 'strict' or 'relaxed', not {mode!r}")
    if diversity not in ("distinct", "entropy"):
        raise ValueError(f"diversity must be 'distinct' or 'entropy', not {diversity!r}")
    k = int(k)
    if k < 1:
        raise ValueError("k must be at least 1")
    if weights is not None:
        if mode != "strict" or (l is not None and l > 1):
            raise ValueError("weighted rows need strict mode without l-diversity")
        weights = np.asarray(weights, dtype=np.int64)
        if weights.shape != (n,) or (weights < 1).any():
            raise ValueError("weights must be one positive count per row")
    total = int(weights.sum()) if weights is not None else n
    if total < k:
        raise ValueError(f"the table has {total} rows, fewer than k = {k}")
    use_p = persons is not None
    pw = None
    if use_p:
        if person_weight is not None:  # persons given as codes, -1 for pairs of persons counted, not listed
            p_codes = np.asarray(persons, dtype=np.int64)
            pw = np.asarray(person_weight, dtype=np.int64)
            lone = p_codes < 0
            n_pers = int(p_codes.max(initial=-1)) + 1  # the radix of the listed persons' codes
            total_pers = int(np.unique(p_codes[~lone]).size) + int(pw[lone].sum())
        else:
            p_codes = pd.factorize(np.asarray(persons), use_na_sentinel=False)[0].astype(np.int64)
            n_pers = int(p_codes.max()) + 1 if n else 0
            total_pers = n_pers
        if p_codes.size != n:
            raise ValueError("person column length differs from X")
        if total_pers < k:
            raise ValueError(f"the table has {total_pers} persons, fewer than k = {k}")
    if np.isnan(X).any():
        raise ValueError("quasi-identifier codes contain NaN; code missing values first")
    hier = list(hierarchies) if hierarchies is not None else [None] * d
    if len(hier) != d:
        raise ValueError(f"{len(hier)} hierarchies for {d} columns")
    is_hier = np.array([h is not None for h in hier], dtype=bool)
    by_gain = bool(is_hier.any())
    use_l = l is not None and l > 1 and sensitive is not None
    if use_l:
        s_codes = pd.factorize(np.asarray(sensitive), use_na_sentinel=False)[0].astype(np.int64)
        if s_codes.size != n:
            raise ValueError("sensitive column length differs from X")
        n_sens = int(s_codes.max()) + 1 if n else 1
        if not is_l_diverse(s_codes, l, diversity, p_codes if use_p else None):
            raise ValueError(f"the whole table is not {l}-diverse ({diversity}); no partition can be")
    labels = np.full(n, -1, dtype=np.int64)
    if n == 0:
        return labels
    if d == 0:
        labels[:] = 0
        return labels

    codes, uniques = _code_columns(X)
    if mode == "strict" and weights is None and not use_l and not use_p and n >= _COLLAPSE_ROWS:
        tuples = _distinct_tuples(codes, uniques)
        if tuples is not None:  # strict cuts read only counts per (partition, value): the tuples with counts
            ids, first, counts = tuples
            return partition(X[first], k, mode="strict", hierarchies=hierarchies, weights=counts)[ids]
    span = np.array([u[-1] - u[0] for u in uniques], dtype=float)
    span[span == 0] = np.inf  # a constant column never widens anything
    mult = n + 1  # run key = segment * mult + code, codes < n

    aw = weights  # the weight of each active row (None: 1 each)
    active = np.arange(n, dtype=np.int64)  # rows of unfinished partitions, grouped by partition
    acodes = codes.copy()  # their codes in the same order: contiguous reads, permuted with `active`
    asens = s_codes.copy() if use_l else None
    apers = p_codes.copy() if use_p else None
    apw = pw.copy() if pw is not None else None
    pid = np.zeros(n, dtype=np.int64)  # partition id (0..P-1, nondecreasing along `active`)
    next_label = 0
    while active.size:
        P = int(pid[-1]) + 1
        rows_in = np.bincount(pid, minlength=P)  # entries of `active` per partition
        sizes = rows_in if aw is None else np.bincount(pid, weights=aw, minlength=P).astype(np.int64)
        starts = np.concatenate(([0], np.cumsum(rows_in)[:-1]))
        # normalised width of every partition on every dimension
        width = np.empty((P, d))
        for j in range(d):
            lo = uniques[j][np.minimum.reduceat(acodes[j], starts)]
            hi = uniques[j][np.maximum.reduceat(acodes[j], starts)]
            width[:, j] = (hi - lo) / span[j]
            if hier[j] is not None:  # loss of the common ancestor; the range only breaks ties
                width[:, j] = hier[j].cover(lo, hi)[1] + 1e-6 * width[:, j]
        order = np.argsort(-width, axis=1, kind="stable")
        undecided = (sizes >= 2 * k) & (width.max(axis=1) > 0)
        left_count = np.zeros(P, dtype=np.int64)
        cut_dim = np.zeros(P, dtype=np.int64)
        split = np.zeros(P, dtype=bool)
        best_score = np.full(P, -np.inf)
        best_dim = np.full(P, -1, dtype=np.int64)
        best_left = np.zeros(P, dtype=np.int64)
        rank = np.empty((P, d), dtype=np.int64)  # position of each dimension in a partition's width order
        rank[np.arange(P)[:, None], order] = np.arange(d)[None, :]
        best_rank = np.full(P, d, dtype=np.int64)
        # with hierarchies every dimension is scored (one dimension at a time: one gather, one count); without,
        # the widest dimension first and the next only where it cannot be cut (pass r = r-th widest)
        for r in range(d):
            if by_gain:
                dim = np.full(P, r, dtype=np.int64)
            else:
                dim = order[:, r]
            cand = undecided & (width[np.arange(P), dim] > 0)
            if not cand.any():
                if by_gain:
                    continue
                break
            cp = np.flatnonzero(cand)
            csize = sizes[cp]
            dd = dim[cp]
            if cp.size == P:
                pos = None
                local = pid
            else:
                pos = np.flatnonzero(cand[pid])  # positions in `active`, contiguous per partition
                local = (np.cumsum(cand) - 1)[pid[pos]]
            if by_gain:
                code = (acodes[r] if pos is None else acodes[r][pos]).astype(np.int64)
            else:
                code = np.empty(active.size if pos is None else pos.size, dtype=np.int64)
                row_dim = dd[local]
                for j in np.unique(dd):
                    at = np.flatnonzero(row_dim == j)
                    code[at] = acodes[j][at if pos is None else pos[at]]
            runs = _Runs(local, code, mult, csize, int(max(len(uniques[j]) for j in np.unique(dd))),
                         None if aw is None else (aw if pos is None else aw[pos]))
            cstart = runs.cstart
            if mode == "strict":
                mrun = runs.run_at(cstart + (csize - 1) // 2)
                lt = runs.run_start(mrun) - cstart
                le = runs.end[mrun] - cstart
                ok_lt = (lt >= k) & (csize - lt >= k)
                ok_le = (le >= k) & (csize - le >= k)
                better_lt = ok_lt & (~ok_le | (np.abs(2 * lt - csize) < np.abs(2 * le - csize)))
                left = np.where(better_lt, lt, le)
                ok = ok_lt | ok_le
            else:
                left = csize // 2
                ok = left >= k
            on_tree = is_hier[dd]
            if on_tree.any():
                hl, found, child_loss = _hierarchy_cuts(runs, dd, k, uniques, hier)
                use = on_tree & (found | (mode == "strict"))
                left = np.where(use, hl, left)
                ok = np.where(on_tree, found | (mode != "strict"), ok)
            if (use_l or use_p) and ok.any():
                side = ~_left_side(runs, local, code, left)
                half = local * 2 + side
                cand_pers = None if not use_p else (apers if pos is None else apers[pos])
                if use_p:  # both halves hold the rows of at least k persons
                    npers = _persons_per(half, cand_pers, 2 * cp.size, n_pers,
                                         None if apw is None else (apw if pos is None else apw[pos]))
                    ok &= (npers[0::2] >= k) & (npers[1::2] >= k)
                if use_l:
                    div = _diversity(half, asens if pos is None else asens[pos], 2 * cp.size, n_sens,
                                     diversity, cand_pers)
                    ok &= (div[0::2] >= l - 1e-9) & (div[1::2] >= l - 1e-9)
            if by_gain:
                score = _cut_gain(runs, left, dd, width[cp, dd], uniques, span, hier)
                if on_tree.any():
                    score = np.where(on_tree, width[cp, dd] * (1 + 1e-3) - child_loss, score)
                # the best score wins; on a tie the wider dimension (tried first in width order)
                rk = rank[cp, dd]
                better = ok & ((score > best_score[cp]) | ((score == best_score[cp]) & (rk < best_rank[cp])))
                best_score[cp[better]] = score[better]
                best_dim[cp[better]] = dd[better]
                best_left[cp[better]] = left[better]
                best_rank[cp[better]] = rk[better]
                continue
            done = cp[ok]
            split[done] = True
            left_count[done] = left[ok]
            cut_dim[done] = dd[ok]
            undecided[done] = False
        if by_gain:
            split = best_dim >= 0
            left_count, cut_dim = best_left, np.maximum(best_dim, 0)
        # partitions that could not split become classes, the others are replaced by their two halves
        fin = ~split
        n_fin = int(fin.sum())
        if n_fin:
            fin_rank = np.cumsum(fin) - 1 + next_label
            row_fin = fin[pid]
            labels[active[row_fin]] = fin_rank[pid[row_fin]]
            next_label += n_fin
        if not split.any():
            break
        # the one reordering of the level: rows of split partitions sorted by the dimension they are cut on
        keep = split[pid]
        pos = np.flatnonzero(keep)
        seg = pid[pos]
        row_dim = cut_dim[seg]
        code = np.empty(pos.size, dtype=np.int64)
        for j in np.unique(cut_dim[split]):
            at = np.flatnonzero(row_dim == j)
            code[at] = acodes[j][pos[at]]
        srt = np.argsort(seg * mult + code, kind="stable")
        pos = pos[srt]
        seg = seg[srt]
        new_base = (np.cumsum(split) - 1) * 2
        if aw is None:
            offset = np.arange(pos.size) - (np.cumsum(np.r_[0, sizes[split]])[:-1])[(np.cumsum(split) - 1)[seg]]
        else:  # rows before this one in its sorted segment, counted with their weights
            w = aw[pos]
            before = np.cumsum(w) - w
            offset = before - (np.cumsum(np.r_[0, sizes[split]])[:-1])[(np.cumsum(split) - 1)[seg]]
        side = (offset >= left_count[seg]).astype(np.int64)
        pid = new_base[seg] + side
        active = active[pos]
        acodes = acodes[:, pos]
        if aw is not None:
            aw = aw[pos]
        if use_l:
            asens = asens[pos]
        if use_p:
            apers = apers[pos]
            if apw is not None:
                apw = apw[pos]
    return labels
