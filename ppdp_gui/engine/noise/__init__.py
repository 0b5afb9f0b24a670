"""The only source of randomness for differential privacy: secure, vectorised samplers.

`NoiseSource()` is seeded from the operating system's CSPRNG (`secrets`, 256 bits) into numpy's Philox
counter-based generator, so millions of draws cost milliseconds. `NoiseSource.for_tests(seed)` is reproducible
and is for tests and the user's own simulations only; a real release is never seeded.

Floating-point care (Mironov 2012, "On significance of the least significant bits for DP"):
- counts get integer noise (`discrete_laplace`: the difference of two geometric variables is exactly the
  two-sided geometric distribution P(x) ∝ exp(-|x|/scale)), so no float artefact reaches a released count;
- real values go through `snapped_laplace`: clamp the input to [-B, B], add Laplace noise (from a uniform in
  which every double can occur), round to the nearest multiple of Λ (the smallest power of two ≥ scale), clamp
  again. The set of reachable outputs then no longer depends on the secret input's low bits; the guarantee is
  (ε + 2^-49·B/scale + 2^-52)-DP, which `snapping_epsilon` reports and callers charge (it also assumes a
  correctly rounded logarithm, which numpy's is to within one ulp);
- the exponential mechanism is sampled by the Gumbel-max trick in log space (no exp overflow, no
  normalising sum that can lose small probabilities).
"""

from ppdp_gui.engine.noise.sampler import NoiseSource, snapping_epsilon

__all__ = ["NoiseSource", "snapping_epsilon"]
