"""KRIMP on every configuration of ../shared/reference/krimp_crosscheck beside the C++ release's figures: bits
L(D,CT) to 4 decimals and the non-singleton code-table size, with and without post-acceptance pruning.

    .venv/bin/python benchmarks/bench_krimp_crosscheck.py            # all 21 runs (~2 min CPU)
    .venv/bin/python benchmarks/bench_krimp_crosscheck.py --only musk1_8x5

The tables are written by the reference's own prepare.py (standard library, reads ../shared/data) into a temporary
folder. Times are CPU seconds of this process (mining + compression). Exit status 1 if any figure differs.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ppdp_gui.engine.mechanisms.krimp import compress as C  # noqa: E402
from ppdp_gui.engine.mechanisms.krimp.encoding import read_num  # noqa: E402
from ppdp_gui.engine.mechanisms.krimp.mining import mine  # noqa: E402

CROSSCHECK = Path(__file__).resolve().parents[1].parent / "shared" / "reference" / "krimp_crosscheck"

# (dataset, candidates, min_sup, prune) -> (C++ L(D,CT) full precision, |CT| non-singleton), from its README
REFERENCE = {
    ("musk1_8x5", "all", 10, True): (15510.92013525304, 73),
    ("musk1_10x5", "all", 10, True): (19930.788231049701, 104),
    ("musk1_12x5", "all", 10, True): (24871.713116001847, 117),
    ("musk1_13x5", "all", 10, True): (27131.495973737128, 136),
    ("musk1_14x5", "all", 10, True): (29847.188419430746, 144),
    ("musk1_16x5", "all", 10, True): (35105.87244483862, 166),
    ("musk1_16x5", "all", 5, True): (34247.487158359254, 185),
    ("musk1_16x5", "closed", 2, True): (36643.313700516141, 119),
    ("musk2_16x5", "all", 200, True): (418019.78790691547, 506),
    ("musk2_16x5", "all", 50, True): (342197.34415994253, 791),
    ("musk2_16x5", "closed", 100, True): (375288.79179862113, 648),
    ("musk2_16x5", "closed", 20, True): (319567.53496490105, 857),
    ("musk2_20x5", "closed", 50, True): (441141.25228747184, 1086),
    ("adultnum_q5", "all", 1000, True): (1239144.9254904138, 320),
    ("adultnum_q5", "closed", 100, True): (1246979.1798086169, 1054),
    ("synth_s1_5000x16x6_p40", "all", 10, True): (391521.99051017268, 1198),
    ("synth_s1_5000x16x6_p40", "closed", 10, True): (391521.99051017268, 1198),
    ("musk1_8x5", "all", 10, False): (16155.660420191518, 119),
    ("musk1_16x5", "all", 10, False): (37087.291800202824, 259),
    ("musk2_16x5", "all", 200, False): (435987.53839461965, 1040),
    ("musk2_16x5", "closed", 100, False): (405489.59654775151, 1489),
}


def prepare_all(out: Path) -> None:
    spec = importlib.util.spec_from_file_location("krimp_prepare", CROSSCHECK / "prepare.py")
    prepare = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(prepare)
    sys.argv = ["prepare.py", "--out", str(out)]
    prepare.main()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", help="dataset names")
    args = ap.parse_args()
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        argv = sys.argv
        prepare_all(Path(tmp))
        sys.argv = argv
        print(f"{'dataset':24} {'cands':>6} {'min_sup':>7} {'prune':>5} {'L(D,CT) ours':>16} {'C++':>16} "
              f"{'|CT| ours':>9} {'C++':>5} {'CPU s':>6}  same")
        for (name, kind, min_sup, prune), (bits, size) in REFERENCE.items():
            if args.only and name not in args.only:
                continue
            t = read_num(Path(tmp) / f"{name}.dat")
            t0 = time.process_time()
            ct = C.compress(t, mine(t, min_sup, kind), prune=prune)
            cpu = time.process_time() - t0
            same = round(ct.total, 4) == round(bits, 4) and ct.n_used == size
            bad += not same
            print(f"{name:24} {kind:>6} {min_sup:>7} {str(prune):>5} {ct.total:16.4f} {bits:16.4f} "
                  f"{ct.n_used:>9} {size:>5} {cpu:6.1f}  {'yes' if same else 'NO'}")
    print(f"{len(REFERENCE) - bad if not args.only else ''} equal, {bad} different")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
