"""Spark beside DuckDB on one large table: DiffGen, global recoding and strict Mondrian, one run each.

    python benchmarks/bench_spark.py --rows 1000000               # 10⁶ rows, Spark local[2] beside DuckDB
    python benchmarks/bench_spark.py --rows 10000000 --data-dir /tmp/big   # 10⁷ rows (long on Spark), with
      Spark's default driver memory (1 GB heap): nothing to configure

Each release runs in its own process through the publish path of `ppdp run --engine …` (load, plan,
run_release with a ledger, export with the recount on the written file), on the table
benchmarks/bench_big_tables.py generates (ARX's Adult sampled with replacement) and with its parameters.
What this script adds is the Spark side's whole cost: Spark's work is done in a JVM child of the Python process,
whose CPU the Python figures do not include, so each line prints the CPU of the Python process *and* of every
process under it (the JVM), read from /proc before the process ends, the peak resident memory of both, the
number of Spark jobs the release ran, and the wall-clock and CPU ratios to DuckDB's.
The load average is printed before and after each release: the machine is shared, and wall-clock figures are
only comparable at a similar load.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.bench_big_tables import generate, loaded_for  # noqa: E402  (the same table and release)

MECHANISMS = ("DiffGen", "Global recoding", "Mondrian")


def _descendants(pid: int) -> list[int]:
    """Every process under `pid` (from /proc's parent links)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _cpu_of(pid: int) -> float:
    """CPU seconds (user + system, every thread) a live process has used so far."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _peak_mib(pid: int) -> float:
    """A live process's peak resident memory (VmHWM), in MiB (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _is_java(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/comm") as fh:
            return fh.read().strip() == "java"
    except OSError:
        return False


def child(mechanism: str, path: Path, engine: str) -> dict:
    """One release in this process through the publish path; the figures as a dict, with the CPU of the
    processes under this one (Spark's JVM, still alive here)."""
    from ppdp_gui.engine.pipeline import export, plan, run_release
    from ppdp_gui.engine.privacy.ledger import Ledger

    t0, cpu0 = time.perf_counter(), time.process_time()
    data, params = loaded_for(mechanism, path, engine)
    t1 = time.perf_counter()
    ledger = Ledger(Path(tempfile.mkdtemp(prefix="ppdp-bench-ledger-")) / "ledger.db")  # a fresh budget
    planned = plan(data, mechanism, params, ledger=ledger)
    assert not planned.errors, planned.errors
    published = None
    for item in run_release(planned, ledger=ledger):
        published = item
    t2 = time.perf_counter()
    suffix = ".csv" if mechanism == "DiffGen" else ".parquet"
    out = path.parent / f"release-{engine}-{mechanism.split()[0]}{suffix}"
    exported = export(published, out, ledger=ledger)
    t3 = time.perf_counter()
    jobs, heap = 0, ""
    if engine == "spark":  # the jobs Spark ran for this release (each a scheduling round trip), the driver's heap
        from ppdp_gui.engine.bigdata.spark_source import spark_session
        context = spark_session().sparkContext
        jobs = len(context.statusTracker().getJobIdsForGroup())
        heap = context.getConf().get("spark.driver.memory", "1g, Spark's default")
    return {"spark jobs": jobs, "driver memory": heap,
            "mechanism": mechanism, "engine": engine, "rows": data.n_rows, "load s": t1 - t0, "run s": t2 - t1,
            "export s": t3 - t2, "total s": t3 - t0, "cpu s": time.process_time() - cpu0,
            "jvm cpu s": sum(_cpu_of(p) for p in _descendants(os.getpid())),
            "released rows": int(exported.note_doc["files"][0]["rows"]),
            "python peak MiB": _peak_mib(os.getpid()),  # the driver: this process and, for Spark, its JVM
            "jvm peak MiB": max([_peak_mib(p) for p in _descendants(os.getpid()) if _is_java(p)] or [0.0])}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--data-dir", help="where to write the generated table (default: a temporary folder)")
    ap.add_argument("--mechanism", action="append", choices=MECHANISMS)
    ap.add_argument("--engine", action="append", choices=["duckdb", "spark"],
                    help="default: duckdb then spark")
    ap.add_argument("--child", nargs=3, metavar=("MECHANISM", "PARQUET", "ENGINE"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child[0], Path(args.child[1]), args.child[2])))
        return 0
    folder = Path(args.data_dir) if args.data_dir else Path(tempfile.mkdtemp(prefix="ppdp-spark-"))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"adult_{args.rows}.parquet"
    if not path.exists():
        secs = generate(path, args.rows)
        print(f"generated {args.rows:,} rows in {secs:.1f} s: {path} ({path.stat().st_size / 2**20:.0f} MiB)")
    master = os.environ.get("PPDP_SPARK_MASTER", "local[2]")
    print(f"{args.rows:,} rows; Spark master {master}; {os.cpu_count()} cores", flush=True)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for mech in args.mechanism or MECHANISMS:
        first = None
        for engine in args.engine or ["duckdb", "spark"]:
            load_before = os.getloadavg()[0]
            started = time.perf_counter()
            proc = subprocess.run([sys.executable, __file__, "--child", mech, str(path), engine], env=env,
                                  capture_output=True, text=True)
            wall = time.perf_counter() - started
            load = f"load {load_before:.1f}→{os.getloadavg()[0]:.1f}"
            if proc.returncode:
                causes = [line for line in proc.stderr.splitlines()  # the JVM's own reason, before its stack
                          if any(w in line for w in ("Error", "Exception:", "Caused by"))][:12]
                print(f"{mech} ({engine}): failed after {wall:.0f} s ({load})\n" + "\n".join(causes)
                      + f"\n…\n{proc.stderr[-1500:]}", flush=True)
                continue
            r = json.loads(proc.stdout.strip().splitlines()[-1])
            first = first or r
            ratio = "" if r is first else (f"  {r['total s'] / first['total s']:.1f}x {first['engine']}'s total, "
                                           f"{(r['cpu s'] + r['jvm cpu s']) / first['cpu s']:.1f}x its CPU")
            print(f"{mech:16s} {engine:7s} {r['rows']:>11,} rows  load {r['load s']:7.1f} s  run {r['run s']:7.1f} s"
                  f"  export {r['export s']:6.1f} s  total {r['total s']:7.1f} s  CPU python {r['cpu s']:7.1f} s"
                  f" + JVM {r['jvm cpu s']:7.1f} s  released rows {r['released rows']:,}  peak RSS python "
                  f"{r['python peak MiB']:.0f} MiB + JVM {r['jvm peak MiB']:.0f} MiB"
                  f"{'  Spark jobs ' + str(r['spark jobs']) if r['spark jobs'] else ''}"
                  f"{'  driver memory ' + r['driver memory'] if r['driver memory'] else ''}  ({load}){ratio}",
                  flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
