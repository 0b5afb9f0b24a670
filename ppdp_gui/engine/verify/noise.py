"""`ScaledNoise`: a NoiseSource whose every noise scale is multiplied by a factor — the one way to plant a wrong
scale in a mechanism.

Why a wrapper and not a hook: a test that proves "the privacy test notices a halved scale" must break the
mechanism from outside, exactly as a bug would, without the shipped mechanism carrying a multiplier only tests
set (DiffGen used to have one). Every DP sampler of `NoiseSource` is scaled here; the plain draws a mechanism
uses for things that are not noise (a uniform split point inside an interval already chosen, a permutation)
pass through unchanged. `tests/engine/test_verify.py` fails when `NoiseSource` gains a method this class does
not classify, so a new sampler cannot slip through unscaled.

factor < 1 is less noise than the mechanism asks for (a smaller scale, a larger ε), factor > 1 more; a tiny
factor (1e-9) gives counts and choices that are, in effect, exact (bookkeeping tests).
"""

from __future__ import annotations

from fractions import Fraction

SCALED = ("discrete_laplace", "geometric_noise_counts", "exponential_choice", "snapped_laplace", "laplace")
PASSED_THROUGH = ("uniform", "integers", "permutation", "choice")


def _times(value, factor: Fraction):
    return value * factor if isinstance(value, Fraction) else float(value) * float(factor)


def _over(value, factor: Fraction):
    return value / factor if isinstance(value, Fraction) else float(value) / float(factor)


class ScaledNoise:
    """Wraps a NoiseSource: every noise scale × `factor` (ε of the exponential mechanism and of noisy counts ÷
    `factor`, which is the same thing). Never used for a real release."""

    def __init__(self, source, factor):
        factor = Fraction(str(factor)) if isinstance(factor, float) else Fraction(factor)
        if factor <= 0:
            raise ValueError(f"the noise factor must be positive, got {factor}")
        self._source = source
        self.factor = factor
        self.seeded = getattr(source, "seeded", False)

    # ---- scaled DP samplers -------------------------------------------------------------------------------
    def discrete_laplace(self, scale, size=None):
        return self._source.discrete_laplace(_times(scale, self.factor), size=size)

    def geometric_noise_counts(self, counts, epsilon, sensitivity=1):
        return self._source.geometric_noise_counts(counts, _over(epsilon, self.factor), sensitivity)

    def exponential_choice(self, scores, epsilon, sensitivity, log_weights=None, weights=None):
        return self._source.exponential_choice(scores, _over(epsilon, self.factor), sensitivity,
                                               log_weights=log_weights, weights=weights)

    def snapped_laplace(self, values, scale, bound):
        return self._source.snapped_laplace(values, _times(scale, self.factor), bound)

    def laplace(self, scale, size=None):
        return self._source.laplace(_times(scale, self.factor), size=size)

    # ---- plain draws (not noise: unchanged) ----------------------------------------------------------------
    def uniform(self, low, high, size=None):
        return self._source.uniform(low, high, size=size)

    def integers(self, low, high=None, size=None):
        return self._source.integers(low, high, size=size)

    def permutation(self, n):
        return self._source.permutation(n)

    def choice(self, a, size=None, replace=True, p=None):
        return self._source.choice(a, size=size, replace=replace, p=p)


def with_factor(source, factor):
    """`source` itself for factor 1 (the mechanism as shipped), else the source wrapped in ScaledNoise."""
    return source if Fraction(str(factor)) == 1 else ScaledNoise(source, factor)
