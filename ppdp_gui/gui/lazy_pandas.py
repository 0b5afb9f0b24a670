"""pandas imported when first used, not when the window's modules are imported (the window shows ~0.4 s sooner).

Only the window process installs this (gui/app.py, before importing the main window); the engine, the CLI, the
worker processes and the tests import pandas as usual. `install()` puts a stand-in module under the name
"pandas": the window's modules bind `pd` to it at import time, and their functions only touch `pd.<name>` once a
table is opened. The first such access imports the real pandas (under a lock, so two threads wait for one import)
and every later access is forwarded to it; from then on `sys.modules["pandas"]` is the real module, so
`from pandas import X` and `import pandas.x` elsewhere behave exactly as without the stand-in.
The main window imports pandas in the background once it is on screen (MainWindow.after_start), so the first
table opened does not wait for it either. benchmarks/bench_start.py measures the effect.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
import types

_LOCK = threading.RLock()
_FORWARDED_DUNDERS = {"__path__", "__version__", "__all__"}


class _DeferredPandas(types.ModuleType):
    """Stands in for pandas until an attribute is needed; then imports and forwards to the real module."""

    def __getattr__(self, name: str):  # only called for names the stand-in itself does not have
        if name.startswith("__") and name.endswith("__") and name not in _FORWARDED_DUNDERS:
            # probes such as inspect's `__wrapped__` or `__file__` (PySide6 runs them on every module imported
            # after it) must not import pandas
            raise AttributeError(name)
        return getattr(_real(), name)

    def __dir__(self):
        return dir(_real())


_REAL: types.ModuleType | None = None


def _real() -> types.ModuleType:
    global _REAL
    if _REAL is None:
        with _LOCK:
            if _REAL is None:
                if isinstance(sys.modules.get("pandas"), _DeferredPandas):
                    del sys.modules["pandas"]
                _REAL = importlib.import_module("pandas")
    return _REAL


def install() -> bool:
    """Put the stand-in in place if pandas is not imported yet (True if it was installed)."""
    with _LOCK:
        if "pandas" in sys.modules:
            return False
        spec = importlib.util.find_spec("pandas")  # finds the package without running it
        if spec is None:
            return False
        stand_in = _DeferredPandas("pandas", "pandas, imported on first use (ppdp_gui.gui.lazy_pandas)")
        # `import pandas` looks at __spec__ (is it still initialising?): the real, finished-looking spec answers
        # without importing; __path__ is left out, so importing a submodule imports pandas itself first
        stand_in.__spec__, stand_in.__loader__, stand_in.__package__ = spec, spec.loader, "pandas"
        sys.modules["pandas"] = stand_in
        return True


def load() -> types.ModuleType:
    """The real pandas, imported now if it was not yet."""
    return _real()


def deferred() -> bool:
    """Whether pandas is still only the stand-in."""
    return isinstance(sys.modules.get("pandas"), _DeferredPandas)
