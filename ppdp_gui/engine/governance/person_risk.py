"""Re-identification risk of a table counted per person, and the initial risk of a project's source table.

With a person column (`Role.PERSON`: the patient number, several rows per patient) an equivalence class of
k rows may hold fewer than k patients; the prosecutor's chance of picking out a patient of the class is one over
the number of *distinct persons* in it, and a patient's risk is the largest over the classes their rows fall in.
Without a person column every row is taken to be a different person (the row-level figures of risk_models).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from ppdp_gui.engine.metrics.risk_models import class_ids


@dataclass(frozen=True)
class PersonRisk:
    unit: str  # "person (patient_nbr)" or "row"
    units: int  # persons (or rows)
    classes: int
    highest: float  # 0..1
    average: float
    at_risk: float  # share of persons whose risk is above `threshold`
    threshold: float


def person_risk(frame: pd.DataFrame, qis: Sequence[str], person: str | None = None,
                threshold: float = 0.1) -> PersonRisk:
    """Prosecutor risk per person on `qis` (see the module docstring); per row when `person` is None."""
    cid = class_ids(frame, list(qis))
    if person is None or person not in frame.columns:
        sizes = np.bincount(cid)
        risk = 1.0 / sizes[cid]
        return PersonRisk("row", int(len(frame)), int(sizes.size), float(risk.max(initial=0.0)),
                          float(risk.mean()) if len(risk) else 0.0,
                          float((risk > threshold).mean()) if len(risk) else 0.0, threshold)
    who = pd.Series(frame[person].to_numpy()).astype(str)
    pairs = pd.DataFrame({"c": cid, "p": who}).drop_duplicates()
    persons_in = np.bincount(pairs["c"].to_numpy(), minlength=int(cid.max(initial=-1)) + 1)
    pairs["r"] = 1.0 / persons_in[pairs["c"].to_numpy()]
    per_person = pairs.groupby("p", sort=False)["r"].max().to_numpy()
    return PersonRisk(f"person ({person})", int(per_person.size), int((persons_in > 0).sum()),
                      float(per_person.max(initial=0.0)), float(per_person.mean()) if per_person.size else 0.0,
                      float((per_person > threshold).mean()) if per_person.size else 0.0, threshold)


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
