"""Noise for real-valued statistics as integer noise on a public grid, and the exact exponential mechanism of the
record baseline — all drawn through `NoiseSource` (so a wrapper that plants a wrong scale reaches every draw).

Why a grid instead of snapped Laplace: a statistic rounded to a grid of step γ = 2^-j is an integer count of
steps; exact discrete Laplace noise of scale b/γ steps on it is exactly (Δ/b)-DP when the statistic moves by at
most Δ (in data units) between neighbours — no floating-point slack to charge. Snapping would round the noisy
value to a power of two at least the scale, which costs up to a sixth of the noise variance again; a fine grid
costs nothing measurable. The grid depends only on ε and Δ (`grid_exponent`), so it is public, and rounding the
data onto it happens before the sums, so the sensitivity bound (a maximum over all of [0, 1]) still holds.

Sums of values on the grid 2^-j are exact in float64 BLAS: every term is an integer below 2^(2j) ≤ 2^20 steps,
and every partial sum an integer below 2^53 for fewer than 2^33 records, so `X.T @ X` is computed exactly.
"""

from __future__ import annotations

import contextlib
from fractions import Fraction

import numpy as np

MAX_EXACT_RECORDS = 1 << 33  # n · 2^20 < 2^53: sums of grid products stay exact integers in float64


_CONTROLLER: list = []
SMALL_PRODUCT = 1 << 20  # multiply-adds below which one thread is used anyway and limiting costs more than it saves


def one_blas_thread(work: int = SMALL_PRODUCT):
    """A context in which BLAS uses one thread, for products of `work` multiply-adds. The products here are small
    (n × P by P × P); on a busy machine a second BLAS thread spin-waiting for a core made them ten times slower and
    erratic (bench_dp_pca.py). The controller scans the loaded libraries once, so it is built once."""
    if work < SMALL_PRODUCT:
        return contextlib.nullcontext()
    if not _CONTROLLER:
        try:
            from threadpoolctl import ThreadpoolController  # installed with scikit-learn
            _CONTROLLER.append(ThreadpoolController())
        except ImportError:  # pragma: no cover
            _CONTROLLER.append(None)
    ctl = _CONTROLLER[0]
    return contextlib.nullcontext() if ctl is None else ctl.limit(limits=1, user_api="blas")


def on_grid(x: np.ndarray, j: int) -> np.ndarray:
    """x rounded to the grid 2^-j, as float64 integers (steps)."""
    return np.round(np.asarray(x, dtype=np.float64) * float(1 << j))


def exact_sums(steps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(Σx, Σxxᵀ) of integer-valued rows, exactly (see the module docstring), as int64 arrays."""
    if len(steps) >= MAX_EXACT_RECORDS:
        raise ValueError("too many records for exact float sums")
    s1 = steps.sum(axis=0)
    with one_blas_thread(steps.size * steps.shape[1]):
        s2 = steps.T @ steps
    return s1.astype(np.int64), np.rint(s2).astype(np.int64)


def grid_noise(rng, steps: np.ndarray, scale: Fraction, j: int, power: int = 1) -> np.ndarray:
    """steps (integers on the grid 2^-(power·j)) + discrete Laplace noise of scale `scale` data units, i.e.
    scale·2^(power·j) steps. Returns int64 steps."""
    grid_scale = Fraction(scale) * Fraction(2) ** (power * j)
    steps = np.asarray(steps, dtype=np.int64)
    return steps + np.asarray(rng.discrete_laplace(grid_scale, size=steps.shape), dtype=np.int64)


def upper_indices(p: int) -> tuple[np.ndarray, np.ndarray]:
    return np.triu_indices(p)


def symmetric_from_upper(values: np.ndarray, p: int) -> np.ndarray:
    """The symmetric p × p matrix whose upper triangle (row-major, diagonal included) is `values`."""
    out = np.zeros((p, p), dtype=np.float64)
    iu = np.triu_indices(p)
    out[iu] = values
    out.T[iu] = values
    return out


# ---- the exponential mechanism of the record baseline -----------------------------------------------------------
def exponential_on_grid(rng, centers: np.ndarray, top: int, scale: Fraction) -> np.ndarray:
    """For every center m ∈ {0..top}, an independent g ∈ {0..top} with P(g) ∝ exp(−|g − m| / scale), exactly.

    Two exact rejection samplers, chosen by public values only:
    - wide noise (scale ≥ top/2): propose g uniformly, draw Z ~ discrete Laplace(scale) and accept iff Z ≥ |g − m|.
      P(Z ≥ d) = exp(−d/scale)/(1 + exp(−1/scale)) for every d ≥ 0, so the accepted g has exactly the target law;
    - narrow noise: propose g = m + Z and accept iff 0 ≤ g ≤ top (the target is that law restricted to the grid).
    """
    centers = np.asarray(centers, dtype=np.int64)
    out = np.empty_like(centers)
    pending = np.arange(centers.size)
    wide = Fraction(scale) * 2 >= top
    while pending.size:
        m = centers[pending]
        z = np.asarray(rng.discrete_laplace(scale, size=pending.size), dtype=np.int64)
        if wide:
            g = np.asarray(rng.integers(0, top + 1, size=pending.size), dtype=np.int64)
            ok = z >= np.abs(g - m)
        else:
            g = m + z
            ok = (g >= 0) & (g <= top)
        out[pending[ok]] = g[ok]
        pending = pending[~ok]
    return out


def exponential_category(rng, codes: np.ndarray, k: int, scale: Fraction) -> np.ndarray:
    """For every true category c ∈ {0..k-1}, an independent y with P(y) ∝ exp(−[y ≠ c] / scale), exactly: y is
    proposed uniformly and accepted iff a discrete Laplace(scale) draw is ≥ [y ≠ c] (same argument as above)."""
    codes = np.asarray(codes, dtype=np.int64)
    out = np.empty_like(codes)
    pending = np.arange(codes.size)
    while pending.size:
        c = codes[pending]
        y = np.asarray(rng.integers(0, k, size=pending.size), dtype=np.int64)
        z = np.asarray(rng.discrete_laplace(scale, size=pending.size), dtype=np.int64)
        ok = z >= (y != c)
        out[pending[ok]] = y[ok]
        pending = pending[~ok]
    return out


__all__ = ["on_grid", "exact_sums", "grid_noise", "symmetric_from_upper", "upper_indices",
           "exponential_on_grid", "exponential_category"]
