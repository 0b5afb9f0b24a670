"""Error bars of noisy counts, and ε from the error a custodian can accept — public functions of ε and the scale.

A count released with discrete Laplace noise of scale s (P(X = x) ∝ exp(−|x|/s), the sampler of `discrete.py`)
is within ±k of the true count with probability

    P(|X| ≤ k) = 1 − 2·α^(k+1) / (1 + α),   α = exp(−1/s),

so the 95 % interval's half-width is the smallest whole k with 2·α^(k+1)/(1 + α) ≤ 0.05. It depends on ε and the
mechanism's sensitivity only, never on the data: it goes into the release note (NIST SP 800-226 asks for error
bars), and inverted it gives the smallest ε whose interval meets a target (`epsilon_for_half_width`), before
anything is charged. The scale used is the one the sampler uses (`exact_scale`: never below the request).
"""

from __future__ import annotations

import math
from fractions import Fraction

from ppdp_gui.engine.errors import ParameterError
from ppdp_gui.engine.noise.discrete import exact_scale, exact_value

LEVEL = 0.95


def _alpha(scale) -> float:
    return math.exp(-1.0 / float(exact_scale(scale)))


def coverage(scale, half_width: int) -> float:
    """P(|X| ≤ half_width) for discrete Laplace noise of `scale`."""
    a = _alpha(scale)
    return 1.0 - 2.0 * a ** (int(half_width) + 1) / (1.0 + a)


def half_width(scale, level: float = LEVEL) -> int:
    """The smallest whole k with P(|X| ≤ k) ≥ level: the count is within ±k of the truth with that chance."""
    if not 0 < level < 1:
        raise ParameterError(f"the confidence level must lie between 0 and 1, got {level}")
    a = _alpha(scale)
    if a == 0.0:
        return 0
    k = max(0, math.ceil(math.log((1 - level) * (1 + a) / 2) / math.log(a)) - 1)
    while k > 0 and coverage(scale, k - 1) >= level:  # float safety: the smallest k, checked both ways
        k -= 1
    while coverage(scale, k) < level:
        k += 1
    return k


def count_interval(epsilon, sensitivity=1, share=1, level: float = LEVEL) -> int:
    """Half-width of the 95 % interval of each count released with ε·share at sensitivity Δ (scale Δ/(ε·share))."""
    eps = exact_value("ε", epsilon, rounding="decimal") * Fraction(share)
    return half_width(exact_value("sensitivity", sensitivity) / eps, level)


def note_entry(scale, level: float = LEVEL) -> dict[str, str]:
    """The release note's line: {"95 % interval of each count": "± k"} for noise of `scale`. It still holds after
    negative counts are set to 0 (a true count is never negative, so that only brings a count closer)."""
    return {f"{level * 100:g} % interval of each count": f"± {half_width(scale, level)}"}


def count_note(epsilon, sensitivity=1, share=1, level: float = LEVEL) -> dict[str, str]:
    """`note_entry` for counts released with ε·share at sensitivity Δ (the mechanisms' one line)."""
    eps = exact_value("ε", epsilon, rounding="decimal") * Fraction(share)
    return note_entry(exact_value("sensitivity", sensitivity) / eps, level)


def epsilon_for_half_width(target: float, scale_at_unit_epsilon, level: float = LEVEL,
                           digits: int = 3) -> Fraction:
    """The smallest ε (rounded up to `digits` significant digits) whose counts, with scale c/ε, have a
    `level` interval of ±target or narrower. c = `scale_at_unit_epsilon` (the sensitivity over the share of ε)."""
    if not (target >= 0 and math.isfinite(target)):
        raise ParameterError(f"the target error must be a number ≥ 0, got {target}")
    k = math.floor(target)
    c = exact_value("noise scale", scale_at_unit_epsilon)
    # 2α^(k+1)/(1+α) ≤ 1−level is monotone in α = exp(−ε/c): bisect on α, then ε = −c·ln α
    lo, hi = 0.0, 1.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if 2 * mid ** (k + 1) / (1 + mid) <= 1 - level:
            lo = mid
        else:
            hi = mid
    eps = float(c) * -math.log(lo) if lo > 0 else float("inf")
    if not math.isfinite(eps):
        raise ParameterError("no ε reaches that error")
    exp10 = math.floor(math.log10(eps)) - digits + 1
    step = Fraction(10) ** exp10
    proposal = Fraction(math.ceil(Fraction(eps) / step)) * step
    while half_width(c / proposal, level) > k:  # the rounding of the sampler's scale: step up until it holds
        proposal += step
    return proposal
