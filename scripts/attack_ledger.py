"""Attack the privacy budget ledger as a careless or hurried custodian would, and print the figures for
docs/trust.md (issue 27): routine edits of a spent table, false matches between different people, caps raised by a
run, tampering with the SQLite file, and outputs written over inputs.

    PYTHONPATH=. python scripts/attack_ledger.py [--data /work/shared/data] [--trials 40]

Everything runs in a temporary folder with its own ledgers; nothing of the user's is read or written.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import shutil
import sqlite3
import sys
import tempfile
import threading
import time
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd

from ppdp_gui.engine.errors import BudgetError
from ppdp_gui.engine.privacy import Ledger
from ppdp_gui.engine.privacy.ledger_types import NEAR_COPY_CONTAINMENT


def patients(n: int, rng) -> pd.DataFrame:
    """A hospital extract as text: a name nobody releases, then what releases read."""
    return pd.DataFrame({
        "patient_name": [f"N{rng.integers(10**9)}" for _ in range(n)],
        "age": rng.integers(18, 95, n).astype(str),
        "sex": rng.choice(["Male", "Female"], n),
        "zip": rng.choice([f"{z:05d}" for z in range(10100, 10160)], n),
        "diagnosis": rng.choice([f"I{k:02d}.{k % 10}" for k in range(40)], n),
        "length of stay": rng.integers(1, 30, n).astype(str),
    })


def routine_edit(frame: pd.DataFrame, rng) -> tuple[pd.DataFrame, str]:
    """One random mix of what custodians do to a file between two releases."""
    done = []
    out = frame.copy()
    n_drop = int(rng.integers(0, 3))
    if n_drop:
        cols = list(rng.choice(out.columns, n_drop, replace=False))
        out = out.drop(columns=cols)
        done.append(f"drop {n_drop}")
    for col in rng.choice(out.columns, int(rng.integers(0, 3)), replace=False):
        kind = rng.choice(["upper", "lower", "spaces", "rename"])
        if kind == "rename":
            out = out.rename(columns={col: str(col).upper() + " "})
        elif kind == "spaces":
            out[col] = " " + out[col].astype(str) + "  "
        else:
            out[col] = getattr(out[col].astype(str).str, kind)()
        done.append(str(kind))
    for col in out.columns:
        if rng.random() < 0.3 and out[col].astype(str).str.strip().str.fullmatch(r"\d+").all():
            out[col] = out[col].astype(str).str.strip() + ".0"
            done.append("number spelling")
    if rng.random() < 0.5:
        out["added"] = "ward B"
        done.append("add")
    if rng.random() < 0.5:
        out = out.sample(frac=1.0, random_state=int(rng.integers(1000)))
        done.append("row order")
    if rng.random() < 0.5:
        out = out[list(reversed(out.columns))]
        done.append("column order")
    return out.reset_index(drop=True), ", ".join(done) or "none"


def edits(folder: Path, frame: pd.DataFrame, trials: int, rng, name: str) -> dict:
    ledger = Ledger(folder / f"edits-{name}.sqlite")
    ledger.reserve(ledger.identify(frame), "Laplace histogram", {}, Fraction(2))
    refused, missed = 0, []
    for _ in range(trials):
        edited, what = routine_edit(frame, rng)
        try:
            ledger.reserve(ledger.identify(edited), "DiffGen", {}, Fraction(1, 10))
            missed.append(what)
        except BudgetError:
            refused += 1
    return {"trials": trials, "refused": refused, "missed": missed}


def false_matches(folder: Path, data: Path, trials: int, rng) -> list[dict]:
    """Two disjoint random samples of one shipped table (different people of the same population): how often
    the second is taken for a near copy of the first."""
    tables = {"adult": data / "adult" / "adult_all.csv.gz"}
    for name in ("mushroom", "chess_krvk", "led7", "pima"):
        found = sorted((data / name).glob("*.csv*")) if (data / name).is_dir() else []
        if found:
            tables[name] = found[0]
    out = []
    for name, path in tables.items():
        raw = pd.read_csv(path, dtype=str, keep_default_na=False)
        for size in (200, 2000):
            if 2 * size > len(raw):
                continue
            hits, worst = 0, 0.0
            for t in range(trials):
                ledger = Ledger(folder / f"fm-{name}-{size}-{t}.sqlite")
                idx = rng.permutation(len(raw))
                a, b = raw.iloc[idx[:size]], raw.iloc[idx[size:2 * size]]
                ledger.reserve(ledger.identify(a), "x", {}, Fraction(1, 2))
                identity = ledger.identify(b)
                worst = max(worst, identity.similarity or 0.0)
                hits += identity.is_near_copy
            out.append({"table": name, "rows": size, "trials": trials, "false matches": hits, "worst": worst})
    return out


def persons(folder: Path, trials: int, rng) -> dict:
    """With a person column: the same patients in files with other columns (one budget), and other patients whose
    ids come from the same numbering (a false match the custodian resolves by declaring the table separate)."""
    from ppdp_gui.engine.data.reader import dataset_from_frame
    from ppdp_gui.engine.data.schema import Role
    same = other = 0
    for t in range(trials):
        ledger = Ledger(folder / f"persons-{t}.sqlite")
        ids = rng.permutation(100_000)
        a = [f"P{i:06d}" for i in ids[:300]]
        visits = pd.DataFrame({"patient": np.repeat(a, 3), "ward": rng.choice(list("ABCD"), 900)})
        ledger.reserve(ledger.identify(dataset_from_frame(visits, roles={"patient": Role.PERSON})), "x", {},
                       Fraction(2))
        labs = pd.DataFrame({"patient": a[:200], "hba1c": rng.normal(6, 1, 200).round(1).astype(str)})
        same += ledger.identify(dataset_from_frame(labs, roles={"patient": Role.PERSON})).is_near_copy
        strangers = pd.DataFrame({"patient": [f"P{i:06d}" for i in ids[300:600]], "ward": "A"})
        other += ledger.identify(dataset_from_frame(strangers, roles={"patient": Role.PERSON})).is_near_copy
    return {"trials": trials, "same": same, "other": other}


def caps(folder: Path, rng) -> dict:
    frame = patients(200, rng)
    ledger = Ledger(folder / "caps.sqlite")
    identity = ledger.identify(frame)
    ledger.set_cap(identity, Fraction(1, 2))
    ledger.reserve(identity, "x", {}, Fraction(1, 2))
    charged = []

    def spender():
        own = Ledger(folder / "caps.sqlite")
        with contextlib.suppress(BudgetError):
            own.set_cap(identity, 10)
        with contextlib.suppress(BudgetError):
            charged.append(own.reserve(identity, "x", {}, Fraction(1, 10)))
    threads = [threading.Thread(target=spender) for _ in range(36)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return {"spenders": 36, "charged": len(charged), "spent": float(ledger.spent(identity)),
            "cap": float(ledger.cap(identity))}


TAMPERS = {
    "delete a middle entry": "DELETE FROM entries WHERE id = 2",
    "delete the last entry": "DELETE FROM entries WHERE id = 3",
    "delete every entry": "DELETE FROM entries",
    "lower an entry's ε": "UPDATE entries SET eps_num = '1', eps_den = '1000' WHERE id = 2",
    "reorder entries": "UPDATE entries SET id = 9 WHERE id = 1",
    "raise the cap in SQL": "UPDATE datasets SET cap_num = '100', cap_den = '1'",
    "remove the near-copy sketches": "UPDATE datasets SET sketch = NULL, robust = NULL",
    "delete the cap history": "DELETE FROM cap_changes",
    "move an entry to another budget": "UPDATE entries SET budget = 'x' || budget WHERE id = 1",
}


def tamper(folder: Path, rng) -> dict:
    frame = patients(200, rng)
    results = {}
    for i, (name, sql) in enumerate(TAMPERS.items()):
        path = folder / f"tamper-{i}.sqlite"
        ledger = Ledger(path, default_cap=Fraction(3))
        identity = ledger.identify(frame)
        for eps in (Fraction(1, 2), Fraction(1), Fraction(1)):
            ledger.reserve(identity, "x", {}, eps)
        db = sqlite3.connect(path)
        db.execute("PRAGMA foreign_keys = OFF")
        db.execute(sql)
        db.commit()
        db.close()
        reopened = Ledger(path, default_cap=Fraction(3))
        detected = reopened.chain_report is not None and not reopened.chain_report.ok
        try:
            reopened.reserve(reopened.identify(frame), "x", {}, Fraction(1, 100))
            refused = False
        except BudgetError:
            refused = True
        results[name] = (detected, refused)
    return results


def outputs(folder: Path, sample: Path) -> dict:
    from ppdp_gui.cli import main
    hierarchy = Path(__file__).resolve().parents[1] / "taxonomies" / "adult" / "adult_hierarchy_race.csv"
    work = folder / "outputs"
    work.mkdir()
    table = work / "adult.csv"
    shutil.copy(sample, table)
    shutil.copy(hierarchy, work / "race.csv")
    (work / "notes.txt").write_text("my notes")
    led = work / "ledger.sqlite"
    base = ["run", "Laplace histogram", "-i", str(table), "--ledger", str(led), "-p", "columns=sex,salary-class",
            "-p", "epsilon=0.1", "--bundled-taxonomies", "adult", "--taxonomy", f"race={work / 'race.csv'}"]
    with contextlib.redirect_stdout(io.StringIO()):
        main(base + ["-o", str(work / "first.csv")])  # the table is known: its ledger has a dataset
    os.symlink(table, work / "link.csv")
    os.link(led.with_name("ledger.sqlite.key"), work / "hard.key")
    (work / "sub").mkdir()
    attempts = {
        "--record over the hierarchy": base + ["-o", str(work / "a.csv"), "--record", str(work / "race.csv")],
        "-o over the hierarchy": base + ["-o", str(work / "race.csv")],
        "--report over the hierarchy": base + ["-o", str(work / "b.csv"), "--report", str(work / "race.csv")],
        "--record over an existing file": base + ["-o", str(work / "c.csv"), "--record", str(work / "notes.txt")],
        "-o through a symlink to the source": base + ["-o", str(work / "link.csv"), "--overwrite"],
        "--record on a hard link of the key": base + ["-o", str(work / "d.csv"), "--record", str(work / "hard.key"),
                                                      "--overwrite"],
        "ledger --csv over the source": ["ledger", "--ledger", str(led), "--csv", str(table), "--overwrite"],
        "ledger --tables-csv via ..": ["ledger", "--ledger", str(led), "--tables-csv",
                                       str(work / "sub" / ".." / "adult.csv"), "--overwrite"],
    }
    before = {p: p.read_bytes() for p in (table, work / "race.csv", work / "notes.txt")}
    spent_before = sum(e.epsilon for e in Ledger(led).entries())
    results = {}
    for name, argv in attempts.items():
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            code = main(argv)
        results[name] = code
    intact = all(p.read_bytes() == b for p, b in before.items())
    spent = sum(e.epsilon for e in Ledger(led).entries()) - spent_before
    return {"attempts": results, "inputs intact": intact, "ε charged by refused attempts": float(spent)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(Path(__file__).resolve().parents[1] / ".." / "shared" / "data"))
    ap.add_argument("--trials", type=int, default=40)
    ap.add_argument("--seed", type=int, default=27)
    args = ap.parse_args()
    data = Path(args.data)
    rng = np.random.default_rng(args.seed)
    from ppdp_gui.engine.package_files import sample_table
    from ppdp_gui.engine.privacy import sketches
    start = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        print(f"# ledger attack (scripts/attack_ledger.py, seed {args.seed}, {args.trials} trials), "
              f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
        print(f"thresholds: near copy at containment >= {NEAR_COPY_CONTAINMENT} (whole rows, person ids), "
              f">= {sketches.SUBSET_CONTAINMENT} (column subsets); a column subset identifies people "
              f"when >= {sketches.MIN_DISTINCT:.0%} of its rows are distinct and its columns' value counts multiply "
              f"to >= {sketches.MIN_SPACE:g} x rows; up to {sketches.MAX_REMOVED} known columns may be missing (any "
              "number of the columns no release reads)")
        print("\n## routine edits of a spent table (cap 2 spent; a random mix of column drops (0-2), adds, renames, "
              "case and spacing changes, number spelling, row and column order)")
        adult = pd.read_csv(data / "adult" / "adult_all.csv.gz", dtype=str, keep_default_na=False)
        for name, frame in (("200 patients (synthetic)", patients(200, rng)),
                            ("Adult, 2,000 rows", adult.sample(2000, random_state=1).reset_index(drop=True))):
            e = edits(folder, frame, args.trials, rng, name[:5])
            print(f"{name:<26} refused {e['refused']} of {e['trials']}; missed: {e['missed'] or 'none'}")
        p = persons(folder, max(10, args.trials // 2), rng)
        print(f"\n## person ids (300 patients, 3 visits each, spent; ids drawn from 100,000)\n"
              f"the same patients in a lab file with other columns: {p['same']} of {p['trials']} share the budget; "
              f"300 other patients of the same numbering: {p['other']} of {p['trials']} taken for the same")
        print("\n## different people taken for the same (disjoint samples of one shipped table)")
        for r in false_matches(folder, data, max(10, args.trials // 2), rng):
            print(f"{r['table']:<11} {r['rows']:>5} rows: {r['false matches']} of {r['trials']} matched; "
                  f"largest containment {r['worst']:.3f}")
        c = caps(folder, rng)
        print(f"\n## caps\n{c['spenders']} concurrent runs each asking --cap 10 on a spent cap of 0.5: "
              f"{c['charged']} charged, spent {c['spent']:g}, cap still {c['cap']:g}")
        print("\n## tampering with the SQLite file (detected on open / DP release refused)")
        for name, (detected, refused) in tamper(folder, rng).items():
            print(f"{name:<34} detected {'yes' if detected else 'NO'}, release refused {'yes' if refused else 'NO'}")
        o = outputs(folder, sample_table())
        print("\n## outputs over inputs (exit code; 2 = refused)")
        for name, code in o["attempts"].items():
            print(f"{name:<38} exit {code}")
        print(f"inputs intact: {o['inputs intact']}; ε charged by the refused attempts: "
              f"{o['ε charged by refused attempts']:g}")
    print(f"\n({time.time() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
