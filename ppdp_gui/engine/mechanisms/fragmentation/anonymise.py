"""The fragmentation pipeline as plain functions on arrays: fragments -> per-fragment Mondrian -> class enforcement.

Kept apart from the Mechanism class so the reproduction script and tests can call each step directly.
"""

from __future__ import annotations

import numpy as np

from ppdp_gui.engine.mechanisms.fragmentation import diversity, enforce
from ppdp_gui.engine.mechanisms.fragmentation.segments import segment
from ppdp_gui.engine.mechanisms.kanon.mondrian_core import partition

STRATEGIES = ("naive", "dependency graph", "ρ-selectivity")


def partition_fragments(codes: list[np.ndarray], y: np.ndarray, k: int, *, mode: str = "strict",
                        persons: np.ndarray | None = None) -> list[np.ndarray]:
    """Mondrian k-anonymity on each fragment's coded quasi-identifiers, independently (step 2); `persons`: every
    class holds the rows of at least k distinct persons."""
    return [partition(c, k, mode=mode, persons=persons) for c in codes]


def partition_l_diverse(codes: list[np.ndarray], all_codes: np.ndarray, y: np.ndarray, k: int, l: int,
                        *, mode: str = "strict", max_segments: int = 0,
                        persons: np.ndarray | None = None) -> tuple[list[np.ndarray], np.ndarray]:
    """Fragmentation-based l-diversity (§5): segments, then every chunk cut into classes holding all of the
    segment's class values (its diversity level l_s, steps 3-4). With a single segment (the one-segment mode, or
    a table the class-oriented clustering does not divide) every class holds l values, not all of them: asking a
    10-class table's groups for all 10 values cost 75-86 % of the information; the join condition is then met by
    `diversity.repair`. Returns (class id per row per fragment, segment per row)."""
    # segments are cut on row counts; with a person column the records stay in one segment, so every class can
    # be asked for k persons (a segment of fewer than k persons could not be partitioned)
    seg = segment(all_codes, y, k, l, max_segments=1 if persons is not None else (max_segments or None))
    ecs = [np.zeros(len(y), dtype=np.int64) for _ in codes]
    offsets = [0] * len(codes)
    one = int(seg.max()) == 0
    for s in range(int(seg.max()) + 1):
        rows = np.nonzero(seg == s)[0]
        l_s = l if one else len(np.unique(y[rows]))
        for f, c in enumerate(codes):
            part = partition(c[rows], k, mode=mode, sensitive=y[rows], l=l_s, diversity="distinct",
                             persons=None if persons is None else persons[rows])
            ecs[f][rows] = part + offsets[f]
            offsets[f] += int(part.max()) + 1
    return ecs, seg


def enforce_classes(ecs: list[np.ndarray], y: np.ndarray, n_classes: int, k: int, strategy: str,
                    rho: float = 0.5, order_rng=None) -> enforce.Enforced:
    """Step 3: make joins on the class column k-anonymous with the chosen strategy."""
    ys = [y] * len(ecs)
    order = None
    if order_rng is not None:
        order = np.asarray(order_rng.permutation(sum(int(e.max()) + 1 for e in ecs)))
    if strategy == "naive":
        return enforce.enforce_naive(ecs, ys, n_classes)
    if strategy == "dependency graph":
        return enforce.enforce_dependency_graph(ecs, ys, n_classes, k, order=order)
    if strategy == "ρ-selectivity":
        return enforce.enforce_rho(ecs, ys, n_classes, k, rho, order=order)
    raise ValueError(f"unknown strategy {strategy!r}; one of {', '.join(STRATEGIES)}")


def join_violations(ecs: list[np.ndarray], result: enforce.Enforced, n_classes: int, k: int,
                    rho: float | None = None, persons: np.ndarray | None = None) -> int:
    """Pairs of classes (any two fragments) whose join on the class breaks k-anonymity (or the ρ level); with
    `persons` (the person of each row) a join's tuples are pairs of distinct persons."""
    total = 0
    for a in range(len(ecs)):
        for b in range(a + 1, len(ecs)):
            if result.published is not None:
                na, nb = np.bincount(ecs[a]), np.bincount(ecs[b])  # the ρ level: versions of rows (the paper's)
                total += len(enforce.rho_violations(na, result.published[a], nb, result.published[b], k, rho))
                if persons is not None:  # and the join itself, in pairs of distinct persons
                    ca = enforce.class_counts(ecs[a], result.labels[a], n_classes, persons) * result.published[a]
                    cb = enforce.class_counts(ecs[b], result.labels[b], n_classes, persons) * result.published[b]
                    total += len(enforce.violating_pairs(ca, cb, k))
            else:
                ca = enforce.class_counts(ecs[a], result.labels[a], n_classes, persons)
                cb = enforce.class_counts(ecs[b], result.labels[b], n_classes, persons)
                total += len(enforce.violating_pairs(ca, cb, k))
    return total


def partition_all(codes: list[np.ndarray], y: np.ndarray, k: int, *, l: int = 0, mode: str = "strict",
                  all_codes: np.ndarray | None = None, max_segments: int = 0,
                  persons: np.ndarray | None = None) -> tuple[list[np.ndarray], np.ndarray | None]:
    """Step 2 for k-anonymity (l < 2) or the l-diversity extension (l ≥ 2, class = sensitive column);
    `persons`: k counts distinct persons in every fragment's classes."""
    if l and l > 1:
        return partition_l_diverse(codes, np.column_stack(codes) if all_codes is None else all_codes,
                                   y, k, l, mode=mode, max_segments=max_segments, persons=persons)
    return partition_fragments(codes, y, k, mode=mode, persons=persons), None


def enforce_all(ecs: list[np.ndarray], y: np.ndarray, k: int, *, l: int = 0, strategy: str = "dependency graph",
                rho: float = 0.5, order_rng=None, persons: np.ndarray | None = None) -> enforce.Enforced:
    """Step 3 for k-anonymity: make joins on the class k-anonymous with the chosen strategy. (With l ≥ 2 use
    `enforce_diverse`: class values are kept and groups merged instead.) With `persons` the strategy works on
    rows as the paper states it, then every pair still joining into fewer than k pairs of distinct persons (one
    patient's several rows with a rare value) is repaired (`enforce.person_repair`)."""
    if l and l > 1:
        raise ValueError("with l ≥ 2 the join condition is met by enforce_diverse, which keeps class values")
    n_classes = int(y.max()) + 1
    done = enforce_classes(ecs, y, n_classes, k, strategy, rho, order_rng)
    if persons is None:
        return done
    labels, published = enforce.person_repair(ecs, done.labels, n_classes, k, persons, done.published)
    if published is None:
        distorted = [int((lab != y).sum()) for lab in labels]
    else:
        distorted = [int((~p[ec, y]).sum()) for p, ec in zip(published, ecs)]
    return enforce.Enforced(labels, published, distorted)


def enforce_diverse(ecs: list[np.ndarray], y: np.ndarray, k: int, l: int, codes: list[np.ndarray],
                    republish=None, persons: np.ndarray | None = None) -> tuple[list[np.ndarray], enforce.Enforced, int]:
    """Step 3 of the l-diversity extension: class values stay as they are (Theorem 5.1), and the groups of record-
    sharing pairs whose join keeps fewer than k tuples or l common values are merged (`diversity.repair`;
    `republish(f, parts)` gives fragment f's published groups for a partition, default: the partition itself).
    Returns (groups per fragment, kept class values, merges made)."""
    n_classes = int(y.max()) + 1
    ecs, merges = diversity.repair(ecs, y, n_classes, k, l, codes, republish or (lambda f, parts: parts),
                                   persons=persons)
    return ecs, enforce.Enforced([y.copy() for _ in ecs], None, [0] * len(ecs)), merges
