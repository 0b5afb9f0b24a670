"""Table 1 of Vreeken, van Leeuwen & Siebes (ICDM 2007, seed 004) on the shared data, beside the paper's figures
and the original C++ release's generator (../shared/reference, section 1).

    .venv/bin/python benchmarks/repro_krimp.py            # 3 runs per dataset
    .venv/bin/python benchmarks/repro_krimp.py --full     # 10 runs, as the paper

The datasets are read as the reference read them (benchmarks/krimp_data.py): chess, led7 and nursery from the raw
UCI tables, iris, mushroom and pima from the LUCS-KDD transaction files (mushroom also from the raw table with `?`
as a value, as the reference's generator run did); as many records as the original,
Laplace correction 0.001, min_sup and candidates as in the paper's Table 1.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.doc_block import Report  # noqa: E402
from benchmarks.krimp_data import REFERENCE, load  # noqa: E402
from ppdp_gui.engine.mechanisms.krimp import compress as C  # noqa: E402
from ppdp_gui.engine.mechanisms.krimp.generate import generate_codes  # noqa: E402
from ppdp_gui.engine.mechanisms.krimp.mechanism import _figures, measure_names  # noqa: E402
from ppdp_gui.engine.mechanisms.krimp.mining import mine  # noqa: E402
from ppdp_gui.engine.noise import NoiseSource  # noqa: E402

# paper, Table 1: dissimilarity gen vs orig, % equal itemsets, avg sup diff equal %, avg sup new %, NAS
PAPER = {
    "chess": (0.104, 71, 0.01, 0.01, 0.30),
    "iris": (0.158, 83, 1.69, 0.80, 0.72),
    "led7": (0.171, 89, 0.14, 0.06, 0.66),
    "mushroom": (0.139, None, None, None, 0.09),
    "mushroom-raw": (0.139, None, None, None, 0.09),
    "nursery": (0.045, 90, 0.04, 0.03, 0.49),
    "pima": (0.177, 60, 0.30, 0.14, 0.64),
}
# the C++ release's generator, one run each: DS, rows equal to an original row
CPP = {"chess": (0.082, 9467), "iris": (0.063, 129), "led7": (0.067, 2937), "nursery": (0.143, 9173),
       "pima": (0.204, 629), "mushroom": (None, None), "mushroom-raw": (0.016, 1752)}


def one_dataset(name: str, runs: int, seed: int) -> dict:
    kind, min_sup = REFERENCE[name][0], REFERENCE[name][1]
    table = load(name)
    t0 = time.perf_counter()
    cands = mine(table, min_sup, kind)
    ct = C.compress(table, cands)
    learn = time.perf_counter() - t0
    names = measure_names()
    rows = []
    for r in range(runs):
        rng = NoiseSource(seed + r)
        codes, pieces = generate_codes(ct, table, table.n_rows, rng, 0.001)
        gen = _figures(table, ct, codes, pieces, min_sup, kind, True)
        try:
            while True:
                next(gen)
        except StopIteration as stop:
            figs = stop.value
        rows.append(figs)
    mean = {k: float(np.mean([f.get(k, np.nan) for f in rows])) for k in rows[0]}
    std = {k: float(np.std([f.get(k, np.nan) for f in rows])) for k in rows[0]}
    return {"mean": mean, "std": std, "names": names, "learn s": learn, "n": table.n_rows, "bits": ct.total}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help="10 runs per dataset (the paper's protocol)")
    ap.add_argument("--seed", type=int, default=2007)
    ap.add_argument("--only", nargs="*", help="datasets to run")
    ap.add_argument("--write", action="store_true", help="put the table into docs/reproduction/krimp.md")
    args = ap.parse_args()
    runs = 10 if args.full else 3
    report = Report("repro_krimp.py", f"seeds {args.seed}…{args.seed + runs - 1}, {runs} runs per dataset",
                    fenced=True)
    report.line(f"KRIMP data generation, Table 1 of seed 004 — {runs} runs per dataset (mean ± std)")
    head = (f"{'data':9} {'min_sup':>7} | {'NAS':>11} {'paper':>5} | {'equal %':>11} {'paper':>5} | "
            f"{'sup diff %':>10} {'paper':>5} | {'new sup %':>9} {'paper':>5} | {'DS':>11} {'paper':>5} "
            f"{'C++':>5} | {'copies %':>8} {'C++':>5} | {'pieces':>6}")
    report.line(head)
    report.line("-" * len(head))
    for name in args.only or list(PAPER):
        res = one_dataset(name, runs, args.seed)
        m, s, n = res["mean"], res["std"], res["names"]
        p = PAPER[name]
        cpp_ds, cpp_copies = CPP[name]

        def cell(key, width=11, fmt=".2f"):
            v = m.get(n[key], np.nan)
            return f"{v:{fmt}}±{s.get(n[key], np.nan):.2f}".rjust(width) if not np.isnan(v) else "–".rjust(width)

        def ref(v, fmt=".2f"):
            return "–".rjust(5) if v is None else f"{v:{fmt}}".rjust(5)

        copies = m[n["any"]]
        report.line(f"{name:9} {REFERENCE[name][1]:>7} | {cell('nas')} {ref(p[4])} | "
                    f"{cell('equal', fmt='.1f')} {ref(p[1], '.0f')} | {cell('diff', 10)} {ref(p[2])} | "
                    f"{cell('new', 9)} {ref(p[3])} | {cell('ds', fmt='.3f')} {ref(p[0], '.3f')} "
                    f"{ref(cpp_ds, '.3f')} | {copies:8.1f} "
                    f"{ref(None if cpp_copies is None else 100 * cpp_copies / res['n'], '.1f')} | "
                    f"{m[n['pieces']]:6.2f}")
    report.line("\nNAS: normalised anonymity score (0 = no original row reappears, 1 = all do). equal %: share of "
                "the original's frequent itemsets also frequent in the generated table. copies %: generated rows "
                "equal to some original row (the C++ column: its one run).")
    if args.write:
        report.write("krimp.md", "table 1")


if __name__ == "__main__":
    main()
