"""Speed of the exact DP samplers: 10^6 discrete-Laplace draws per scale (target ≤ 0.2 s) and the exponential
mechanism on 10^3 and 10^5 candidates, beside the old float samplers and OpenDP.

Run: .venv/bin/python benchmarks/bench_noise.py [--draws 1000000] [--opendp-draws 100000]
The "old" rows re-time, on this machine, what the samplers did before they were made exact (numpy's float
geometric difference; Gumbel-max over float logits); the reference figures of the project are printed too.
OpenDP is timed on fewer draws (it takes seconds per million) and scaled linearly to 10^6.
"""

from __future__ import annotations

import argparse
import math
import resource
import time
from fractions import Fraction

import numpy as np

from ppdp_gui.engine.noise import NoiseSource

REFERENCE_OLD_FLOAT_S = 0.034  # the float geometric-difference sampler, 10^6 draws (before the exact one)
REFERENCE_OPENDP_INT_S = 5.77  # OpenDP 0.16 make_laplace on 10^6 integers, reference README §5 (6–9 s seen)
TARGET_S = 0.2
SCALES = (0.3, 0.5, 1.0, 7 / 3, 2.5, 10.0, 2 / 0.3, 100.0, 2000.0)


def best_of(fn, repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def old_float_discrete_laplace(gen: np.random.Generator, scale: float, n: int) -> np.ndarray:
    p = -math.expm1(-1.0 / scale)
    return gen.geometric(p, size=n).astype(np.int64) - gen.geometric(p, size=n).astype(np.int64)


def old_gumbel_choice(gen: np.random.Generator, scores: np.ndarray, eps: float, sens: float) -> int:
    return int(np.argmax(eps * scores / (2 * sens) + gen.gumbel(size=scores.shape)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=1_000_000)
    parser.add_argument("--opendp-draws", type=int, default=100_000)
    args = parser.parse_args()
    n = args.draws
    rng = NoiseSource()
    gen = np.random.default_rng()
    rows = []
    for scale in SCALES:
        rows.append((f"exact discrete_laplace, scale {scale:.4g}", n,
                     best_of(lambda s=scale: rng.discrete_laplace(s, n))))
    rows.append(("exact discrete_laplace, scale Fraction(7, 3)", n,
                 best_of(lambda: rng.discrete_laplace(Fraction(7, 3), n))))
    counts = np.zeros(n, dtype=np.int64)
    rows.append(("exact geometric_noise_counts, ε = 0.3 (scale 10/3)", n,
                 best_of(lambda: rng.geometric_noise_counts(counts, 0.3))))
    rows.append(("old float geometric difference, scale 1 (not exact)", n,
                 best_of(lambda: old_float_discrete_laplace(gen, 1.0, n))))
    rows.append(("snapped_laplace, scale 1, B = 100 (unchanged)", n,
                 best_of(lambda: rng.snapped_laplace(np.zeros(n), 1.0, 100.0))))
    em_rows = []
    for m in (1_000, 100_000):
        scores = np.random.default_rng(0).random(m) * 100
        lengths = np.random.default_rng(1).integers(0, 50, m)
        em_rows.append((f"exact exponential_choice, {m:,} candidates", m,
                        best_of(lambda s=scores: rng.exponential_choice(s, 0.1, 1.0), 7)))
        em_rows.append((f"exact exponential_choice, {m:,} candidates, weights", m,
                        best_of(lambda s=scores, w=lengths: rng.exponential_choice(s, 0.1, 1.0, weights=w), 7)))
        em_rows.append((f"old Gumbel-max, {m:,} candidates (not exact)", m,
                        best_of(lambda s=scores: old_gumbel_choice(gen, s, 0.1, 1.0), 7)))

    try:
        import opendp.prelude as dp

        dp.enable_features("contrib")
        k = args.opendp_draws
        meas = dp.m.make_laplace(dp.vector_domain(dp.atom_domain(T=int)), dp.l1_distance(T=int), scale=1.0)
        zeros = [0] * k
        t = best_of(lambda: meas(zeros), repeats=1)
        rows.append((f"OpenDP make_laplace, integers (measured on {k:,}, scaled)", n, t * n / k))
    except ImportError:
        print("opendp is not installed: its row is missing")

    print(f"{'sampler':<62} {'draws':>10} {'seconds':>9} {'draws/s':>14}")
    for name, draws, seconds in rows:
        print(f"{name:<62} {draws:>10,} {seconds:>9.4f} {draws / seconds:>14,.0f}")
    print(f"{'reference: old float sampler (before exactness)':<62} {1_000_000:>10,} "
          f"{REFERENCE_OLD_FLOAT_S:>9.4f} {1_000_000 / REFERENCE_OLD_FLOAT_S:>14,.0f}")
    print(f"{'reference: OpenDP make_laplace, integers (README §5)':<62} {1_000_000:>10,} "
          f"{REFERENCE_OPENDP_INT_S:>9.4f} {1_000_000 / REFERENCE_OPENDP_INT_S:>14,.0f}")
    print(f"\n{'selection':<62} {'candidates':>10} {'ms/call':>9}")
    for name, m, seconds in em_rows:
        print(f"{name:<62} {m:>10,} {seconds * 1e3:>9.2f}")
    worst = max(seconds for name, _, seconds in rows if name.startswith("exact discrete_laplace"))
    verdict = "met" if worst <= TARGET_S else "NOT met"
    print(f"\n10^6 exact discrete-Laplace draws: slowest scale {worst:.3f} s (target ≤ {TARGET_S} s: {verdict}); "
          f"{REFERENCE_OPENDP_INT_S / worst:.0f}× faster than the OpenDP reference figure")
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS: {peak_mb:.0f} MB")


if __name__ == "__main__":
    main()
