"""Speed of the DP samplers: 1,000,000 discrete-Laplace draws (target ≤ 0.2 s) beside OpenDP's sampler.

Run: .venv/bin/python benchmarks/bench_noise.py [--opendp-draws 100000]
OpenDP is timed on fewer draws (it takes seconds per million) and scaled linearly to 10^6; the reference figure
measured for the project (shared/reference/README.md §5) is printed too.
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np

from ppdp_gui.engine.noise import NoiseSource

REFERENCE_OPENDP_INT_S = 5.77  # OpenDP 0.16 make_laplace on 10^6 integers, reference README §5
REFERENCE_NUMPY_LAPLACE_S = 0.015


def best_of(fn, repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=1_000_000)
    parser.add_argument("--opendp-draws", type=int, default=100_000)
    args = parser.parse_args()
    n = args.draws
    rng = NoiseSource()
    counts = np.zeros(n, dtype=np.int64)
    rows = []
    for scale in (1.0, 10.0, 1000.0):
        t = best_of(lambda: rng.discrete_laplace(scale, n))
        rows.append((f"ours discrete_laplace (scale {scale:g})", n, t))
    rows.append(("ours geometric_noise_counts (ε=1)", n, best_of(lambda: rng.geometric_noise_counts(counts, 1.0))))
    rows.append(("ours snapped_laplace (scale 1, B=100)", n,
                 best_of(lambda: rng.snapped_laplace(np.zeros(n), 1.0, 100.0))))
    rows.append(("numpy Generator.laplace (not DP-hardened)", n,
                 best_of(lambda: np.random.default_rng().laplace(0.0, 1.0, n))))
    em_scores = np.random.default_rng(0).random(10_000)
    rows.append(("ours exponential_choice, 10,000 candidates", 1,
                 best_of(lambda: rng.exponential_choice(em_scores, 1, 1))))

    try:
        import opendp.prelude as dp

        dp.enable_features("contrib")
        m = args.opendp_draws
        meas = dp.m.make_laplace(dp.vector_domain(dp.atom_domain(T=int)), dp.l1_distance(T=int), scale=1.0)
        zeros = [0] * m
        t = best_of(lambda: meas(zeros), repeats=1)
        rows.append((f"OpenDP make_laplace, integers (measured on {m:,}, scaled)", n, t * n / m))
    except ImportError:
        print("opendp is not installed: its row is missing")

    print(f"{'sampler':<58} {'draws':>10} {'seconds':>9} {'draws/s':>14}")
    for name, draws, seconds in rows:
        print(f"{name:<58} {draws:>10,} {seconds:>9.4f} {draws / seconds:>14,.0f}")
    print(f"{'reference: OpenDP make_laplace, integers (README §5)':<58} {1_000_000:>10,} "
          f"{REFERENCE_OPENDP_INT_S:>9.4f} {1_000_000 / REFERENCE_OPENDP_INT_S:>14,.0f}")
    print(f"{'reference: numpy Generator.laplace (README §5)':<58} {1_000_000:>10,} "
          f"{REFERENCE_NUMPY_LAPLACE_S:>9.4f} {1_000_000 / REFERENCE_NUMPY_LAPLACE_S:>14,.0f}")
    ours = rows[0][2]
    print(f"\n10^6 discrete-Laplace draws: {ours:.3f} s (target ≤ 0.2 s: {'met' if ours <= 0.2 else 'NOT met'}); "
          f"{REFERENCE_OPENDP_INT_S / ours:.0f}× faster than the OpenDP reference figure")
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS: {peak_mb:.0f} MB")


if __name__ == "__main__":
    main()
