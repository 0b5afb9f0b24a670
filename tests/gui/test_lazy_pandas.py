"""`ppdp-gui` shows its window before pandas is imported (gui/lazy_pandas.py): the stand-in must never import
pandas for a probe, must import it exactly once when used (also from several threads at once), and the whole
window — load, release in the worker process, export — must work started that way (the bundle's self-test)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

CHILD = textwrap.dedent("""
    import inspect, sys, threading
    from ppdp_gui.gui import lazy_pandas
    assert lazy_pandas.install()
    import pandas as pd
    assert lazy_pandas.deferred() and type(pd).__name__ == "_DeferredPandas"
    # probes PySide6 and inspect run on every module imported: none of them may import pandas
    assert not hasattr(pd, "__wrapped__") and not hasattr(pd, "__file__")
    assert pd.__spec__.name == "pandas" and pd.__name__ == "pandas"
    import ppdp_gui.gui.main_window  # every module of the window, bound to the stand-in
    assert lazy_pandas.deferred(), "importing the window imported pandas"
    seen = []
    threads = [threading.Thread(target=lambda: seen.append(pd.DataFrame)) for _ in range(4)]
    for t in threads: t.start()
    for t in threads: t.join()
    real = sys.modules["pandas"]
    # the stand-in bound here is now the real module (lazy_pandas rebinds every name bound to it)
    assert not lazy_pandas.deferred() and real is pd and all(s is real.DataFrame for s in seen)
    assert pd.DataFrame({"a": [1, 2]})["a"].sum() == 3
    from pandas.api.types import is_numeric_dtype
    import pandas.core.frame
    assert is_numeric_dtype(pd.Series([1.0])) and pandas.core.frame.DataFrame is real.DataFrame
    assert not lazy_pandas.install()  # pandas is there now: nothing to do
    print("ok")
""")


def _env(**extra):
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", **extra)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO)] + [p for p in [env.get("PYTHONPATH")] if p])
    return env


def test_stand_in_defers_pandas_until_used_and_then_is_pandas():
    run = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, env=_env(), timeout=300)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr[-3000:]


def test_window_started_as_ppdp_gui_runs_the_self_test(tmp_path):
    """Through app.main, as `ppdp-gui` and the bundle start: pandas deferred, sample, release, export."""
    code = "import sys; from ppdp_gui.gui.app import main; sys.exit(main(['ppdp-gui', '--self-test', sys.argv[1]]))"
    run = subprocess.run([sys.executable, "-c", code, str(tmp_path / "out")], capture_output=True, text=True,
                         env=_env(PPDP_LEDGER=str(tmp_path / "unused.sqlite"),
                                  XDG_CONFIG_HOME=str(tmp_path / "config")), timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr[-3000:]
    assert "self-test passed" in run.stdout and "taxonomies attached to 9 columns" in run.stdout
    assert (tmp_path / "out" / "release.csv").is_file()
