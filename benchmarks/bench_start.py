"""Cold start: how long until the window is usable, and which imports the time goes to. Goals: ≤ 1 s to a usable
window (issue 22) and ≤ 0.5 s of CPU of our own beyond bare Qt (issue 32). Prints figures; asserts nothing.

    QT_QPA_PLATFORM=offscreen .venv/bin/python benchmarks/bench_start.py [--repeats 5] [--bundle dist/ppdp_gui]

1. `python -X importtime -c "import ppdp_gui.gui.main_window"` in fresh interpreters: the module's cumulative
   import time and that of the heavy libraries it pulls in (pandas, numpy, pyqtgraph, scikit-learn, scipy, PySide6);
   a library shown as "not imported" is deferred until needed. Twice: plain (as the tests import it) and as
   `ppdp-gui` imports it, with pandas' stand-in installed first (gui/lazy_pandas.py).
2. Time to window, in fresh processes through the real entry point (`ppdp_gui.gui.app.main`, as `ppdp-gui` runs
   it): from just before the child is started until (a) the window is shown and the event loop turns — the window
   is usable — and (b) the bundled sample is loaded (`--sample`). Beside the wall-clock time, the CPU the process
   has used by (a) (interpreter start included), and the same for bare Qt: a fresh process that imports PySide6,
   shows an empty QMainWindow and turns the event loop once. Their difference is the CPU of our own start-up, the
   steadier figure on a shared machine (wall-clock time there mostly measures the other jobs).
3. With --bundle: the same two times for the PyInstaller bundle's executable (its --self-test prints them).

Figures are medians over the repeats; the first run also warms the OS file cache (the "cold" in the goal is a
fresh interpreter, not an empty disk cache).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ["PySide6.QtWidgets", "numpy", "pandas", "pyarrow", "pyqtgraph", "scipy", "sklearn", "numba", "fpdf"]
GOAL_S = 1.0
GOAL_OWN_CPU_S = 0.5  # CPU of our own beyond bare Qt (issue 32)

BARE = """
import json, os, sys, time
t0 = float(os.environ["PPDP_T0"])
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QMainWindow
app = QApplication(sys.argv[:1])
def usable():
    print("MARKS " + json.dumps({"window usable": time.time() - t0, "cpu": time.process_time()}), flush=True)
    app.quit()
w = QMainWindow()
w.resize(1200, 800)
w.show()
QTimer.singleShot(0, usable)
app.exec()
"""

CHILD = """
import json, os, sys, time
t0 = float(os.environ["PPDP_T0"])
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
app = QApplication(sys.argv[:1])
marks = {}
def window():
    from ppdp_gui.gui.main_window import MainWindow
    return next((w for w in app.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible()), None)
def usable():  # the first turn of the event loop with the window on screen
    marks["window usable"] = time.time() - t0
    marks["cpu"] = time.process_time()
    marks["modules"] = {m: m in sys.modules and not type(sys.modules[m]).__name__.startswith("_Deferred")
                        for m in %(heavy)r}
    poll()
def poll():
    w = window()
    if "--sample" in sys.argv and (w is None or w.session.dataset is None) and time.time() - t0 < 120:
        QTimer.singleShot(5, poll)
        return
    if "--sample" in sys.argv:
        marks["sample loaded"] = time.time() - t0
    print("MARKS " + json.dumps(marks), flush=True)
    app.quit()
QTimer.singleShot(0, usable)
from ppdp_gui.gui.app import main
main(sys.argv)
"""


def import_times(repeats: int, deferred: bool) -> dict[str, list[float]]:
    """Cumulative seconds per module of interest, one list per module (absent: not imported)."""
    out: dict[str, list[float]] = {}
    code = ("from ppdp_gui.gui import lazy_pandas; lazy_pandas.install(); " if deferred else "") + \
        "import ppdp_gui.gui.main_window"
    for _ in range(repeats):
        run = subprocess.run([sys.executable, "-X", "importtime", "-c", code],
                             capture_output=True, text=True, env=_env(), check=True)
        for line in run.stderr.splitlines():
            parts = [p.strip() for p in line.split("|")]
            if len(parts) == 3 and parts[2] in HEAVY + ["ppdp_gui.gui.main_window"]:
                out.setdefault(parts[2], []).append(int(parts[1]) / 1e6)
    return out


def _env(**extra) -> dict[str, str]:
    env = dict(os.environ, QT_QPA_PLATFORM=os.environ.get("QT_QPA_PLATFORM", "offscreen"), **extra)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + [p for p in [env.get("PYTHONPATH")] if p])
    return env


def window_times(repeats: int, sample: bool, folder: Path, bare: bool = False) -> list[dict]:
    runs = []
    for i in range(repeats):
        code = BARE if bare else CHILD % {"heavy": HEAVY}
        args = [sys.executable, "-c", code] + (["--sample"] if sample else [])
        env = _env(PPDP_LEDGER=str(folder / "ledger.sqlite"), XDG_CONFIG_HOME=str(folder / f"config{i}"),
                   PPDP_T0=repr(time.time()))
        run = subprocess.run(args, capture_output=True, text=True, env=env, timeout=300)
        line = next((x for x in run.stdout.splitlines() if x.startswith("MARKS ")), None)
        if line is None:
            raise SystemExit(f"the child did not report:\n{run.stderr[-3000:]}")
        runs.append(json.loads(line[6:]))
    return runs


def bundle_times(bundle: Path, repeats: int, folder: Path) -> list[dict]:
    runs = []
    for i in range(repeats):
        env = _env(PPDP_LEDGER=str(folder / "b.sqlite"), XDG_CONFIG_HOME=str(folder / f"bconfig{i}"),
                   PPDP_T0=repr(time.time()))
        run = subprocess.run([str(bundle / "ppdp_gui"), "--self-test", str(folder / f"bundle{i}")],
                             capture_output=True, text=True, env=env, timeout=600)
        marks = {}
        for line in run.stdout.splitlines():
            if "] window shown" in line:
                marks["window usable"] = float(line.split("]")[0].strip("[ s"))
            elif "] sample loaded" in line:
                marks["sample loaded"] = float(line.split("]")[0].strip("[ s"))
        if run.returncode != 0 or len(marks) != 2:
            raise SystemExit(f"the bundle's self-test failed:\n{run.stdout}\n{run.stderr[-2000:]}")
        runs.append(marks)
    return runs


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--bundle", type=Path, help="a built dist/ppdp_gui folder to time as well")
    args = ap.parse_args(argv)
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load average "
          f"{os.getloadavg()[0]:.2f}; medians of {args.repeats} fresh processes; goal ≤ {GOAL_S:.1f} s to a "
          "usable window")
    plain, deferred = import_times(args.repeats, False), import_times(args.repeats, True)
    print("\n-X importtime, `import ppdp_gui.gui.main_window` (cumulative s)   plain   as ppdp-gui (pandas deferred)")
    for name in ["ppdp_gui.gui.main_window"] + HEAVY:
        cells = [f"{statistics.median(t[name]):6.3f}" if t.get(name) else "   not imported" for t in (plain, deferred)]
        print(f"  {name:<28} {cells[0]:>15}   {cells[1]:>15}")
    with tempfile.TemporaryDirectory(prefix="ppdp_start_") as tmp:
        folder = Path(tmp)
        qt = window_times(args.repeats, False, folder, bare=True)
        bare = window_times(args.repeats, False, folder)
        loaded = window_times(args.repeats, True, folder)
        usable = statistics.median(r["window usable"] for r in bare)
        print("\ntime from process start (s):                 median   min    goal")
        print(f"  window usable (ppdp-gui)                  {usable:6.2f} {min(r['window usable'] for r in bare):6.2f}"
              f"   ≤ {GOAL_S:.1f}  {'met' if usable <= GOAL_S else 'not met'}")
        print(f"  bare Qt window usable                     {statistics.median(r['window usable'] for r in qt):6.2f}"
              f" {min(r['window usable'] for r in qt):6.2f}")
        ours, base = statistics.median(r["cpu"] for r in bare), statistics.median(r["cpu"] for r in qt)
        print("\nCPU until the window is usable (s):          median   min    goal")
        print(f"  ppdp-gui                                  {ours:6.2f} {min(r['cpu'] for r in bare):6.2f}")
        print(f"  bare Qt (PySide6, an empty QMainWindow)   {base:6.2f} {min(r['cpu'] for r in qt):6.2f}")
        print(f"  ours beyond bare Qt                       {ours - base:6.2f} "
              f"{min(r['cpu'] for r in bare) - min(r['cpu'] for r in qt):6.2f}   ≤ {GOAL_OWN_CPU_S:.1f}  "
              f"{'met' if ours - base <= GOAL_OWN_CPU_S else 'not met'}")
        print(f"  window usable (ppdp-gui --sample)         "
              f"{statistics.median(r['window usable'] for r in loaded):6.2f}"
              f" {min(r['window usable'] for r in loaded):6.2f}")
        print(f"  Adult sample loaded (ppdp-gui --sample)   "
              f"{statistics.median(r['sample loaded'] for r in loaded):6.2f}"
              f" {min(r['sample loaded'] for r in loaded):6.2f}")
        mods = bare[-1]["modules"]
        print("  imported when the window became usable: " + ", ".join(m for m in HEAVY if mods.get(m)))
        print("  not yet imported: " + (", ".join(m for m in HEAVY if not mods.get(m)) or "none"))
        if args.bundle:
            runs = bundle_times(args.bundle, args.repeats, folder)
            print(f"  bundle: window usable                     "
                  f"{statistics.median(r['window usable'] for r in runs):6.2f}"
                  f" {min(r['window usable'] for r in runs):6.2f}")
            print(f"  bundle: Adult sample loaded               "
                  f"{statistics.median(r['sample loaded'] for r in runs):6.2f}"
                  f" {min(r['sample loaded'] for r in runs):6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
