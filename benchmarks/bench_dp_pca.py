"""Speed of DP-PCA, DP-LDA and the record baselines, beside scikit-learn's non-private PCA / LDA on the same data.

Run from the repository root:
    .venv/bin/python benchmarks/bench_dp_pca.py            # median of 5 runs each
    .venv/bin/python benchmarks/bench_dp_pca.py --runs 9

Targets (issue 19): one DP-PCA release on Adult (45,222 × 35 after encoding) ≤ 1 s, on Musk (6,598 × 166) ≤ 2 s;
DP-LDA drawing 45,222 synthetic records ≤ 5 s. A release is timed as the publish path runs it (`execute`:
encoding, noise, components, recovery, the table in the original columns); the sampling alone is timed on the
noisy statistics of the whole of Adult. scikit-learn is timed on the already-encoded matrix (PCA: fit, transform
and inverse transform; LDA: fit), so its figures leave out the encoding ours include. Nothing is asserted: the
machine is shared, so the figures are indicative (tests never assert times).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from fractions import Fraction
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from repro_dp_pca_lda import CATEGORICAL, NUMERIC, adult_component_dataset, musk_dataset  # noqa: E402

from ppdp_gui.engine.mechanisms.base import run_to_release  # noqa: E402
from ppdp_gui.engine.mechanisms.dp_pca import DPLDA, DPPCA, ExponentialRecords, LaplaceRecords, lda  # noqa: E402
from ppdp_gui.engine.mechanisms.dp_pca.encoding import category_codes, plan_encoding  # noqa: E402
from ppdp_gui.engine.noise import NoiseSource  # noqa: E402


def median_time(fn, runs: int) -> float:
    times = []
    for i in range(runs):
        started = time.perf_counter()
        fn(i)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def release_time(mech, data, runs, **params) -> float:
    resolved = mech.resolve_params(**params)
    return median_time(lambda i: run_to_release(mech.execute(data, rng=NoiseSource.for_tests(i), params=resolved)),
                       runs)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args(argv)
    from sklearn.decomposition import PCA
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

    adult, musk = adult_component_dataset(), musk_dataset()
    rows = []
    for label, data, k, target in (("Adult 45,222 × 35", adult, 3, 1.0), ("Musk 6,598 × 166", musk, 10, 2.0)):
        enc = plan_encoding(data, [c.name for c in data.schema if c.role.value != "identifier"])
        x = enc.encode(data.frame)[0]
        ours = release_time(DPPCA(), data, args.runs, epsilon=1.0, k=k)
        model = PCA(n_components=k)
        sk = median_time(lambda i: model.inverse_transform(model.fit_transform(x)), args.runs)
        rows.append((f"DP-PCA release, {label}, k = {k}", ours, target, f"scikit-learn PCA {sk:.3f} s"))
        for mech in (LaplaceRecords(), ExponentialRecords()):
            rows.append((f"{mech.name}, {label}", release_time(mech, data, args.runs, epsilon=1.0), None, ""))

    enc = plan_encoding(adult, NUMERIC + CATEGORICAL)
    x = enc.encode(adult.frame)[0]
    y = category_codes(adult.frame["income"], ("<=50K", ">50K"))
    stats = DPLDA().statistics(NoiseSource.for_tests(1), x, y, 2, enc, Fraction(1))
    sampling = median_time(lambda i: lda.greedy_sample(stats, enc, 45_222, NoiseSource.for_tests(i)), args.runs)
    sk = median_time(lambda i: LinearDiscriminantAnalysis().fit(x, y), args.runs)
    rows.append(("DP-LDA sampling of 45,222 records (Adult, 33 + class)", sampling, 5.0,
                 f"scikit-learn LDA fit {sk:.3f} s"))
    rows.append(("DP-LDA release, Adult (statistics + sampling + table)",
                 release_time(DPLDA(), adult, max(3, args.runs // 2), epsilon=1.0), None, ""))
    menc = plan_encoding(musk, [c.name for c in musk.schema if c.name.startswith("f")])
    mx = menc.encode(musk.frame)[0]
    my = category_codes(musk.frame["class"], ("0", "1"))
    mstats = DPLDA().statistics(NoiseSource.for_tests(1), mx, my, 2, menc, Fraction(1))
    rows.append(("DP-LDA sampling of 6,598 records (Musk, 166 numbers)",
                 median_time(lambda i: lda.greedy_sample(mstats, menc, 6_598, NoiseSource.for_tests(i)), 3), None,
                 ""))

    print(f"median of {args.runs} runs (seconds); the machine may be shared\n")
    print("| what | ours (s) | target (s) | beside |")
    print("|---|---|---|---|")
    for what, ours, target, beside in rows:
        mark = "" if target is None else (f"{target:g} ✓" if ours <= target else f"{target:g} ✗")
        print(f"| {what} | {ours:.3f} | {mark} | {beside} |")


if __name__ == "__main__":
    main()
