"""The only source of randomness for differential privacy: secure, vectorised samplers.

`NoiseSource()` is seeded from the operating system's CSPRNG (`secrets`, 256 bits) into numpy's Philox
counter-based generator, so millions of draws cost milliseconds. `NoiseSource.for_tests(seed)` is reproducible
and is for tests and the user's own simulations only; a real release is never seeded.

Floating point and privacy (Mironov 2012, "On significance of the least significant bits for DP"): a sampler
that computes its output with floats has a privacy loss that nobody states. What each sampler guarantees:

- counts — `discrete_laplace`, `geometric_noise_counts`: EXACT. P(x) ∝ exp(−|x|/scale) is sampled with integer
  arithmetic only (Canonne, Kamath & Steinke 2020, Algorithms 1–2, vectorised; `discrete.py`): uniform integers
  from Philox compared with integers, plus exact integer bits of exp(−v). The scale is a Fraction t/s: the
  requested one when its denominator is ≤ 2^20 (ε = 0.3, Δ = 1 gives exactly 10/3), otherwise rounded UP to a
  multiple of 2^-20, so the noise is never below the request. Pure (Δ/scale)-DP, δ = 0, no float slack.
- selection — `exponential_choice`: EXACT sampling of a mechanism proven pure ε-DP (`selection.py`). The weights
  exp(ε_eff·s/(2Δ)) are realised as dyadic integers r·2^E, floored at 2^-1100 of the largest (the floor is a
  1-Lipschitz change of the scores, so still ε_eff-DP), and the index is drawn exactly proportionally to them
  (exact integer sums, a uniform integer below the exact total). The float error in forming the weights is
  bounded a priori (τ < 2^-39 bits for scores |s| ≤ 2^40) and charged: ε_eff = ε·(1 − 2^-10) − 4τ·ln 2, so the
  choice is ε-DP for the scores as computed, δ = 0. Base-measure `weights` (interval lengths) are used exactly.
- reals — `snapped_laplace`: NOT exact, and charged for it. Clamp the input to [−B, B], add Laplace noise (from a
  uniform in which every double can occur), round to the nearest multiple of Λ (the smallest power of two ≥
  scale), clamp again. The reachable outputs then no longer depend on the secret input's low bits; the guarantee
  is (ε + 2^-49·B/scale + 2^-52)-DP, which `snapping_epsilon` reports and callers charge (it also assumes a
  correctly rounded logarithm, which numpy's is to within one ulp).

`laplace` (raw floats) is for tests only. There is no report-noisy-max: no mechanism used it.
"""

from ppdp_gui.engine.noise.sampler import NoiseSource, snapping_epsilon

__all__ = ["NoiseSource", "snapping_epsilon"]
