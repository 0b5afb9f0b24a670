"""The NoiseSource: one Philox generator per release, and the DP samplers that draw from it (see the package
docstring for what is exact and why; the exact samplers themselves are in `discrete.py` and `selection.py`)."""

from __future__ import annotations

import math
import secrets
from fractions import Fraction

import numpy as np

from ppdp_gui.engine.errors import ParameterError
from ppdp_gui.engine.noise import discrete, selection
from ppdp_gui.engine.noise.discrete import exact_scale, exact_value


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
        """Integer noise with P(x) ∝ exp(-|x|/scale), sampled exactly (CKS 2020, see `discrete.py`).

        `scale` (float, int or Fraction) is used as `exact_scale(scale)`: exactly when its denominator is at
        most 2^20, else rounded up to a multiple of 2^-20, never below the request. Returns an int64 array of
        shape `size` (one np.int64 when size is None)."""
        frac = exact_scale(scale)
        n = 1 if size is None else int(np.prod(size, dtype=np.int64))
        draws = discrete.discrete_laplace(self._gen, frac, n)
        return draws[0] if size is None else draws.reshape(size)

    def geometric_noise_counts(self, counts, epsilon, sensitivity=1) -> np.ndarray:
        """counts + discrete Laplace noise of scale Δ/ε, as int64. ε and Δ are taken exactly (a float by its
        shortest repr, as the budget ledger counts it: ε = 0.3 gives the scale 10/3 itself), then rounded up."""
        eps = exact_value("ε", epsilon, rounding="decimal")
        sens = exact_value("sensitivity", sensitivity, rounding="up")
        counts = np.asarray(counts, dtype=np.int64)
        return counts + self.discrete_laplace(sens / eps, size=counts.shape)

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
    def exponential_choice(self, scores, epsilon, sensitivity, log_weights=None, weights=None) -> int:
        """Index i with probability ∝ w_i · exp(ε_eff·score_i / (2Δ)) (McSherry–Talwar), sampled exactly on
        dyadic integer weights; pure ε-DP for the scores as computed (proof in `selection.py`).

        `weights`: non-negative base-measure weights (e.g. the split points of a sub-interval), used exactly;
        `log_weights`: their float logarithms (older callers; -inf = weight 0). At most one of the two."""
        return selection.exponential_choice(self._gen, scores, epsilon, sensitivity, log_weights=log_weights,
                                            weights=weights)

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
