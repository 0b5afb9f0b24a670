"""The generators the window runs in its worker: loading a recipe, a charged release, a sweep, the self-check.

Plain Python (no Qt): they run in the worker process (workers/child.py) and can be tested and benchmarked
without a window. They only call the engine's publish path (load → plan → run_release), exactly as `ppdp` does;
nothing here knows a mechanism by name. `mechanism` is a registry name or a Mechanism class (the window passes
the class, so the child needs no registry look-up).
"""

from __future__ import annotations

import os
from typing import Any, Iterator

from ppdp_gui.engine.data.schema import Dataset
from ppdp_gui.engine.errors import ParameterError
from ppdp_gui.engine.mechanisms.base import Progress


def release_job(mechanism, data: Dataset, params: dict, ledger, allow_data_domains: bool = False,
                separate_dataset: bool = False, seed: int | None = None) -> Iterator[Any]:
    """plan (validated once) then run_release, which reserves ε in the ledger before computing; yields Progress
    and finally the engine's Published. `ledger` is a Ledger or the path of one (the worker process opens its
    own connection to the same file); a DP release without a ledger is refused. `seed`: tests only (the window
    passes PPDP_TEST_SEED read in its own process, since a worker may have started before it was set)."""
    from ppdp_gui.engine.pipeline import plan, run_release
    if isinstance(ledger, (str, os.PathLike)):
        from ppdp_gui.engine.privacy.ledger import Ledger
        ledger = Ledger(ledger)
    planned = plan(data, mechanism, params, ledger=ledger, allow_data_domains=allow_data_domains,
                   separate_dataset=separate_dataset)
    if planned.is_dp and ledger is None:
        from ppdp_gui.engine.errors import BudgetError
        raise BudgetError("The budget ledger cannot be opened, so this differentially private release could not "
                          "be recorded; it is refused.")
    if planned.errors:
        raise ParameterError(f"{planned.name}: " + " ".join(p.message for p in planned.errors))
    if planned.over_budget:
        from ppdp_gui.engine.errors import BudgetError
        raise BudgetError(planned.budget_text())
    yield from run_release(planned, ledger=ledger, seed=seed)


def load_job(recipe) -> Iterator[Any]:
    """Read a recipe's table (and attach its hierarchies, taxonomies and domains) with the engine's loader,
    then count distinct values per column for the Data step; yields (Loaded, {column: distinct})."""
    from pathlib import Path

    from ppdp_gui.engine.pipeline.load import load
    yield Progress(0.0, f"Reading {Path(recipe.source).name}…")
    loaded = load(recipe)
    yield Progress(0.8, "Counting distinct values…")
    frame = loaded.dataset.frame
    distinct = {c: int(frame[c].nunique(dropna=True)) for c in frame.columns}
    yield Progress(1.0, "Loaded")
    yield loaded, distinct


def sweep_job(mechanism, data: Dataset, params: dict, grid: dict[str, list], repeats: int,
              seed: int | None = None) -> Iterator[Any]:
    """The custodian's own simulation: never touches the ledger."""
    from ppdp_gui.engine.pipeline.plan import resolve_mechanism
    from ppdp_gui.engine.pipeline.sweep import run_sweep
    yield from run_sweep(resolve_mechanism(mechanism), data, params, grid, repeats=repeats, seed=seed)


def verify_job(mechanism: str, size: str = "quick", seed: int = 0) -> Iterator[Any]:
    """The statistical self-check of a DP mechanism on its built-in audit tables (engine.verify): yields Progress,
    then the Verdict. Touches neither the custodian's data nor the ledger."""
    from ppdp_gui.engine.verify import verify
    yield from verify(mechanism, size=size, seed=seed)
