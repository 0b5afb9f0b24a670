"""Speed of fragmentation on Musk (target: 40 attributes ≤ 5 s), per step and per strategy.

Run from the repository root:  .venv/bin/python benchmarks/bench_fragmentation.py
Musk 1 + 2 (7,074 rows), 40 random features (seed 0), k = 40. Times are the whole mechanism run (FMRMR, Mondrian
per fragment, enforcement, publishing, the independent recount of every fragment and of every join), best of 3.
Data are read from ../shared/data (never copied into the repository).
"""

from __future__ import annotations

import resource
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ppdp_gui.engine.data.schema import ColumnSpec, Dataset, Role  # noqa: E402
from ppdp_gui.engine.mechanisms.base import run_to_release  # noqa: E402
from ppdp_gui.engine.mechanisms.fragmentation import Fragmentation  # noqa: E402
from ppdp_gui.engine.mechanisms.fragmentation.fmrmr import fragment_features  # noqa: E402
from ppdp_gui.engine.noise import NoiseSource  # noqa: E402

MUSK = ROOT.parent / "shared" / "data" / "musk"


def musk(n_features: int) -> Dataset:
    df = pd.concat([pd.read_csv(MUSK / "musk1.csv.gz"), pd.read_csv(MUSK / "musk2.csv.gz")], ignore_index=True)
    feats = [f"f{i}" for i in np.random.default_rng(0).permutation(166)[:n_features] + 1]
    schema = tuple(ColumnSpec(c, "numeric", Role.QUASI_IDENTIFIER) for c in feats) + \
        (ColumnSpec("class", "categorical", Role.CLASS),)
    return Dataset(df[feats + ["class"]], schema)


def best_of(fn, repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    for d in (40, 166):
        data = musk(d)
        qis = data.quasi_identifiers
        t_mi = best_of(lambda: fragment_features(data.frame, qis, "class", 2))
        print(f"Musk {data.n_rows} rows x {d} attributes: FMRMR fragmentation {t_mi:.3f} s")
        for strategy, l in (("naive", 0), ("dependency graph", 0), ("ρ-selectivity", 0), ("dependency graph", 2)):
            run = lambda: run_to_release(Fragmentation().run(  # noqa: E731
                data, rng=NoiseSource.for_tests(0), k=40, l=l, strategy=strategy, grid_width=1))
            secs = best_of(run)
            label = "l-diversity (l = 2)" if l else strategy
            print(f"  whole run, {label:22s} {secs:6.3f} s  ({data.n_rows / secs:,.0f} rows/s)")
    data = musk(40)
    tracemalloc.start()
    run_to_release(Fragmentation().run(data, rng=NoiseSource.for_tests(0), k=40, grid_width=1))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(f"peak traced memory, 40 attributes: {peak / 2**20:.1f} MiB; "
          f"process max RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    print("target (issue 6, item 7): fragmentation of Musk with 40 attributes ≤ 5 s")


if __name__ == "__main__":
    main()
