"""The DP audit's figures for docs/trust.md: every DP mechanism's verdict at a size, and the planted bugs caught.

Run: .venv/bin/python benchmarks/audit_dp.py [--size full] [--mutant-size quick] [--seed 0] [--skip-mutants]

1. `ppdp verify` on every registered ε-DP mechanism (default: the full audit): each audit table's bound beside
   what it may lose, the checks, the wall-clock time (printed, never asserted).
2. Every planted bug of tests/engine/verify_mutants.py against *all* the audit tables of its mechanism (not only
   the one its test runs), at --mutant-size: whether the verdict is FAIL, and by which audit; then the share
   caught. The in-suite tests (tests/engine/test_verify_mutants.py) run only the catching tables, for speed.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from ppdp_gui.engine.verify import run_verification  # noqa: E402
from ppdp_gui.engine.verify.pipeline_audit import dp_mechanisms  # noqa: E402




def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="full", choices=["smoke", "quick", "full"])
    ap.add_argument("--mutant-size", default="quick", choices=["smoke", "quick", "full"])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--skip-mutants", action="store_true")
    args = ap.parse_args()
    ok = True
    for name in dp_mechanisms():
        started = time.perf_counter()
        verdict = run_verification(name, size=args.size, seed=args.seed)
        print("\n".join(verdict.lines()))
        print(f"({time.perf_counter() - started:.0f} s wall clock)\n", flush=True)
        ok &= verdict.passed
    if args.skip_mutants:
        return 0 if ok else 1
    from tests.engine.verify_mutants import MUTANTS
    caught = 0
    print(f"planted bugs, every audit table, {args.mutant_size} size:")
    for m in MUTANTS:
        started = time.perf_counter()
        verdict = run_verification(m.load(), size=args.mutant_size, seed=args.seed, noise_factor=m.noise_factor)
        failing = [f"{r.name} ({r.shown_bound:.2f} > {r.allowed:.3g})" for r in verdict.results if not r.passed]
        failing += [c.name for c in verdict.checks if not c.passed]
        caught += not verdict.passed
        print(f"  {'CAUGHT' if not verdict.passed else 'MISSED'}  {m.mechanism}: {m.bug} — {m.words}; "
              f"{'; '.join(failing) or 'no audit failed'} ({time.perf_counter() - started:.0f} s)", flush=True)
    print(f"share caught: {caught}/{len(MUTANTS)} = {100 * caught / len(MUTANTS):.0f} %")
    return 0 if ok and caught == len(MUTANTS) else 1


if __name__ == "__main__":
    sys.exit(main())
