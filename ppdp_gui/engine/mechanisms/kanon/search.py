"""Find the best node of the generalisation lattice: exact with pruning up to 100,000 nodes, else a heuristic.

Exact search (our own, built on the two facts Flash and OLA use — monotone privacy and monotone lower bounds):
1. *Greedy descent* from the most general node: evaluate every direct specialisation (one QI one level lower),
   move to the anonymous one with the best score, until none is anonymous. A few dozen evaluations give a good
   first score `best`.
2. *Region*: only nodes whose lower bound (quality.py) is below `best` can win; since bounds never fall when a level
   rises, this region is closed under specialisation.
   - Monotone privacy (models.py): visit the region top-down (most general first, then by bound). A node found
     not anonymous makes every specialisation not anonymous (tagged without evaluating); this removes most of the
     region, because the region's lower part is mostly too specific. An anonymous node may lower `best`, which
     shrinks the region.
   - Otherwise: visit the region by increasing bound and stop at the first bound ≥ `best`.
   Every node is then known: anonymous, not anonymous (evaluated or inferred), or pruned (its bound ≥ the
   optimum). The optimum is proven; ties keep the node visited first.

Heuristic (more than 100,000 nodes, where listing the lattice is too costly): the greedy descent, then a local
search around the best node (one QI lower; one lower and another higher) while it improves, within a time limit.
The result is anonymous and recounted like any other, but not proven optimal, and the release says so.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Iterator

import numpy as np

from ppdp_gui.engine.mechanisms.base import Progress
from ppdp_gui.engine.mechanisms.kanon.lattice import MAX_EXACT_NODES, Encoded, Lattice
from ppdp_gui.engine.mechanisms.kanon.models import ClassVerdict, PrivacyModels, SensitiveDistance, judge
from ppdp_gui.engine.mechanisms.kanon.quality import Quality

# node states in the lattice record
UNKNOWN, ANONYMOUS, NOT_ANONYMOUS, INFERRED_NOT, PRUNED = 0, 1, 2, 3, 4
STATE_NAMES = {UNKNOWN: "not visited", ANONYMOUS: "anonymous", NOT_ANONYMOUS: "not anonymous",
               INFERRED_NOT: "not anonymous (inferred)", PRUNED: "pruned (cannot beat the optimum)"}


@dataclass
class NodeResult:
    """One evaluated node."""

    levels: tuple[int, ...]
    anonymous: bool
    n_suppressed: int
    score: float
    per_qi: np.ndarray
    classes: int  # released classes (suppressed ones not counted)
    cls: np.ndarray = field(repr=False)  # class id of every tuple
    verdict: ClassVerdict = field(repr=False)


class Evaluator:
    """Evaluates nodes: group the tuples, apply the privacy models, score the quality."""

    def __init__(self, enc: Encoded, models: PrivacyModels, quality: Quality,
                 distance: SensitiveDistance | None = None):
        self.enc, self.models, self.quality, self.distance = enc, models, quality, distance
        self.evaluations = 0

    def __call__(self, levels) -> NodeResult:
        levels = tuple(int(x) for x in levels)
        cls, n_cls = self.enc.node_groups(levels)
        verdict = judge(self.models, cls, n_cls, self.enc.count, self.enc.sensitive, self.enc.n_sensitive,
                        self.enc.n_rows, self.distance, getattr(self.enc, "person", None),
                        getattr(self.enc, "person_weight", None))
        self.evaluations += 1
        if verdict.anonymous:
            score, per = self.quality.score(levels, cls, verdict)
        else:
            score, per = np.inf, np.full(len(levels), np.nan)
        classes = int(((verdict.sizes > 0) & ~verdict.suppressed).sum())
        return NodeResult(levels, verdict.anonymous, verdict.n_suppressed, score, per, classes, cls, verdict)


@dataclass
class SearchResult:
    best: NodeResult | None
    proven_optimal: bool
    lattice: dict  # what the Search tab draws (see `lattice_record`)
    evaluations: int
    seconds: float


class _Trace:
    """What the search learnt about each node it touched (for the lattice record)."""

    def __init__(self):
        self.state: dict[int, int] = {}
        self.score: dict[int, float] = {}
        self.suppressed: dict[int, int] = {}
        self.lb: np.ndarray | None = None
        self.all_levels: np.ndarray | None = None

    def evaluated(self, index: int, res: NodeResult) -> None:
        self.state[index] = ANONYMOUS if res.anonymous else NOT_ANONYMOUS
        self.score[index] = res.score
        self.suppressed[index] = res.n_suppressed


def _better(res: NodeResult, best: NodeResult | None) -> bool:
    return res.anonymous and (best is None or res.score < best.score - 1e-12)


def search(enc: Encoded, evaluate: Evaluator, *, time_limit: float = 60.0,
           clock: Callable[[], float] = time.perf_counter) -> Iterator[Progress | SearchResult]:
    """Yield Progress, then one SearchResult."""
    started = clock()
    lattice = Lattice(tuple(q.height for q in enc.qis))
    trace = _Trace()
    seen: dict[int, NodeResult] = {}

    def visit(levels) -> NodeResult:
        idx = lattice.index(levels)
        if idx not in seen:
            seen[idx] = evaluate(levels)
            trace.evaluated(idx, seen[idx])
        return seen[idx]

    # 1. greedy descent from the top
    best: NodeResult | None = None
    current = visit(lattice.top)
    if current.anonymous:
        best = current
    while current.anonymous:
        preds = [tuple(lv - (i == j) for i, lv in enumerate(current.levels)) for j in range(len(current.levels))
                 if current.levels[j] > 0]
        results = [visit(p) for p in preds]
        good = [r for r in results if r.anonymous]
        if not good:
            break
        current = min(good, key=lambda r: r.score)
        if _better(current, best):
            best = current
        yield Progress(0.05, f"greedy descent: {evaluate.evaluations} nodes evaluated")
    exact = lattice.size <= MAX_EXACT_NODES
    if exact:
        best = yield from _exact(lattice, evaluate, visit, trace, best, clock)
    else:
        best = yield from _local(lattice, evaluate, visit, best, started + time_limit, clock)
    record = lattice_record(lattice, trace, best, exact, evaluate.quality)
    yield SearchResult(best, exact, record, evaluate.evaluations, clock() - started)


def _exact(lattice: Lattice, evaluate: Evaluator, visit, trace: _Trace, best: NodeResult | None, clock):
    levels = lattice.all_levels()
    lb = evaluate.quality.lower_bounds(levels)
    if lb is None:
        lb = np.zeros(lattice.size)
    state = np.zeros(lattice.size, dtype=np.int8)
    for idx, st in trace.state.items():
        state[idx] = st
        if st == NOT_ANONYMOUS and evaluate.models.monotone:
            _tag_below(levels, state, levels[idx])
    monotone = evaluate.models.monotone
    if monotone:
        height = levels.sum(axis=1, dtype=np.int64)
        order = np.lexsort((np.arange(lattice.size), lb, -height))
    else:
        order = np.lexsort((np.arange(lattice.size), lb))
    last = clock()
    total = max(1, lattice.size)
    for step, idx in enumerate(order):
        limit = best.score if best is not None else np.inf
        if lb[idx] >= limit - 1e-12:
            if monotone:
                continue  # top-down: later nodes may still have smaller bounds
            break
        if state[idx] != UNKNOWN:
            continue
        res = visit(tuple(levels[idx].tolist()))
        state[idx] = ANONYMOUS if res.anonymous else NOT_ANONYMOUS
        if res.anonymous:
            if _better(res, best):
                best = res
        elif monotone:
            _tag_below(levels, state, levels[idx])
        now = clock()
        if now - last > 0.2:
            last = now
            yield Progress(0.05 + 0.9 * step / total,
                           f"lattice search: {evaluate.evaluations:,} of {lattice.size:,} nodes evaluated")
    for idx in np.flatnonzero(state == INFERRED_NOT):
        trace.state.setdefault(int(idx), INFERRED_NOT)
    final = best.score if best is not None else np.inf
    for idx in np.flatnonzero((state == UNKNOWN) & (lb >= final - 1e-12)):
        trace.state[int(idx)] = PRUNED
    trace.lb, trace.all_levels = lb, levels
    return best


def _tag_below(levels: np.ndarray, state: np.ndarray, node: np.ndarray) -> None:
    """Every specialisation of `node` not yet known is not anonymous (monotone privacy)."""
    below = (levels <= node[None, :]).all(axis=1) & (state == UNKNOWN)
    state[below] = INFERRED_NOT


def _local(lattice: Lattice, evaluate: Evaluator, visit, best: NodeResult | None, deadline: float, clock):
    """Local search around the best node until it stops improving or time runs out."""
    if best is None:
        return None
    improved, last = True, clock()
    d = len(lattice.heights)
    while improved and clock() < deadline:
        improved = False
        base = best.levels
        moves = []
        for j in range(d):
            if base[j] > 0:
                down = list(base)
                down[j] -= 1
                moves.append(tuple(down))
                for i in range(d):
                    if i != j and base[i] < lattice.heights[i]:
                        swap = list(down)
                        swap[i] += 1
                        moves.append(tuple(swap))
        moves.sort(key=evaluate.quality.bound_of)
        for levels in moves:
            if clock() >= deadline:
                break
            if evaluate.quality.bound_of(levels) >= best.score - 1e-12:
                continue
            res = visit(levels)
            if _better(res, best):
                best, improved = res, True
                break
            if clock() - last > 0.2:
                last = clock()
                yield Progress(0.5, f"heuristic search: {evaluate.evaluations:,} nodes evaluated")
    return best


def lattice_record(lattice: Lattice, trace: _Trace, best: NodeResult | None, exact: bool,
                   quality: Quality) -> dict:
    """The generic description of the candidates searched, for the custodian and the window's Search tab:
    every node touched with its levels, state, score, suppressed rows and lower bound, and the optimum."""
    idx = np.array(sorted(trace.state), dtype=np.int64)
    if trace.all_levels is not None:
        lvl = trace.all_levels[idx].astype(np.int16)
    else:
        lvl = np.array([lattice.levels(int(i)) for i in idx], dtype=np.int16).reshape(len(idx), -1)
    lb = trace.lb
    bounds = lb[idx] if lb is not None else np.array([quality.bound_of(v) for v in lvl]) if len(idx) else \
        np.zeros(0)
    return {
        "kind": "generalisation lattice",
        "dimensions": [q.name for q in quality.enc.qis],
        "heights": list(lattice.heights),
        "size": lattice.size,
        "levels": lvl,
        "state": _lookup(trace.state, idx, 0, np.int8),
        "state_names": dict(STATE_NAMES),
        "score": _lookup(trace.score, idx, np.nan, float),
        "suppressed": _lookup(trace.suppressed, idx, -1, np.int64),
        "bound": np.asarray(bounds, dtype=float),
        "optimum": None if best is None else int(np.flatnonzero(idx == lattice.index(best.levels))[0]),
        "proven_optimal": bool(exact),
        "quality": quality.model,
        "aggregate": quality.how,
    }


def _lookup(values: dict, idx: np.ndarray, missing, dtype) -> np.ndarray:
    out = np.full(idx.size, missing, dtype=dtype)
    if values:
        keys = np.fromiter(values.keys(), dtype=np.int64, count=len(values))
        vals = np.fromiter(values.values(), dtype=dtype, count=len(values))
        pos = np.searchsorted(idx, keys)
        out[pos] = vals
    return out
