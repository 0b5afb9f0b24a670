"""Reproduce DiffGen's Figure 3 (Mohammed et al., KDD 2011): classification accuracy on Adult vs h and ε.

Run from the repository root:
    .venv/bin/python benchmarks/repro_diffgen.py                 # quick: 3 splits, h = 4, 6, …, 16 (~4 min)
    .venv/bin/python benchmarks/repro_diffgen.py --full          # the paper's 10 splits, every h in 4..16
    .venv/bin/python benchmarks/repro_diffgen.py --plot docs/reproduction/diffgen_fig3.png

Data: ../shared/data/adult/adult_all.csv.gz without rows holding '?' (45,222), 6 numeric QIs, 8 categorical QIs
with the shared ARX hierarchies (relationship: our own three groups), class income. Numeric QIs get public
bounds through a one-level taxonomy whose root label is the range (age: the ARX age hierarchy, 0-100).
Protocol (paper, Section 5): random 2/3 train / 1/3 test; DiffGen on the training part; tree trained on the
released groups (noisy counts as weights) and tested on the test part generalised with the same cut; BA and LA
from the raw data; averages over the splits. Second protocol (shared reference README, section 6): the
original UCI split 30,162 / 15,060, so that DiffGen's row stands beside AIM, MST and PrivBayes.
"""

from __future__ import annotations

import argparse
import sys
import time
import zlib
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
ADULT_DIR = ROOT.parent / "shared" / "data" / "adult"

from benchmarks.doc_block import Report  # noqa: E402
from ppdp_gui.engine.data.domains import Domain  # noqa: E402
from ppdp_gui.engine.data.schema import ColumnSpec, Dataset, Role  # noqa: E402
from ppdp_gui.engine.mechanisms.base import run_to_release  # noqa: E402
from ppdp_gui.engine.mechanisms.diffgen import DiffGen  # noqa: E402
from ppdp_gui.engine.metrics.classification import repeated_splits  # noqa: E402
from ppdp_gui.engine.noise import NoiseSource  # noqa: E402
from ppdp_gui.engine.taxonomy import Taxonomy, grouped, read_arx_hierarchy  # noqa: E402

NUMERIC = ["age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week"]
CATEGORICAL = ["workclass", "education", "marital-status", "occupation", "relationship", "race", "sex",
               "native-country"]
CLASS = "income"
PUBLIC_BOUNDS = {"fnlwgt": (0, 1_500_000), "education-num": (1, 16), "capital-gain": (0, 100_000),
                 "capital-loss": (0, 5_000), "hours-per-week": (0, 100)}
RELATIONSHIP = {"Spouse": ["Husband", "Wife"], "Family": ["Own-child", "Other-relative"],
                "Non-family": ["Not-in-family", "Unmarried"]}
EPSILONS = (0.1, 0.25, 0.5, 1.0)
# the paper's figures, from its text (Section 5) and the shared reference README
PAPER = {"BA": 85.3, "LA": 75.5, "CA eps=1 h=10": 85.3 - 3.0, "CA eps=0.1 peak": 78.0,
         "CA eps=0.5 range": (85.3 - 4.8, 85.3 - 3.57)}
REFERENCE_SYNTH = {"AIM": (80.7, 81.8, 82.9, 83.7, 83.9), "MST": (73.4, 77.5, 78.8, 78.7, 78.6),
                   "PrivBayes k=2": (71.8, 74.7, 74.5, 79.0, 80.0)}


def adult_frame() -> pd.DataFrame:
    """The 45,222 complete rows, numeric columns as int64, with the UCI 'split' column kept."""
    frame = pd.read_csv(ADULT_DIR / "adult_all.csv.gz", dtype=str, keep_default_na=False)
    frame = frame[~(frame == "?").any(axis=1)].reset_index(drop=True)
    for col in NUMERIC:
        frame[col] = frame[col].astype(np.int64)
    return frame


def adult_taxonomies(frame: pd.DataFrame | None = None) -> dict[str, Taxonomy]:
    """The shared ARX hierarchies (age's gives its bounds, 0-100), relationship grouped by us, the two classes."""
    arx = ADULT_DIR / "hierarchies" / "arx"
    tax = {c: read_arx_hierarchy(arx / f"adult_hierarchy_{c}.csv", column=c)
           for c in CATEGORICAL + ["age"] if (arx / f"adult_hierarchy_{c}.csv").exists()}
    tax["relationship"] = grouped("relationship", RELATIONSHIP)
    tax[CLASS] = Taxonomy.flat(CLASS, ["<=50K", ">50K"])
    return tax


def adult_domains() -> dict[str, Domain]:
    """Public bounds of the other numeric columns (stated, never read from the data), whole numbers."""
    return {col: Domain(low=lo, high=hi, integer=True) for col, (lo, hi) in PUBLIC_BOUNDS.items()}


def adult_dataset(frame: pd.DataFrame, taxonomies: dict[str, Taxonomy] | None = None) -> Dataset:
    frame = frame[NUMERIC + CATEGORICAL + [CLASS]]
    taxonomies = taxonomies or adult_taxonomies(frame)
    domains = adult_domains()
    schema = tuple(ColumnSpec(c, "numeric" if c in NUMERIC else "categorical",
                              Role.CLASS if c == CLASS else Role.QUASI_IDENTIFIER, taxonomies.get(c),
                              domains.get(c))
                   for c in frame.columns)
    return Dataset(frame.reset_index(drop=True), schema)


def ca_of(mech: DiffGen, train: Dataset, test: Dataset, seed: int, **params) -> float:
    release = run_to_release(mech.run(train, rng=NoiseSource.for_tests(seed), **params))
    return mech.measures(release, train, test)["CA %"]


def figure3(runs: int, hs: list[int], utilities: list[str]) -> tuple[pd.DataFrame, dict[str, float]]:
    """CA per (utility, ε, h), averaged over `runs` random 2/3–1/3 splits; BA and LA averaged likewise."""
    full = adult_dataset(adult_frame())
    mech, rows, refs = DiffGen(), [], []
    for run, (tr, te) in enumerate(repeated_splits(full.n_rows, runs, seed=2011)):
        train = full.with_frame(full.frame.iloc[tr].reset_index(drop=True))
        test = full.with_frame(full.frame.iloc[te].reset_index(drop=True))
        refs.append(mech.reference_measures(train, test))
        started = time.perf_counter()
        for utility in utilities:
            for eps in EPSILONS:
                for h in hs:
                    seed = zlib.crc32(f"{run}/{utility}/{eps}/{h}".encode())  # reproducible seeds
                    rows.append({"utility": utility, "epsilon": eps, "h": h, "run": run,
                                 "CA %": ca_of(mech, train, test, seed, epsilon=eps, h=h, utility=utility)})
        print(f"  split {run + 1}/{runs}: BA {refs[-1]['BA %']:.2f} LA {refs[-1]['LA %']:.2f} "
              f"({time.perf_counter() - started:.0f} s)", flush=True)
    ref = {k: float(np.mean([r[k] for r in refs])) for k in refs[0]}
    return pd.DataFrame(rows), ref


def reference_protocol(runs: int, h: int = 10) -> tuple[pd.DataFrame, dict[str, float], float]:
    """The shared README's protocol: original UCI split, ε ∈ {0.1, 0.25, 0.5, 1, 1.5}, Max, h = 10."""
    frame = adult_frame()
    full = adult_dataset(frame)
    is_train = (frame["split"] == "train").to_numpy()
    train = full.with_frame(full.frame[is_train].reset_index(drop=True))
    test = full.with_frame(full.frame[~is_train].reset_index(drop=True))
    mech, rows, seconds = DiffGen(), [], []
    for eps in EPSILONS + (1.5,):
        for run in range(runs):
            started = time.perf_counter()
            release = run_to_release(mech.run(train, rng=NoiseSource.for_tests(run), epsilon=eps, h=h))
            seconds.append(time.perf_counter() - started)
            rows.append({"epsilon": eps, "run": run, "CA %": mech.measures(release, train, test)["CA %"]})
    ref = mech.reference_measures(train, test)
    return pd.DataFrame(rows), {**ref, "n_train": train.n_rows, "n_test": test.n_rows}, float(np.median(seconds))


def pivot(rows: pd.DataFrame, utility: str) -> pd.DataFrame:
    sub = rows[rows["utility"] == utility]
    return sub.pivot_table(index="h", columns="epsilon", values="CA %", aggfunc="mean")


def markdown(table: pd.DataFrame, first: str) -> str:
    head = f"| {first} | " + " | ".join(f"ε={c:g}" for c in table.columns) + " |"
    lines = [head, "|" + "---|" * (len(table.columns) + 1)]
    for idx, row in table.iterrows():
        lines.append(f"| {idx} | " + " | ".join(f"{v:.1f}" for v in row) + " |")
    return "\n".join(lines)


def plot(rows: pd.DataFrame, ref: dict[str, float], path: Path) -> None:
    """Two panels as in the paper, drawn with pyqtgraph offscreen (matplotlib is not a dependency)."""
    import os
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    import pyqtgraph as pg
    import pyqtgraph.exporters
    from PySide6 import QtCore

    app = pg.mkQApp()  # noqa: F841 - keeps the Qt application alive while exporting
    pg.setConfigOptions(background="w", foreground="k", antialias=True)
    win = pg.GraphicsLayoutWidget()
    win.resize(1200, 480)
    colours = {0.1: (31, 119, 180), 0.25: (255, 127, 14), 0.5: (44, 160, 44), 1.0: (214, 39, 40)}
    symbols = {0.1: "o", 0.25: "s", 0.5: "t", 1.0: "d"}
    for col, utility in enumerate(["Max", "InfoGain"]):
        table = pivot(rows, utility)
        if table.empty:
            continue
        p = win.addPlot(row=0, col=col, title=f"({'ab'[col]}) {utility}")
        p.addLegend(offset=(10, -10))
        p.setLabel("bottom", "Number of specializations h")
        p.setLabel("left", "Average accuracy (%)")
        p.setYRange(68, 87, padding=0)
        for eps in table.columns:
            p.plot(table.index.to_numpy(), table[eps].to_numpy(), pen=pg.mkPen(colours[eps], width=2),
                   symbol=symbols[eps], symbolBrush=colours[eps], symbolSize=7, name=f"ε = {eps:g}")
        for key in ("BA %", "LA %"):
            line = pg.InfiniteLine(pos=ref[key], angle=0,
                                   pen=pg.mkPen((90, 90, 90), width=1.5, style=QtCore.Qt.PenStyle.DashLine),
                                   label=f"{key[:2]} = {ref[key]:.1f} %",
                                   labelOpts={"position": 0.9, "color": (60, 60, 60), "anchors": [(1, 1), (1, 1)]})
            p.addItem(line)
    win.show()  # lays the two panels out over the whole width before the export
    app.processEvents()
    exporter = pg.exporters.ImageExporter(win.scene())
    exporter.parameters()["width"] = 1200
    path.parent.mkdir(parents=True, exist_ok=True)
    exporter.export(str(path))
    print(f"plot written to {path}")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help="10 splits and every h in 4..16 (the paper's setting)")
    ap.add_argument("--runs", type=int, help="number of random splits (default 3, or 10 with --full)")
    ap.add_argument("--plot", type=Path, help="write the two-panel figure to this PNG file")
    ap.add_argument("--skip-reference", action="store_true", help="skip the UCI-split protocol")
    ap.add_argument("--write", action="store_true", help="put the results into docs/reproduction/diffgen.md")
    args = ap.parse_args(argv)
    runs = args.runs or (10 if args.full else 3)
    hs = list(range(4, 17)) if args.full else list(range(4, 17, 2))
    started = time.perf_counter()
    report = Report("repro_diffgen.py", f"{runs} random splits, seeds 0…{runs - 1}, h in {hs[0]}…{hs[-1]}")
    report.line(f"Figure 3: {runs} random 2/3-1/3 splits, h in {hs}, ε in {list(EPSILONS)}")
    rows, ref = figure3(runs, hs, ["Max", "InfoGain"])
    report.line(f"\nBA = {ref['BA %']:.2f} % (paper {PAPER['BA']}), "
                f"LA = {ref['LA %']:.2f} % (paper {PAPER['LA']})")
    for utility in ("Max", "InfoGain"):
        report.line(f"\nCA % ({utility}), mean over {runs} splits\n" + markdown(pivot(rows, utility), "h"))
    mx = pivot(rows, "Max")
    if 10 in mx.index:
        report.line(f"\nMax, ε=1, h=10: BA-CA = {ref['BA %'] - mx.loc[10, 1.0]:.2f} (paper ≈ 3)")
    report.line(f"\nMax, ε=0.1: best CA over h = {mx[0.1].max():.2f} (paper ≈ 78)")
    report.line(f"\nMax - InfoGain, mean over the grid: "
                f"{(mx - pivot(rows, 'InfoGain')).to_numpy().mean():.2f} points")
    if args.plot:
        plot(rows, ref, args.plot)
    if not args.skip_reference:
        ref_runs = 10 if args.full else 3
        rrows, rref, sec = reference_protocol(ref_runs)
        means = rrows.groupby("epsilon")["CA %"].mean()
        report.line(f"\nReference protocol (UCI split {rref['n_train']:,}/{rref['n_test']:,}, Max, h=10, "
              f"{ref_runs} runs): BA {rref['BA %']:.1f} LA {rref['LA %']:.1f}; DiffGen run {sec:.2f} s")
        report.line("\n| tool | " + " | ".join(f"ε={e:g}" for e in means.index) + " |")
        report.line("|---|" + "---|" * len(means))
        report.line("| DiffGen (ours) | " + " | ".join(f"{v:.1f}" for v in means) + " |")
        for tool, vals in REFERENCE_SYNTH.items():
            report.line(f"| {tool} | " + " | ".join(f"{v:.1f}" for v in vals) + " |")
    print(f"\ntotal {time.perf_counter() - started:.0f} s")
    if args.write:
        report.write("diffgen.md", "figure 3")


if __name__ == "__main__":
    main()
