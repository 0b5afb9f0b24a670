"""The window's first paint imports none of the heavy libraries (issue 32, item 5): started as `ppdp-gui` starts
it (gui/lazy_pandas.py's stand-ins installed first), the main window is built and painted in a fresh process,
and then numpy, pyarrow and pandas are still only stand-ins and the other heavy libraries are not imported at
all. benchmarks/bench_start.py measures the CPU this saves."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
HEAVY = ["scipy", "sklearn", "matplotlib", "reportlab", "fpdf", "pyqtgraph", "duckdb", "numba", "pyspark",
         "sqlglot", "openpyxl", "python_calamine", "PIL"]

CHILD = textwrap.dedent("""
    import json, sys
    from ppdp_gui.gui import lazy_pandas
    lazy_pandas.install()
    from PySide6.QtWidgets import QApplication
    app = QApplication(sys.argv[:1])
    from ppdp_gui.gui.main_window import MainWindow
    window = MainWindow()
    window.resize(1200, 800)
    window.show()
    window.grab()  # paints every visible widget now, before the event loop's first turn (which starts the
                   # background imports of MainWindow.after_start)
    print(json.dumps({"deferred": {n: lazy_pandas.deferred(n) for n in lazy_pandas.NAMES},
                      "imported": sorted(m for m in %(heavy)r if m in sys.modules)}))
""")


def test_first_paint_imports_no_heavy_library(tmp_path):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PPDP_LEDGER=str(tmp_path / "ledger.sqlite"),
               XDG_CONFIG_HOME=str(tmp_path / "config"))
    env["PYTHONPATH"] = os.pathsep.join([str(REPO)] + [p for p in [env.get("PYTHONPATH")] if p])
    run = subprocess.run([sys.executable, "-c", CHILD % {"heavy": HEAVY}], capture_output=True, text=True,
                         env=env, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    seen = json.loads(run.stdout.strip().splitlines()[-1])
    assert seen["deferred"] == {"numpy": True, "pyarrow": True, "pandas": True}, seen
    assert seen["imported"] == [], seen


def test_deferred_library_is_the_real_one_once_used():
    """After the first use every module-level name bound to a stand-in names the real module (no forwarding
    left in hot code), and `import pyarrow.compute as pc` made before it gives the real submodule after."""
    code = textwrap.dedent("""
        from ppdp_gui.gui import lazy_pandas
        lazy_pandas.install()
        import sys, types
        import numpy as np, pyarrow.compute as pc
        mod = types.ModuleType("user"); mod.np, mod.pc = np, pc; sys.modules["user"] = mod
        assert lazy_pandas.deferred("numpy") and lazy_pandas.deferred("pyarrow")
        assert int(np.arange(3).sum()) == 3
        import numpy
        assert not lazy_pandas.deferred("numpy") and mod.np is numpy and type(numpy).__name__ == "module"
        assert pc.sum is not None and lazy_pandas.deferred("pandas")
        import pyarrow.compute
        assert mod.pc is pyarrow.compute and type(pyarrow.compute).__name__ == "module"
        print("ok")
    """)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO)] + [p for p in [env.get("PYTHONPATH")] if p])
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr[-3000:]
