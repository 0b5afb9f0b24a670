"""Tuning split for the Marginal synthesizer's defaults: never the reported one.

The UCI *training* part (30,162 rows) only, cut at random (seed 2024) into 20,108 rows to synthesise from and
10,054 to score on; the UCI test part — the one docs/reproduction/marginals.md reports on — is never read here.
Seeds 1000… (the report uses 0…9). Run from the repository root:
    .venv/bin/python benchmarks/tune_marginals.py --runs 3 [param=value …]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.repro_diffgen import adult_dataset, adult_frame  # noqa: E402
from ppdp_gui.engine.mechanisms.base import run_to_release  # noqa: E402
from ppdp_gui.engine.mechanisms.marginals import MarginalSynthesizer  # noqa: E402
from ppdp_gui.engine.noise import NoiseSource  # noqa: E402

EPSILONS = (0.1, 0.25, 0.5, 1.0, 1.5)


def tuning_split():
    """(fit, score): the UCI training part only, split 2 : 1 at random with seed 2024."""
    frame = adult_frame()
    frame = frame[frame["split"] == "train"].reset_index(drop=True)
    full = adult_dataset(frame)
    order = np.random.default_rng(2024).permutation(len(frame))
    cut = len(frame) * 2 // 3
    fit, score = np.sort(order[:cut]), np.sort(order[cut:])
    return (full.with_frame(full.frame.iloc[fit].reset_index(drop=True)),
            full.with_frame(full.frame.iloc[score].reset_index(drop=True)))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--eps", type=float, nargs="*", default=list(EPSILONS))
    ap.add_argument("params", nargs="*", help="param=value (numbers parsed)")
    args = ap.parse_args(argv)
    params = {}
    for kv in args.params:
        k, v = kv.split("=", 1)
        try:
            params[k] = int(v)
        except ValueError:
            try:
                params[k] = float(v)
            except ValueError:
                params[k] = v
    fit, score = tuning_split()
    mech = MarginalSynthesizer()
    print("BA", mech.reference_measures(fit, score))
    for eps in args.eps:
        cas, times = [], []
        for run in range(args.runs):
            started = time.perf_counter()
            release = run_to_release(mech.run(fit, rng=NoiseSource.for_tests(1000 + run), epsilon=eps, **params))
            times.append(time.perf_counter() - started)
            cas.append(mech.measures(release, fit, score)["CA %"])
        print(f"ε={eps:g}: {np.mean(cas):.2f} ± {np.std(cas):.2f}  ({np.median(times):.2f} s)", flush=True)


if __name__ == "__main__":
    main()
