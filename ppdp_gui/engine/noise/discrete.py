"""Exact discrete Laplace sampling with integer arithmetic only (no floating point decides any draw).

The algorithm is Canonne, Kamath & Steinke 2020 ("The Discrete Gaussian for Differential Privacy", NeurIPS),
Algorithm 2, for a rational scale t/s, run on whole numpy arrays: every rejection loop continues on the
shrinking set of draws still pending, and since accepted draws are i.i.d., they are written out in the order
they are accepted (which draw lands in which slot carries no information).

One round, for integers t, s ≥ 1 (scale t/s):
1. U uniform on {0, …, t−1}; keep it with probability exp(−U/t) (Algorithm 1, below). A kept U has
   P(U = u) ∝ exp(−u/t): it is floor(t·F) for the fractional part F of an Exp(1) variable.
2. V with P(V ≥ v) = exp(−v) (the integer part of that Exp(1) variable), independent of U.
   X = U + t·V then has P(X = x) ∝ exp(−x/t), and Y = ⌊X/s⌋ has P(Y = y) ∝ exp(−y·s/t).
3. A fair sign bit B; (B = 1, Y = 0) is rejected so that 0 is not counted twice; the result is (1 − 2B)·Y,
   with P(Z = z) ∝ exp(−|z|·s/t) exactly.

Algorithm 1 (Bernoulli(exp(−γ)) for γ = U/t ∈ [0, 1)): K ← 1; while Bernoulli(γ/K) succeeds, K ← K + 1;
answer "K is odd". P(K > k) = γ^k/k!, so P(K odd) = Σ_j (−γ)^j/j! = exp(−γ). Each Bernoulli(U/(t·K)) is an
exact comparison of a uniform integer below t·K with U (while t·K fits in int64; past that, the product of
Bernoulli(1/K) and Bernoulli(U/t), which is the same event probability U/(tK)).

Step 2 differs from the paper in how V is drawn, not in its law: the paper repeats Bernoulli(exp(−1)) (about
4.3 uniform draws per V); here V = #{v ≥ 1 : W < exp(−v)} for a uniform real W ∈ (0, 1), read from the first
32 random bits of W by comparison with T_v = ⌊2^32·exp(−v)⌋, computed once and exactly with integer arithmetic
(`floor_exp_neg`). With R the 32-bit prefix (W ∈ [R/2^32, (R+1)/2^32)): R < T_v ⇒ W < exp(−v); R > T_v ⇒
W > exp(−v); only R = T_v leaves the comparison open, and then (probability < 2^-27 per draw) more random bits
of W are drawn and compared with more exact bits of exp(−v) until it is decided (`_refine_geometric`). Since
exp(−v) is irrational the comparison always ends. No floating-point value ever decides a draw: a float
logarithm only proposes V, which integer comparisons with the exact table then confirm or correct.
"""

from __future__ import annotations

import math
import numbers
from fractions import Fraction
from functools import lru_cache

import numpy as np

from ppdp_gui.engine.errors import ParameterError

SCALE_DENOMINATOR = 1 << 20
"""A scale whose exact value needs a larger denominator is rounded UP to a multiple of 2^-20."""
MAX_SCALE = 1 << 40
"""Largest noise scale accepted (ε ≥ Δ·2^-40); with the denominator ≤ 2^20, t ≤ 2^60 < 2^63."""
_INT64_MAX = (1 << 63) - 1
_WORD_BITS = 32
_V_LIMIT = 1 << 22
"""Y = q·V + ⌊(U + r·V)/s⌋ fits in int64 while V < 2^22 (q ≤ 2^40, r < s ≤ 2^20, U < 2^60); P(V ≥ 2^22) =
exp(−2^22), and reaching it raises rather than wraps. The event does not depend on the data."""


# -- the scale as an exact fraction --------------------------------------------------------------------------
def exact_value(name: str, value, rounding: str = "up") -> Fraction:
    """A positive finite number as an exact Fraction. Fraction and integers are taken as they are; a float x
    has two readings, its exact binary value and its shortest decimal repr (0.3 is 3/10 to the user, a little
    less in binary): `rounding` "up" takes the larger (safe for a noise scale or a sensitivity), "down" the
    smaller (safe for an ε), "decimal" the repr (how the budget ledger counts ε)."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, Fraction)):
        raise ParameterError(f"{name} must be a positive finite number, got {value!r}")
    if isinstance(value, Fraction):
        v = value
    elif isinstance(value, numbers.Integral):
        v = Fraction(int(value))
    else:
        x = float(value)
        if not math.isfinite(x):
            raise ParameterError(f"{name} must be a positive finite number, got {value!r}")
        binary, decimal = Fraction(x), Fraction(repr(x))
        v = {"up": max, "down": min}.get(rounding, lambda b, d: d)(binary, decimal)
    if v <= 0:
        raise ParameterError(f"{name} must be a positive finite number, got {value!r}")
    return v


def exact_scale(scale) -> Fraction:
    """The scale actually used for `scale`: never smaller than the requested value (more noise is always
    safe), with denominator ≤ 2^20 and numerator ≤ 2^60, so every integer the sampler forms fits in int64.

    A value that already has a denominator ≤ 2^20 (1, 2.5, 7/3, 10/3, 0.3) is kept exactly; any other value v
    becomes ⌈v·2^20⌉/2^20, which is at most 2^-20 larger."""
    v = exact_value("noise scale", scale)
    if v > MAX_SCALE:
        raise ParameterError(f"noise scale {float(v):g} is larger than {MAX_SCALE} (ε too small)")
    if v.denominator <= SCALE_DENOMINATOR:
        return v
    return Fraction(-((-v.numerator * SCALE_DENOMINATOR) // v.denominator), SCALE_DENOMINATOR)


# -- exact bits of exp(-v) -----------------------------------------------------------------------------------
@lru_cache(maxsize=4096)
def floor_exp_neg(v: int, k: int) -> int:
    """⌊2^k · exp(−v)⌋ exactly, for integers v ≥ 0, k ≥ 0.

    exp(−v) = Σ_j (−v)^j / j!; past j = v the terms shrink in magnitude and alternate in sign, so the sum of
    the first N+1 terms (N ≥ v) is within v^(N+1)/(N+1)! of exp(−v). Both ends of that interval are rationals;
    N doubles until they have the same floor after scaling by 2^k (they must: exp(−v) is irrational for v ≥ 1,
    so 2^k·exp(−v) is never an integer)."""
    if v == 0:
        return 1 << k
    n = max(2 * v, 16)
    while True:
        fact = math.factorial(n)
        a = sum((-v) ** j * (fact // math.factorial(j)) for j in range(n + 1))  # partial sum · n!
        big = fact * (n + 1)  # (n+1)!
        center = a * (n + 1)  # partial sum · (n+1)!
        err = v ** (n + 1)
        lo = ((center - err) << k) // big
        hi = ((center + err) << k) // big
        if lo == hi:
            return lo
        n *= 2


@lru_cache(maxsize=8)
def _exp_table(bits: int) -> np.ndarray:
    """[2^bits, ⌊2^bits·e^-1⌋, ⌊2^bits·e^-2⌋, …] down to and including the first 0, as int64."""
    table = [1 << bits]
    while table[-1] > 0:
        table.append(floor_exp_neg(len(table), bits))
    return np.array(table, dtype=np.int64)


def _refine_geometric(gen: np.random.Generator, prefix: int, bits: int) -> int:
    """#{v ≥ 1 : W < exp(−v)} for W uniform on [prefix/2^bits, (prefix+1)/2^bits), drawing further random bits
    of W (64 at a time, from `gen`) whenever W's known bits cannot tell it from exp(−v)."""
    v = 1
    while True:
        f = floor_exp_neg(v, bits)  # exp(−v) ∈ (f/2^bits, (f+1)/2^bits)
        if prefix + 1 <= f:  # W < (prefix+1)/2^bits ≤ f/2^bits < exp(−v)
            v += 1
        elif prefix > f:  # W ≥ prefix/2^bits ≥ (f+1)/2^bits > exp(−v)
            return v - 1
        else:
            prefix = (prefix << 64) | int(gen.integers(0, 1 << 64, dtype=np.uint64))
            bits += 64


def geometric_e(gen: np.random.Generator, n: int, bits: int = _WORD_BITS) -> np.ndarray:
    """n independent V with P(V ≥ v) = exp(−v), exactly (see the module docstring); int64.

    `bits` (≤ 62) is the width of the first random word per draw (32 in use; tests pass 8 to exercise the
    refinement often)."""
    table = _exp_table(bits)
    last = len(table) - 1  # table[last] == 0
    dtype = np.uint32 if bits <= 32 else np.int64
    r = gen.integers(0, 1 << bits, size=n, dtype=dtype).astype(np.int64)
    # proposal from a float logarithm, then exact correction: V is the v with table[v] > r ≥ table[v+1]
    v = np.floor(-np.log((r + 0.5) * 2.0 ** -bits)).astype(np.int64)
    np.clip(v, 0, last - 1, out=v)
    while True:
        high = table[v] <= r
        low = table[v + 1] > r
        if not (high.any() or low.any()):
            break
        v -= high
        v += low
    ties = np.flatnonzero(table[v + 1] == r)
    for i in ties:  # probability < 2^-27 per draw at 32 bits
        v[i] = _refine_geometric(gen, int(r[i]), bits)
    return v


# -- Algorithm 1 and 2 -----------------------------------------------------------------------------------------
def bernoulli_exp_fraction(gen: np.random.Generator, u: np.ndarray, t: int) -> np.ndarray:
    """Boolean array, True with probability exp(−u_i/t), for integers 0 ≤ u_i < t (CKS Algorithm 1)."""
    if t == 1:
        return np.ones(u.shape, dtype=bool)
    # K = 1 on everything: Bernoulli(u/t)
    go = _uniform_below(gen, t, u.size) < u
    result = ~go  # stopped with K = 1, odd
    active = np.flatnonzero(go)
    ua = u[active]
    k = 2
    while active.size:
        if t * k <= _INT64_MAX:
            go = _uniform_below(gen, t * k, active.size) < ua
        else:  # Bernoulli(u/(tK)) as Bernoulli(1/K) and Bernoulli(u/t), independent
            go = (gen.integers(0, k, size=active.size) == 0) & (_uniform_below(gen, t, active.size) < ua)
        if k % 2 == 1:
            result[active[~go]] = True
        active = active[go]
        ua = ua[go]
        k += 1
    return result


def _uniform_below(gen: np.random.Generator, high: int, n: int) -> np.ndarray:
    """n uniform integers in [0, high), high ≤ 2^63 − 1, exact (numpy's bounded integers reject, they never take
    a modulus); uint32 when they fit (half the random bits), else int64 — never uint64, whose comparison with
    int64 could go through float64."""
    if high < 1 << 32:
        return gen.integers(0, high, size=n, dtype=np.uint32)
    return gen.integers(0, high, size=n, dtype=np.int64)


def _acceptance(t: int, s: int) -> float:
    """Expected fraction of a round's draws that are accepted (only to size the rounds)."""
    keep = 1.0 if t == 1 else -math.expm1(-1.0) / (t * -math.expm1(-1.0 / t))
    return keep * (1.0 + math.exp(-s / t)) / 2.0


def _one_round(gen: np.random.Generator, t: int, s: int, m: int) -> np.ndarray:
    """CKS Algorithm 2 once on m independent trials; returns the accepted values (i.i.d., any number ≤ m)."""
    u = _uniform_below(gen, t, m).astype(np.int64)
    u = u[bernoulli_exp_fraction(gen, u, t)]
    v = geometric_e(gen, u.size)
    if v.size and v.max() >= _V_LIMIT:
        raise RuntimeError("discrete Laplace: a geometric draw exceeded 2^22 (probability exp(-2^22))")
    q, r = divmod(t, s)
    y = q * v + (u + r * v) // s  # ⌊(U + t·V)/s⌋ without forming t·V
    negative = gen.integers(0, 2, size=y.size, dtype=np.bool_)
    keep = ~(negative & (y == 0))
    np.negative(y, out=y, where=negative)
    return y[keep]


def discrete_laplace(gen: np.random.Generator, scale: Fraction, n: int) -> np.ndarray:
    """n i.i.d. draws with P(x) ∝ exp(−|x|/scale) for a Fraction scale from `exact_scale`; int64."""
    t, s = scale.numerator, scale.denominator
    out = np.empty(n, dtype=np.int64)
    rate = _acceptance(t, s)
    filled = 0
    while filled < n:
        need = n - filled
        got = _one_round(gen, t, s, int(need / rate * 1.01) + 16)
        take = min(got.size, need)
        out[filled:filled + take] = got[:take]
        filled += take
    return out
