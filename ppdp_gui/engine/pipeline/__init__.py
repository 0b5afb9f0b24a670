"""The one publish path (load → plan → run → export) and the uncharged simulation sweep.

The window and the `ppdp` command call only these, so they make the same release of the same recipe.
The names below are imported on first use (PEP 562): the window imports a constant of `plan` or `candidates`
for its first paint, which must not pull in the reader, the writer and their libraries (benchmarks/bench_start.py).
"""

import sys
import types
from typing import TYPE_CHECKING

from ppdp_gui.engine.lazy_names import lazy_getattr

if TYPE_CHECKING:  # seen by static analysis (type checkers, the bundler's import graph); not run
    from ppdp_gui.engine.pipeline import export, load, plan, published, release, sweep  # noqa: F401

_WHERE = {
    "default_note_path": "export", "export": "export",
    "load": "load",
    "Plan": "plan", "plan": "plan", "resolve_mechanism": "plan",
    "Published": "published", "custodian_record": "published", "release_note": "published",
    "run_release": "release",
    "SweepResult": "sweep", "run_sweep": "sweep",
}
__all__ = list(_WHERE)

__getattr__ = lazy_getattr(__name__, _WHERE, globals())


class _Package(types.ModuleType):
    """Three functions share their submodule's name (`export`, `load`, `plan`). Importing a submodule sets the
    package's attribute of that name to the submodule; here it gets the function instead, so that
    `from ppdp_gui.engine.pipeline import export` is the function whichever was imported first (as it was when
    this package imported everything at once)."""

    def __setattr__(self, name: str, value) -> None:
        if name in ("export", "load", "plan") and isinstance(value, types.ModuleType):
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
