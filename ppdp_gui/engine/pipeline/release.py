"""Step 3 of the publish path: one real release — reserve, compute, recount, record — as a generator.

The order is the privacy argument: nothing touches the data's noise before the ledger has durably reserved ε
(a BudgetError stops everything first), and a reservation is never refunded — not when the run fails, not when
the user cancels (closing the generator), because a partial run may already have drawn on the data. Every claim
the release makes is recounted by the independent checker on the tables in memory (CheckError stops it); the
export recounts them again on the bytes written. The result is one `Published`; when a ledger is used, its
custodian record is written at once into the ledger's folder (the ε is spent whether or not it is exported).

Once ε is reserved, nothing that only serves the custodian may stop the run: utility and risk figures that fail
(scikit-learn on a degenerate sample, say) are recorded as failed in the custodian record's warnings, never
raised. The ledger entry gets the release's hash only when `export` has put a file in place; until then it says
"no output" (an entry without a hash).

A release is never seeded, except when the environment variable PPDP_TEST_SEED is set (tests only): then the
noise, the release id and the time stamp are fixed, and the note says "seeded for a test".
"""

from __future__ import annotations

import os
from datetime import datetime, timezone
from typing import Iterator

import numpy as np

from ppdp_gui.engine.checks.claims import check_claims, failures, suppressed_rows
from ppdp_gui.engine.checks.anonymity import distinct_pairs
from ppdp_gui.engine.checks.persons import released_person_ids
from ppdp_gui.engine.claims import KAnonymity, with_caveats
from ppdp_gui.engine.data.schema import Role
from ppdp_gui.engine.errors import BudgetError, CheckError, MechanismError, ParameterError, PpdpError
from ppdp_gui.engine.mechanisms.base import Progress, Release, relay_progress
from ppdp_gui.engine.metrics.risk import group_figures
from ppdp_gui.engine.noise import NoiseSource
from ppdp_gui.engine.persistence.jsonable import jsonable
from ppdp_gui.engine.pipeline.plan import Plan
from ppdp_gui.engine.pipeline.published import Published
from ppdp_gui.engine.privacy.fingerprint import content_hash

RUN_SPAN = (0.05, 0.9)  # share of the progress bar given to the mechanism itself
TEST_SEED_VARIABLE = "PPDP_TEST_SEED"
TEST_TIME = "2000-01-01T00:00:00+00:00"


def test_seed() -> int | None:
    text = os.environ.get(TEST_SEED_VARIABLE, "").strip()
    if not text:
        return None
    try:
        return int(text)
    except ValueError:
        raise ParameterError(f"{TEST_SEED_VARIABLE} must be a whole number, got {text!r}") from None


NO_LEDGER = ("The budget ledger cannot be opened, so this differentially private release could not be recorded; "
             "it is refused.")
DOMAIN_OPTIONS = (" In ppdp: --domain COL=LOW:HIGH[:int] for a number, --domain COL=A,B,C for a list of values "
                  "(repeat for each column), or --allow-data-domains.")


def no_ledger_message(reason: object = None) -> str:
    """Why a differentially private release cannot be made without its ledger (with the reason it failed to
    open, when known): the words of the guard and of the window's plan alike."""
    return NO_LEDGER if reason is None else f"{NO_LEDGER[:-1]}: {reason}"


def errors_text(plan: Plan) -> str:
    """A plan's errors as one refusal: every problem named, and the command line's options for a domain."""
    text = f"{plan.name}: " + " ".join(p.message for p in plan.errors)
    if not plan.allow_data_domains and any(n.status != "public" for n in plan.needs):
        text += DOMAIN_OPTIONS
    return text


def check_ready(plan: Plan, ledger, *, charged: bool = True) -> None:
    """The publish path's guards, the one place the window and `ppdp run` share (each had its own copy): a plan
    with errors (ParameterError naming each), a differentially private plan without a ledger and one over its
    table's budget (BudgetError, the plan's budget line). `charged=False`: a release made without a ledger on
    purpose (tests), refused only for its errors."""
    if plan.errors:
        raise ParameterError(errors_text(plan))
    if not charged or not plan.is_dp:
        return
    if ledger is None:
        raise BudgetError(NO_LEDGER)
    if plan.over_budget:
        raise BudgetError(plan.budget_text())


def charged_release(plan: Plan, *, ledger, seed: int | None = None) -> Iterator[Progress | Published]:
    """A real release, the window's and `ppdp run`'s alike: `check_ready` at once (a refusal is raised here, before
    anything runs), then the `run_release` generator (which reserves ε in `ledger` before anything is computed),
    yielding Progress, then one Published."""
    check_ready(plan, ledger)
    return run_release(plan, ledger=ledger, seed=seed, checked=True)


def class_sizes(release: Release, person_ids: dict | None = None) -> np.ndarray | None:
    """Group sizes of the first k-anonymity claim's table (None for releases without one); suppressed rows (a
    Suppression claim's marker in every quasi-identifier) are not a group. With `person_ids` (per table, the
    person of each released row) a group's size is its distinct persons."""
    if release.records is not None:  # a large table's rows: counted in SQL
        return release.records.group_sizes() if any(isinstance(c, KAnonymity) for c in release.claims) else None
    found = release_groups(release, person_ids)
    if found is None:
        return None
    group, ids = found
    if ids is not None:
        return np.bincount(distinct_pairs(group, ids)[0])
    return np.bincount(group)


def release_groups(release: Release, person_ids: dict | None = None) -> tuple[np.ndarray, np.ndarray | None] | None:
    """(group id of each released row, its person id or None) for the first k-anonymity claim's table, suppressed
    rows left out; None for a release without one (or a large table's rows)."""
    if release.records is not None:
        return None
    for claim in release.claims:
        if isinstance(claim, KAnonymity):
            table = release.tables().get(claim.table)
            cols = [c for c in claim.columns if table is not None and c in table.columns]
            if table is None or not cols or table.empty:
                return None
            gone = suppressed_rows(table, release.claims, claim.table)
            ids = (person_ids or {}).get(claim.table)
            if gone.any():
                table = table[~gone]
                ids = None if ids is None else ids[~gone]
            return table.groupby(cols, dropna=False, sort=False, observed=True).ngroup().to_numpy(), ids
    return None


def person_ids(data, release: Release) -> dict:
    """Per released table, the person of each released row (empty without a person column, or for a large
    table's rows, which are never in memory)."""
    person = data.person_column
    if person is None or release.records is not None:
        return {}
    unchanged = tuple(data.names_with_role(Role.SENSITIVE, Role.INSENSITIVE))  # published as they are
    return released_person_ids(data.frame[person], release.source_rows, release.tables(), data.frame, unchanged)


def _figures(plan: Plan, release: Release, notes: list[str], person_ids: dict | None = None
             ) -> tuple[dict, np.ndarray | None]:
    """Utility and risk figures for the custodian. They run after ε is reserved, so no failure of theirs may
    stop the run: any exception is a note in the custodian record ("could not be computed"), never raised."""
    out: dict[str, float] = {}
    try:
        out = {str(k): float(v) for k, v in (plan.mechanism.measures(release, plan.dataset, None) or {}).items()}
    except PpdpError as exc:
        notes.append(f"Utility figures not available: {exc}")
    except Exception as exc:  # noqa: BLE001 - after the reservation: recorded, never raised (module docstring)
        notes.append(f"Utility figures could not be computed ({type(exc).__name__}: {exc}); the release itself "
                     "is complete and checked.")
    sizes = None
    try:
        sizes = class_sizes(release, person_ids)
        big = release.records if release.records is not None and release.records.person is not None else None
        out.update(group_figures(sizes, persons=bool(person_ids) or big is not None))
        found = release_groups(release, person_ids) if person_ids else None
        if found is not None and found[1] is not None and found[0].size:  # each patient once (the dossier's)
            from ppdp_gui.engine.metrics.person_risk import unit_risk, unit_risk_figures
            out.update(unit_risk_figures(unit_risk(found[0], found[1], 0.1)))
        elif big is not None and sizes is not None and sizes.size:  # a large table's rows: the same, in SQL
            from ppdp_gui.engine.metrics.person_risk import unit_risk_figures
            out.update(unit_risk_figures(big.person_risk(0.1)))
    except Exception as exc:  # noqa: BLE001 - as above
        notes.append(f"Risk figures could not be computed ({type(exc).__name__}: {exc}); the release itself is "
                     "complete and checked.")
    return out, sizes


def run_release(plan: Plan, *, ledger=None, rng: NoiseSource | None = None, seed: int | None = None,
                write_record: bool = True, checked: bool = False) -> Iterator[Progress | Published]:
    """Yield Progress, then one Published. Without a ledger nothing is charged (for tests and previews that never
    leave the machine); the window and the CLI go through `charged_release`, which requires one. `rng` and `seed`
    are for tests only (`seed`, or PPDP_TEST_SEED, fixes the noise, the release id and the time, and the note
    says so). `checked`: `check_ready` has run already (guards are checked once)."""
    if not checked:
        check_ready(plan, ledger, charged=ledger is not None)
    mech, params, data = plan.mechanism, plan.params, plan.dataset
    cost = plan.cost
    seed = test_seed() if seed is None else int(seed)
    if rng is None:
        rng = NoiseSource() if seed is None else NoiseSource(seed)
    # the id links the ledger entry, the note and the record; under a test seed it is fixed too (without
    # drawing from the noise source, so the release itself does not depend on it)
    release_id = (f"{int(np.random.SeedSequence(seed).generate_state(1, dtype=np.uint64)[0]):016x}"
                  if seed is not None else os.urandom(8).hex())
    entry = identity = budget = None
    if cost.is_dp and ledger is not None:
        yield Progress(0.01, "identifying the table in the privacy ledger")
        identity = ledger.identify(data, label=data.source.path or "", separate=plan.separate_dataset)
        yield Progress(0.03, f"reserving {cost.describe(with_note=False)} in the privacy ledger")
        recorded = jsonable(params)
        if plan.caveats:  # the ledger says it too
            recorded["not ε-DP because"] = sorted(plan.caveats)
        entry = ledger.reserve(identity, mech.name, recorded, cost.epsilon, cost.delta, release_id=release_id,
                               label=data.source.path or "", neighbouring=cost.neighbouring)
    lo, hi = RUN_SPAN
    # on cancellation the mechanism stops too; the budget stays spent
    try:
        release = yield from relay_progress(mech.execute(data, rng=rng, params=params), lo, hi)
    except PpdpError:
        raise
    except Exception as exc:  # noqa: BLE001 - a mechanism's own failure, said in words (ε is already spent)
        spent = " The ε reserved stays spent; the ledger entry records no output." if entry is not None else ""
        raise MechanismError(f"{mech.name} could not finish ({type(exc).__name__}: {exc}).{spent}") from exc
    if release is None:
        raise MechanismError(f"{mech.name} finished without a release")
    yield Progress(hi, "recounting every claim of the release")
    claims = with_caveats(release.claims, plan.caveats)
    person = data.person_column
    ids = person_ids(data, release)
    if release.records is not None:  # rows too many for memory: the same recount, in SQL (engine/bigdata)
        checks = release.records.recount(claims)  # one pass: also the rows, groups and digest asked below
    else:
        checks = check_claims(release.tables(), claims, person=person, persons=ids)
    bad = failures(checks)
    if bad:
        raise CheckError(f"{mech.name}: the independent check failed, nothing can be exported: "
                         + "; ".join(f"{c.claim.table}: {c.message}" for c in bad))
    digest = release.records.digest() if release.records is not None else content_hash(release.table)
    if entry is not None:  # its output hash is recorded by `export`, once a file exists
        budget = ledger.budget(identity)
    yield Progress(0.93, "computing utility and risk figures for you (not for publication)")
    notes: list[str] = []
    figures, sizes = _figures(plan, release, notes, ids)
    created = TEST_TIME if seed is not None else datetime.now(timezone.utc).isoformat(timespec="seconds")
    published = Published(
        release_id=release_id, created=created, mechanism=mech.name, guarantee=mech.guarantee,
        summary=getattr(mech, "summary", ""), release=release, claims=claims, params=dict(params), cost=cost,
        output_hash=digest, source=data.source, columns=tuple(data.schema), checks=tuple(checks),
        caveats=tuple(plan.caveats), warnings=tuple(dict.fromkeys(list(plan.warnings) + list(release.warnings)
                                                                  + notes)),
        figures=figures, class_sizes=sizes, ledger_entry=entry, identity=identity, budget=budget,
        ledger_path=None if getattr(ledger, "path", None) is None else str(ledger.path), seeded=seed is not None,
        person_ids=ids)
    if write_record and published.ledger_path:
        from ppdp_gui.engine.pipeline.export import write_record as _write
        try:
            published = _write(published, ledger)
        except (OSError, PpdpError) as exc:  # after the reservation: said, never raised; export writes it again
            import dataclasses
            published = dataclasses.replace(published, warnings=published.warnings + (
                f"The custodian record could not be written to the ledger's folder ({exc}); it is written when "
                "you export the release.",))
    yield Progress(1.0, "done")
    yield published
