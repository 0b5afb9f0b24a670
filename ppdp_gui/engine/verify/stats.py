"""A statistically valid lower bound on the privacy loss of a release, from runs on two neighbouring tables.

ε-DP (with δ) says that for every event E of the output, P[E | D] ≤ e^ε · P[E | D'] + δ, both ways. With n runs on
each table, Clopper–Pearson intervals give, with confidence 1 − 2a, p_lo(D) ≤ P[E | D] and P[E | D'] ≤ p_hi(D'),
hence ε ≥ ln((p_lo(D) − δ) / p_hi(D')). The catch is the choice of E: trying thousands of events and reporting
the best one is a multiple-testing error (its bound is optimistic). So:

1. the runs of each side are split in halves; candidate events are formed and ranked on the *first* half only
   (thresholds of every numeric feature, values of every other feature, both of two strong events at once, and
   thresholds of a naive-Bayes score that adds up the evidence of all features that differ — the events a
   likelihood-ratio test would use);
2. the `max_events` best are fixed, and bounded on the *second* half, in both directions, with one-sided
   Clopper–Pearson intervals at a / (4 · events) each (Bonferroni over events, directions and the two
   intervals of each ratio), so that all of them hold together with confidence 1 − a;
3. the reported bound is the largest of them.

A bound above the claimed ε therefore proves a violation at confidence 1 − a; a bound below it proves nothing
(a lower bound never shows that a mechanism is private, only that these events could not show it is not).

`choice_calibration` is the white-box companion for the exponential mechanism: when the verifier knows the
scores of two candidates, the odds of the better one must not exceed e^(ε'·gap/(2Δ)); a lower confidence bound
on those odds is a lower bound on the ε' the choice really used.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
from scipy.stats import beta

MAX_EVENTS = 6
MAX_THRESHOLDS = 64
MAX_VALUES = 32
MAX_SCORE_FEATURES = 24
PAIR_TOP = 5  # pairs among this many strongest single events, each way
SIGNAL_ALPHA = 0.01  # a feature joins the naive-Bayes score when one of its events differs at this level
_SHOW = 90


# ---- Clopper–Pearson --------------------------------------------------------------------------------------------
def cp_lower(k, n, a) -> np.ndarray:
    """One-sided lower Clopper–Pearson bound of a binomial proportion (confidence 1 − a); 0 when k = 0."""
    k, n = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    safe = np.maximum(k, 1.0)
    return np.where(k > 0, beta.ppf(a, safe, n - safe + 1.0), 0.0)


def cp_upper(k, n, a) -> np.ndarray:
    """One-sided upper Clopper–Pearson bound (confidence 1 − a); 1 when k = n."""
    k, n = np.asarray(k, dtype=float), np.asarray(n, dtype=float)
    safe = np.minimum(k, n - 1.0)
    return np.where(k < n, beta.ppf(1.0 - a, safe + 1.0, n - safe), 1.0)


def loss_bound(k_a, n_a, k_b, n_b, a, delta: float = 0.0) -> np.ndarray:
    """ln((p_lo(A) − δ) / p_hi(B)) with each interval at level a; −inf when p_lo(A) ≤ δ."""
    lo = cp_lower(k_a, n_a, a) - delta
    hi = cp_upper(k_b, n_b, a)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(lo > 0, np.log(np.maximum(lo, 1e-300) / hi), -np.inf)


# ---- features as columns ---------------------------------------------------------------------------------------
@dataclass
class Column:
    name: str
    numeric: bool
    x: np.ndarray  # float with nan for "absent" (numeric), or int codes with -1 for "absent"
    labels: list[str] = field(default_factory=list)  # categorical: the value of each code


def columns(runs: Sequence[dict[str, Any]], view: Sequence[str] | None = None) -> list[Column]:
    """One Column per feature (restricted to names starting with a prefix in `view`)."""
    names: dict[str, None] = {}
    for r in runs:
        names.update(dict.fromkeys(r))
    if view is not None:
        names = {n: None for n in names if any(n.startswith(p) for p in view)}
    out = []
    for name in names:
        values = [r.get(name) for r in runs]
        present = [v for v in values if v is not None]
        if present and all(isinstance(v, float) for v in present):
            out.append(Column(name, True, np.array([np.nan if v is None else v for v in values], dtype=float)))
        else:
            labels = sorted({str(v) for v in present})
            index = {v: i for i, v in enumerate(labels)}
            codes = np.array([-1 if v is None else index[str(v)] for v in values], dtype=np.int64)
            out.append(Column(name, False, codes, labels))
    return out


def _short(text: str) -> str:
    return text if len(text) <= _SHOW else text[:_SHOW - 1] + "…"


def _fmt(t: float) -> str:
    return f"{t:.6g}"


@dataclass
class Candidates:
    """Events as hit matrices per source, and their texts."""

    texts: list[str] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)  # events from one source share a key (for de-duplication)
    blocks: list[np.ndarray] = field(default_factory=list)  # bool (runs × events) per source

    def add(self, key: str, hits: np.ndarray, texts: list[str], complements: list[str]) -> None:
        self.blocks += [hits, ~hits]
        self.texts += texts + complements
        self.keys += [key] * (2 * len(texts))

    def matrix(self) -> np.ndarray:
        return np.concatenate(self.blocks, axis=1) if self.blocks else np.zeros((0, 0), dtype=bool)


def _thresholds(values: np.ndarray) -> np.ndarray:
    t = np.unique(values[np.isfinite(values)])
    if t.size > MAX_THRESHOLDS:
        t = np.unique(np.quantile(t, np.linspace(0, 1, MAX_THRESHOLDS)))
    return t


def column_events(col: Column, select: np.ndarray, cands: Candidates) -> None:
    """Thresholds (numeric) or values (other) seen in the selection runs, and their complements."""
    if col.numeric:
        t = _thresholds(col.x[select])
        if not t.size:
            return
        with np.errstate(invalid="ignore"):
            hits = col.x[:, None] >= t[None, :]
        cands.add(col.name, hits, [_short(f"{col.name} ≥ {_fmt(v)}") for v in t],
                  [_short(f"{col.name} < {_fmt(v)} or absent") for v in t])
        return
    seen = np.bincount(col.x[select] + 1, minlength=len(col.labels) + 1)
    order = np.argsort(-seen, kind="stable")[:MAX_VALUES]
    order = order[seen[order] > 0] - 1
    if not order.size:
        return
    hits = col.x[:, None] == order[None, :]
    names = ["absent" if c < 0 else repr(col.labels[c]) for c in order]
    cands.add(col.name, hits, [_short(f"{col.name} = {n}") for n in names],
              [_short(f"{col.name} ≠ {n}") for n in names])


def _codes(col: Column, select: np.ndarray) -> np.ndarray:
    """Small integer codes of a column for the naive-Bayes score (numeric: bins between selection thresholds)."""
    if col.numeric:
        t = _thresholds(col.x[select])
        codes = np.searchsorted(t, col.x, side="right")
        return np.where(np.isnan(col.x), t.size + 1, codes)
    return col.x + 1


def naive_bayes_score(cols: list[Column], sel_a: np.ndarray, sel_b: np.ndarray) -> np.ndarray:
    """Σ over columns of ln(P̂_A(value) / P̂_B(value)), estimated on the selection runs (add-½ smoothing)."""
    select = sel_a | sel_b
    score = np.zeros(sel_a.size)
    for col in cols:
        codes = _codes(col, select)
        size = int(codes.max()) + 1
        na = np.bincount(codes[sel_a], minlength=size) + 0.5
        nb = np.bincount(codes[sel_b], minlength=size) + 0.5
        llr = np.log(na / na.sum()) - np.log(nb / nb.sum())
        score += llr[codes]
    return score


# ---- the audit -------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class EventBound:
    text: str
    direction: str  # "D over D'" or "D' over D"
    p_first: float  # frequency on the table named first in `direction` (second half)
    p_second: float
    bound: float


@dataclass(frozen=True)
class Bound:
    """The result of one audit: the lower bound and the events it was computed from."""

    epsilon_lb: float
    events: tuple[EventBound, ...]
    runs_per_side: int
    alpha: float
    candidates: int

    @property
    def best(self) -> EventBound | None:
        return max(self.events, key=lambda e: e.bound, default=None)


def split_halves(n: int) -> tuple[np.ndarray, np.ndarray]:
    first = np.zeros(n, dtype=bool)
    first[: n // 2] = True
    return first, ~first


def _top(order: np.ndarray, keys: list[str], eligible: np.ndarray, limit: int) -> list[int]:
    """The first `limit` eligible indices of `order` with distinct keys."""
    out, seen = [], set()
    for i in order:
        if eligible[i] and keys[i] not in seen:
            seen.add(keys[i])
            out.append(int(i))
            if len(out) == limit:
                break
    return out


def audit(runs_a: Sequence[dict], runs_b: Sequence[dict], *, alpha: float, delta: float = 0.0,
          view: Sequence[str] | None = None, max_events: int = MAX_EVENTS) -> Bound:
    """Lower bound on the privacy loss between two tables from the features of their runs (module docstring)."""
    na, nb = len(runs_a), len(runs_b)
    if min(na, nb) < 4:
        raise ValueError("an audit needs at least 4 runs on each table")
    cols = columns(list(runs_a) + list(runs_b), view)
    side_a = np.zeros(na + nb, dtype=bool)
    side_a[:na] = True
    first_a, _ = split_halves(na)
    first_b, _ = split_halves(nb)
    sel = np.concatenate([first_a, first_b])
    groups = {"sel a": side_a & sel, "sel b": ~side_a & sel, "bnd a": side_a & ~sel, "bnd b": ~side_a & ~sel}
    n = {g: int(m.sum()) for g, m in groups.items()}
    cands = Candidates()
    for col in cols:
        column_events(col, sel, cands)
    if not cands.texts:
        return Bound(-np.inf, (), min(na, nb), alpha, 0)
    hits = cands.matrix()
    a_final = alpha / (4 * max_events)

    def ranks(h: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        ka, kb = h[groups["sel a"]].sum(axis=0), h[groups["sel b"]].sum(axis=0)
        fwd = loss_bound(ka, n["sel a"], kb, n["sel b"], level, delta)
        back = loss_bound(kb, n["sel b"], ka, n["sel a"], level, delta)
        rough = np.log((ka + 0.5) / (n["sel a"] + 1.0)) - np.log((kb + 0.5) / (n["sel b"] + 1.0))
        return fwd, back, rough

    # the naive-Bayes score of the features that differ on the selection half (at a loose level)
    fwd, back, rough = ranks(hits, SIGNAL_ALPHA)
    strength: dict[str, float] = {}
    for key, v in zip(cands.keys, np.maximum(fwd, back)):
        strength[key] = max(strength.get(key, -np.inf), float(v))
    chosen_cols = sorted((c for c in cols if strength.get(c.name, -np.inf) > 0),
                         key=lambda c: -strength[c.name])[:MAX_SCORE_FEATURES]
    singles = len(cands.texts)
    if chosen_cols:
        score = naive_bayes_score(chosen_cols, groups["sel a"], groups["sel b"])
        t = _thresholds(score[sel])
        label = f"naive-Bayes score of {len(chosen_cols)} feature(s)"
        cands.add(label, score[:, None] >= t[None, :], [f"{label} ≥ {_fmt(v)}" for v in t],
                  [f"{label} < {_fmt(v)}" for v in t])
    # pairs of the strongest single events of different features, each way: "both counts high" is how two
    # separately noised releases of one count add up (a budget spent twice shows there, not in either alone)
    fwd, back, rough = ranks(hits, a_final)
    eligible = np.ones(singles, dtype=bool)
    pair_texts, pair_keys, pair_hits = [], [], []
    for primary, secondary in ((fwd, rough), (back, -rough)):
        top = _top(np.lexsort((-secondary, -primary)), cands.keys, eligible, PAIR_TOP)
        for x, i in enumerate(top):
            for j in top[x + 1:]:
                pair_hits.append(hits[:, i] & hits[:, j])
                pair_texts.append(f"({cands.texts[i]}) and ({cands.texts[j]})")
                pair_keys.append(f"{cands.keys[i]} & {cands.keys[j]}")
    if pair_hits:
        cands.blocks.append(np.column_stack(pair_hits))
        cands.texts += pair_texts
        cands.keys += pair_keys
    hits = cands.matrix()
    k = {g: hits[m].sum(axis=0) for g, m in groups.items()}
    # rank every candidate on the selection half, at the level the final bound will use; fix the best few
    fwd, back, rough = ranks(hits, a_final)
    order = np.lexsort((-np.abs(rough), -np.maximum(fwd, back)))
    picked, seen = [], set()
    for i in order:
        key = (cands.keys[i], int(k["sel a"][i]), int(k["sel b"][i]))
        if key in seen:
            continue
        seen.add(key)
        picked.append(int(i))
        if len(picked) == max_events:
            break
    # bound them on the other half: 4 intervals per event (both directions), Bonferroni over all of them
    a_each = alpha / (4 * len(picked))
    reports = []
    for i in picked:
        ka, kb = k["bnd a"][i], k["bnd b"][i]
        for direction, (k1, n1, k2, n2) in (("D over D'", (ka, n["bnd a"], kb, n["bnd b"])),
                                            ("D' over D", (kb, n["bnd b"], ka, n["bnd a"]))):
            b = float(loss_bound(k1, n1, k2, n2, a_each, delta))
            reports.append(EventBound(cands.texts[i], direction, k1 / n1, k2 / n2, b))
    lb = max((r.bound for r in reports), default=-np.inf)
    return Bound(lb, tuple(reports), min(na, nb), alpha, len(cands.texts))


def choice_calibration(chose_better: np.ndarray, gap: float, sensitivity: float, alpha: float) -> tuple[float, float]:
    """(lower bound on ε', observed share) for an exponential-mechanism choice between two candidates whose
    scores differ by `gap` > 0: P(better) = 1/(1 + e^(−ε'·gap/(2Δ))), so a lower confidence bound p_lo on that
    share gives ε' ≥ 2Δ·logit(p_lo)/gap (confidence 1 − alpha)."""
    n, k = chose_better.size, int(np.sum(chose_better))
    lo = float(cp_lower(k, n, alpha))
    if lo <= 0.5:
        return 0.0, k / n
    return 2.0 * sensitivity * float(np.log(lo / (1.0 - lo))) / gap, k / n
