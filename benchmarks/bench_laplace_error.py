"""Reproduce Dwork & McSherry's histogram error table (seed 001) with our Laplace histogram on real Adult points.

The slides count 2-D points (traffic intersections) in 64,909 grid cells and report the average and maximum
counting error at ε = 1, 0.1, 0.01, 0.001. We count Adult (adult_all, 48,842 rows) points:
  A. age × hours-per-week on a 271 × 239 grid (64,769 cells, the closest 2-D grid of that size);
  B. age × fnlwgt on a 13 × 4,993 grid (exactly 64,909 = 13 × 4,993 cells);
  C. age × hours-per-week with 1×1 bins (7,326 cells), the setting of ../shared/reference/README.md § 5.
Bounds are public (age 17–90 and hours 1–99 as in adult.names, fnlwgt 0–1,500,000), never read from the data.
Prints mean |error| per cell (unclamped and clamped at 0), max |error|, E|noise|, and the published figures.

Run: .venv/bin/python benchmarks/bench_laplace_error.py [--trials 20] [--data ../shared/data]
"""

from __future__ import annotations

import argparse
import resource
import time
from pathlib import Path

import numpy as np
import pandas as pd

from ppdp_gui.engine.data.schema import ColumnSpec, Dataset, Role
from ppdp_gui.engine.mechanisms.base import run_to_release
from ppdp_gui.engine.mechanisms.laplace import (SENSITIVITY, LaplaceHistogram, expected_abs_noise,
                                                 numeric_axis, post_process, true_counts)
from ppdp_gui.engine.noise import NoiseSource
from ppdp_gui.engine.taxonomy import Taxonomy

EPSILONS = (1.0, 0.1, 0.01, 0.001)
SLIDES = {1.0: (1.02, 13), 0.1: (9.12, 109), 0.01: (98.56, 1041), 0.001: (1003.23, 9663)}  # (average, max)
REFERENCE = {1.0: (0.574, 0.850), 0.1: (5.71, 10.00), 0.01: (51.6, 99.9), 0.001: (501, 998)}  # (clamped, raw)
REPO = Path(__file__).resolve().parents[1]


def grids(frame: pd.DataFrame) -> dict[str, list]:
    return {
        "A  age x hours 271 x 239 (64,769 cells)": [
            numeric_axis("age", 17, 90, bins=271, integer=True), numeric_axis("hours-per-week", 1, 99, bins=239,
                                                                              integer=True)],
        "B  age x fnlwgt 13 x 4,993 (64,909 cells)": [
            numeric_axis("age", 17, 90, bins=13, integer=True), numeric_axis("fnlwgt", 0, 1_500_000, bins=4993,
                                                                             integer=True)],
        "C  age x hours 1 x 1 bins (7,326 cells)": [
            numeric_axis("age", 17, 90, width=1, integer=True), numeric_axis("hours-per-week", 1, 99, width=1,
                                                                             integer=True)],
    }


def errors(true: np.ndarray, epsilon: float, trials: int, seed: int) -> dict[str, float]:
    """Mean and max |error| per cell over `trials` releases, raw and clamped at 0 (the mechanism's own noise)."""
    rng = NoiseSource.for_tests(seed)  # the same draw as LaplaceHistogram._run
    raw_mean, clamp_mean, raw_max = [], [], []
    for _ in range(trials):
        noisy = rng.geometric_noise_counts(true, epsilon, sensitivity=SENSITIVITY)
        clamped = post_process(noisy, non_negative=True, consistency="none")
        raw_mean.append(np.abs(noisy - true).mean())
        clamp_mean.append(np.abs(clamped - true).mean())
        raw_max.append(np.abs(noisy - true).max())
    return {"raw": float(np.mean(raw_mean)), "clamped": float(np.mean(clamp_mean)), "max": float(np.mean(raw_max))}


def time_end_to_end(frame: pd.DataFrame) -> tuple[float, int]:
    """Seconds for one whole mechanism run (grid C, public domains from taxonomies of numeric leaves)."""
    schema = []
    for col, lo, hi in (("age", 17, 90), ("hours-per-week", 1, 99)):
        tax = Taxonomy.flat(col, [str(v) for v in range(lo, hi + 1)])
        schema.append(ColumnSpec(col, "numeric", Role.QUASI_IDENTIFIER, tax))
    data = Dataset(frame[["age", "hours-per-week"]].reset_index(drop=True), tuple(schema))
    start = time.perf_counter()
    rel = run_to_release(LaplaceHistogram().run(data, rng=NoiseSource(), columns=("age", "hours-per-week"),
                                                bin_width=1, epsilon=1.0))
    return time.perf_counter() - start, len(rel.table)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    args = ap.parse_args(argv)
    frame = pd.read_csv(args.data / "adult" / "adult_all.csv.gz", usecols=["age", "hours-per-week", "fnlwgt"])
    print(f"Adult adult_all: {len(frame):,} points; {args.trials} trials per ε; discrete Laplace, scale 1/ε\n")
    started = time.perf_counter()
    for name, axes in grids(frame).items():
        true = true_counts(frame, axes)
        print(f"{name}: {int((true == 0).sum()):,} empty cells")
        print(f"  {'ε':>6} | {'ours raw':>9} {'E|X| disc':>9} {'slides avg':>10} {'ref raw':>8} | "
              f"{'ours clamped':>12} {'ref clamped':>11} | {'ours max':>9} {'slides max':>10}")
        for i, eps in enumerate(EPSILONS):
            e = errors(true, eps, args.trials, seed=1000 + i)
            ref_c, ref_r = REFERENCE[eps] if name.startswith("C") else ("-", "-")
            print(f"  {eps:>6g} | {e['raw']:>9.3f} {expected_abs_noise(eps):>9.3f} {SLIDES[eps][0]:>10} "
                  f"{ref_r:>8} | {e['clamped']:>12.3f} {ref_c:>11} | {e['max']:>9.1f} {SLIDES[eps][1]:>10}")
        print()
    total = time.perf_counter() - started
    seconds, cells = time_end_to_end(frame)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"all error trials: {total:.2f} s; one end-to-end release of grid C ({cells:,} cells, "
          f"{len(frame):,} rows): {seconds * 1000:.1f} ms ({len(frame) / seconds:,.0f} rows/s); "
          f"peak RSS {peak_mb:.0f} MB")


if __name__ == "__main__":
    main()
