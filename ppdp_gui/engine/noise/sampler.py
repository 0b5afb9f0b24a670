"""Vectorised DP samplers (see the package docstring for the security notes)."""

from __future__ import annotations

import math
import secrets
from fractions import Fraction

import numpy as np

from ppdp_gui.engine.errors import ParameterError


def _positive(name: str, value) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must be a positive finite number, got {value!r}") from None
    if not (v > 0 and math.isfinite(v)):
        raise ParameterError(f"{name} must be a positive finite number, got {value!r}")
    return v


def snapping_epsilon(epsilon: float, bound: float, scale: float) -> float:
    """The ε actually guaranteed by `snapped_laplace` for a nominal ε = Δ/scale.

    Mironov 2012, Thm 1, for sensitivity 1: ((1 + 12·B·η)/λ + 2η)-DP with η = 2^-53, valid for λ < B < 2^46·λ.
    For sensitivity Δ, divide B and λ by Δ: ε(1 + 12·η·B/Δ) + 2η = ε + 12·η·B/scale + 2η. Rounded up slightly
    (12η < 2^-49), so the figure charged is never below the true one.
    """
    eps, b, s = float(epsilon), float(bound), float(scale)
    return eps + 2.0 ** -49 * b / s + 2.0 ** -52


class NoiseSource:
    """Random draws for DP; one instance per release (or per test)."""

    def __init__(self, seed: int | None = None):
        self.seeded = seed is not None
        entropy = int(seed) if seed is not None else secrets.randbits(256)
        self._gen = np.random.Generator(np.random.Philox(np.random.SeedSequence(entropy)))

    @classmethod
    def for_tests(cls, seed: int) -> "NoiseSource":
        return cls(seed=seed)

    # ---- counts -----------------------------------------------------------------------------------------
    def discrete_laplace(self, scale, size=None) -> np.ndarray:
        """Integer noise with P(x) ∝ exp(-|x|/scale): sensitivity Δ and budget ε give scale = Δ/ε."""
        s = _positive("noise scale", scale)
        p = -math.expm1(-1.0 / s)  # 1 - e^{-1/s}, accurate for large s
        g1 = self._gen.geometric(p, size=size)
        g2 = self._gen.geometric(p, size=size)
        return (np.asarray(g1, dtype=np.int64) - np.asarray(g2, dtype=np.int64))

    def geometric_noise_counts(self, counts, epsilon, sensitivity: float = 1.0) -> np.ndarray:
        """counts + discrete Laplace noise of scale Δ/ε, as int64."""
        eps = _positive("ε", epsilon)
        counts = np.asarray(counts, dtype=np.int64)
        return counts + self.discrete_laplace(float(sensitivity) / eps, size=counts.shape)

    # ---- reals ------------------------------------------------------------------------------------------
    def snapped_laplace(self, values, scale, bound) -> np.ndarray:
        """values + Laplace(scale), made safe by clamping to [-bound, bound] and snapping to a power-of-two grid."""
        s = _positive("noise scale", scale)
        b = _positive("bound", bound)
        x = np.clip(np.asarray(values, dtype=np.float64), -b, b)
        u = self._uniform_all_doubles(x.shape)
        sign = np.where(self._gen.integers(0, 2, size=x.shape) == 1, 1.0, -1.0)
        noisy = x + sign * s * np.log(u) * -1.0
        lam = 2.0 ** math.ceil(math.log2(s))
        snapped = np.round(noisy / lam) * lam
        return np.clip(snapped, -b, b)

    def _uniform_all_doubles(self, shape) -> np.ndarray:
        """U in (0, 1) where every double can occur, with probability proportional to its spacing (Mironov's U*):
        the exponent is geometric (each leading zero bit has probability 1/2), the 52 mantissa bits uniform.
        `random()` would only give multiples of 2^-53, whose logarithms leave gaps the snapping proof excludes."""
        zeros = self._gen.geometric(0.5, size=shape) - 1
        mantissa = self._gen.integers(0, 2 ** 52, size=shape, dtype=np.int64)
        return np.ldexp((mantissa + 2 ** 52).astype(np.float64), -(53 + zeros))

    def laplace(self, scale, size=None) -> np.ndarray:
        """Raw continuous Laplace draws; only for noise that is itself snapped or for tests of the sampler."""
        s = _positive("noise scale", scale)
        return self._gen.laplace(0.0, s, size=size)

    # ---- selection --------------------------------------------------------------------------------------
    def exponential_choice(self, scores, epsilon, sensitivity, log_weights=None) -> int:
        """Index i drawn with probability ∝ w_i · exp(ε·score_i / (2Δ)) (McSherry–Talwar), via Gumbel-max."""
        eps = _positive("ε", epsilon)
        delta = _positive("sensitivity", sensitivity)
        s = np.asarray(scores, dtype=np.float64)
        if s.ndim != 1 or s.size == 0:
            raise ParameterError("the exponential mechanism needs a non-empty 1-D array of scores")
        logits = eps * s / (2.0 * delta)
        if log_weights is not None:
            logits = logits + np.asarray(log_weights, dtype=np.float64)
        logits = np.where(np.isfinite(logits), logits, -np.inf)
        if not np.isfinite(logits).any():
            raise ParameterError("the exponential mechanism has no candidate with positive weight")
        return int(np.argmax(logits + self._gen.gumbel(size=s.shape)))

    def report_noisy_max(self, scores, epsilon, sensitivity) -> int:
        """Index of the largest score after exponential noise of scale 2Δ/ε: ε-DP, and distributed exactly as
        permute-and-flip (McKenna & Sheldon 2020), which is never worse than the exponential mechanism."""
        eps = _positive("ε", epsilon)
        delta = _positive("sensitivity", sensitivity)
        s = np.asarray(scores, dtype=np.float64)
        return int(np.argmax(s + self._gen.exponential(2.0 * delta / eps, size=s.shape)))

    # ---- plain randomness used inside mechanisms ---------------------------------------------------------
    def uniform(self, low, high, size=None):
        return self._gen.uniform(low, high, size=size)

    def integers(self, low, high=None, size=None):
        return self._gen.integers(low, high, size=size)

    def permutation(self, n):
        return self._gen.permutation(n)

    def choice(self, a, size=None, replace=True, p=None):
        return self._gen.choice(a, size=size, replace=replace, p=p)


def exact_epsilon(value) -> Fraction:
    """ε as an exact fraction for the ledger (a float is taken by its shortest decimal repr)."""
    if isinstance(value, Fraction):
        return value
    return Fraction(str(value)) if isinstance(value, float) else Fraction(value)
