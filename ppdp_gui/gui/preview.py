"""What a run would do, known before it starts: the engine's Plan of the session (nothing is spent).

Qt-free; the session caches one Plan until the data, the mechanism, its parameters or the releases change, so
the Mechanism and Run steps share one computation, and the Run step runs exactly what was shown.
"""

from __future__ import annotations

from ppdp_gui.engine.errors import PpdpError
from ppdp_gui.engine.mechanisms.base import PrivacyCost, Problem


def allowed_columns(spec, dataset) -> list[str]:
    """Columns a column parameter may take: filtered by the spec's roles and column kind."""
    if dataset is None:
        return []
    return [c.name for c in dataset.schema
            if (not spec.roles or c.role in spec.roles) and (spec.column_kind is None or c.kind == spec.column_kind)]


def empty_column_hints(specs, dataset) -> list[str]:
    """Column parameters with nothing to choose from, said in words the user can act on."""
    hints = []
    for spec in specs:
        if spec.kind in ("column", "columns") and not spec.optional and not allowed_columns(spec, dataset):
            want = " or ".join(r.label for r in spec.roles) if spec.roles else (spec.column_kind or "any")
            hints.append(f"{spec.label}: no column has the role {want}; set one in the Data step.")
    return hints


def fmt_eps(value) -> str:
    return f"{float(value):.4g}"


def short_cost(cost: PrivacyCost | None) -> str:
    """ε / δ / k / l only (no note): fits the step list."""
    return "" if cost is None else cost.describe(with_note=False)


def cost_words(cost: PrivacyCost | None, person: str | None = None) -> str:
    """The privacy of a release in plain words; its note (how ε is split, noise scales) goes to a tooltip.
    `person`: the table's person column (k then counts persons)."""
    if cost is None:
        return "known once the parameters are valid"
    if cost.is_dp:
        text = (f"ε = {fmt_eps(cost.epsilon)}, spent from this table's privacy budget (a smaller ε hides each "
                "person better and adds more noise)")
        text += f"; δ = {float(cost.delta):.3g}" if cost.delta else ""
        unit = getattr(cost, "unit", None)  # whom ε protects, when the mechanism states it (one person's rows)
        per_person = bool(getattr(unit, "person_column", None)) or "person" in str(cost.neighbouring)
        if person is not None and not per_person:
            # the guarantee is per row; with several rows per person (Role.PERSON) a person is protected by m·ε
            text += (f". ε protects one row, not one person: {person} has several rows per person, and a person "
                     f"with m rows is protected only by m·ε. For ε per person, publish a table with one row per "
                     "person")
        return text
    if cost.k is not None:
        unit = "rows" if person is None else f"different persons ({person})"
        text = f"k = {cost.k}: every published combination of the quasi-identifiers is shared by at least {cost.k} {unit}"
        return text + (f", each group with at least {cost.l} different sensitive values" if cost.l else "")
    return cost.describe(with_note=False)


def cost_tooltip(cost: PrivacyCost | None) -> str:
    return f"How it works: {cost.note}" if cost is not None and cost.note else ""


def params_text(params: dict, specs=(), dataset=None) -> str:
    """'Privacy budget ε = 1; Specialisations h = 10': the parameters by the labels the custodian set them by. An
    empty column parameter that stands for 'the column with this role' names that column when `dataset` has one
    ('Class column = salary-class (its role is Class)', not '(none)', which reads as 'no class column')."""
    by_name = {s.name: s for s in specs}

    def by_role(spec) -> str | None:
        roles = tuple(getattr(spec, "roles", ()) or ())
        if dataset is None or getattr(spec, "kind", "") != "column" or not roles:
            return None
        found = [c for c in dataset.schema if c.role in roles]
        return f"{found[0].name} (its role is {found[0].role.label})" if len(found) == 1 else None

    def show(k, v):
        if isinstance(v, (tuple, list)):
            return ", ".join(map(str, v)) or "(none)"
        if isinstance(v, float):
            return f"{v:.4g}"
        if v in (None, ""):
            return (by_role(by_name[k]) if k in by_name else None) or "(none)"
        return str(v)
    return "; ".join(f"{by_name[k].label if k in by_name else k} = {show(k, v)}" for k, v in params.items())


def preview(session):
    """The engine's Plan for the session's table, mechanism, parameters and opt-ins (nothing is spent)."""
    from ppdp_gui.engine.pipeline.plan import Plan, plan
    ds, mech = session.dataset, session.mechanism()
    if ds is None or mech is None:
        # no table yet: an empty plan without a dataset (making an empty one imported pandas in the GUI thread
        # right after the window appeared, ~1 s on a busy machine; benchmarks/bench_start.py)
        return Plan(mech, {}, ds)
    try:
        ledger = session.ledger
    except (PpdpError, OSError) as exc:
        ledger = None
        unreadable = Problem(f"the privacy budget ledger cannot be opened: {exc}")
    else:
        unreadable = None
    out = plan(ds, mech, session.params, ledger=ledger, allow_data_domains=session.allow_data_domains,
               separate_dataset=session.separate_dataset,
               confirmed_columns=tuple(sorted(getattr(session, "confirmed_columns", ()))))
    hints = [Problem(h) for h in empty_column_hints(mech.params, ds)]
    out.problems = hints + ([unreadable] if unreadable and out.is_dp else []) + out.problems
    return out


def runnable(name: str, dataset) -> bool:
    """Whether mechanism `name` with its default parameters has no error-level problem on `dataset`
    (used to pick the Mechanism step's first choice; the check is the mechanism's own `validate`)."""
    from ppdp_gui.engine.mechanisms import registry
    try:
        mech = registry.create(name)
        if empty_column_hints(mech.params, dataset):
            return False
        return not [p for p in mech.validate(dataset) if p.level == "error"]
    except Exception:  # noqa: BLE001 - a mechanism that cannot even be checked is not a good default
        return False

