"""One real release: validate, price, reserve the budget, compute, record — in that order, as a generator.

The order is the privacy argument: nothing touches the data's noise before the ledger has durably reserved ε
(a BudgetError stops everything first), and a reservation is never refunded — not when the run fails, not when
the user cancels (closing the generator), because a partial run may already have drawn on the data.
k-anonymity releases must pass the independent recount in `engine.checks.anonymity` or they raise CheckError.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Iterator

from ppdp_gui.engine.data.schema import Dataset
from ppdp_gui.engine.errors import CheckError, MechanismError, ParameterError
from ppdp_gui.engine.mechanisms import registry
from ppdp_gui.engine.mechanisms.base import Mechanism, Progress, Release, relay_progress
from ppdp_gui.engine.noise import NoiseSource
from ppdp_gui.engine.privacy.fingerprint import content_hash
from ppdp_gui.engine.persistence.report import jsonable

RUN_SPAN = (0.05, 0.95)  # share of the progress bar given to the mechanism itself


def resolve_mechanism(mechanism: str | Mechanism | type) -> Mechanism:
    """A mechanism instance from a registry name, a class or an instance."""
    if isinstance(mechanism, str):
        return registry.create(mechanism)
    if isinstance(mechanism, type):
        return mechanism()
    return mechanism


def validate_or_raise(mech: Mechanism, data: Dataset, params: dict) -> list[str]:
    """The mechanism's checks; errors become one ParameterError, warnings are returned."""
    problems = mech.validate(data, **params)
    errors = [p.message for p in problems if p.level == "error"]
    if errors:
        raise ParameterError(f"{mech.name}: " + "; ".join(errors))
    return [p.message for p in problems if p.level == "warning"]


def _parts_to_check(release: Release) -> list[tuple[str, object, dict]]:
    """(name, table, its k/l metadata) for every released table that claims k-anonymity.

    A release either claims it for `table` (metadata "k" + "quasi_identifiers") or lists several parts in
    metadata["fragments"], each naming its table ("where": "table" for the main one, else an extra table)."""
    meta = release.metadata
    parts = []
    if "k" in meta and "quasi_identifiers" in meta:
        parts.append(("table", release.table, meta))
    for frag in meta.get("fragments", ()) or ():
        table = release.table if frag.get("where") == "table" else release.extra_tables[frag["table"]]
        parts.append((frag["table"], table, frag))
    return parts


def check_anonymity(release: Release) -> dict | None:
    """Recount k (and l) on every released table with the independent checker; CheckError if any fails."""
    parts = _parts_to_check(release)
    if not parts:
        return None
    from ppdp_gui.engine.checks.anonymity import check_release
    summaries = []
    for name, table, meta in parts:
        result = check_release(table, list(meta["quasi_identifiers"]), int(meta["k"]),
                               sensitive=meta.get("sensitive"), l=meta.get("l"),
                               diversity=meta.get("diversity") or "distinct")
        if not result.ok:
            raise CheckError(f"{release.mechanism}: the independent check of {name} failed: {result.message}")
        summaries.append({"table": name, "ok": True, "k": int(meta["k"]), "l": meta.get("l"),
                          "min_class": int(result.min_class),
                          "min_l": None if result.min_l == float("inf") else float(result.min_l),
                          "message": result.message})
    summary = dict(summaries[0])
    summary["ok"] = True
    summary["min_class"] = min(s["min_class"] for s in summaries)
    if len(summaries) > 1:
        summary["parts"] = summaries
        summary["message"] = f"{len(summaries)} tables recounted: " + "; ".join(
            f"{s['table']}: {s['message']}" for s in summaries)
    return summary


def run_release(mechanism: str | Mechanism, data: Dataset, params: dict[str, Any], *, ledger=None,
                rng: NoiseSource | None = None) -> Iterator[Progress | Release]:
    """Yield Progress, then the Release (metadata gains "ledger_entry", "output_hash", "check", "warnings").

    Without a ledger nothing is charged (for tests and previews that never leave the machine); the GUI and CLI
    always pass one. `rng` is for tests only: a real release uses a fresh OS-seeded NoiseSource.
    """
    mech = resolve_mechanism(mechanism)
    yield Progress(0.0, "checking the parameters")
    warnings = validate_or_raise(mech, data, params)
    resolved = mech.resolve_params(**params)
    cost = mech.privacy_cost(**resolved)
    entry = None
    if cost.is_dp and ledger is not None:
        yield Progress(0.02, f"reserving {cost.describe()} in the privacy ledger")
        fingerprint = ledger.fingerprint(data.frame)
        entry = ledger.reserve(fingerprint, mech.name, jsonable(resolved), cost.epsilon, cost.delta,
                               label=data.source.path or "")
    rng = rng if rng is not None else NoiseSource()
    lo, hi = RUN_SPAN
    # on cancellation the mechanism stops too; the budget stays spent
    release = yield from relay_progress(mech.run(data, rng=rng, **resolved), lo, hi)
    if release is None:
        raise MechanismError(f"{mech.name} finished without a release")
    yield Progress(hi, "checking the release")
    check = check_anonymity(release)
    digest = content_hash(release.table)
    if entry is not None:
        ledger.complete(entry, digest)
    metadata = dict(release.metadata)
    metadata.update({"ledger_entry": entry, "output_hash": digest, "check": check,
                     "warnings": list(dict.fromkeys(list(metadata.get("warnings", [])) + warnings))})
    yield Progress(1.0, "done")
    yield replace(release, metadata=metadata)
