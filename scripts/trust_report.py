"""The trust figures for hostile inputs, crash safety and export safety, measured; writes them into docs/trust.md.

    .venv/bin/python scripts/trust_report.py            # the full run: 270+ files, 200 kills x 3, ~10 minutes
    .venv/bin/python scripts/trust_report.py --quick    # fewer files and kills, ~2 minutes, does not write the doc
    .venv/bin/python scripts/trust_report.py --pipeline [--size quick|full]
                                                        # only the audit of the whole path (`ppdp verify --pipeline`)
                                                        # and its planted bugs: the doc's pipeline table (full: ~30 min)

Every hostile file is loaded in its own forked process (the parent has imported the app once), with a time
limit (a hang is a file still loading after HANG_SECONDS) and its peak memory (the child's maximum resident set
as the kernel reports it, including what it shares with the parent: an upper bound). The 20,000-column inspect is
timed as a user runs it (`ppdp inspect`, a new process each time, median of three). Kills: tests/crash_kill.py.
Export safety: random tables exported to CSV and XLSX and read back as a spreadsheet would (as in
tests/engine/test_hostile_exports.py). Linux only (fork, wait4).
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import json
import os
import random
import re
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))
HANG_SECONDS = 120
BEGIN, END = "<!-- trust-report:hostile:begin -->", "<!-- trust-report:hostile:end -->"
PIPE_BEGIN, PIPE_END = "<!-- trust-report:pipeline:begin -->", "<!-- trust-report:pipeline:end -->"


def _corpus_module():
    spec = importlib.util.spec_from_file_location("hostile_corpus", REPO / "tests" / "engine" / "hostile_corpus.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["hostile_corpus"] = module
    spec.loader.exec_module(module)
    return module


def hostile_inputs(folder: Path, heavy: bool) -> dict:
    corpus = _corpus_module()
    import pandas  # noqa: F401  - imported once here, shared by every forked child

    import ppdp_gui.engine.data.reader  # noqa: F401
    import ppdp_gui.engine.persistence.project  # noqa: F401
    import ppdp_gui.engine.taxonomy.arx_io  # noqa: F401
    # the corpus is made in another process, so that this one (whose memory every forked child starts with and
    # reports as its own) does not hold the bombs' bytes: the peak of a child is then the app's modules plus
    # what loading its one file costs
    manifest = folder.parent / "corpus.json"
    subprocess.run([sys.executable, "-c", "import json, sys, dataclasses; sys.path[:0] = sys.argv[3:]; "
                    "import hostile_corpus as c; from pathlib import Path; "
                    "cases = c.build(Path(sys.argv[1]), heavy=sys.argv[2] == '1'); "
                    "json.dump([dict(dataclasses.asdict(x), path=str(x.path)) for x in cases], "
                    "open(str(Path(sys.argv[1]).parent / 'corpus.json'), 'w'))",
                    str(folder), "1" if heavy else "0", str(REPO / "tests" / "engine"), str(REPO)],
                   check=True, env=dict(os.environ, PYTHONPATH=str(REPO)))
    cases = [corpus.Case(**dict(c, path=Path(c["path"]), words=tuple(c["words"])))
             for c in json.loads(manifest.read_text())]
    runs = [(case, "memory") for case in cases] + [(case, "duckdb") for case in cases if case.duckdb is not None]
    out = {"files": len(cases), "runs": len(runs), "tracebacks": 0, "hangs": 0, "wrong": [], "refused": 0,
           "loaded": 0, "peak_mb": 0.0, "peak_file": "", "cpu_s": 0.0, "cpu_file": "",
           "largest_file_mb": max(c.path.stat().st_size for c in cases if c.path.is_file()) / 2**20,
           "slowest_s": 0.0, "slowest_file": "", "baseline_mb": _rss_mb(), "by_class": {}}
    for case, engine in runs:
        label = f"{case.path.name}{' (duckdb)' if engine == 'duckdb' else ''}"
        group = out["by_class"].setdefault(f"{case.group} ({engine})", {
            "runs": 0, "refused": 0, "loaded": 0, "tracebacks": 0, "hangs": 0, "wrong": 0, "peak_mb": 0.0,
            "cpu_s": 0.0})
        group["runs"] += 1
        read_fd, write_fd = os.pipe()
        start = time.perf_counter()
        pid = os.fork()
        if pid == 0:
            os.close(read_fd)
            try:
                outcome, message = corpus.run_case(case, engine)
                os.write(write_fd, json.dumps([outcome, message[-2000:]]).encode())
            finally:
                os._exit(0)
        os.close(write_fd)
        status, usage, hung = None, None, False
        while status is None:
            done, status_code, rusage = os.wait4(pid, os.WNOHANG)
            if done:
                status, usage = status_code, rusage
                break
            if time.perf_counter() - start > HANG_SECONDS:
                os.kill(pid, signal.SIGKILL)
                _, status, usage = os.wait4(pid, 0)
                hung = True
                break
            time.sleep(0.01)
        elapsed = time.perf_counter() - start
        with os.fdopen(read_fd, "rb") as fh:
            payload = fh.read()
        peak = usage.ru_maxrss / 1024  # KB -> MB on Linux
        cpu = usage.ru_utime + usage.ru_stime
        group["peak_mb"], group["cpu_s"] = max(group["peak_mb"], peak), max(group["cpu_s"], cpu)
        if peak > out["peak_mb"]:
            out["peak_mb"], out["peak_file"] = peak, label
        if cpu > out["cpu_s"]:
            out["cpu_s"], out["cpu_file"] = cpu, label
        if elapsed > out["slowest_s"]:
            out["slowest_s"], out["slowest_file"] = elapsed, label
        if hung:
            out["hangs"] += 1
            group["hangs"] += 1
            out["wrong"].append(f"{label}: still loading after {HANG_SECONDS} s")
            continue
        if not payload:
            out["tracebacks"] += 1
            group["tracebacks"] += 1
            out["wrong"].append(f"{label}: the process died (status {status})")
            continue
        outcome, message = json.loads(payload)
        out["tracebacks"] += outcome == "traceback"
        group["tracebacks"] += outcome == "traceback"
        kind = "refused" if outcome == "refused" else "loaded"
        out[kind] += outcome != "traceback"
        group[kind] += outcome != "traceback"
        wrong = corpus.verdict(case, outcome, message, engine)
        if wrong:
            group["wrong"] += 1
            out["wrong"].append(f"{label}: {wrong[:300]}")
    return out


def class_table(h: dict) -> list[str]:
    """Per class of attack and engine: runs, outcomes, the worst peak memory and CPU time of one file."""
    lines = ["", "Per class of hostile input (each file in its own process; the large-table engine, `--engine "
             "duckdb`, reads the CSV, TSV, gzip and Parquet files too):", "",
             "| class (engine) | runs | refused / loaded | tracebacks / hangs / other than expected | "
             "peak memory | CPU time |", "| --- | --- | --- | --- | --- | --- |"]
    for name, g in sorted(h["by_class"].items()):
        lines.append(f"| {name} | {g['runs']} | {g['refused']} / {g['loaded']} | {g['tracebacks']} / {g['hangs']} / "
                     f"{g['wrong']} | {g['peak_mb']:,.0f} MB | {g['cpu_s']:.1f} s |")
    return lines


def _rss_mb() -> float:
    """This process's resident memory now (what a forked child starts with)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def inspect_times(folder: Path, repeats: int = 3) -> dict:
    def wide(n: int) -> Path:
        path = folder / f"wide_{n}.csv"
        with open(path, "w") as fh:
            fh.write(",".join(f"c{i}" for i in range(n)) + "\n")
            fh.write(",".join(str(i % 7) for i in range(n)) + "\n")
        return path

    out = {}
    env = dict(os.environ, PYTHONPATH=str(REPO))
    for n in (20_000, 100_000):
        path = wide(n)
        times, cpu = [], []
        for _ in range(repeats):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            proc = subprocess.run([sys.executable, "-m", "ppdp_gui.cli", "inspect", str(path)], env=env,
                                  capture_output=True, text=True, timeout=600)
            times.append(time.perf_counter() - start)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        out[n] = {"seconds": statistics.median(times), "cpu_seconds": statistics.median(cpu), "exit": proc.returncode,
                  "said": (proc.stderr.strip().splitlines() or [""])[-1][:160]}
    return out


def kills(folder: Path, runs: int) -> dict:
    from crash_kill import KINDS, run_kills
    out = {}
    saved = os.environ.get("PPDP_LEDGER")
    try:
        for i, kind in enumerate(KINDS):
            report = run_kills(kind, runs, folder / kind, seed=100 + i)
            out[kind] = {"runs": report.runs, "corrupt": len(report.corrupt), "source_changed": report.source_changed,
                         "leftovers_seen": report.leftovers_seen, "after_clean": report.leftovers_after_clean,
                         "removed_other": report.removed_other, "states": report.states, "examples": report.corrupt[:3]}
    finally:
        if saved is None:
            os.environ.pop("PPDP_LEDGER", None)
        else:
            os.environ["PPDP_LEDGER"] = saved
    return out


def export_safety(folder: Path, tables: int, seed: int = 5) -> dict:
    import numpy as np
    import openpyxl
    import pandas as pd

    from ppdp_gui.engine.data.writer import FORMULA_START, export_table
    from ppdp_gui.engine.errors import DataError

    plain = re.compile(r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$")
    starts = list(FORMULA_START) + ["'", "", "", "+١٢٣", "=HYPERLINK(", "@SUM(", "-2+3", "＝1+1", "\u2212", "|"]
    tails = ["", "1", "1+1", "A1", "cmd|' /C calc'!A0", "١٢٣", "5", "x"]
    rng = random.Random(seed)
    cells = formulas = refused = 0
    for t in range(tables):
        n = rng.randint(1, 30)
        frame = pd.DataFrame({rng.choice(starts) + rng.choice(tails) + f"_{j}":
                              ([rng.choice(starts) + rng.choice(tails) for _ in range(n)] if j % 3 else
                               list(np.round(np.random.default_rng(t + j).normal(0, 100, n), 2)))
                              for j in range(rng.randint(1, 5))})
        for suffix in (".csv", ".xlsx"):
            try:
                path = export_table(frame, folder / f"t{t}{suffix}")
            except DataError:
                refused += 1
                continue
            if suffix == ".csv":
                with open(path, newline="", encoding="utf-8") as fh:
                    values = [(f, "s") for row in csv.reader(fh) for f in row]
            else:
                values = [(c.value, c.data_type) for row in openpyxl.load_workbook(path).active.iter_rows()
                          for c in row]
            for value, kind in values:
                cells += 1
                if kind == "f" or (isinstance(value, str) and value.startswith(FORMULA_START)
                                   and not plain.match(value)):
                    formulas += 1
    return {"tables": tables, "files": 2 * tables - refused, "cells": cells, "formula_cells": formulas,
            "refused": refused}


def table(results: dict, quick: bool) -> str:
    h, i, k, e = results["hostile"], results["inspect"], results["kills"], results["export"]
    rows = [
        ("hostile files tried (tables, workbooks, Parquet, gzip, hierarchies, projects, special files); runs "
         "(tables on both engines)",
         f"{h['files']}; {h['runs']} runs ({h['refused']} refused with a message naming the file, {h['loaded']} "
         "loaded)"),
        ("tracebacks", str(h["tracebacks"])),
        (f"hangs (still loading after {HANG_SECONDS} s)", str(h["hangs"])),
        ("outcomes other than expected", str(len(h["wrong"]))),
        (f"peak memory of the process loading a file, any file (largest file on disk: {h['largest_file_mb']:.1f} MB)",
         f"{h['peak_mb']:,.0f} MB ({h['peak_file']}; the app's modules alone: {h['baseline_mb']:,.0f} MB)"),
        ("slowest file", f"{h['slowest_s']:.1f} s ({h['slowest_file']})"),
        ("most CPU time for one file", f"{h['cpu_s']:.1f} s ({h['cpu_file']})"),
        ("`ppdp inspect`, 20,000 columns x 1 row (whole command, median of 3): CPU time / wall time",
         f"{i[20000]['cpu_seconds']:.2f} s / {i[20000]['seconds']:.2f} s (load average {results['load']:.1f})"),
        ("`ppdp inspect`, 100,000 columns: CPU time", f"{i[100000]['cpu_seconds']:.2f} s (refused: more than "
                                                      "50,000 columns)"),
    ]
    for kind, r in k.items():
        rows.append((f"kill -9 while writing the {kind}: runs / corrupt / source modified",
                     f"{r['runs']} / {r['corrupt']} / {r['source_changed']}"))
    rows.append(("temporary files left by the kills / left after the next start (`clean_leftovers`)",
                 f"{sum(r['leftovers_seen'] for r in k.values())} / {sum(r['after_clean'] for r in k.values())}"))
    rows.append(("other files removed by `clean_leftovers`", str(sum(r["removed_other"] for r in k.values()))))
    rows.append(("exported cells that are formulas to a spreadsheet (CSV + XLSX read back)",
                 f"{e['formula_cells']} of {e['cells']:,} cells in {e['files']} files"))
    lines = [BEGIN, "", f"Measured by `scripts/trust_report.py{' --quick' if quick else ''}` on "
             f"{time.strftime('%Y-%m-%d')} ({os.cpu_count()} cores, shared).", "", "| figure | value |", "| --- | --- |"]
    lines += [f"| {a} | {b} |" for a, b in rows]
    lines += class_table(h)
    lines += ["", END]
    return "\n".join(lines)


def write_doc(block: str, begin: str = BEGIN, end: str = END) -> None:
    doc = REPO / "docs" / "trust.md"
    text = doc.read_text(encoding="utf-8") if doc.exists() else "# Trust\n"
    if begin in text and end in text:
        text = text[:text.index(begin)] + block + text[text.index(end) + len(end):]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    doc.write_text(text, encoding="utf-8")


# ---- the audit of the whole path (`ppdp verify --pipeline`) ------------------------------------------------------
def _bound(x: float) -> str:
    return "∞" if x == float("inf") else f"{max(0.0, x):.3f}"


def pipeline_audit(size: str, seed: int) -> dict:
    """Every mechanism `ppdp verify --pipeline` audits, at `size`, then every planted pipeline bug (quick)."""
    from _pytest.monkeypatch import MonkeyPatch

    from ppdp_gui.engine.verify.pipeline_audit import audited_mechanisms, run_pipeline_verification
    from tests.engine.pipeline_mutants import MUTANTS
    out = {"size": size, "seed": seed, "verdicts": [], "mutants": [], "load": [os.getloadavg()[0]]}
    for name in audited_mechanisms():
        t0 = time.perf_counter()
        verdict = run_pipeline_verification(name, size=size, seed=seed)
        out["verdicts"].append(verdict)
        out["load"].append(os.getloadavg()[0])
        print(f"{name}: {'PASS' if verdict.passed else 'FAIL'} ({time.perf_counter() - t0:.0f} s)", flush=True)
    for m in MUTANTS:
        patch = MonkeyPatch()
        m.plant(patch)
        try:
            verdict = run_pipeline_verification(m.mechanism, size="quick", seed=seed,
                                                only=(m.pair,) if m.pair else None)
        finally:
            patch.undo()
        bad = [r for r in verdict.results if not r.passed]
        how = (f"{bad[0].name} ({_bound(bad[0].bound)} > {bad[0].allowed:.3g})" if bad else
               "; ".join(f"{c.name.split(' (')[0]}: {c.detail.split('not patients: ')[-1][:120]}"
                         for c in verdict.checks if not c.passed))
        out["mutants"].append((m.letter, m.words, m.mechanism, not verdict.passed, how))
        print(f"mutant {m.tag}: {'caught' if not verdict.passed else 'MISSED'}", flush=True)
    return out


def pipeline_table(results: dict) -> str:
    """The generated part of docs/trust.md's section on the whole path."""
    size, seed = results["size"], results["seed"]
    loads = results["load"]
    lines = [PIPE_BEGIN, "", f"Generated by `scripts/trust_report.py --pipeline --size {size}` on "
             f"{time.strftime('%Y-%m-%d')} (seed {seed}; {os.cpu_count()} cores, shared: load average "
             f"{min(loads):.1f}–{max(loads):.1f}). Lower bound on the privacy loss of what left the machine (the "
             "written files and the release note read back) beside what the note's promise allows; ∞: a "
             "difference no noise covers.", "",
             "| mechanism | neighbouring files | claimed ε | may lose | lower bound | runs per file | verdict |",
             "|---|---|---|---|---|---|---|"]
    checks = []
    for v in results["verdicts"]:
        for r in v.results:
            verdict = "PASS" if r.passed else "**FAIL**"
            if r.refused:
                verdict += " (nothing published on either file)"
            lines.append(f"| {v.mechanism} | {r.name} | {r.epsilon:g} | {r.allowed:.3g} | {_bound(r.bound)} | "
                         f"{r.runs:,} | {verdict} |")
        for c in v.checks:
            if not c.passed or not v.results:
                checks.append(f"| {v.mechanism} | {c.name} | {'PASS' if c.passed else '**FAIL**'}: "
                              f"{c.detail[:200].replace('|', '/')} |")
    seconds = sum(v.seconds for v in results["verdicts"])
    runs = sum(v.runs for v in results["verdicts"])
    lines += ["", f"{runs:,} releases through the whole path in {seconds / 60:.0f} min.", ""]
    if checks:
        lines += ["| mechanism | check | result |", "|---|---|---|"] + checks + [""]
    caught = sum(1 for m in results["mutants"] if m[3])
    lines += ["Planted pipeline bugs (`tests/engine/pipeline_mutants.py`, planted with monkeypatch; quick size):", "",
              "| | planted bug | audited with | caught by |", "|---|---|---|---|"]
    lines += [f"| ({letter}) | {words} | {mech} | {how if ok else '**missed**'} |"
              for letter, words, mech, ok, how in results["mutants"]]
    lines += ["", f"**Share caught: {caught} / {len(results['mutants'])}.**", "", PIPE_END]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer files and kills; the doc is not written")
    parser.add_argument("--json", help="also write the raw results here")
    parser.add_argument("--pipeline", action="store_true", help="only the audit of the whole path (ppdp verify "
                                                                "--pipeline) and its planted bugs")
    parser.add_argument("--size", choices=["smoke", "quick", "full"], default="full", help="--pipeline's size")
    parser.add_argument("--seed", type=int, default=0, help="--pipeline's seed")
    parser.add_argument("--no-write", action="store_true", help="print the table, do not write the doc")
    args = parser.parse_args(argv)
    if args.pipeline:
        results = pipeline_audit(args.size, args.seed)
        block = pipeline_table(results)
        print("\n" + block)
        if not args.no_write:
            write_doc(block, PIPE_BEGIN, PIPE_END)
        return 0 if all(m[3] for m in results["mutants"]) else 1
    with tempfile.TemporaryDirectory(prefix="ppdp_trust_") as tmp:
        folder = Path(tmp)
        os.environ["PPDP_LEDGER"] = str(folder / "app" / "ledger.sqlite")
        results = {"load": os.getloadavg()[0]}
        t0 = time.perf_counter()
        results["inspect"] = inspect_times(folder)
        print(f"inspect: {results['inspect']}  ({time.perf_counter() - t0:.0f} s)", flush=True)
        results["hostile"] = hostile_inputs(folder / "corpus", heavy=not args.quick)
        print(f"hostile: {json.dumps({k: v for k, v in results['hostile'].items() if k != 'wrong'})}", flush=True)
        for line in results["hostile"]["wrong"]:
            print("  WRONG", line, flush=True)
        results["kills"] = kills(folder / "kills", 20 if args.quick else 200)
        print(f"kills: {json.dumps(results['kills'])}  ({time.perf_counter() - t0:.0f} s)", flush=True)
        (folder / "export").mkdir()
        results["export"] = export_safety(folder / "export", 60 if args.quick else 300)
        print(f"export: {results['export']}  ({time.perf_counter() - t0:.0f} s)", flush=True)
    block = table(results, args.quick)
    print("\n" + block)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2, default=str))
    if not args.quick:
        write_doc(block)
    bad = (results["hostile"]["tracebacks"] + results["hostile"]["hangs"] + len(results["hostile"]["wrong"])
           + sum(r["corrupt"] + r["source_changed"] + r["after_clean"] + r["removed_other"]
                 for r in results["kills"].values()) + results["export"]["formula_cells"])
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
