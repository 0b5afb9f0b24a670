"""Mondrian / TDS on Adult: NCP and classes beside qiyuangong/Mondrian and ARX, and speed (Adult, 10^6 rows).

Run from the repository root:  .venv/bin/python benchmarks/bench_mondrian.py [--quick]
Data are read from ../shared/data (never copied into the repository).
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ppdp_gui.engine.checks import check_release  # noqa: E402
from ppdp_gui.engine.data.reader import read_table  # noqa: E402
from ppdp_gui.engine.data.schema import ColumnSpec, Dataset, Role  # noqa: E402
from ppdp_gui.engine.mechanisms.base import run_to_release  # noqa: E402
from ppdp_gui.engine.mechanisms.kanon.mondrian import Mondrian  # noqa: E402
from ppdp_gui.engine.mechanisms.kanon.mondrian_core import partition  # noqa: E402
from ppdp_gui.engine.mechanisms.kanon.tds import TDS  # noqa: E402
from ppdp_gui.engine.metrics.information_loss import ncp  # noqa: E402
from ppdp_gui.engine.noise import NoiseSource  # noqa: E402
from ppdp_gui.engine.taxonomy.discover import attach_hierarchies  # noqa: E402
from ppdp_gui.engine.taxonomy.tree import Taxonomy  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "adult"
COLUMNS = ("age workclass fnlwgt education education-num marital-status occupation relationship race sex "
           "capital-gain capital-loss hours-per-week native-country income").split()
NUMERIC = {"age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week"}
QIS = ["age", "workclass", "education-num", "marital-status", "occupation", "race", "sex", "native-country"]
ARX_QIS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation"]
# qiyuangong/Mondrian README figures (reference README section 2): k -> (NCP %, classes)
QIYUANGONG = {("strict", 2): (4.97, 7213), ("strict", 5): (8.30, 3271), ("strict", 10): (11.24, 1795),
              ("strict", 25): (16.35, 776), ("strict", 50): (22.16, 402), ("strict", 100): (30.09, 205),
              ("relaxed", 10): (15.85, 2040)}
# ARX Adult, our Mondrian before cuts followed the hierarchies (commit f540eb6): (mode, k) -> (LM, classes)
ARX_BEFORE = {("strict", 2): (0.053, 9238), ("strict", 5): (0.134, 3786), ("strict", 10): (0.203, 1842),
              ("strict", 25): (0.300, 694), ("strict", 50): (0.379, 319), ("strict", 100): (0.481, 150),
              ("relaxed", 10): (0.345, 1379)}
# ARX 3.9.2 global (full-domain) recoding, 5 % suppression, Loss model (reference README section 3): k -> LM
ARX_GLOBAL = {2: 0.175, 5: 0.280, 10: 0.332, 25: 0.418, 50: 0.487, 100: 0.557}


def read_tree(path: Path, column: str) -> Taxonomy:
    rows = [line.strip().split(";") for line in path.read_text().splitlines() if line.strip()]
    return Taxonomy.from_paths(column, rows)


def load_adult() -> Dataset:
    """adult.data without '?' rows (30,162); qiyuangong's QIs; Basic_Mondrian trees for the categoricals."""
    df = pd.read_csv(DATA / "adult.data.gz", header=None, names=COLUMNS, sep=", ", engine="python")
    df = df[~(df == "?").any(axis=1)].reset_index(drop=True)
    trees = {}
    for col in ("workclass", "marital-status", "occupation", "race", "sex", "native-country"):
        trees[col] = read_tree(DATA / "hierarchies" / "basic_mondrian" / f"adult_{col.replace('-', '_')}.txt", col)
    schema = tuple(ColumnSpec(c, "numeric" if c in NUMERIC else "categorical",
                              Role.QUASI_IDENTIFIER if c in QIS else Role.CLASS if c == "income" else Role.INSENSITIVE,
                              trees.get(c)) for c in COLUMNS)
    return Dataset(df, schema)


def load_arx_adult() -> Dataset:
    """ARX's adult.csv (30,162 rows) with ARX's hierarchies for the 8 QIs (age as a 100-leaf taxonomy), read and
    attached by the engine (ARX's `<stem>_hierarchy_<column>.csv` convention) as the window does."""
    path = DATA / "hierarchies" / "arx" / "adult.csv.gz"
    ds = read_table(path, kinds={c: "categorical" for c in ARX_QIS},
                    roles={**{c: Role.QUASI_IDENTIFIER for c in ARX_QIS}, "salary-class": Role.CLASS})
    return attach_hierarchies(ds, path)[0]


def code_order_ncp(ds: Dataset, k: int, mode: str) -> tuple[float, int]:
    """qiyuangong's own measure for comparison only: raw numeric ranges, categoricals coded by first
    appearance and generalised to runs of codes (no snapping, no taxonomy)."""
    cols = []
    for q in QIS:
        s = ds.frame[q]
        cols.append(s.to_numpy(float) if q in NUMERIC else pd.factorize(s)[0].astype(float))
    X = np.column_stack(cols)
    labels = partition(X, k, mode=mode)
    span = X.max(axis=0) - X.min(axis=0)
    frame = pd.DataFrame(X).assign(g=labels).groupby("g")
    width = (frame.max() - frame.min()).to_numpy() / span
    sizes = np.bincount(labels)
    return float(100 * (width * sizes[:, None]).sum() / (len(X) * X.shape[1])), int(sizes.size)


def run(mech, ds: Dataset, **params):
    t = time.perf_counter()
    rel = run_to_release(mech.run(ds, rng=NoiseSource.for_tests(0), **params))
    return rel, time.perf_counter() - t


def run_cpu(mech, ds: Dataset, **params):
    """(release, wall s, CPU s of this process): on a shared machine the CPU time is the figure to compare."""
    c = time.process_time()
    rel, wall = run(mech, ds, **params)
    return rel, wall, time.process_time() - c


def golden(quick: bool) -> None:
    ds = load_adult()
    print(f"Adult adult.data without '?': {ds.n_rows} rows; QIs {', '.join(QIS)}")
    print("ours: age, education-num snapped to public grids (widths 10 and 2); categoricals to the lowest common "
          "ancestor in the Basic_Mondrian trees (flat trees: value or '*')")
    print(f"{'k':>4} {'mode':8} | {'NCP % ours':>10} {'classes':>8} {'run s':>6} {'check':>6} | "
          f"{'code-order NCP %':>16} {'classes':>8} | {'qiyuangong NCP %':>16} {'classes':>8}")
    mech = Mondrian()
    for (mode, k), (ref_ncp, ref_cls) in QIYUANGONG.items():
        if quick and k not in (10,):
            continue
        rel, secs = run(mech, ds, k=k, mode=mode)
        meta = rel.record
        ok = check_release(rel.table, QIS, k).ok
        raw_ncp, raw_cls = code_order_ncp(ds, k, mode)
        print(f"{k:>4} {mode:8} | {100 * ncp(rel.table, meta['intervals'], meta['domains']):>10.2f} "
              f"{meta['groups']:>8} {secs:>6.2f} {str(ok):>6} | {raw_ncp:>16.2f} {raw_cls:>8} | "
              f"{ref_ncp:>16.2f} {ref_cls:>8}")
    arx = load_arx_adult()
    print("\nARX Adult with ARX hierarchies, LM (= mean NCP over leaves); 'before' = median cuts on leaf positions")
    print(f"{'k':>4} {'mode':8} | {'LM ours':>7} {'classes':>8} {'run s':>6} {'check':>6} | {'LM before':>9} "
          f"{'classes':>8} | {'ARX global 5 %':>14}")
    for (mode, k), (before_lm, before_cls) in ARX_BEFORE.items():
        if quick and k != 10:
            continue
        rel, secs = run(mech, arx, k=k, mode=mode)
        lm = ncp(rel.table, rel.record["intervals"], rel.record["domains"])
        ref = f"{ARX_GLOBAL[k]:.3f}" if mode == "strict" and k in ARX_GLOBAL else "-"
        print(f"{k:>4} {mode:8} | {lm:>7.3f} {rel.record['groups']:>8} {secs:>6.2f} "
              f"{str(check_release(rel.table, ARX_QIS, k).ok):>6} | {before_lm:>9.3f} {before_cls:>8} | {ref:>14}")
    print("  ARX 3.9.2 local recoding k=10 (reference): LM 0.079, classes 2,289; ARX global k=10, 0 % suppression: "
          "LM 0.661")
    rel, secs = run(TDS(), arx, k=5)
    lm = ncp(rel.table, rel.record["intervals"], rel.record["domains"])
    print(f"  TDS k=5 (global recoding): LM {lm:.3f}, classes {rel.record['groups']}, "
          f"{rel.record['specialisations']} specialisations, {secs:.2f} s, check {check_release(rel.table, ARX_QIS, 5).ok}")
    rel, secs = run(Mondrian(), arx, k=10, l=2, sensitive="salary-class")
    ok = check_release(rel.table, ARX_QIS, 10, sensitive="salary-class", l=2).ok
    print(f"  Mondrian k=10 + distinct 2-diversity on salary-class: LM "
          f"{ncp(rel.table, rel.record['intervals'], rel.record['domains']):.3f}, classes "
          f"{rel.record['groups']}, {secs:.2f} s, check {ok} (before: LM 0.275, 1,275 classes; "
          f"ARX global, 5 % suppression: LM 0.388)")


def speed(quick: bool) -> None:
    mech = Mondrian()
    arx = load_arx_adult()
    times = [run(mech, arx, k=10)[1] for _ in range(3)]
    print(f"\nSpeed: Mondrian on ARX Adult ({arx.n_rows} rows, 8 QIs with hierarchies, k=10), whole run: "
          f"median {np.median(times):.3f} s (target <= 0.5 s)")
    n = 200_000 if quick else 1_000_000
    idx = np.random.default_rng(0).integers(0, arx.n_rows, n)
    resampled = Dataset(arx.frame.iloc[idx].reset_index(drop=True), arx.schema)
    import ppdp_gui.engine.mechanisms.kanon.mondrian_core as core
    keep, core._COLLAPSE_ROWS = core._COLLAPSE_ROWS, 10**12  # the row-by-row core, as before the per-tuple counts
    old, old_secs, old_cpu = run_cpu(mech, resampled, k=10)
    core._COLLAPSE_ROWS = keep
    rel, secs, cpu = run_cpu(mech, resampled, k=10)
    same = old.table.equals(rel.table)
    print(f"Mondrian on {n:,} rows (ARX Adult resampled, hierarchies), k=10: {secs:.2f} s wall, {cpu:.2f} s CPU "
          f"({n / cpu:,.0f} rows per CPU s), {rel.record['groups']} classes; the row-by-row core in the same run "
          f"{old_cpu:.2f} s CPU ({cpu / old_cpu:.2f}x), same release: {same}; goal <= 2.5 s CPU for 10^6: "
          f"{'met' if n < 1_000_000 or cpu <= 2.5 else 'NOT met'} (load {__import__('os').getloadavg()[0]:.1f})")
    ds = load_adult()
    times = [run(mech, ds, k=10)[1] for _ in range(3)]
    print(f"Mondrian on Adult ({ds.n_rows} rows, 8 QIs, k=10), whole run (coding, partition, labels): "
          f"median {np.median(times):.3f} s (target <= 0.5 s)")
    n = 200_000 if quick else 1_000_000
    idx = np.random.default_rng(0).integers(0, ds.n_rows, n)
    big = Dataset(ds.frame.iloc[idx].reset_index(drop=True), ds.schema)
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    rel, secs = run(mech, big, k=10)
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"Mondrian on {n:,} rows (Adult resampled), k=10: {secs:.2f} s ({n / secs:,.0f} rows/s), "
          f"{rel.record['groups']} classes (target <= 10 s for 10^6); process peak RSS {rss1 / 1024:.0f} MB "
          f"(+{max(0, rss1 - rss0) / 1024:.0f} MB)")
    tracemalloc.start()
    X = np.column_stack([pd.factorize(big.frame[q])[0] for q in QIS]).astype(float)
    tracemalloc.reset_peak()
    t = time.perf_counter()
    partition(X, 10)
    secs = time.perf_counter() - t
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(f"partition() alone on {n:,} x 8: {secs:.2f} s (under tracemalloc), peak allocations {peak / 2**20:.0f} MB")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="k=10 only and 200,000 rows")
    args = parser.parse_args()
    golden(args.quick)
    speed(args.quick)
