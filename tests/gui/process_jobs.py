"""Generators for the worker-process tests. Qt-free on purpose: the child imports this module to find them,
and the tests check that the child never loads Qt."""

from __future__ import annotations

import time

from ppdp_gui.engine.errors import MechanismError, ParameterError
from ppdp_gui.engine.mechanisms.base import Mechanism, ParamSpec, PrivacyCost, Progress, Release


def counting_job(n: int, fail_at: int | None = None):
    """Module-level (picklable by name) generator for the process tests."""
    import sys
    for i in range(n):
        if fail_at is not None and i == fail_at:
            raise ParameterError("k: 1 is below the minimum 2")
        time.sleep(0.01)
        yield Progress((i + 1) / n, f"step {i}")
    yield {"n": n, "qt_loaded": sorted(m for m in ("PySide6", "shiboken6", "pyqtgraph") if m in sys.modules)}


def big_table_job(rows: int):
    import numpy as np
    import pandas as pd

    from ppdp_gui.engine.mechanisms.base import PrivacyCost, Release
    frame = pd.DataFrame({"a": np.arange(rows), "b": pd.array(np.where(np.arange(rows) % 2, "x", "y"), dtype="str")})
    yield Release("test", frame, PrivacyCost(), {}, apply_to=lambda f: f)  # a closure cannot travel: dropped


class Slow(Mechanism):
    """Test-only mechanism: counts steps until cancelled, or fails on request."""
    name = "Slow test"
    guarantee = "none (test)"
    params = (ParamSpec("fail", "Fail", "bool", default=False),)

    def cost(self, params):
        return PrivacyCost(note="test only")

    def _run(self, data, *, rng, fail):
        for i in range(10_000):
            time.sleep(0.005)
            if fail and i == 3:
                raise MechanismError("no partition satisfies k = 10 000 on 12 rows")
            yield Progress(i / 10_000, f"step {i}")
        yield Release(self.name, data.frame, self.privacy_cost(), {})


def slow_export_job(*args):
    """The window's export job, made to pause after staging each table (its temporary file is on disk): a
    cancel then lands where a slow XLSX write would be."""
    import importlib

    from ppdp_gui.gui.workers.tasks import export_job
    export_module = importlib.import_module("ppdp_gui.engine.pipeline.export")  # the package re-exports export()
    real = export_module.stage_table

    def slow(*a, **kw):
        staged = real(*a, **kw)
        time.sleep(60)
        return staged
    export_module.stage_table = slow
    yield from export_job(*args)
