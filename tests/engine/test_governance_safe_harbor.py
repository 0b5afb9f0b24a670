"""Safe Harbor in one step (issue 31, Deliver 3) on a diabetes-shaped table with a ZIP code, an admission date,
exact ages, names and phone numbers: `ppdp safe-harbor` writes the table, the output is read back and every rule
checked on it, and the project keeps what was done and the "no actual knowledge" attestation."""

from __future__ import annotations

import datetime as _dt

import pandas as pd

from governance_tables import governance_table
from ppdp_gui import cli
from ppdp_gui.engine.persistence import release_context as cx
from ppdp_gui.engine.governance.safe_harbor_recipe import apply_safe_harbor, restricted_zip3
from ppdp_gui.engine.metrics import safe_harbor
from ppdp_gui.engine.persistence.project import read_recipe


def test_the_shipped_restricted_zip3_list_is_the_hhs_list():
    assert restricted_zip3() == safe_harbor.RESTRICTED_ZIP3
    assert len(restricted_zip3()) == 17


def test_ppdp_safe_harbor_on_a_diabetes_shaped_table(tmp_path, capsys):
    frame = governance_table(600)
    src = tmp_path / "extract.csv"
    frame.to_csv(src, index=False)
    out = tmp_path / "harbor.csv"
    project = tmp_path / "harbor.ppdp.json"
    code = cli.main(["safe-harbor", "--input", str(src), "--role", "patient_nbr=person", "--output", str(out),
                     "--attest", "A. Nurse", "--save-recipe", str(project)])
    said = capsys.readouterr().out
    assert code == 0, said
    got = pd.read_csv(out, dtype=str, keep_default_na=False)
    # identifiers out
    for gone in ("patient_name", "phone", "patient_nbr", "encounter_id"):
        assert gone not in got.columns
    assert len(got) == len(frame)  # no row dropped
    # dates to the year
    assert got["admission_date"].str.fullmatch(r"20(19|20|21)").all()
    assert (got["admission_date"] == frame["admission_date"].str[:4]).all()
    # ages over 89 as one category, the others unchanged
    old = frame["age_years"] >= 90
    assert (got.loc[old.to_numpy(), "age_years"] == "90 or older").all() and old.any()
    assert (got.loc[~old.to_numpy(), "age_years"] == frame.loc[~old, "age_years"].astype(str)).all()
    # ZIP to 3 digits, restricted areas 000
    expected = frame["zip"].str[:3].where(~frame["zip"].str[:3].isin(restricted_zip3()), "000")
    assert (got["zip"] == expected).all()
    assert set(got["zip"]) >= {"000", "021"} and "036" not in set(got["zip"]) and "890" not in set(got["zip"])
    # the written table passes the screen
    assert safe_harbor.screen(got, today=_dt.date.today()) == []
    # what it did is shown, and the project keeps it with the attestation
    assert "admission_date: dates cut to the year" in said and "zip: ZIP code cut" in said
    ctx = cx.of(read_recipe(project))
    assert ctx.attestations[0]["by"] == "A. Nurse" and "no actual knowledge" in ctx.attestations[0]["text"]
    assert "removed" in ctx.safe_harbor["columns"]["patient_name"]
    assert "year" in ctx.safe_harbor["columns"]["admission_date"]


def test_birth_years_and_age_bands():
    today = _dt.date(2026, 11, 27)
    frame = pd.DataFrame({"birth_year": [1920, 1930, 1940, 1990] * 20,
                          "age": ["[80-90)", "[90-95)", "[95-100)", "[10-20)"] * 20})
    result = apply_safe_harbor(frame, today=today)
    assert set(result.frame["birth_year"]) == {"1936 or earlier", "1940", "1990"}
    assert set(result.frame["age"]) == {"[80-90)", "90 or older", "[10-20)"}
    assert result.remaining == ()
