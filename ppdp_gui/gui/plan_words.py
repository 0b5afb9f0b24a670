"""What a plan says in the window's words: its price (`cost_words`, `short_cost`, the tooltip) and its parameters
by the labels the custodian set them by (`params_text`). Qt-free.

The plan itself is the engine's (`engine.pipeline.plan`, cached by `Session.preview`); ε is spelled by the engine's
one formatter (`claims.epsilon_text`).
"""

from __future__ import annotations

from ppdp_gui.engine.claims import epsilon_text, k_text
from ppdp_gui.engine.mechanisms.base import PrivacyCost


def short_cost(cost: PrivacyCost | None) -> str:
    """ε / δ / k / l only (no note): fits the step list."""
    return "" if cost is None else cost.describe(with_note=False)


def cost_words(cost: PrivacyCost | None, person: str | None = None) -> str:
    """The privacy of a release in plain words; its note (how ε is split, noise scales) goes to a tooltip.
    `person`: the table's person column (k then counts persons)."""
    if cost is None:
        return "known once the parameters are valid"
    if cost.is_dp:
        text = (f"ε = {epsilon_text(cost.epsilon)}, spent from this table's privacy budget (a smaller ε hides each "
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
        text = f"{k_text(cost.k)}: every published combination of the quasi-identifiers is shared by at least {cost.k} {unit}"
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
        special = getattr(by_name.get(k), "special", None)
        if special is not None and isinstance(v, (int, float)) and v == special[0]:
            return special[1]  # 'automatic', not '0' a nurse reads as a width of nothing
        if isinstance(v, (tuple, list)):
            return ", ".join(map(str, v)) or "(none)"
        if isinstance(v, float):
            return f"{v:.4g}"
        if v in (None, ""):
            return (by_role(by_name[k]) if k in by_name else None) or "(none)"
        return str(v)
    return "; ".join(f"{by_name[k].label if k in by_name else k} = {show(k, v)}" for k, v in params.items())
