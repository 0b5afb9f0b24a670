"""KRIMP on the shared data beside the original C++ release (../shared/reference, section 1): bits, code-table
size and the time of mining, compression and generation, each separately.

    .venv/bin/python benchmarks/bench_krimp.py                 # every dataset the reference lists
    .venv/bin/python benchmarks/bench_krimp.py --miners        # also: the itemset miners compared
    .venv/bin/python benchmarks/bench_krimp.py --only chess nursery
    .venv/bin/python benchmarks/bench_krimp.py --repeat 3       # compression timed 3 times, the least kept

Times are CPU seconds of this process (2 shared cores: wall-clock time would count the neighbours' work too).
The compiled kernels are loaded from numba's cache and warmed up on iris before anything is timed, so no JIT
compilation is in any figure (a first run after installation compiles them, ~10-25 s once, untimed here too).
"compress s" is the whole `compress()` call: putting the candidates in the standard order, the element arrays and
level bitmaps, the cover, the tests and the pruning; not reading the table nor mining (the "mine s" column).
The C++ figure is the reference's "compress s" (../shared/reference/README.md, section 1), which does not say
whether it includes the release reading its database and candidates or mining them; so the table prints both
ours / C++ (compression against compression) and (mine + compress) / C++ (the most the C++ figure can include).
The goal (issue 32): compression no slower than the C++ release on chess, nursery, mushroom and adult; the table
says whether it is met, with the machine's load average (neighbours slow even CPU time down).
Exit status 1 if any size differs from the reference by more than 0.01 %.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.krimp_data import REFERENCE, frame, load  # noqa: E402
from ppdp_gui.engine.mechanisms.krimp import compress as C  # noqa: E402
from ppdp_gui.engine.mechanisms.krimp.generate import generate_codes  # noqa: E402
from ppdp_gui.engine.mechanisms.krimp.mining import mine, mine_table  # noqa: E402
from ppdp_gui.engine.noise import NoiseSource  # noqa: E402


def warm_up() -> None:
    t = load("iris")
    ct = C.compress(t, mine(t, 1, "all"))
    generate_codes(ct, t, 10, NoiseSource(0))


def timed(fn, *args, **kw):
    """(result, CPU seconds of this process): the machine is shared, so wall-clock time measures the
    neighbours too; the work is single-threaded, so CPU time is what the reference's seconds compare with."""
    t0 = time.process_time()
    out = fn(*args, **kw)
    return out, time.process_time() - t0


GOAL = ("chess", "nursery", "mushroom", "adult")  # issue 32: compression time <= the C++ release's on these


def compression(names, repeat: int = 1) -> bool:
    print("KRIMP compression beside the original C++ release (coverpartial, pruning, standard orders)")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; compression timed {repeat}x, least kept")
    head = (f"{'data':13} {'cands':>8} {'L(D,CT) ours':>15} {'C++':>15} {'diff %':>9} {'|CT|':>5} {'C++':>5} | "
            f"{'mine s':>6} {'compress s':>10} {'C++ s':>6} {'ratio':>6} {'goal':>8} {'m+c/C++':>7} "
            f"{'generate s':>10}")
    print(head)
    print("-" * len(head))
    ok = True
    for name in names:
        kind, min_sup, *_rest = REFERENCE[name]
        ref_bits, ref_ct, ref_s = REFERENCE[name][7], REFERENCE[name][9], REFERENCE[name][10]
        t = load(name)
        cands, t_mine = timed(mine, t, min_sup, kind)
        ct, t_comp = timed(C.compress, t, cands)
        for _ in range(repeat - 1):
            t_comp = min(t_comp, timed(C.compress, t, cands)[1])
        _codes, t_gen = timed(generate_codes, ct, t, t.n_rows, NoiseSource(1))
        diff = 100 * (ct.total - ref_bits) / ref_bits
        ok &= abs(diff) <= 0.01 and len(ct.elements) == ref_ct
        ratio = t_comp / ref_s
        goal = ("met" if ratio <= 1.0 else "not met") if name in GOAL else ""
        print(f"{name:13} {len(cands):>8,} {ct.total:>15,.4f} {ref_bits:>15,.4f} {diff:>+9.5f} {len(ct.elements):>5} "
              f"{ref_ct:>5} | {t_mine:>6.2f} {t_comp:>10.2f} {ref_s:>6.2f} {ratio:>5.2f}x {goal:>8} "
              f"{(t_mine + t_comp) / ref_s:>6.2f}x {t_gen:>10.3f}", flush=True)
    print("mine: pyfim (all / closed frequent itemsets); compress: KRIMP (candidate order, set-up, cover, pruning; "
          "compiled, cache warm); ratio: ours / C++ compress; goal: ratio <= 1 (chess, nursery, mushroom, adult); "
          "m+c/C++: (mine + compress) / C++ compress, in case the C++ figure includes its mining; generate: as many "
          "rows as the original.")
    return ok


def miners(names) -> None:
    """pyfim, our own table miner, mlxtend and efficient-apriori on the same tables (all itemsets unless the
    reference used closed ones; a library that cannot mine closed itemsets is marked n/a)."""
    print("\nItemset miners: seconds to mine the reference's candidates (count in brackets)")
    print(f"{'data':13} {'kind':6} {'min_sup':>7} | {'pyfim':>16} {'own (table)':>16} {'mlxtend':>16} "
          f"{'efficient-apriori':>18}")
    for name in names:
        kind, min_sup = REFERENCE[name][0], REFERENCE[name][1]
        t = load(name)
        cells = []
        res, s = timed(mine, t, min_sup, kind, "pyfim")
        cells.append(f"{s:.2f} ({len(res):,})")
        if t.n_attributes <= 12:
            res, s = timed(mine_table, t, min_sup, kind)
            cells.append(f"{s:.2f} ({len(res):,})")
        else:
            cells.append("too wide")
        cells.append(_mlxtend(t, min_sup) if kind == "all" else "n/a (no closed)")
        cells.append(_apriori(t, min_sup) if kind == "all" and len(frame(name) if frame(name) is not None else [])
                     < 5000 else ("n/a (no closed)" if kind != "all" else "skipped (slow)"))
        print(f"{name:13} {kind:6} {min_sup:>7} | {cells[0]:>16} {cells[1]:>16} {cells[2]:>16} {cells[3]:>18}",
              flush=True)


def _rows(t):
    indptr, items = t.transactions()
    return [items[indptr[r]:indptr[r + 1]].tolist() for r in range(t.n_rows)]


def _mlxtend(t, min_sup) -> str:
    try:
        import pandas as pd
        from mlxtend.frequent_patterns import fpgrowth
        from mlxtend.preprocessing import TransactionEncoder
    except ImportError:
        return "not installed"
    te = TransactionEncoder()
    onehot = pd.DataFrame(te.fit(_rows(t)).transform(_rows(t)), columns=te.columns_)
    res, s = timed(fpgrowth, onehot, min_support=min_sup / t.n_rows, use_colnames=False)
    return f"{s:.2f} ({len(res):,})"


def _apriori(t, min_sup) -> str:
    try:
        from efficient_apriori import apriori
    except ImportError:
        return "not installed"
    (sets, _rules), s = timed(apriori, [tuple(r) for r in _rows(t)], min_support=min_sup / t.n_rows,
                              min_confidence=1.0)
    return f"{s:.2f} ({sum(len(v) for v in sets.values()):,})"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", help="datasets (default: all the reference lists)")
    ap.add_argument("--miners", action="store_true", help="also compare the itemset mining libraries")
    ap.add_argument("--repeat", type=int, default=1, help="time each compression this many times, keep the least")
    args = ap.parse_args()
    names = args.only or list(REFERENCE)
    warm_up()
    ok = compression(names, max(1, args.repeat))
    if args.miners:
        miners(names)
    print("\nall sizes equal the reference's (≤ 0.01 %)" if ok else "\nSIZE MISMATCH against the reference")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
