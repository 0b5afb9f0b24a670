"""DiffGen speed: Adult (45,222 rows) and tables grown from it to 1,000,000 rows as in the paper's Section 5.

Run from the repository root:  .venv/bin/python benchmarks/bench_diffgen.py [--sizes 200000 1000000] [--repeats 3]

Growing (paper, "Scalability"): each Adult record r gets α − 1 variations in which some attribute values are
replaced by values drawn at random from the same column's domain (here: each of the 14 attributes independently
with probability 1/7, from the column's distinct values), α = rows / 45,222. Reading (the app's read_table, text
first then typed), anonymisation (DiffGen.run with ε = 1, h = 15: validation, coding, specialisation, noisy
counts) and writing (export_table of the released groups, and of the release expanded to records) are timed
separately, as in the paper's Figure 5. Each size runs in a fresh child process, so its peak resident memory
(ru_maxrss) is its own and not the generator's.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import repro_diffgen as adult  # noqa: E402  (the Adult loader and taxonomies)


def grow(rows: int, seed: int = 0):
    """Adult plus random variations of its records, `rows` in all (benchmark data, not a mechanism)."""
    base = adult.adult_frame()[adult.NUMERIC + adult.CATEGORICAL + [adult.CLASS]]
    rng = np.random.default_rng(seed)
    extra = rows - len(base)
    if extra <= 0:
        return base.iloc[:rows].reset_index(drop=True)
    pick = np.tile(np.arange(len(base)), extra // len(base) + 1)[:extra]
    out = base.iloc[pick].reset_index(drop=True)
    for col in adult.NUMERIC + adult.CATEGORICAL:
        replace = rng.random(extra) < 1 / 7
        domain = np.unique(base[col].to_numpy())
        values = out[col].to_numpy().copy()
        values[replace] = domain[rng.integers(0, len(domain), int(replace.sum()))]
        out[col] = values
    import pandas as pd
    return pd.concat([base, out], ignore_index=True)


def measure(csv: Path, out_dir: Path, epsilon: float, h: int) -> dict:
    """Child process: read, anonymise, write; times and peak memory."""
    from ppdp_gui.engine.data.reader import read_table
    from ppdp_gui.engine.data.schema import Role
    from ppdp_gui.engine.data.writer import export_table
    from ppdp_gui.engine.mechanisms.base import run_to_release
    from ppdp_gui.engine.mechanisms.diffgen import DiffGen, expand_counts
    from ppdp_gui.engine.noise import NoiseSource

    t0 = time.perf_counter()
    kinds = {c: "numeric" for c in adult.NUMERIC} | {c: "categorical" for c in adult.CATEGORICAL + [adult.CLASS]}
    roles = {c: Role.QUASI_IDENTIFIER for c in adult.NUMERIC + adult.CATEGORICAL} | {adult.CLASS: Role.CLASS}
    data = read_table(csv, kinds=kinds, roles=roles)
    for col, tax in adult.adult_taxonomies().items():
        data = data.with_column(col, taxonomy=tax)
    for col, domain in adult.adult_domains().items():
        data = data.with_column(col, domain=domain)
    t1 = time.perf_counter()
    release = run_to_release(DiffGen().run(data, rng=NoiseSource(), epsilon=epsilon, h=h))
    t2 = time.perf_counter()
    export_table(release.table, out_dir / "diffgen_groups.csv")
    t3 = time.perf_counter()
    export_table(expand_counts(release.table, release.note["count column"]), out_dir / "diffgen_records.csv")
    t4 = time.perf_counter()
    return {"rows": data.n_rows, "read": t1 - t0, "anonymise": t2 - t1, "write groups": t3 - t2,
            "write records": t4 - t3, "groups": len(release.table), "leaves": release.note["leaf partitions"],
            "peak MB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def adult_runs(h: int, repeats: int) -> None:
    """In-memory Adult: anonymisation time only, median of `repeats` (the ≤ 1 s target)."""
    from ppdp_gui.engine.mechanisms.base import run_to_release
    from ppdp_gui.engine.mechanisms.diffgen import DiffGen
    from ppdp_gui.engine.noise import NoiseSource

    data = adult.adult_dataset(adult.adult_frame())
    for eps in (1.0, 0.1):
        times = []
        for r in range(repeats):
            started = time.perf_counter()
            release = run_to_release(DiffGen().run(data, rng=NoiseSource(), epsilon=eps, h=h))
            times.append(time.perf_counter() - started)
        print(f"Adult {data.n_rows:,} rows, ε={eps:g}, h={h}: {np.median(times):.3f} s median of {repeats} "
              f"(min {min(times):.3f}); {release.note['leaf partitions']:,} leaf partitions, "
              f"{len(release.table):,} released groups")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=[200_000, 600_000, 1_000_000])
    ap.add_argument("--h", type=int, default=15)
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(measure(Path(args.child[0]), Path(args.child[1]), args.epsilon, args.h)))
        return
    adult_runs(args.h, args.repeats)
    print(f"\nScalability (paper Figure 5: ε={args.epsilon:g}, h={args.h}; the paper took about 150-180 s "
          "for 1,000,000 rows)")
    print("| rows | reading s | anonymisation s | writing groups s | writing records s | total s | "
          "peak MB | leaf partitions | groups |")
    print("|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes:
            csv = Path(tmp) / f"adult_{size}.csv"
            grow(size).to_csv(csv, index=False)
            out = subprocess.run([sys.executable, __file__, "--child", str(csv), tmp, "--h", str(args.h),
                                  "--epsilon", str(args.epsilon)], capture_output=True, text=True, check=True)
            m = json.loads(out.stdout.strip().splitlines()[-1])
            total = m["read"] + m["anonymise"] + m["write groups"]
            print(f"| {m['rows']:,} | {m['read']:.2f} | {m['anonymise']:.2f} | {m['write groups']:.2f} | "
                  f"{m['write records']:.2f} | {total:.2f} | {m['peak MB']:.0f} | {m['leaves']:,} | "
                  f"{m['groups']:,} |", flush=True)
            csv.unlink()


if __name__ == "__main__":
    main()
