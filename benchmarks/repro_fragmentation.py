"""Reproduce seed 002's experiments on Musk: fragmentation vs plain Mondrian as dimensionality (and k) grow.

Run from the repository root:  .venv/bin/python benchmarks/repro_fragmentation.py [--quick]

Setup (the paper's Appendix D, read from its text): Musk version 1 + version 2 together (7,074 rows, the paper's
count), a train/test split with the paper's Table 5 class counts (train 1,017 musk / 3,983 non-musk, test
207 / 1,867; stratified at random, seed 0), 10/20/30/40 features drawn at random (nested, seed 0), k = 40,
l = 2, ρ = 0.5, two fragments, Mondrian (strict) in both arms. Numeric ranges are snapped to a grid of width 1
(the features are integers, so ranges are exact integer intervals, as in Mondrian's paper). Information loss is
the paper's normalised interval width over all attributes (= NCP); F-measure is the weighted F1 of J48-like
entropy trees and 5-NN, one classifier per fragment, probability-weighted vote (Appendix D.I).
Data are read from ../shared/data (never copied into the repository).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.doc_block import Report  # noqa: E402
from ppdp_gui.engine.data.schema import ColumnSpec, Dataset, Role  # noqa: E402
from ppdp_gui.engine.mechanisms.base import run_to_release  # noqa: E402
from ppdp_gui.engine.mechanisms.fragmentation import Fragmentation  # noqa: E402
from ppdp_gui.engine.mechanisms.kanon.mondrian import Mondrian  # noqa: E402
from ppdp_gui.engine.noise import NoiseSource  # noqa: E402

MUSK = ROOT.parent / "shared" / "data" / "musk"
TABLE5 = {"train": {1: 1017, 0: 3983}, "test": {1: 207, 0: 1867}}


def load_musk() -> pd.DataFrame:
    """musk1 + musk2 (7,074 rows x f1..f166 + class), the paper's 7,074 instances."""
    return pd.concat([pd.read_csv(MUSK / "musk1.csv.gz"), pd.read_csv(MUSK / "musk2.csv.gz")], ignore_index=True)


def split_table5(df: pd.DataFrame, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Stratified random split with exactly Table 5's class counts."""
    rng = np.random.default_rng(seed)
    train_idx, test_idx = [], []
    for cls in (0, 1):
        idx = rng.permutation(np.flatnonzero(df["class"].to_numpy() == cls))
        n_train = TABLE5["train"][cls]
        train_idx.extend(idx[:n_train])
        test_idx.extend(idx[n_train:n_train + TABLE5["test"][cls]])
    return df.iloc[np.sort(train_idx)].reset_index(drop=True), df.iloc[np.sort(test_idx)].reset_index(drop=True)


def dataset(frame: pd.DataFrame, feats: list[str]) -> Dataset:
    schema = tuple(ColumnSpec(c, "numeric", Role.QUASI_IDENTIFIER) for c in feats) + \
        (ColumnSpec("class", "categorical", Role.CLASS),)
    return Dataset(frame[feats + ["class"]].reset_index(drop=True), schema)


def run_plain(train: Dataset, test: Dataset, k: int, l: int) -> dict:
    params = {"k": k, "grid_width": 1}
    if l:
        params.update(l=l, sensitive="class")
    mech = Mondrian()
    t = time.perf_counter()
    rel = run_to_release(mech.run(train, rng=NoiseSource.for_tests(0), **params))
    secs = time.perf_counter() - t
    m = mech.measures(rel, train, test)
    return {"IL %": m["NCP %"], "F tree %": m["F-measure tree %"], "F 5-NN %": m["F-measure 5-NN %"],
            "distorted": 0, "s": secs}


def run_frag(train: Dataset, test: Dataset, k: int, l: int, strategy: str, rho: float = 0.5,
             max_segments: int = 0) -> dict:
    mech = Fragmentation()
    t = time.perf_counter()
    rel = run_to_release(mech.run(train, rng=NoiseSource.for_tests(0), k=k, l=l, strategy=strategy, rho=rho,
                                  max_segments=max_segments, grid_width=1))
    secs = time.perf_counter() - t
    m = mech.measures(rel, train, test)
    return {"IL %": m["information loss %"], "F tree %": m["F-measure tree %"], "F 5-NN %": m["F-measure 5-NN %"],
            "distorted": int(m["class distortion"]), "s": secs}


ARMS = [("Mondrian k-anon", None, 0, 0), ("Mondrian 2-div", None, 2, 0),
        ("frag naive", "naive", 0, 0), ("frag dependency graph", "dependency graph", 0, 0),
        ("frag ρ-selectivity", "ρ-selectivity", 0, 0), ("frag 2-div", "dependency graph", 2, 0),
        ("frag 2-div, 1 segment", "dependency graph", 2, 1)]


def original_f(train_df, test_df, feats) -> tuple[float, float]:
    """F-measures of the same classifiers on the original (not anonymised) training rows: the ceiling."""
    from ppdp_gui.engine.metrics.fmeasure import weighted_f_measure
    args = (train_df[feats].to_numpy(float), train_df["class"], test_df[feats].to_numpy(float), test_df["class"])
    return 100 * weighted_f_measure(*args, "tree"), 100 * weighted_f_measure(*args, "knn")


def run_grid(train_df, test_df, dims, ks, l=2) -> pd.DataFrame:
    order = [f"f{i}" for i in np.random.default_rng(0).permutation(166) + 1]
    rows = []
    for d, k in [(d, 40) for d in dims] + [(40, k) for k in ks if k != 40]:
        feats = order[:d]
        train, test = dataset(train_df, feats), dataset(test_df, feats)
        f_tree, f_knn = original_f(train_df, test_df, feats)
        rows.append({"d": d, "k": k, "method": "original (no anonymisation)", "IL %": 0.0, "F tree %": f_tree,
                     "F 5-NN %": f_knn, "distorted": 0, "s": 0.0})
        for name, strategy, arm_l, max_segments in ARMS:
            arm_l = l if arm_l else 0
            r = run_plain(train, test, k, arm_l) if strategy is None else \
                run_frag(train, test, k, arm_l, strategy, max_segments=max_segments)
            rows.append({"d": d, "k": k, "method": name, **r})
            print(f"  d={d:3d} k={k:3d} {name:24s} IL {r['IL %']:6.2f}%  F tree {r['F tree %']:6.2f}%  "
                  f"F 5-NN {r['F 5-NN %']:6.2f}%  distorted {r['distorted']:5d}  ({r['s']:.2f} s)", flush=True)
    return pd.DataFrame(rows)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="10 and 40 attributes only, no k sweep")
    ap.add_argument("--write", action="store_true", help="put the tables into docs/reproduction/fragmentation.md")
    args = ap.parse_args()
    report = Report("repro_fragmentation.py", "the split of Table 5, feature order from seed 0, one run per point "
                    "(deterministic)", fenced=True)
    df = load_musk()
    train_df, test_df = split_table5(df)
    majority = 100 * (1 - test_df["class"].mean())
    report.line(f"always 'non-musk' on the test rows: weighted F-measure "
                f"{majority * 2 * majority / (100 + majority):.2f} %")
    report.line(f"Musk 1+2: {len(df)} rows; train {len(train_df)} "
          f"({int(train_df['class'].sum())} musk), test {len(test_df)} ({int(test_df['class'].sum())} musk)")
    dims = [10, 40] if args.quick else [10, 20, 30, 40]
    ks = [] if args.quick else [10, 20, 40, 80]
    res = run_grid(train_df, test_df, dims, ks)
    for title, sel, by in (("vs number of attributes (k = 40)", res["k"] == 40, "d"),
                           ("vs k (40 attributes)", res["d"] == 40, "k")):
        sub = res[sel]
        if sub[by].nunique() < 2:
            continue
        report.line(f"\n== {title} ==")
        for col in ("IL %", "F tree %", "F 5-NN %", "distorted"):
            table = sub.pivot_table(index="method", columns=by, values=col, sort=False)
            table = table[sorted(table.columns)]
            report.line(f"\n{col}")
            report.line(table.round(2).to_string())
    if args.write:
        report.write("fragmentation.md", "musk grid")


if __name__ == "__main__":
    main()
