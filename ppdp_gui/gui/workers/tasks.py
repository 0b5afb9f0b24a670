"""The generators the window runs in its worker: a charged release, a sweep, and the figures of a release.

Plain Python (no Qt): they run in the worker process (workers/child.py) and can be tested and benchmarked
without a window. They only compose engine calls; nothing here knows a mechanism by name. `mechanism` is a
registry name or a Mechanism class (the window passes the class, so the child needs no registry look-up).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Iterator

import numpy as np

from ppdp_gui.engine.data.schema import Dataset
from ppdp_gui.engine.errors import BudgetError, PpdpError
from ppdp_gui.engine.mechanisms import registry
from ppdp_gui.engine.mechanisms.base import Progress, Release


@dataclass
class RunOutcome:
    release: Release
    measures: dict[str, float] = field(default_factory=dict)
    risk: dict[str, float] = field(default_factory=dict)
    class_sizes: np.ndarray | None = None
    ledger_entry: Any = None
    notes: list[str] = field(default_factory=list)


def class_sizes(release: Release) -> np.ndarray | None:
    """Equivalence-class sizes of a record-level k-anonymity release (metadata names its quasi-identifiers
    and k, as the k-anonymity contract asks). Noisy-count releases have no such groups: None."""
    meta = release.metadata or {}
    qis = [q for q in meta.get("quasi_identifiers") or [] if q in release.table.columns]
    if not qis or meta.get("k") is None or release.table.empty:
        return None
    return release.table.groupby(qis, dropna=False, sort=False, observed=True).size().to_numpy()


def risk_figures(sizes: np.ndarray | None) -> dict[str, float]:
    if sizes is None or sizes.size == 0:
        return {}
    from ppdp_gui.engine.metrics.risk import prosecutor_risk, records_at_risk
    highest, average = prosecutor_risk(sizes)
    return {"smallest group (rows)": float(sizes.min()), "groups": float(sizes.size),
            "highest re-identification risk %": 100 * highest, "average re-identification risk %": 100 * average,
            "share of records with risk above 10 %": 100 * records_at_risk(sizes, 0.1)}


def release_figures(release: Release, data: Dataset, mechanism=None) -> RunOutcome:
    """Utility figures from the mechanism itself and risk figures from the released table."""
    mech = mechanism or registry.create(release.mechanism)
    out = RunOutcome(release)
    try:
        out.measures = {str(k): float(v) for k, v in (mech.measures(release, data, None) or {}).items()}
    except PpdpError as exc:
        out.notes.append(f"Utility figures not available: {exc}")
    out.class_sizes = class_sizes(release)
    out.risk = risk_figures(out.class_sizes)
    return out


def latest_entry(ledger, data: Dataset, release: Release):
    """The ledger entry of a DP release just made (the pipeline reserved it), or None for syntactic ones."""
    if ledger is None or not release.cost.is_dp:
        return None
    entry = (release.metadata or {}).get("ledger_entry")
    if entry is not None and not isinstance(entry, (int, str)):
        return entry
    if entry is not None and hasattr(ledger, "entry"):
        found = ledger.entry(int(entry))
        if found is not None:
            return found
    entries = ledger.entries(ledger.fingerprint(data.frame))
    return entries[-1] if entries else None


def release_job(mechanism, data: Dataset, params: dict, ledger) -> Iterator[Progress | RunOutcome]:
    """run_release (which reserves ε in the ledger before computing), then the release's figures.

    `ledger` is a Ledger, or the path of one (the worker process opens its own connection to the same file)."""
    from ppdp_gui.engine.pipeline.release import resolve_mechanism, run_release
    mech = resolve_mechanism(mechanism)
    name = mech.name
    if isinstance(ledger, (str, os.PathLike)):
        from ppdp_gui.engine.privacy.ledger import Ledger
        ledger = Ledger(ledger)
    if ledger is None and mech.privacy_cost(**mech.resolve_params(**params)).is_dp:
        raise BudgetError("The budget ledger cannot be opened, so this differentially private release could not "
                          "be recorded; it is refused.")
    release = None
    for item in run_release(mech, data, params, ledger=ledger):
        if isinstance(item, Release):
            release = item
        else:
            yield Progress(0.9 * item.fraction, item.message)
    if release is None:
        raise PpdpError(f"{name} finished without producing a release")
    yield Progress(0.92, "Computing utility and risk figures…")
    outcome = release_figures(release, data, mech)
    outcome.ledger_entry = latest_entry(ledger, data, release)
    yield Progress(1.0, "Done")
    yield outcome


def sweep_job(mechanism, data: Dataset, params: dict, grid: dict[str, list], repeats: int,
              seed: int | None = None) -> Iterator[Any]:
    """The custodian's own simulation: never touches the ledger."""
    from ppdp_gui.engine.pipeline.release import resolve_mechanism
    from ppdp_gui.engine.pipeline.sweep import run_sweep
    yield from run_sweep(resolve_mechanism(mechanism), data, params, grid, repeats=repeats, seed=seed)
