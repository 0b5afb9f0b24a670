"""Exact L1 sensitivities of what DP-PCA, DP-LDA and the two record baselines add noise to, as Fractions.

Every record is encoded as x ∈ [0, 1]^P: p1 numeric attributes scaled by their public bounds, and p2 categorical
attributes as one-hot dummy blocks (exactly one 1 per block, encoding.py). The noise scale is Δ/ε, so Δ must be a
true maximum over all pairs of records, not a typical value; these functions derive it in closed form and
tests/engine/test_dp_pca_sensitivity.py checks the closed forms against brute-force maximisation.

DP-PCA's moments (Jiang et al. 2013, Section 3.1), one record replaced by another (x → x'): the change of
(Σx, upper triangle of Σxxᵀ) in L1. The paper gives p1 + 2p2 + [(p1+p2)(p1+p2+1) + p2(p2+1)]/2, reached by
moving every number from 0 to 1 and every category at once. That is the maximum only for p2 ≤ 1: with
a = x's numbers, b = x''s, d_i = |a_i − b_i|, s_i = a_i + b_i, every category changed (the worst case), the
identity a_i a_j − b_i b_j = ½[(a_i − b_i)(a_j + b_j) + (a_i + b_i)(a_j − b_j)] gives the exact bound

    Σ|a_i − b_i| + Σ_{i≤j}|a_i a_j − b_i b_j| + p2·Σ(a_i + b_i) ≤ D + ½Σd_i s_i + ½DS + p2·S   (D = Σd, S = Σs)

with equality when every a_i ≥ b_i. Per coordinate the right side is d_i s_i + linear on the triangle
0 ≤ d_i ≤ s_i, d_i + s_i ≤ 2, so its maximum lies on the edge s_i = 2 − d_i (a_i = 1) or at a vertex that the
edge dominates; with every a_i = 1, spreading D evenly is best, and

    max = 2·p1·p2 + max_{0 ≤ D ≤ p1} [(2 + p1 − p2)·D − ½(1 + 1/p1)·D²],

plus 2p2 (dummies of Σx) and p2(p2 + 1) (dummy pairs of Σxxᵀ). For Adult's 5 numbers and 6 categories
(income included) that is 114 5/12 where the paper's formula gives 104: the released noise uses ours.

DP-LDA's statistics (per-class sums, class counts, pooled Σxxᵀ) are released for one record added or removed
(the project's neighbouring, and the one under which the class sizes the paper divides by need not be known):
1 + (p1 + p2) + (p1 + p2)(p1 + p2 + 1)/2, reached by a record whose numbers are all 1.

The projection of DP-PCA, (x − μ̃)·U_k with orthonormal U_k, changes by at most √k·‖x − x'‖₂ ≤ √(k(p1 + 2p2))
in L1 (Cauchy–Schwarz; a changed category moves two dummies); the record baselines change by ‖x − x'‖₁ ≤
p1 + 2p2.
"""

from __future__ import annotations

import math
from fractions import Fraction

#: the discrete Laplace sampler accepts scales up to 2^40 (noise/discrete.py); grids keep below this margin
MAX_GRID_SCALE = Fraction(2) ** 38


def pca_moment_sensitivity(p1: int, p2: int) -> Fraction:
    """L1 sensitivity of (Σx, upper triangle of Σxxᵀ) for one record replaced (see the module docstring)."""
    p1, p2 = int(p1), int(p2)
    if p1 < 0 or p2 < 0 or p1 + p2 == 0:
        raise ValueError("at least one attribute is needed")
    dummies = Fraction(2 * p2 + p2 * (p2 + 1))
    if p1 == 0:
        return dummies
    lin, quad = Fraction(2 + p1 - p2), Fraction(p1 + 1, 2 * p1)
    best = min(max(lin / (2 * quad), Fraction(0)), Fraction(p1))
    return dummies + 2 * p1 * p2 + lin * best - quad * best * best


def paper_pca_sensitivity(p1: int, p2: int) -> Fraction:
    """The paper's formula (Section 3.1), kept for the release note and the reproduction document."""
    return Fraction(p1 + 2 * p2) + Fraction((p1 + p2) * (p1 + p2 + 1) + p2 * (p2 + 1), 2)


def lda_sensitivity(p1: int, p2: int) -> Fraction:
    """L1 sensitivity of (per-class Σx, class counts, pooled upper Σxxᵀ) for one record added or removed."""
    q = int(p1) + int(p2)
    if q <= 0:
        raise ValueError("at least one attribute is needed")
    return Fraction(1 + q) + Fraction(q * (q + 1), 2)


def paper_lda_sensitivity(p1: int, p2: int) -> Fraction:
    """The paper's formula (Section 3.2, categorical variables), for one record replaced, class sizes known."""
    q = p1 + p2
    return Fraction(2 * q) + Fraction((q + 1) * q + p2 * (p2 + 1), 2)


def record_sensitivity(p1: int, p2: int) -> Fraction:
    """‖x − x'‖₁ for one record replaced: the Laplace and exponential record baselines."""
    return Fraction(int(p1) + 2 * int(p2))


def sqrt_up(value: Fraction, bits: int = 40) -> Fraction:
    """A rational r ≥ √value, within 2^-bits of it (exact integer square root)."""
    value = Fraction(value)
    if value < 0:
        raise ValueError("negative value")
    scaled = value * (1 << (2 * bits))
    root = math.isqrt(scaled.numerator // scaled.denominator)
    while Fraction(root * root) < scaled:
        root += 1
    return Fraction(root, 1 << bits)


def projection_sensitivity(k: int, p1: int, p2: int, grid: Fraction) -> Fraction:
    """L1 change of one record's projected row after rounding to `grid`: √(k(p1 + 2p2)), rounded up, plus one
    grid step per coordinate (two roundings can differ by a step) and 2^-29 per coordinate for floating-point
    error in forming the projection (its values are below 2^8, so that error is below 2^-36)."""
    return sqrt_up(Fraction(int(k) * (int(p1) + 2 * int(p2)))) + int(k) * (Fraction(grid) + Fraction(1, 1 << 29))


def grid_exponent(scale: Fraction, power: int = 1, finest: int = 10, coarsest: int = 0) -> int:
    """The largest j in [coarsest, finest] for which the noise `scale` (in data units) measured on the grid 2^-j
    of a statistic of degree `power` (sums: 1, sums of products: 2) stays ≤ MAX_GRID_SCALE grid steps. Depends
    on public values only (ε, the sensitivity), so the grid is public."""
    scale = Fraction(scale)
    for j in range(int(finest), int(coarsest) - 1, -1):
        if scale * (Fraction(2) ** (power * j)) <= MAX_GRID_SCALE:
            return j
    return int(coarsest)


__all__ = ["pca_moment_sensitivity", "paper_pca_sensitivity", "lda_sensitivity", "paper_lda_sensitivity",
           "record_sensitivity", "projection_sensitivity", "sqrt_up", "grid_exponent", "MAX_GRID_SCALE"]
