"""What a run would do, known before it starts: problems, privacy cost and budget left (nothing is spent).

Qt-free; the session caches one Preview until the data, the mechanism, its parameters or the releases change,
so the Mechanism and Run steps share one computation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

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


@dataclass
class Preview:
    """What a run would do, known before it starts."""

    problems: list[Problem] = field(default_factory=list)
    cost: PrivacyCost | None = None
    budget_text: str = ""
    over_budget: bool = False

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.level == "error"]


def preview(session) -> Preview:
    """Problems, cost and budget for the session's mechanism, parameters and data (cheap; nothing is spent)."""
    out = Preview()
    ds, mech = session.dataset, session.mechanism()
    if ds is None or mech is None:
        return out
    hints = [Problem(h) for h in empty_column_hints(mech.params, ds)]
    try:
        out.problems = hints + list(mech.validate(ds, **session.params))
    except PpdpError as exc:
        out.problems = hints + [Problem(str(exc))]
    try:
        out.cost = mech.privacy_cost(**mech.resolve_params(**session.params))
    except PpdpError as exc:
        if not out.problems:
            out.problems.append(Problem(str(exc)))
        return out
    if out.cost.is_dp:
        try:
            fp = session.fingerprint()
            remaining = session.ledger.remaining(fp)
            spent = session.ledger.spent(fp)
        except (PpdpError, ImportError, OSError) as exc:
            out.budget_text = f"Budget unknown: the ledger could not be read ({exc})."
            return out
        eps = out.cost.epsilon
        if remaining is None:
            out.budget_text = (f"This run will spend ε = {fmt_eps(eps)}. No budget cap is set for this table; "
                               f"ε spent on it so far: {fmt_eps(spent)}.")
        else:
            out.over_budget = Fraction(eps) > Fraction(remaining)
            out.budget_text = (f"This run will spend ε = {fmt_eps(eps)} of the {fmt_eps(remaining)} left for "
                               f"this table (spent so far: {fmt_eps(spent)}).")
            if out.over_budget:
                out.budget_text += " That is more than is left: lower ε or raise the cap."
    else:
        out.budget_text = "Not charged to the ε budget: this mechanism gives a syntactic guarantee " \
                          f"({out.cost.describe()})."
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

