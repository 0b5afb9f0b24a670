"""The l-diversity extension's join condition (seed 002, §5), for any number of class values.

A reader who knows someone's quasi-identifiers finds the group holding their row in each fragment and joins those
groups on the class. The groups that can be joined that way are the pairs that hold parts of the same records; for
each such pair the join must keep at least k tuples and at least l class values in common — otherwise the join
narrows the person's class to fewer than l values. (Two groups with no record in common only make tuples that are
nobody's.) The paper gets this for free within a segment by asking every group of a chunk for *all* its segment's
class values (Theorem 5.1); the one-segment mode asks each group for l values only, so some pairs fall short, and
groups published from different segments can share a record through the published labels.

Such pairs are repaired by merging groups inside one fragment — never by changing class values, which is what
broke l-diversity before: the dependency-graph repair of the k-anonymity variant relabelled rows to their group's
majority and left groups with one class value. A merged group holds the union of both groups' rows and values, so
each fragment stays k-anonymous and l-diverse, and the merge is published as one wider range.
"""

from __future__ import annotations

import numpy as np

from ppdp_gui.engine.mechanisms.fragmentation.enforce import class_counts


def shared_pairs(ec_a: np.ndarray, ec_b: np.ndarray) -> np.ndarray:
    """(i, j) pairs of groups of two fragments that hold parts of at least one common record."""
    nb = int(ec_b.max()) + 1
    keys = np.unique(ec_a.astype(np.int64) * nb + ec_b)
    return np.column_stack([keys // nb, keys % nb])


def join_shortfalls(ecs: list[np.ndarray], y: np.ndarray, n_classes: int, k: int,
                    l: int, persons: np.ndarray | None = None) -> list[tuple[int, int, np.ndarray]]:
    """For every two fragments (f, g): the record-sharing group pairs whose join on the class has fewer than k
    tuples or fewer than l class values in common, as (f, g, array of (i, j)). With `persons` (the person of each
    row) a tuple is a pair of distinct persons: one patient's several rows in both groups make one tuple."""
    out = []
    for f in range(len(ecs)):
        for g in range(f + 1, len(ecs)):
            ca, cb = class_counts(ecs[f], y, n_classes, persons), class_counts(ecs[g], y, n_classes, persons)
            pairs = shared_pairs(ecs[f], ecs[g])
            a, b = ca[pairs[:, 0]], cb[pairs[:, 1]]
            tuples = (a * b).sum(axis=1)
            common = ((a > 0) & (b > 0)).sum(axis=1)
            bad = (tuples < k) | (common < l)
            if bad.any():
                out.append((f, g, pairs[bad]))
    return out


def _partner(group: int, counts: np.ndarray, centre: np.ndarray, taken: np.ndarray) -> int:
    """The group to merge `group` with: among the others not merged this round, the nearest (in the coded
    quasi-identifiers) of those that add a class value it lacks; if none adds one, the nearest."""
    present = counts > 0
    adds = (present & ~present[group]).any(axis=1)
    dist = np.abs(centre - centre[group]).sum(axis=1).astype(float)
    dist[group] = np.inf
    dist[taken] = np.inf
    if np.isfinite(dist[adds]).any():
        dist[~adds] = np.inf
    return int(np.argmin(dist))


def merge_round(ec: np.ndarray, y: np.ndarray, n_classes: int, codes: np.ndarray,
                groups: np.ndarray) -> np.ndarray:
    """One round of merges in one fragment: each group in `groups` (most violations first) joins a partner;
    a group takes part in at most one merge per round. Returns the new group id per row (dense)."""
    counts = class_counts(ec, y, n_classes)
    n = counts.shape[0]
    size = np.bincount(ec, minlength=n)
    centre = np.zeros((n, codes.shape[1]))
    np.add.at(centre, ec, codes)
    centre /= np.maximum(size, 1)[:, None]
    target = np.arange(n)
    taken = np.zeros(n, dtype=bool)
    for grp in groups:
        if taken[grp]:
            continue
        other = _partner(grp, counts, centre, taken)
        if other == grp or taken[other]:
            continue
        target[other] = grp
        taken[grp] = taken[other] = True
    return np.unique(target[ec], return_inverse=True)[1].astype(np.int64)


def repair(ecs: list[np.ndarray], y: np.ndarray, n_classes: int, k: int, l: int, codes: list[np.ndarray],
           republish, max_rounds: int = 10_000, persons: np.ndarray | None = None) -> tuple[list[np.ndarray], int]:
    """Merge groups until no record-sharing pair falls short. `republish(f, parts)` returns fragment f's published
    group per row for partition `parts` (ranges wide enough to cover each merged group; labels that snap to the
    same cells merge further). Returns (groups per fragment, merges made)."""
    ecs = list(ecs)
    merges = 0
    for _ in range(max_rounds):
        short = join_shortfalls(ecs, y, n_classes, k, l, persons)
        if not short:
            return ecs, merges
        # the fragment and groups involved in most shortfalls go first
        votes: dict[int, np.ndarray] = {}
        for f, g, pairs in short:
            votes[f] = votes.get(f, np.zeros(int(ecs[f].max()) + 1, dtype=np.int64)) + np.bincount(
                pairs[:, 0], minlength=int(ecs[f].max()) + 1)
            votes[g] = votes.get(g, np.zeros(int(ecs[g].max()) + 1, dtype=np.int64)) + np.bincount(
                pairs[:, 1], minlength=int(ecs[g].max()) + 1)
        f = max(votes, key=lambda x: (votes[x].max(), -x))
        v = votes[f]
        groups = np.nonzero(v)[0]
        groups = groups[np.argsort(-v[groups], kind="stable")]
        before = int(ecs[f].max()) + 1
        parts = merge_round(ecs[f], y, n_classes, codes[f], groups)
        ecs[f] = republish(f, parts)
        merges += before - (int(ecs[f].max()) + 1)
        if int(ecs[f].max()) + 1 >= before:  # nothing could be merged (cannot happen: one group has every value)
            break
    raise RuntimeError("the l-diversity join condition could not be met by merging groups")
