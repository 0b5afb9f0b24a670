"""Load speed: read_table on a 1,000,000-row CSV resampled from UCI Adult (48,842 rows x 16 columns).

Run from the repository root:  .venv/bin/python benchmarks/bench_load.py [--rows N] [--repeats R]
The big file is written to a temporary folder and deleted afterwards. Each timed read runs in a fresh child
process, so its peak resident memory (ru_maxrss) is the load's own and not the file generator's.
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
sys.path.insert(0, str(ROOT))
ADULT = ROOT.parent / "shared" / "data" / "adult" / "adult_all.csv.gz"


def make_file(path: Path, rows: int, seed: int = 0) -> None:
    import numpy as np
    import pandas as pd

    adult = pd.read_csv(ADULT, dtype=str, keep_default_na=False)
    pick = np.random.default_rng(seed).integers(0, len(adult), rows)  # benchmark data only, not a mechanism
    adult.iloc[pick].to_csv(path, index=False)


def _status_kb(field: str) -> int | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return None


def _reset_peak_kb() -> int:
    """Current RSS; also resets the kernel's peak-RSS mark where Linux allows it (else ru_maxrss is used)."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass
    return _status_kb("VmRSS") or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _peak_kb() -> int:
    return _status_kb("VmHWM") or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def measure(path: str, what: str) -> dict:
    """Runs in the child: import, note the memory, read once, report."""
    if what == "read_table":
        from ppdp_gui.engine.data import read_table
    else:
        import pandas as pd
    import pyarrow as pa

    base = _reset_peak_kb()
    start = time.perf_counter()
    if what == "read_table":
        ds = read_table(path)
        rows, kept = ds.source.n_rows_read, ds.n_rows
        frame_bytes = int(ds.frame.memory_usage(deep=True).sum())
    else:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
        rows = kept = len(frame)
        frame_bytes = int(frame.memory_usage(deep=True).sum())
    seconds = time.perf_counter() - start
    peak = _peak_kb()
    return {"seconds": seconds, "rows": rows, "kept": kept, "rss_base_mb": base / 1024, "rss_peak_mb": peak / 1024,
            "arrow_peak_mb": pa.default_memory_pool().max_memory() / 2**20, "frame_mb": frame_bytes / 2**20}


def run_child(path: Path, what: str) -> dict:
    out = subprocess.run([sys.executable, __file__, "--measure", str(path), "--what", what], check=True,
                         capture_output=True, text=True, cwd=ROOT)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    parser.add_argument("--what", default="read_table", help=argparse.SUPPRESS)
    parser.add_argument("--pandas", action="store_true", help="also time plain pandas.read_csv(dtype=str)")
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure, args.what)))
        return
    with tempfile.TemporaryDirectory(prefix="ppdp_bench_load_") as tmp:
        path = Path(tmp) / "adult_1m.csv"
        t0 = time.perf_counter()
        make_file(path, args.rows)
        size_mb = os.path.getsize(path) / 2**20
        print(f"file: {args.rows:,} rows x 16 columns, {size_mb:,.1f} MB, written in {time.perf_counter() - t0:.1f} s")
        whats = ["read_table"] + (["pandas"] if args.pandas else [])
        for what in whats:
            runs = [run_child(path, what) for _ in range(args.repeats)]
            best = min(runs, key=lambda r: r["seconds"])
            label = "read_table (text -> typed Dataset)" if what == "read_table" else "pandas.read_csv(dtype=str) only"
            print(f"{label}:")
            print(f"  seconds (best of {args.repeats}): {best['seconds']:.2f}   all: "
                  + ", ".join(f"{r['seconds']:.2f}" for r in runs))
            print(f"  rows/s: {best['rows'] / best['seconds']:,.0f}   MB/s: {size_mb / best['seconds']:,.0f}")
            print(f"  rows read {best['rows']:,}, kept {best['kept']:,} (rows with '?' dropped)")
            print(f"  peak memory: RSS {best['rss_peak_mb']:,.0f} MB (after imports {best['rss_base_mb']:,.0f} MB, "
                  f"so +{best['rss_peak_mb'] - best['rss_base_mb']:,.0f} MB for the load); Arrow pool peak "
                  f"{best['arrow_peak_mb']:,.0f} MB; resulting frame {best['frame_mb']:,.0f} MB")
    print("  (peak = the kernel's high-water mark of resident memory in a fresh process, reset after imports)")


if __name__ == "__main__":
    main()
