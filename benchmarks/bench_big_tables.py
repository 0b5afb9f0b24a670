"""Tables larger than memory: DiffGen, Global recoding and Mondrian on an Adult-like Parquet of 10⁷ rows (DuckDB).

    python benchmarks/bench_big_tables.py                 # 10,000,000 rows (about 1-2 minutes per mechanism)
    python benchmarks/bench_big_tables.py --rows 1000000  # a quick run
    python benchmarks/bench_big_tables.py --rows 1000000 --engine duckdb --engine spark  # Spark beside DuckDB
    python benchmarks/bench_big_tables.py --rows 1000000 --persons  # with a person column, beside without
    python benchmarks/bench_big_tables.py --rows 1000000 --persons stable  # patients who keep their values
    python benchmarks/bench_big_tables.py --rows 1000000 --record-number  # every row distinct (R1, R2, …)

The table is generated (never committed) into a temporary folder, or --data-dir: ARX's Adult subset from
/work/shared/data/adult (30,162 rows, the bundled hierarchies cover every value) sampled with replacement by
DuckDB itself, so generating it does not need the rows in memory either. Each mechanism then runs in its own
process through the publish path a `ppdp run --engine duckdb` takes — load (the ledger's row hashes streamed
in batches), plan, run_release with a ledger, export with the recount on the written file — and prints rows/s
per step and that process's peak resident memory (goal: ≤ 2 GB at 10⁷ rows), and its CPU time (every thread,
from the start of the load to the end of the export) beside two floors measured by DuckDB alone in the same
process, with the engine's settings: its own GROUP BY over the same quasi-identifiers of the same file (the floor a
counting pass cannot beat; goal: the mechanism's run within 5x), and the same job end to end — read the same
file, GROUP BY the same columns, write as many rows as the release to the same format (`COPY`) — (goal: the whole
publish path within 5x). Each mechanism's line gives the CPU of each step (load: reading passes and the ledger's
row hashes; run: the counting, the mechanism, the recount of its claims and the digest; export: writing the file
and reading it back), both floors, both ratios, and "goal met" / "not met" for the two 5x goals and the 2 GB one.
With `--engine spark` (local[2], or $PPDP_SPARK_MASTER) each line has its wall-clock ratio to DuckDB's beside it;
Spark's CPU and memory are its JVM's, not in the figures printed for the Python process. With `--persons` the
table also has a synthetic patient number (`patient_nbr`, about 3 rows per patient, drawn at random: each row's
values unrelated to the patient's other rows), marked Person: each mechanism runs on it (k counts patients;
DiffGen keeps at most c = 3 rows per patient at ε/3 per row) right after the same run without it, and the line
gives the ratio of the two. With `--persons stable` every row of a patient is the same Adult row (a registry whose
patients keep their values).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ADULT = Path(os.environ.get("PPDP_SHARED_DATA", "/work/shared/data")) / "adult" / "hierarchies" / "arx" / "adult.csv.gz"


def generate(path: Path, rows: int, seed: int = 0, persons: str | None = None, record_number: bool = False) -> float:
    """Sample `rows` rows of ARX Adult with replacement into a Parquet file; returns seconds. `persons`: a first
    column `patient_nbr`, one of rows/3 patient numbers drawn at random per row (about 3 rows per patient);
    "stable": each patient's rows are one Adult row, chosen by a hash of the patient number. With
    `record_number`, a first column `record` holds R1, R2, … (as a hospital extract numbers its rows): every row
    is then distinct, and the engine's counted-rows shortcut does not apply."""
    import duckdb
    start = time.perf_counter()
    con = duckdb.connect(config={"memory_limit": "1GB", "preserve_insertion_order": False})
    con.execute(f"CREATE TABLE base AS SELECT row_number() OVER () - 1 AS i, * FROM "
                f"read_csv('{ADULT}', delim=';', header=true, all_varchar=true)")
    n = con.execute("SELECT COUNT(*) FROM base").fetchall()[0][0]
    con.execute(f"SELECT setseed({(seed % 1000) / 1000})")
    patients = max(1, rows // 3)
    patient = f"CAST(floor(random() * {patients}) AS BIGINT) + 100000 AS patient_nbr, " if persons else ""
    row = (f"CAST(hash(patient_nbr) % {n} AS BIGINT)" if persons == "stable"
           else f"CAST(floor(random() * {n}) AS BIGINT)")
    record = "'R' || CAST(r.k + 1 AS VARCHAR) AS record, " if record_number else ""
    con.execute(f"COPY (SELECT {record}r.* EXCLUDE (j, k), b.* EXCLUDE (i) FROM (SELECT *, {row} AS j FROM (SELECT "
                f"{patient}range AS k FROM range({rows})) AS x) AS r JOIN base AS b ON b.i = r.j) "
                f"TO '{path}' (FORMAT parquet)")
    con.close()
    return time.perf_counter() - start


def loaded_for(mechanism: str, path: Path, engine: str):
    """The generated table opened on `engine` as `ppdp run --confirm-roles` would, and the mechanism's parameters
    (this benchmark's and bench_spark.py's): public domains for DiffGen's two columns not described by a
    hierarchy, the patient number as the person when the file has one."""
    from ppdp_gui.engine.data.domains import Domain
    from ppdp_gui.engine.data.schema import Role
    from ppdp_gui.engine.persistence.project import Recipe
    from ppdp_gui.engine.pipeline.load import load
    persons = "_persons" in path.stem
    recipe = Recipe(source=str(path), bundled="adult", roles={"patient_nbr": Role.PERSON} if persons else {})
    if mechanism == "DiffGen":
        recipe.domains = {"age": Domain(low=0, high=100, integer=True),
                          "salary-class": Domain(categories=("<=50K", ">50K"))}
        params = {"epsilon": 1.0, "h": 10, **({"max_rows_per_person": 3} if persons else {})}
    elif mechanism == "Mondrian":
        params = {"k": 10}  # strict, every QI along its bundled hierarchy
    else:
        params = {"k": 10, "suppression": 2.0}
    data = load(recipe, engine=engine).dataset.confirm_guesses()  # as `ppdp run --confirm-roles`
    if mechanism == "DiffGen":  # age as a number on its public grid, not through its hierarchy
        data = data.with_column("age", taxonomy=None)
    return data, params


def run_one(mechanism: str, path: Path, out_dir: Path, engine: str = "duckdb") -> dict:
    """One release through the publish path (in this process); the figures as a dict."""
    sys.path.insert(0, str(ROOT))
    from ppdp_gui.engine.pipeline import export, plan, run_release
    from ppdp_gui.engine.privacy.ledger import Ledger

    t0, cpu0 = time.perf_counter(), time.process_time()
    data, params = loaded_for(mechanism, path, engine)
    n = data.n_rows
    t1, cpu1 = time.perf_counter(), time.process_time()
    ledger = Ledger(Path(tempfile.mkdtemp(prefix="ppdp-bench-ledger-")) / "ledger.db")  # a fresh budget
    planned = plan(data, mechanism, params, ledger=ledger)
    assert not planned.errors, planned.errors
    published = None
    for item in run_release(planned, ledger=ledger):
        published = item
    t2, cpu2 = time.perf_counter(), time.process_time()
    suffix = ".csv" if mechanism == "DiffGen" else ".parquet"
    exported = export(published, out_dir / f"release-{engine}-{mechanism.split()[0]}{suffix}", ledger=ledger)
    t3 = time.perf_counter()
    cpu = time.process_time() - cpu0  # every thread's CPU (DuckDB's too), without the imports
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    released = int(exported.note_doc["files"][0]["rows"])
    floor = group_by_floor(path, list(data.quasi_identifiers))
    whole_floor = end_to_end_floor(path, list(data.quasi_identifiers), released, suffix[1:], out_dir)
    return {"mechanism": mechanism, "engine": engine, "rows": n, "load s": t1 - t0, "run s": t2 - t1,
            "export s": t3 - t2, "cpu s": cpu, "floor cpu s": floor, "qi columns": len(data.quasi_identifiers),
            "load cpu s": cpu1 - cpu0, "run cpu s": cpu2 - cpu1, "export cpu s": cpu - (cpu2 - cpu0),
            "total s": t3 - t0, "rows/s": n / (t3 - t0), "peak MiB": peak, "end to end floor cpu s": whole_floor,
            "format": suffix[1:], "released rows": released,
            "checks": [c.message for c in exported.checks]}


def group_by_floor(path: Path, columns: list[str]) -> float:
    """CPU seconds (every thread) of DuckDB's own `SELECT qi…, COUNT(*) … GROUP BY qi…` over the same file and
    columns, in this process with the engine's settings: the floor a counting pass cannot go below. The median of
    three runs (on a shared machine one run varies by 2x)."""
    import duckdb

    from ppdp_gui.engine.bigdata.source import MEMORY_LIMIT
    con = duckdb.connect(config={"memory_limit": MEMORY_LIMIT, "preserve_insertion_order": False})
    cols = ", ".join('"' + c.replace('"', '""') + '"' for c in columns)
    spent = []
    for _ in range(3):
        before = time.process_time()
        con.execute(f"SELECT {cols}, COUNT(*) FROM read_parquet('{path}') GROUP BY ALL").fetchall()
        spent.append(time.process_time() - before)
    con.close()
    return sorted(spent)[1]


def end_to_end_floor(path: Path, columns: list[str], rows: int, fmt: str, out_dir: Path) -> float:
    """CPU seconds (every thread) DuckDB alone needs for the same job end to end: read the same file, GROUP BY the
    same columns, write `rows` rows of it to the same format (`COPY … TO`, CSV with a header or Parquet), with the
    engine's settings. The median of three runs."""
    import duckdb

    from ppdp_gui.engine.bigdata.source import MEMORY_LIMIT
    con = duckdb.connect(config={"memory_limit": MEMORY_LIMIT, "preserve_insertion_order": False})
    cols = ", ".join('"' + c.replace('"', '""') + '"' for c in columns)
    out = out_dir / f"floor.{fmt}"
    options = "FORMAT parquet" if fmt == "parquet" else "FORMAT csv, HEADER true"
    spent = []
    for _ in range(3):
        before = time.process_time()
        con.execute(f"SELECT {cols}, COUNT(*) FROM read_parquet('{path}') GROUP BY ALL").fetchall()
        con.execute(f"COPY (SELECT * FROM read_parquet('{path}') LIMIT {int(rows)}) TO '{out}' ({options})")
        spent.append(time.process_time() - before)
    con.close()
    out.unlink(missing_ok=True)
    return sorted(spent)[1]


GOAL_RATIO = 5.0  # issue 28: within 5x DuckDB's own GROUP BY over the same columns
GOAL_MIB = 2048.0  # and at most 2 GB for the whole process


def report_line(r: dict) -> str:
    """CPU per step beside both floors, the ratios and whether each goal is met (printed, not asserted)."""
    floor, e2e = max(r["floor cpu s"], 1e-9), max(r["end to end floor cpu s"], 1e-9)
    run, whole, whole_group = r["run cpu s"] / floor, r["cpu s"] / e2e, r["cpu s"] / floor

    def verdict(ok: bool) -> str:
        return "goal met" if ok else "not met"
    return (f"{'':16s} CPU {r['cpu s']:.1f} s (load {r['load cpu s']:.1f}, run {r['run cpu s']:.1f}, export "
            f"{r['export cpu s']:.1f}), wall {r['total s']:.1f} s, peak {r['peak MiB']:.0f} MiB\n"
            f"{'':16s} DuckDB alone (medians of 3): GROUP BY over the same {r['qi columns']} columns of the same file "
            f"{r['floor cpu s']:.2f} s CPU; end to end (read it, GROUP BY, write {r['released rows']:,} rows as "
            f"{r['format']}) {r['end to end floor cpu s']:.2f} s CPU\n"
            f"{'':16s} mechanism's run / GROUP BY {run:.1f}x ({verdict(run <= GOAL_RATIO)}, goal {GOAL_RATIO:g}x); "
            f"whole path / end to end {whole:.1f}x ({verdict(whole <= GOAL_RATIO)}, goal {GOAL_RATIO:g}x); "
            f"whole path / GROUP BY {whole_group:.1f}x; memory {verdict(r['peak MiB'] <= GOAL_MIB)} "
            f"(goal {GOAL_MIB:.0f} MiB)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--data-dir", help="where to write the generated table (default: a temporary folder)")
    ap.add_argument("--mechanism", action="append", choices=["DiffGen", "Global recoding", "Mondrian"])
    ap.add_argument("--engine", action="append", choices=["duckdb", "spark"])
    ap.add_argument("--persons", nargs="?", const="random", choices=["random", "stable"],
                    help="also run each mechanism on the same rows with a patient number marked Person (random: a "
                         "patient's rows unrelated; stable: all one row)")
    ap.add_argument("--record-number", action="store_true",
                    help="add a record number (R1, R2, …) to every row: a file of distinct rows")
    ap.add_argument("--child", nargs=3, metavar=("MECHANISM", "PARQUET", "ENGINE"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        out = Path(args.child[1]).parent
        print(json.dumps(run_one(args.child[0], Path(args.child[1]), out, args.child[2])))
        return 0
    folder = Path(args.data_dir) if args.data_dir else Path(tempfile.mkdtemp(prefix="ppdp-big-"))
    folder.mkdir(parents=True, exist_ok=True)
    numbered = "_numbered" if args.record_number else ""
    suffix = "_persons" if args.persons == "random" else "_persons_stable"
    paths = [folder / f"adult_{args.rows}{numbered}.parquet"] + (
        [folder / f"adult_{args.rows}{numbered}{suffix}.parquet"] if args.persons else [])
    for path in paths:
        if not path.exists():
            secs = generate(path, args.rows, persons=args.persons if "_persons" in path.stem else None,
                            record_number=args.record_number)
            print(f"generated {args.rows:,} rows in {secs:.1f} s: {path} ({path.stat().st_size / 2**20:.0f} MiB)")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    for mech in args.mechanism or ["DiffGen", "Global recoding", "Mondrian"]:
        first = None
        for engine, path in [(e, p) for e in args.engine or ["duckdb"] for p in paths]:
            proc = subprocess.run([sys.executable, __file__, "--child", mech, str(path), engine], env=env,
                                  capture_output=True, text=True)
            if proc.returncode:
                print(f"{mech} ({engine}): failed\n{proc.stderr[-2000:]}")
                continue
            r = json.loads(proc.stdout.strip().splitlines()[-1])
            first = first or r
            unit = "persons" if "_persons" in path.stem else "rows"
            than = f"{first['engine']}/rows" if args.persons else first["engine"]
            ratio = "" if r is first else (f"  {r['total s'] / first['total s']:.2f}x {than}'s total, "
                                           f"{r['cpu s'] / max(first['cpu s'], 1e-9):.2f}x its CPU")
            engine = f"{engine}/{unit}" if args.persons else engine
            print(f"{mech:16s} {engine:14s} {r['rows']:>12,} rows  load {r['load s']:6.1f} s  run {r['run s']:6.1f} s  "
                  f"export {r['export s']:6.1f} s  total {r['total s']:6.1f} s  {r['rows/s']:>10,.0f} rows/s  "
                  f"peak {r['peak MiB']:7.0f} MiB  released rows {r['released rows']:,}{ratio}")
            if engine.startswith("duckdb"):
                print(report_line(r))
            for c in r["checks"]:
                print(f"{'':16s} check on the written file: {c}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
