"""numpy, pyarrow and pandas imported when first used, not when the window's modules are imported.

Only the window process installs this (gui/app.py, before importing the main window); the engine, the CLI, the
worker processes and the tests import them as usual. `install()` puts a stand-in module under each name: the
window's modules bind `np`, `pa` and `pd` to them at import time, and their functions only touch `np.<name>` …
once a table is opened. The first such access imports the real module (under a lock, so two threads wait for one
import; numpy before pyarrow before pandas, so that pandas and pyarrow find the real numpy) and every later access
is forwarded to it; from then on `sys.modules[name]` is the real module, so `from numpy import X` and
`import pandas.x` elsewhere behave exactly as without the stand-in, and every module-level name still bound to
the stand-in is rebound to the real module (no forwarding cost in hot code afterwards).
The main window imports them in the background once it is on screen (MainWindow.after_start), so the first
table opened does not wait either. benchmarks/bench_start.py measures the effect (the three libraries are about
0.15 s of CPU that the first paint does not need).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
import types

_LOCK = threading.RLock()
_FORWARDED_DUNDERS = {"__path__", "__version__", "__all__"}
#: deferred in this order: each one's real import first imports the real ones before it
NAMES = ("numpy", "pyarrow", "pandas")
#: submodules the engine imports at module level (`import pyarrow.compute as pc`): a stand-in each, an attribute
#: of its package's stand-in, so that the import statement does not import the package (one left out here is
#: still correct: importing it imports the package then)
SUBMODULES = ("pyarrow.compute", "pyarrow.csv")


class _Deferred(types.ModuleType):
    """Stands in for a library until an attribute is needed; then imports and forwards to the real module."""

    def __getattr__(self, name: str):  # only called for names the stand-in itself does not have
        if name.startswith("__") and name.endswith("__") and name not in _FORWARDED_DUNDERS:
            # probes such as inspect's `__wrapped__` or `__file__` (PySide6 runs them on every module imported
            # after it) must not import the library
            raise AttributeError(name)
        return getattr(_real(self.__spec__.name), name)

    def __dir__(self):
        return dir(_real(self.__spec__.name))


#: one class per library, so that a stand-in says which one it is (`_DeferredPandas`)
_CLASSES = {name: type(f"_Deferred{name.split('.')[-1].capitalize()}", (_Deferred,), {})
            for name in NAMES + SUBMODULES}
_REAL: dict[str, types.ModuleType] = {}
_MODULE_DICT = types.ModuleType.__dict__["__dict__"]


def _real(name: str) -> types.ModuleType:
    module = _REAL.get(name)
    if module is None:
        with _LOCK:
            top = name.split(".")[0]
            for earlier in NAMES[: NAMES.index(top) + 1]:
                if earlier not in _REAL:
                    _import(earlier)
            module = _REAL[name]
    return module


def _import(top: str) -> None:
    """Import the real `top` and its deferred submodules, then rebind every name bound to their stand-ins."""
    family = [n for n in (top,) + SUBMODULES if n == top or n.startswith(top + ".")]
    stand_ins = {n: sys.modules.pop(n) for n in family if isinstance(sys.modules.get(n), _Deferred)}
    for name in family:
        _REAL[name] = importlib.import_module(name)
    _rebind({id(s): _REAL[n] for n, s in stand_ins.items()})


def _rebind(real_of: dict[int, types.ModuleType]) -> None:
    """Every module-level name bound to a stand-in now names the real module (one pass over ~1,000 modules)."""
    if not real_of:
        return
    for module in list(sys.modules.values()):
        if not isinstance(module, types.ModuleType):
            continue
        space = _MODULE_DICT.__get__(module)  # not `module.__dict__`: that would load a lazily loaded module
        for key, value in list(space.items()):
            if isinstance(value, _Deferred) and id(value) in real_of:
                space[key] = real_of[id(value)]


def install() -> bool:
    """Put the stand-ins in place for the libraries not imported yet (True if pandas' was installed)."""
    with _LOCK:
        done = False
        for name in NAMES:
            if name in sys.modules:
                continue
            spec = importlib.util.find_spec(name)  # finds the package without running it
            if spec is None:
                continue
            stand_in = _CLASSES[name](name, f"{name}, imported on first use (ppdp_gui.gui.lazy_pandas)")
            # `import x` looks at __spec__ (is it still initialising?): the real, finished-looking spec answers
            # without importing; __path__ is left out, so importing a submodule imports the library itself first
            stand_in.__spec__, stand_in.__loader__, stand_in.__package__ = spec, spec.loader, name
            sys.modules[name] = stand_in
            done = done or name == "pandas"
            for sub in SUBMODULES:
                if sub.startswith(name + ".") and sub not in sys.modules:
                    part = _CLASSES[sub](sub, f"{sub}, imported on first use (ppdp_gui.gui.lazy_pandas)")
                    # the spec of a submodule needs its package: a plain one naming it, no import
                    part.__spec__ = importlib.util.spec_from_loader(sub, loader=None)
                    part.__package__ = name
                    sys.modules[sub] = part
                    setattr(stand_in, sub.rsplit(".", 1)[1], part)  # `import pyarrow.compute as pc` finds it
        return done


def load() -> types.ModuleType:
    """The real pandas (and numpy and pyarrow), imported now if they were not yet."""
    return _real("pandas")


def deferred(name: str = "pandas") -> bool:
    """Whether the library is still only the stand-in."""
    return isinstance(sys.modules.get(name), _Deferred)
