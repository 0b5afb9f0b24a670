"""Re-identification risk of a table counted per person, and the initial risk of a project's source table.

With a person column (`Role.PERSON`: the patient number, several rows per patient) an equivalence class of
k rows may hold fewer than k patients; the prosecutor's chance of picking out a patient of the class is one over
the number of *distinct persons* in it, and a patient's risk is the largest over the classes their rows fall in
(metrics/person_risk.py, which the release's own figures use too, so initial and residual risk count alike).
Without a person column every row is taken to be a different person (the row-level figures of risk_models).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import pandas as pd

from ppdp_gui.engine.metrics.person_risk import UnitRisk, unit_risk
from ppdp_gui.engine.metrics.risk_models import class_ids


@dataclass(frozen=True)
class PersonRisk(UnitRisk):
    """The metrics' per-unit risk, named for the dossier: which unit it counts, and the share above 10 %."""
    unit: str = "row"  # "person (patient_nbr)" or "row"
    #: the share of units above 10 %, the cut the custodian record's release figures use (dossier: initial vs
    #: residual side by side)
    at_risk_10: float = 0.0


def person_risk(frame: pd.DataFrame, qis: Sequence[str], person: str | None = None,
                threshold: float = 0.1) -> PersonRisk:
    """Prosecutor risk per person on `qis` (metrics/person_risk.py); per row when `person` is None."""
    cid = class_ids(frame, list(qis))
    persons = frame[person].to_numpy() if person is not None and person in frame.columns else None
    r = unit_risk(cid, persons, threshold)
    at_10 = r.at_risk if threshold == 0.1 else unit_risk(cid, persons, 0.1).at_risk
    return PersonRisk(**vars(r), unit=f"person ({person})" if persons is not None else "row", at_risk_10=at_10)


def source_as_released(recipe, record: dict | None = None):
    """The source table as the release read it: the recipe, with the missing-value policy and the roles the
    custodian record says the release used (the command line may have changed them on top of the project)."""
    import copy

    from ppdp_gui.engine.persistence.project import na_policy_from, parse_role
    from ppdp_gui.engine.pipeline.load import load
    recipe = copy.deepcopy(recipe)
    if record:
        policy = (record.get("source") or {}).get("missing values")
        if isinstance(policy, dict):
            recipe.na_policy = na_policy_from(policy, "record.source.missing values")
        from ppdp_gui.engine.governance.pseudonyms import treated_in
        made = treated_in(record)[0]  # columns the release added (pseudonyms): not in the source
        for col in record.get("columns") or []:
            if str(col["name"]) not in made:
                recipe.roles[str(col["name"])] = parse_role(col.get("role"), "record.columns")
        path = (record.get("source") or {}).get("path")
        if path and not recipe.source:
            recipe.source = path
    return load(recipe).dataset


def initial_risk(recipe, qis: Sequence[str], threshold: float = 0.1,
                 record: dict | None = None) -> tuple[PersonRisk | None, PersonRisk | None, str]:
    """The source table's risk on the release's quasi-identifiers, read again through the recipe (the custodian's
    side only): (per person or row, per row when there is a person column, why not measured)."""
    from ppdp_gui.engine.errors import PpdpError
    if not qis:
        return None, None, "the release has no quasi-identifiers"
    try:
        data = source_as_released(recipe, record)
    except PpdpError as exc:
        return None, None, f"the source table could not be read again ({exc})"
    present = [q for q in qis if q in data.frame.columns]
    if not present:
        return None, None, "the source table has none of the release's quasi-identifiers"
    person = data.person_column
    rows = person_risk(data.frame, present, None, threshold) if person else None
    return person_risk(data.frame, present, person, threshold), rows, ""
