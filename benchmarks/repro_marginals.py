"""The Marginal synthesizer on Adult under DiffGen's reference protocol, beside AIM, MST, PrivBayes and DiffGen.

Run from the repository root:
    .venv/bin/python benchmarks/repro_marginals.py            # 5 runs per ε (~2 min)
    .venv/bin/python benchmarks/repro_marginals.py --full     # 10 runs per ε, as the reference
    .venv/bin/python benchmarks/repro_marginals.py --write    # put the table into docs/reproduction/marginals.md

Protocol (shared reference README, section 6; `repro_diffgen.reference_protocol`): the 45,222 complete rows, the
original UCI split 30,162 / 15,060, all 15 columns with the public bounds and taxonomies of repro_diffgen.py;
CA = accuracy on the real test part of DecisionTreeClassifier(criterion='entropy', min_samples_leaf=100 of
30,162) trained on the synthetic records. The synthesizer runs with its defaults (tree around the class, 20 bins
per numeric column, as many records as the noisy total); DiffGen (Max, h = 10) is run here with the same seeds.
AIM, MST and PrivBayes are the reference README's figures (smartnoise-synth / DataSynthesizer, (ε, 1e-9)-DP for
AIM and MST, pure ε for PrivBayes); ours is pure ε-DP.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.doc_block import Report  # noqa: E402
from benchmarks.repro_diffgen import (REFERENCE_SYNTH, adult_dataset, adult_frame,  # noqa: E402
                                      reference_protocol)
from ppdp_gui.engine.mechanisms.base import run_to_release  # noqa: E402
from ppdp_gui.engine.mechanisms.marginals import MarginalSynthesizer  # noqa: E402
from ppdp_gui.engine.noise import NoiseSource  # noqa: E402

EPSILONS = (0.1, 0.25, 0.5, 1.0, 1.5)


def uci_split():
    frame = adult_frame()
    full = adult_dataset(frame)
    is_train = (frame["split"] == "train").to_numpy()
    return (full.with_frame(full.frame[is_train].reset_index(drop=True)),
            full.with_frame(full.frame[~is_train].reset_index(drop=True)))


def ours(runs: int, **params) -> tuple[pd.DataFrame, dict[float, float]]:
    """CA per (ε, run) and the median seconds of one run (synthesis only, as the reference's times) per ε."""
    train, test = uci_split()
    mech, rows, seconds = MarginalSynthesizer(), [], {}
    for eps in EPSILONS:
        times = []
        for run in range(runs):
            started = time.perf_counter()
            release = run_to_release(mech.run(train, rng=NoiseSource.for_tests(run), epsilon=eps, **params))
            times.append(time.perf_counter() - started)
            rows.append({"epsilon": eps, "run": run, "CA %": mech.measures(release, train, test)["CA %"]})
        seconds[eps] = float(np.median(times))
        print(f"  ε = {eps:g}: {np.mean([r['CA %'] for r in rows if r['epsilon'] == eps]):.1f} %", flush=True)
    return pd.DataFrame(rows), seconds


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help="10 runs per ε (the reference's)")
    ap.add_argument("--runs", type=int, help="runs per ε (default 5, or 10 with --full)")
    ap.add_argument("--write", action="store_true", help="put the results into docs/reproduction/marginals.md")
    args = ap.parse_args(argv)
    runs = args.runs or (10 if args.full else 5)
    report = Report("repro_marginals.py", f"{runs} runs per ε, seeds 0…{runs - 1}")
    started = time.perf_counter()
    rows, seconds = ours(runs)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 ** 2
    drows, dref, dsec = reference_protocol(runs)
    mean, std = rows.groupby("epsilon")["CA %"].mean(), rows.groupby("epsilon")["CA %"].std()
    dmean = drows.groupby("epsilon")["CA %"].mean()
    report.line(f"Adult, UCI split {dref['n_train']:,} / {dref['n_test']:,}; BA {dref['BA %']:.1f} %, "
                f"LA {dref['LA %']:.1f} %; CA % (mean of {runs} runs; ± one standard deviation for ours)\n")
    report.line("| tool | " + " | ".join(f"ε={e:g}" for e in EPSILONS) + " | time per run at ε=1 |")
    report.line("|---|" + "---|" * (len(EPSILONS) + 1))
    report.line("| **Marginal synthesizer (ours)** | " + " | ".join(f"{mean[e]:.1f} ± {std[e]:.1f}" for e in EPSILONS)
                + f" | {seconds[1.0]:.2f} s (peak RSS {peak:.2f} GB, whole process) |")
    report.line("| DiffGen (ours, Max, h = 10) | " + " | ".join(f"{dmean[e]:.1f}" for e in EPSILONS)
                + f" | {dsec:.2f} s |")
    times = {"AIM": "≈ 12 min", "MST": "≈ 1.2 min", "PrivBayes k=2": "≈ 1 min"}
    for tool, vals in REFERENCE_SYNTH.items():
        report.line(f"| {tool} (reference) | " + " | ".join(f"{v:.1f}" for v in vals) + f" | {times[tool]} |")
    aim = dict(zip(EPSILONS, REFERENCE_SYNTH["AIM"]))
    report.line("\nOurs minus AIM: " + ", ".join(f"ε={e:g}: {mean[e] - aim[e]:+.1f}" for e in EPSILONS)
                + " points")
    print(f"\ntotal {time.perf_counter() - started:.0f} s")
    if args.write:
        report.write("marginals.md", "reference protocol")


if __name__ == "__main__":
    main()
