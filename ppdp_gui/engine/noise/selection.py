"""Exact exponential mechanism: the choice is drawn exactly proportionally to dyadic integer weights.

Mechanism. Index i is chosen with probability proportional to w_i · 2^(A_i), where, in bits,
    A_i = max(κ·(s_i − s*), −C),    s* = max_j s_j (over candidates of positive weight),  C = 1100,
and κ = ε_eff / (2Δ·ln 2), so that 2^(κ·s) = exp(ε_eff·s/(2Δ)) — McSherry–Talwar with ε_eff ≤ ε, every weight
below 2^-1100 of the largest raised to that floor.

Privacy. On neighbouring data every s_i moves by at most Δ, so every κ·s_i and their maximum move by at most
κΔ, and so does A_i + κs* = max(κ·s_i, κs* − C) (a maximum of two quantities that each move by ≤ κΔ): the
clamped weights are exactly those of an exponential mechanism with scores max(s_i, s* − C/κ), whose
sensitivity is still Δ. Probabilities change by at most 2^(2κΔ) = e^(ε_eff): pure ε_eff-DP, no δ. The floor is
applied to the score term alone, before the base measure w_i: DiffGen's w_i are interval lengths, which change
with the data (a new distinct value splits an interval); the mechanism is really one over the points of the
intervals, each of weight 2^(A_i), and clamping per point keeps that view exact.

Floating point. The A_i are computed in float64; the realised weight of i is r_i·2^(E_i) (r_i a 42-bit
integer) with |log2(r_i·2^(E_i)) − (A_i + const)| ≤ τ bits for every input (`TAU_BITS`, about 2^-39, proved
in `_tau_bits`). A realised probability is then within 2^(±2τ) of an exact ε_eff-DP one on each dataset, so the
choice is (ε_eff + 4τ·ln 2)-DP. ε_eff is set to ε·(1 − 2^-10) − 4τ·ln 2 (exact rational arithmetic, κ rounded
down), so the mechanism is ε-DP for the scores as computed with sensitivity Δ. The 2^-10 (0.1 %) left over
absorbs a relative error up to 2^-10 in Δ (a score function's own rounding) or in a caller's float ε (e.g.
ε' = ε/(2·parts) computed in floats, a few ulps off the ledger's exact share), or an error up to ε·2^-12 in
the logarithm of a weight (an interval length from a float subtraction is within 2^-52 of the true one).

Exactness of the draw. Weights are grouped by exponent E; each group's mantissa sum is exact (a 22-bit and a
21-bit limb summed by `np.bincount` in float64, exact below 2^53); group totals are combined as Python integers into the
exact total T; a uniform integer below T comes from rejection on fresh random bits (exactly uniform); the group
and then the member (int64 cumulative sum + searchsorted) holding it are the choice. Positive weights w_i are
taken exactly as the float (or integer < 2^53) they are: w_i = m_i·2^(e_i) with a 53-bit m_i; the proposal uses
2^(53 + e_i) and accepts with probability m_i/2^53 (exact integer comparison), so i ends up ∝ r_i·2^(E_i)·w_i.
`log_weights` (kept for old callers) are float log base-measure weights, added in float after the clamp; the
mechanism treats them as exact, and their rounding into bits is inside τ.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache

import numpy as np

from ppdp_gui.engine.errors import ParameterError
from ppdp_gui.engine.noise.discrete import exact_value

CLAMP_BITS = 1100
SCORE_BOUND = 2.0 ** 40
LOG_WEIGHT_BOUND = 2.0 ** 11
MANTISSA_BITS = 42
RELATIVE_MARGIN = Fraction(1, 1 << 10)
_LIMB = 21
_BLOCK = 1 << 19  # members per int64 cumulative sum: 2^19 · 2^43 < 2^63
_SMALL = 64  # up to this many candidates, exact Python-integer weights without grouping
_U = Fraction(1, 1 << 53)  # unit roundoff of float64
_LN2 = 0.6931471805599453  # ln 2 correctly rounded (ulp 2^-53 in [0.5, 1))
_LOG2E = 1.4426950408889634  # log2 e correctly rounded: within u·log2 e of it
_LN2_UP = Fraction(_LN2) + _U  # ≥ ln 2
_EXP2_REL = 8 * _U  # relative error bound of `_exp2_unit` (proved there as < 4u; 8u charged)


_TABLE_BITS = 8
_COEFFS = (1.0 / 120.0, 1.0 / 24.0, 1.0 / 6.0, 0.5, 1.0)  # 1/5!, …, 1/1!, each rounded to float64


@lru_cache(maxsize=1)
def _exp2_table() -> np.ndarray:
    """2^(j/256), j = 0…255, each within 2^-80 of the true value before its (correct) rounding to float64: the
    exact integer ⌊2^80·2^(j/256)⌋ is the 256th root of 2^(80·256 + j), by eight nested integer square roots
    (⌊√⌊√x⌋⌋ = ⌊x^(1/4)⌋)."""
    n = 1 << _TABLE_BITS
    out = []
    for j in range(n):
        x = 1 << (80 * n + j)
        for _ in range(_TABLE_BITS):
            x = math.isqrt(x)
        out.append(float(Fraction(x, 1 << 80)))
    return np.array(out)


def _exp2_unit(f: np.ndarray) -> np.ndarray:
    """2^f for f ∈ [0, 1) (consumed: overwritten), with relative error < 4u (u = 2^-53), without relying on the
    C library's exp2 (whose accuracy no standard states).

    f = j/256 + h with j = ⌊256f⌋ and h ∈ [0, 1/256) computed exactly; 2^f = 2^(j/256)·e^z, z = h·ln 2 < 0.0028.
    Errors: table ≤ u(1 + 2^-27); z = fl(h·fl(ln2/256)) has relative error ≤ 2.01u, which moves e^z by
    ≤ 0.006u; the degree-5 Taylor polynomial misses ≤ z^6/6! < 2^-60; in its Horner evaluation the last step
    1 + z·P rounds once (≤ u), every earlier rounding and the rounding of the coefficients 1/k! act on terms
    ≤ z, adding < 0.01u; the product with the table entry adds u. Sum < 3.1u."""
    f *= float(1 << _TABLE_BITS)  # exact
    j = f.astype(np.intp)  # truncation = floor for f ≥ 0
    f -= j  # exact: both lie in [j, j + 1)
    f *= _LN2 / (1 << _TABLE_BITS)  # z
    p = f * _COEFFS[0]
    for c in _COEFFS[1:]:
        p += c
        p *= f
    p += 1.0
    p *= _exp2_table()[j]
    return p


def _tau_bits() -> Fraction:
    """Upper bound, in bits, on |log2(realised weight) − (A_i + log2 w_i + const)| for every admissible input.

    With u = 2^-53, ρ = 2u + u² (two roundings) and η = 2^-1074 (underflow):
    - g = fl(s_i − s*), b = fl(κ·g): |b − κ(s_i − s*)| ≤ ρ·D + η with D = κ|s_i − s*|;
    - clamp at −C: if the clamped value moves at all, D ≤ (C + η)/(1 − ρ), so its error is ≤ ρ(C + η)/(1−ρ) + η;
    - log weights: λ = fl(ℓ·fl(log2 e)) is off by ≤ ρ·|ℓ|·log2 e ≤ ρ·L·1.4427, L = 2^11, and the sum
      fl(clamped + λ) by ≤ u·(C + 1.4427·L·(1 + ρ));
    - E = ⌊t⌋ is exact, f = fl(t − E) is within u of t − E (exact when t ≥ 0; for t < 0 the difference can
      need one bit more than f holds); f rounded up to 1 is taken as E + 1, f = 0, which is the same number;
    - r = rint(2^42·y) with y = `_exp2_unit(f)` = 2^f·(1 + δ_e), |δ_e| ≤ 8u, and rint's relative error
      ≤ 2^-43·(1 + 8u) (y ≥ 1 − 8u): relative error δ ≤ (1 + 8u)(1 + 2^-43·(1 + 8u)) − 1, i.e. at most
      δ/((1 − δ)·ln 2) bits (log2(1+δ) ≤ δ/ln 2 and −log2(1−δ) ≤ δ/((1−δ) ln 2)).
    """
    u, eta = _U, Fraction(1, 1 << 1074)
    rho = 2 * u + u * u
    c, lw = Fraction(CLAMP_BITS), Fraction(LOG_WEIGHT_BOUND)
    log2e_up = Fraction(14427, 10000)
    clamp = rho * (c + eta) / (1 - rho) + eta
    logw = rho * lw * log2e_up + u * (c + log2e_up * lw * (1 + rho))
    frac = u
    delta = (1 + _EXP2_REL) * (1 + Fraction(1, 1 << (MANTISSA_BITS + 1)) * (1 + _EXP2_REL)) - 1
    mantissa = delta / ((1 - delta) * Fraction(6931, 10000))  # ln 2 > 0.6931
    return clamp + logw + frac + mantissa


TAU_BITS = _tau_bits()
TAU_NATS = TAU_BITS * _LN2_UP


def effective_epsilon(epsilon) -> Fraction:
    """ε_eff = ε·(1 − 2^-10) − 4τ·ln 2 (exact); a float ε is taken at the smaller of its binary and decimal
    values. ParameterError when nothing is left (ε below about 10^-11)."""
    eps = exact_value("ε", epsilon, rounding="down")
    eff = eps * (1 - RELATIVE_MARGIN) - 4 * TAU_NATS
    if eff <= 0:
        raise ParameterError(f"ε = {epsilon!r} is too small for the exponential mechanism")
    return eff


@lru_cache(maxsize=256, typed=True)
def _kappa_cached(epsilon, sensitivity) -> float:
    return _kappa(epsilon, sensitivity)


def _kappa(epsilon, sensitivity) -> float:
    """The float κ (bits per score unit) with 2·κ·Δ·ln 2 ≤ ε_eff exactly: ε_eff/(2Δ ln 2), rounded down."""
    delta = exact_value("sensitivity", sensitivity)
    target = effective_epsilon(epsilon) / (2 * delta * _LN2_UP)
    if target > 2 ** 960:
        raise ParameterError("ε / sensitivity is too large for the exponential mechanism")
    k = float(target)
    if Fraction(k) > target:
        k = math.nextafter(k, 0.0)
    return k


def _candidates(scores, log_weights, weights):
    """Validated (scores, valid, log_weights, exact weights): `valid` is None when every candidate counts, else a
    mask of the positive-weight ones; exact weights are w = frac·2^exp (np.frexp: frac·2^53 is an integer)."""
    s = np.asarray(scores, dtype=np.float64)
    if s.ndim != 1 or not 0 < s.size < 1 << 31:
        raise ParameterError("the exponential mechanism needs a 1-D array of 1 to 2^31 - 1 scores")
    lo, hi = float(s.min()), float(s.max())  # a NaN propagates into both
    if not (-SCORE_BOUND <= lo and hi <= SCORE_BOUND):
        raise ParameterError("scores must be finite and at most 2^40 in magnitude")
    if log_weights is not None and weights is not None:
        raise ParameterError("give weights or log_weights, not both")
    if weights is not None:
        w = np.asarray(weights)
        if w.shape != s.shape or w.dtype.kind not in "iubf":
            raise ParameterError("weights must be numbers, one per score")
        lo, hi = float(w.min()), float(w.max())
        if not (0 <= lo and hi < math.inf) or (w.dtype.kind in "iu" and hi >= 2 ** 53):
            raise ParameterError("weights must be finite, non-negative (and below 2^53 if integers)")
        frac, exp = np.frexp(w.astype(np.float64, copy=False))  # integers below 2^53 convert exactly
        return s, (w > 0 if lo == 0 else None), None, (frac, exp)
    if log_weights is not None:
        lw = np.asarray(log_weights, dtype=np.float64)
        if lw.shape != s.shape:
            raise ParameterError("log_weights must have one entry per score")
        lo, hi = float(lw.min()), float(lw.max())
        valid = None
        if lo == -math.inf:
            valid = lw != -math.inf
            lo = float(lw[valid].min(initial=0.0))
        if not (-LOG_WEIGHT_BOUND <= lo and hi <= LOG_WEIGHT_BOUND):
            raise ParameterError("log_weights must be -inf or finite and at most 2^11 in magnitude")
        return s, valid, lw, None
    return s, None, None, None


def exponential_choice(gen: np.random.Generator, scores, epsilon, sensitivity, log_weights=None,
                       weights=None) -> int:
    """Index i with probability ∝ w_i·exp(ε_eff·s_i/(2Δ)), floored at 2^-1100 of the largest (module docstring)."""
    return ExponentialMechanism(scores, epsilon, sensitivity, log_weights=log_weights, weights=weights).draw(gen)


class ExponentialMechanism:
    """The exact weights of one exponential-mechanism call, ready to draw from (each draw is a fresh, independent
    choice: a mechanism run more than once costs its ε each time; tests use it for many draws)."""

    def __init__(self, scores, epsilon, sensitivity, log_weights=None, weights=None):
        try:
            kappa = _kappa_cached(epsilon, sensitivity)
        except TypeError:  # unhashable (e.g. a 0-d array): no cache
            kappa = _kappa(epsilon, sensitivity)
        s, valid, log_w, exact_w = _candidates(scores, log_weights, weights)
        idx = None
        if valid is not None:
            idx = np.flatnonzero(valid)
            if idx.size == 0:
                raise ParameterError("the exponential mechanism has no candidate with positive weight")
            s = s[idx]
            log_w = None if log_w is None else log_w[idx]
            exact_w = None if exact_w is None else (exact_w[0][idx], exact_w[1][idx])
        self.index, self.accept, self.sampler = idx, None, None
        if s.size == 1:
            return
        bits = s - s.max()  # fresh array; everything below is in place on it
        bits *= kappa
        np.maximum(bits, -float(CLAMP_BITS), out=bits)
        if log_w is not None:
            bits += log_w * _LOG2E  # λ = fl(ℓ·fl(log2 e)), then one rounded addition (see _tau_bits)
        expo = np.floor(bits)
        bits -= expo  # f ∈ [0, 1] up to one rounding (≤ u bits): exact for t ≥ 0, not always below 0
        top = bits >= 1.0  # t a hair below an integer: f rounded up to 1, i.e. 2^(E+1)·2^0
        if top.any():
            bits[top] = 0.0
            expo[top] += 1.0
        mantissa = _exp2_unit(bits)
        mantissa *= 2.0 ** MANTISSA_BITS
        np.rint(mantissa, out=mantissa)  # integers in [2^42, 2^43], exact in float64
        expo = expo.astype(np.int64)
        if exact_w is not None:  # propose with 2^(exp)·2^53 ≥ w, accept with probability frac·2^53 / 2^53
            expo += exact_w[1]
            self.accept = exact_w[0]
        self.sampler = _DyadicSampler(mantissa, expo)

    def draw(self, gen: np.random.Generator) -> int:
        j = 0
        while self.sampler is not None:
            j = self.sampler.draw(gen)
            if self.accept is None or int(gen.integers(0, 1 << 53, dtype=np.int64)) < int(self.accept[j] * 2.0 ** 53):
                break
        return j if self.index is None else int(self.index[j])


class _DyadicSampler:
    """Draws j with probability exactly mantissa_j·2^(expo_j) / Σ_k mantissa_k·2^(expo_k)."""

    def __init__(self, mantissa: np.ndarray, expo: np.ndarray):
        """`mantissa`: integer-valued float64 in [0, 2^43]; `expo`: int64 (consumed: shifted in place).
        Group sums are exact: each mantissa is split into limbs < 2^22 and < 2^21 whose float64 sums stay
        below 2^53 for fewer than 2^31 members. A few candidates skip the grouping: their exact weights are
        Python integers, walked in order (the same law, without numpy's per-call overhead)."""
        self.mantissa = mantissa
        self.offset = int(expo.min())
        expo -= self.offset
        self.group = expo  # ≥ 0; the bit shift of each member's group
        self._blocks: dict[int, list] = {}
        if mantissa.size <= _SMALL:
            self.weights = [int(m) << int(g) for m, g in zip(mantissa.tolist(), expo.tolist())]
            self.total = sum(self.weights)
            return
        self.weights = None
        top = np.floor(mantissa * (1.0 / (1 << _LIMB)))
        hi = np.bincount(expo, weights=top)
        top *= float(1 << _LIMB)
        np.subtract(mantissa, top, out=top)
        low = np.bincount(expo, weights=top)
        groups = np.flatnonzero((hi > 0) | (low > 0))[::-1]  # largest exponent (most of the mass) first
        self.groups = [(int(g), (int(hi[g]) << _LIMB) + int(low[g])) for g in groups]
        self.total = sum(m << g for g, m in self.groups)

    def draw(self, gen: np.random.Generator) -> int:
        x = _uniform_int_below(gen, self.total)
        if self.weights is not None:
            for j, w in enumerate(self.weights):
                if x < w:
                    return j
                x -= w
        else:
            for g, m in self.groups:
                size = m << g
                if x < size:
                    return self._member(g, x >> g)
                x -= size
        raise AssertionError("unreachable: x < total")

    def _member(self, g: int, x: int) -> int:
        """The member of group g holding mantissa unit x (0 ≤ x < the group's mantissa sum)."""
        if g not in self._blocks:  # built once per group: repeated draws (weight rejections, tests) reuse it
            members = np.flatnonzero(self.group == g)
            self._blocks[g] = [(block, np.cumsum(self.mantissa[block].astype(np.int64)))
                               for block in (members[i:i + _BLOCK] for i in range(0, members.size, _BLOCK))]
        for block, cum in self._blocks[g]:
            last = int(cum[-1])
            if x < last:
                return int(block[np.searchsorted(cum, x, side="right")])
            x -= last
        raise AssertionError("unreachable: x < group sum")


def _uniform_int_below(gen: np.random.Generator, n: int) -> int:
    """Uniform integer in [0, n) for a Python int n ≥ 1. Below 2^62, numpy's bounded integer (exact: it rejects,
    never reduces modulo n); above, bit_length(n) random bits, retried while ≥ n (each try succeeds with
    probability > 1/2, and the accepted value is exactly uniform)."""
    if n < 1 << 62:
        return int(gen.integers(0, n, dtype=np.int64))
    nbits = n.bit_length()
    words = (nbits + 63) // 64
    while True:
        raw = gen.integers(0, 1 << 64, size=words, dtype=np.uint64)
        x = int.from_bytes(raw.tobytes(), "little") >> (64 * words - nbits)
        if x < n:
            return x
