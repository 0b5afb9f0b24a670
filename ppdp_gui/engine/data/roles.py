"""First guess of each column's privacy role from its name (and, for identifiers, its uniqueness).

The guess only pre-fills the Data view: the custodian confirms or changes every role. The rules are plain word
lists so that `role_rule_text()` can show them and a wrong guess is easy to understand.
"""

from __future__ import annotations

import re

import pandas as pd

from ppdp_gui.engine.data.schema import Role

IDENTIFIER_WORDS = frozenset({
    "id", "ids", "identifier", "name", "names", "firstname", "lastname", "surname", "forename", "fullname",
    "ssn", "nhs", "mrn", "nir", "passport", "email", "mail", "phone", "telephone", "mobile", "fax", "address",
    "street", "uuid", "guid", "record", "patientid", "recordid", "iban", "account", "licence", "license",
})
CLASS_WORDS = frozenset({"class", "label", "target", "outcome", "income", "salary", "y"})
SENSITIVE_WORDS = frozenset({
    "diagnosis", "diagnoses", "disease", "illness", "condition", "treatment", "medication", "drug", "drugs",
    "hiv", "cancer", "icd", "icd10", "procedure", "therapy", "symptom", "symptoms", "religion", "sexuality",
})
QUASI_IDENTIFIER_WORDS = frozenset({
    "age", "sex", "gender", "zip", "zipcode", "postcode", "postal", "race", "ethnicity", "ethnic", "marital",
    "education", "birth", "birthdate", "dob", "born", "yob", "native", "country", "nationality", "citizenship",
    "occupation", "job", "profession", "workclass", "employment", "relationship", "city", "town", "county",
    "region", "district", "state", "language",
})
#: a text or whole-number column with a different value in every row (and at least this many rows) is an identifier
UNIQUE_ID_MIN_ROWS = 100


def name_words(name: str) -> set[str]:
    """Lower-case words of a column name: 'marital-status' -> {marital, status}; 'PatientID' -> {patient, id}."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", str(name))
    words = {w for w in re.split(r"[^0-9A-Za-z]+", spaced.lower()) if w}
    joined = re.sub(r"[^0-9a-z]+", "", str(name).lower())
    return words | {joined}


def _is_unique_code(series: pd.Series, kind: str) -> bool:
    if len(series) < UNIQUE_ID_MIN_ROWS:
        return False
    if kind == "numeric" and not pd.api.types.is_integer_dtype(series.dtype):
        return False
    return bool(series.nunique(dropna=False) == len(series))


def guess_roles(frame: pd.DataFrame, kinds: dict[str, str] | None = None) -> dict[str, Role]:
    """A role per column by `role_rule_text()`; the first class-like column is the class, later ones sensitive."""
    kinds = kinds or {}
    roles: dict[str, Role] = {}
    have_class = False
    short = len(frame) < UNIQUE_ID_MIN_ROWS  # no column can be a unique code: skip the per-column lookup
    for name in frame.columns:
        words = name_words(name)
        kind = kinds.get(name, "categorical")
        if words & IDENTIFIER_WORDS or (short is False and _is_unique_code(frame[name], kind)):
            role = Role.IDENTIFIER
        elif words & CLASS_WORDS:
            role = Role.SENSITIVE if have_class else Role.CLASS
            have_class = True
        elif words & SENSITIVE_WORDS:
            role = Role.SENSITIVE
        elif words & QUASI_IDENTIFIER_WORDS:
            role = Role.QUASI_IDENTIFIER
        else:
            role = Role.INSENSITIVE
        roles[name] = role
    return roles


def role_rule_text() -> str:
    """How roles were guessed, in plain words, for the GUI."""
    return (
        "Roles are a first guess from the column names; please check each one.\n"
        f"  Identifier: names containing {', '.join(sorted(IDENTIFIER_WORDS - {'ids', 'names'}))}, or a column "
        f"with a different value in every row (tables of {UNIQUE_ID_MIN_ROWS} rows or more).\n"
        f"  Class (the first such column; later ones become sensitive): {', '.join(sorted(CLASS_WORDS))}.\n"
        f"  Sensitive: {', '.join(sorted(SENSITIVE_WORDS))}.\n"
        f"  Quasi-identifier: {', '.join(sorted(QUASI_IDENTIFIER_WORDS))}.\n"
        "  Everything else: insensitive."
    )
