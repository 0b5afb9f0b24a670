"""Columns someone else can know: quasi-identifying *candidates* with a reason.

On the diabetes extract only race, gender and age were protected by default; diag_2 and diag_3 (749 and 790
distinct ICD-9 codes), medical_specialty and payer_code went out unchanged, and nothing said so. An insurer knows a
person's payer code and diagnoses, a neighbour may know of a hospital stay and its department: with age and
gender those pick a patient out of the table (Sweeney's linkage attack). This module says which columns are such
candidates and why, from the column's name, the look of its values (ICD-like codes) and its number of different
values. It only suggests: roles stay the custodian's (data/roles.py guesses them; this module does not change
them). The Data step shows the reason; the Run step lists the candidates a release would publish unchanged, with
the buttons to press (make it a quasi-identifier, or leave it out).

The reason counts different values: it is for the custodian only, never for a release note.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pandas as pd

from ppdp_gui.engine.data.roles import counts_something, name_words
from ppdp_gui.engine.data.schema import Dataset, Role

#: a categorical column with at least this many different values can single people out when published as is
MANY_VALUES = 20
#: share of the present values that must look like ICD codes for a column to be read as diagnosis codes
CODE_SHARE = 0.8
#: what to do, said after each reason (the Run step says it once, above its list, and leaves it out of each line)
ADVICE = " Make it a quasi-identifier (it is then generalised) or leave it out."
_ICD = re.compile(r"^(?:[VvEe]?\d{2,4}(?:\.\d{1,2})?|[A-Za-z]\d{2}(?:\.\d{1,4})?)$")

#: what someone else can know, by words of the column's name: (kind, who knows it)
_KNOWN_BY = (
    ({"diag", "diagnosis", "diagnoses", "icd", "icd9", "icd10", "dx", "procedure", "cpt", "condition"},
     "diagnosis codes", "an insurer, or a neighbour who knows of the hospital stay"),
    ({"specialty", "speciality", "department", "ward", "clinic", "unit", "service"},
     "the medical specialty or ward", "a neighbour or visitor who knows where the patient was treated"),
    ({"payer", "payor", "insurer", "insurance", "plan"}, "the payer", "the insurer, and the employer"),
    ({"zip", "zipcode", "postcode", "postal", "city", "county", "district", "municipality", "region"},
     "where the person lives", "anyone with a public register"),
    ({"occupation", "job", "employer", "profession"}, "the person's work", "colleagues and the employer"),
)


@dataclass(frozen=True)
class Linkable:
    """A column that could be used to link the release to a person, with the plain reason why."""

    column: str
    what: str  # "diagnosis codes", "the payer", … or "many different values"
    distinct: int
    reason: str


def _known_by(column: str, series: pd.Series) -> tuple[str, str] | None:
    if counts_something(column):  # number_diagnoses counts diagnoses: it does not hold codes
        return None
    words = name_words(column)
    for vocabulary, what, who in _KNOWN_BY:
        if words & vocabulary:
            return what, who
    present = series.dropna().astype(str).str.strip()
    present = present[present != ""]
    if len(present) and present.nunique() >= MANY_VALUES:
        sample = present.sample(min(len(present), 500), random_state=0) if len(present) > 500 else present
        if sample.str.match(_ICD).mean() >= CODE_SHARE and not pd.to_numeric(sample, errors="coerce").notna().all():
            return "diagnosis codes", "an insurer, or a neighbour who knows of the hospital stay"
    return None


def holds_diagnosis_codes(column: str, series: pd.Series) -> bool:
    """Whether the column is diagnosis codes by its name or the look of its values: the domain dialog offers the
    ICD lists for those only (it offered them for age and gender too, the wrong action for a custodian)."""
    known = _known_by(column, series)
    return known is not None and known[0] == "diagnosis codes"


def known_columns(dataset: Dataset) -> str:
    """The table's own quasi-identifiers in words ('age, sex, zip'), not a fixed 'age and gender': the
    emergency extract of the nurse's walk has sex, not gender."""
    qis = list(dataset.quasi_identifiers)
    if not qis:
        return "the other columns"
    shown = ", ".join(qis[:4]) + (" …" if len(qis) > 4 else "")
    return f"the quasi-identifiers ({shown})"


def linkable_column(dataset: Dataset, column: str) -> Linkable | None:
    """Why `column` is a quasi-identifying candidate, or None. Columns already protected or never released
    (quasi-identifiers, identifiers, the person column) and the class are not candidates."""
    spec = dataset.spec(column)
    if spec.role == Role.QUASI_IDENTIFIER or spec.role == Role.CLASS or spec.role.never_released:
        return None
    series = dataset.frame[column]
    distinct = int(series.nunique(dropna=True))
    known = _known_by(column, series)
    many = spec.kind == "categorical" and distinct >= MANY_VALUES
    if known is None and not many:
        return None
    if known is not None:
        what, who = known
        reason = (f"{column} holds {what}, which {who} can know; it has {distinct:,} different values. Published "
                  f"unchanged, it can single out a patient together with {known_columns(dataset)}.")
    else:
        what = "many different values"
        reason = (f"{column} has {distinct:,} different values: published unchanged, a rare value can single out a "
                  "patient for anyone who knows it.")
    return Linkable(column, what, distinct, reason + ADVICE)


def linkable_columns(dataset: Dataset) -> list[Linkable]:
    """Every quasi-identifying candidate of the table, in column order."""
    found = (linkable_column(dataset, c.name) for c in dataset.schema)
    return [f for f in found if f is not None]


def unprotected(dataset: Dataset, published: list[str] | tuple[str, ...]) -> list[Linkable]:
    """The candidates a release would publish unchanged (`Mechanism.published_columns`): what the Run step lists
    before Run."""
    chosen = set(published)
    return [f for f in linkable_columns(dataset) if f.column in chosen]
