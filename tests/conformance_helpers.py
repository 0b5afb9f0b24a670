"""The small hospital-shaped table and the recipe every mechanism of the conformance kit runs on
(tests/test_conformance.py, tests/gui/test_same_release.py), with no per-mechanism code: a parameter that picks
columns and has no default gets the first column it allows (a "columns" parameter: all of them) that may be
released."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ppdp_gui.engine.data.schema import Role
from ppdp_gui.engine.mechanisms import registry
from ppdp_gui.engine.persistence.project import Recipe, write_recipe
from ppdp_gui.engine.pipeline import load

ROLES = {"mrn": Role.IDENTIFIER, "patient_nbr": Role.PERSON, "age": Role.QUASI_IDENTIFIER,
         "sex": Role.QUASI_IDENTIFIER, "ward": Role.QUASI_IDENTIFIER, "diagnosis": Role.SENSITIVE,
         "readmitted": Role.CLASS}
NEVER_RELEASED = ("mrn", "patient_nbr")
BUILDS = {"age": "intervals:10", "sex": "flat", "ward": "flat"}


def ward_frame(n: int = 160, seed: int = 3) -> pd.DataFrame:
    """A record number (identifier), a patient number (person, two encounters each), three quasi-identifiers, a
    diagnosis and a readmission class."""
    r = np.random.default_rng(seed)
    patient = np.repeat(np.arange(100_000, 100_000 + n // 2), 2)
    return pd.DataFrame({"mrn": [f"M{i:05d}" for i in range(n)], "patient_nbr": patient.astype(str),
                         "age": np.repeat(r.integers(20, 80, n // 2), 2),
                         "sex": np.repeat(r.choice(["F", "M"], n // 2), 2),
                         "ward": r.choice(["A", "B", "C"], n), "diagnosis": r.choice(["250", "428", "414", "486"], n),
                         "readmitted": r.choice(["NO", "YES"], n)})


def table_params(name: str) -> dict:
    """Parameters for the ward table: the defaults, plus a column for any column parameter left empty."""
    cls = registry.get(name)
    out = {}
    for spec in cls.params:
        if spec.kind in ("column", "columns") and not spec.optional and spec.default in (None, "", ()):
            frame = ward_frame(4)
            allowed = [c for c, role in ROLES.items() if not role.never_released
                       and (not spec.roles or role in spec.roles)
                       and (spec.column_kind is None
                            or (spec.column_kind == "numeric") == pd.api.types.is_numeric_dtype(frame[c]))]
            if allowed:
                out[spec.name] = allowed[0] if spec.kind == "column" else tuple(allowed)
    return out


def ward_recipe(folder: Path, name: str, n: int = 160) -> Path:
    """'ward.csv' and a project running `name` on it, in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    table = folder / "ward.csv"
    ward_frame(n).to_csv(table, index=False)
    recipe = Recipe(source=str(table), roles=dict(ROLES), taxonomy_builds=dict(BUILDS), mechanism=name,
                    params={k: list(v) if isinstance(v, tuple) else v for k, v in table_params(name).items()},
                    allow_data_domains=True)
    load(recipe)  # builds the taxonomies, kept in the recipe as the window saves them
    return write_recipe(recipe, folder / "ward.ppdp.json")
