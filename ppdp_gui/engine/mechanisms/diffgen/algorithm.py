"""DiffGen, Algorithm 1 of Mohammed, Chen, Fung & Yu (KDD 2011), on integer-coded attributes.

Budget (Theorem 4.1): ε/2 for the noisy counts, ε/2 = (|A_num| + 2h)·ε' for the generalisation, where each
exponential-mechanism call costs ε' = ε / (2(|A_num| + 2h)):
- line 4: a split point for the root interval of each numeric attribute (|A_num| calls);
- line 7: the candidate to specialise, once per round (h calls);
- line 9: split points for the new numeric intervals of that round; they hold disjoint records, so by parallel
  composition they cost ε' together (h rounds at most).
Rounds that end early (no candidate left) leave budget unspent; the charge stays ε, known before the run.
Split points are boundaries of the attribute's public grid (grid.py), never raw values: the exponential mechanism
(eq. 6) chooses among the sub-intervals between the occupied cells, each weighted by the number of grid
boundaries it holds, then a boundary is drawn uniformly inside it (eq. 7) — exactly the exponential mechanism
over the grid boundaries, since all boundaries of a sub-interval give the same children. The paper's uniform real
value inside (v_j, v_{j+1}) would be released as a double whose low bits name v_j and v_{j+1}.
Counts: every leaf partition × class — empty ones too, as the paper's Figure 2 shows — gets discrete Laplace
noise of scale 2/ε; negative results are rounded to 0 as in the paper ("rounding each count to the nearest
non-negative integer"; post-processing, no budget).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterator

import numpy as np

from ppdp_gui.engine.mechanisms.base import Progress
from ppdp_gui.engine.mechanisms.diffgen.partition import NumericAttr
from ppdp_gui.engine.mechanisms.diffgen.scores import score, sensitivity

MAX_CELLS = 20_000_000  # leaf partitions × classes; a candidate that would pass it is not offered
_CHUNK = 1 << 22


@dataclass
class Candidate:
    attr: int
    key: object  # taxonomy node (categorical) or (a, b) range of grid cells (numeric)
    score: float
    split: int | None = None  # numeric: the grid boundary already drawn for this interval


@dataclass
class Outcome:
    specialisations: list[dict]
    ran_out: bool


def epsilon_prime(epsilon: float, n_numeric: int, h: int) -> float:
    """ε' = ε / (2(|A_num| + 2h)); with nothing to choose (h = 0, no numeric attribute) no call is made."""
    parts = n_numeric + 2 * h
    return float(epsilon) / (2.0 * parts) if parts else math.inf


def _weighted_choice(rng, scores: np.ndarray, eps: float, delta: float, counts: np.ndarray) -> int:
    """Index j drawn with probability ∝ counts_j · exp(ε·score_j / (2Δ)) — the exponential mechanism over the grid
    boundaries, sampled exactly with the integer counts as weights; sub-intervals holding no boundary (count 0)
    are left out."""
    keep = np.flatnonzero(counts > 0)
    j = rng.exponential_choice(np.asarray(scores)[keep], eps, delta, weights=counts[keep])
    return int(keep[j])


def _draw_split(attr: NumericAttr, a: int, b: int, utility: str, eps: float, delta: float,
                rng) -> Candidate | None:
    """A grid boundary of the cells [a, b): a sub-interval by the exponential mechanism weighted by its number
    of boundaries, then a uniform boundary g in (E_j, E_{j+1}] (an integer draw; no real value is ever drawn)."""
    options = attr.split_options(a, b)
    if options is None:
        return None
    edges, counts, children = options
    scores = score(utility, children)
    j = _weighted_choice(rng, scores, eps, delta, counts)
    g = int(rng.integers(int(edges[j]) + 1, int(edges[j + 1]) + 1))
    return Candidate(-1, (a, b), float(scores[j]), g)


def specialise(attrs: list, n_classes: int, *, epsilon: float, h: int, utility: str, rng,
               max_cells: int = MAX_CELLS) -> Iterator[Progress]:
    """Push the cut of every attribute down h times (in place); returns an Outcome (generator return value).

    Every random draw goes through `rng`; tests and the verifier plant a wrong noise scale by wrapping it
    (`engine.verify.ScaledNoise`), so the mechanism itself carries no test hook.
    """
    n_numeric = sum(isinstance(a, NumericAttr) for a in attrs)
    eps = epsilon_prime(epsilon, n_numeric, h)
    delta = sensitivity(utility, n_classes)
    candidates: list[Candidate] = []

    def add_numeric(i: int, a: int, b: int) -> None:
        cand = _draw_split(attrs[i], a, b, utility, eps, delta, rng)
        if cand is not None:
            cand.attr = i
            candidates.append(cand)

    def add_categorical(i: int, node: int) -> None:
        attr = attrs[i]
        if attr.can_specialise(node):
            candidates.append(Candidate(i, node, float(score(utility, attr.children_counts(node)))))

    for i, attr in enumerate(attrs):  # lines 1-5
        if isinstance(attr, NumericAttr):
            add_numeric(i, 0, attr.n_cells)
        else:
            add_categorical(i, 0)
    cut_sizes = [1] * len(attrs)
    history: list[dict] = []
    for step in range(h):  # lines 6-11
        cells = math.prod(cut_sizes) * n_classes
        allowed = [c for c in candidates
                   if cells // cut_sizes[c.attr] * (cut_sizes[c.attr] + _fan_out(attrs[c.attr], c) - 1) <= max_cells]
        if not allowed:
            return Outcome(history, ran_out=True)
        chosen = allowed[rng.exponential_choice([c.score for c in allowed], eps, delta)]
        candidates.remove(chosen)
        attr = attrs[chosen.attr]
        if isinstance(attr, NumericAttr):
            a, b = chosen.key
            attr.specialise(chosen.split)
            history.append({"column": attr.column, "from": attr.grid.interval_label(a, b),
                            "split": attr.grid.number(chosen.split), "grid index": chosen.split})
            add_numeric(chosen.attr, a, chosen.split)
            add_numeric(chosen.attr, chosen.split, b)
            cut_sizes[chosen.attr] += 1
        else:
            kids = attr.specialise(chosen.key)
            history.append({"column": attr.column, "from": attr.tax.label(chosen.key),
                            "to": [attr.tax.label(k) for k in kids]})
            for k in kids:
                add_categorical(chosen.attr, k)
            cut_sizes[chosen.attr] += len(kids) - 1
        yield Progress((step + 1) / max(h, 1), f"specialisation {step + 1} of {h}: {attr.column}")
    return Outcome(history, ran_out=False)


def _fan_out(attr, cand: Candidate) -> int:
    return 2 if isinstance(attr, NumericAttr) else attr.fan_out(cand.key)


def leaf_cells(attrs: list) -> tuple[np.ndarray, tuple[int, ...]]:
    """Leaf partition (flat index over the cut sizes) of every record."""
    shape = tuple(len(a.labels()) for a in attrs)
    codes = [a.codes() for a in attrs]
    if not codes:
        return np.zeros(0, dtype=np.int64), shape
    return np.ravel_multi_index(codes, shape).astype(np.int64), shape


def noisy_counts(cells: np.ndarray, y: np.ndarray, n_cells: int, n_classes: int, *, epsilon: float,
                 rng) -> tuple[np.ndarray, np.ndarray]:
    """(flat index cell·K + class, noisy count) of every group whose noisy count is positive (line 12).

    Every group of the domain is noised, in chunks so a large grid never needs several full-size arrays.
    """
    true = np.bincount(cells * n_classes + y, minlength=n_cells * n_classes)
    return add_count_noise(true, epsilon=epsilon, rng=rng)


def add_count_noise(true: np.ndarray, *, epsilon: float, rng) -> tuple[np.ndarray, np.ndarray]:
    """`noisy_counts` from the true count of every group (flat, zeros included), however they were counted
    (here with numpy, or by SQL for a table larger than memory: mechanisms/diffgen/sql.py)."""
    scale = 2.0 / float(epsilon)
    keep_idx, keep_val = [], []
    for start in range(0, true.size, _CHUNK):
        part = true[start:start + _CHUNK] + rng.discrete_laplace(scale, size=min(_CHUNK, true.size - start))
        pos = np.flatnonzero(part > 0)
        keep_idx.append(pos + start)
        keep_val.append(part[pos])
    return np.concatenate(keep_idx).astype(np.int64), np.concatenate(keep_val).astype(np.int64)


# -- how large the release can grow (public quantities only) ----------------------------------------------------
def positive_noise_mean(scale: float) -> float:
    """E[max(0, Z)] for discrete Laplace noise Z of `scale`: α / (1 − α²), α = e^(−1/scale). A group whose true
    count is 0 is released with this many records on average; a group with a true count c > 0 gains less
    (E[max(−c, Z)] lies between 0 and it), so groups × this bounds the records the noise is expected to add."""
    alpha = math.exp(-1.0 / scale)
    return alpha / -math.expm1(-2.0 / scale)

