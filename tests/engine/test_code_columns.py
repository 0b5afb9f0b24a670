"""A ZIP code written without its leading zeros (90001) reads as numbers; with a few blanks the k-anonymity
mechanisms then refused the table ("quasi-identifier 'zip' has missing values (empty number cells)"). A ZIP or
postcode is a code, not a quantity: its kind is decided from its name, read from no value (no confirmation)."""

from __future__ import annotations

import pytest

from ppdp_gui.engine.data import kind_rule_text, read_table
from ppdp_gui.engine.mechanisms import registry


def _extract(tmp_path, name: str = "zip"):
    rows = [f"{30 + i % 50},{'F' if i % 2 else 'M'},{'' if i % 20 == 0 else 90001 + i % 99}" for i in range(400)]
    path = tmp_path / "stays.csv"
    path.write_text(f"age,sex,{name}\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("name", ["zip", "ZIP_code", "postcode", "PLZ", "postal_code", "patient_zip5"])
def test_a_zip_code_is_categorical_by_its_name_and_its_blanks_read_missing(tmp_path, name):
    ds = read_table(_extract(tmp_path, name))
    spec = ds.spec(name)
    assert spec.kind == "categorical"
    assert "kind" not in spec.guessed  # read from the name alone: no confirmation asked
    assert ds.frame[name].iloc[1] == "90002" and ds.frame[name].iloc[0] == "(missing)"
    assert ds.spec("age").kind == "numeric"  # other columns of numbers keep the value rule


def test_a_stated_kind_still_wins_over_the_name(tmp_path):
    ds = read_table(_extract(tmp_path), kinds={"zip": "numeric"})
    assert ds.spec("zip").kind == "numeric"


def test_the_kind_rule_says_codes_are_decided_by_name():
    text = kind_rule_text()
    assert "zip" in text and "postcode" in text and "name" in text


def test_mondrian_runs_on_a_zip_with_blanks(tmp_path):
    from ppdp_gui.engine.data.schema import Role
    ds = read_table(_extract(tmp_path), roles={"age": Role.INSENSITIVE, "sex": Role.QUASI_IDENTIFIER,
                                               "zip": Role.QUASI_IDENTIFIER})
    problems = registry.create("Mondrian").validate(ds, k=5)
    assert not [p for p in problems if p.level == "error"], problems


def test_the_mask_builder_is_suggested_for_a_zip():
    from ppdp_gui.engine.data.coltypes import suggested_builder
    assert suggested_builder("zip") == "mask" and suggested_builder("Postcode") == "mask"
    assert suggested_builder("age") is None and suggested_builder("admit_date") == "dates"
    assert suggested_builder("dx_1", ["E11.9", "I10", "J18.9"]) == "icd10"
    assert suggested_builder("diag_1", ["250.83", "428", "V57"]) == "icd9"
    assert suggested_builder("ward", ["A", "B"]) is None


def test_the_large_table_engine_reads_a_zip_by_its_name_too(tmp_path):
    pytest.importorskip("duckdb")
    from ppdp_gui.engine.bigdata.large_dataset import open_large
    ds = open_large(_extract(tmp_path), hashes=False)
    try:
        assert ds.spec("zip").kind == "categorical" and "kind" not in ds.spec("zip").guessed
    finally:
        ds.table.close()


def test_a_blank_read_missing_is_no_value_for_the_interval_builder():
    from ppdp_gui.engine.taxonomy.builders import numbers_with_top_codes
    assert numbers_with_top_codes(["34", "90+", "(missing)"], "(missing)")
    assert not numbers_with_top_codes(["34", "unknown"], "(missing)")
    assert not numbers_with_top_codes(["(missing)"], "(missing)")


def test_the_advice_for_a_zip_and_an_age_with_blanks_names_the_right_builder(tmp_path):
    """Seen on the hospital walk: a ZIP read as text was told to 'replace “(missing)” by numbers in a copy of
    your table and build Numeric intervals'; an age made categorical (as the advice said) was told the same."""
    from ppdp_gui.engine.data.schema import Role
    ds = read_table(_extract(tmp_path), kinds={"age": "categorical"},
                    roles={"age": Role.QUASI_IDENTIFIER, "sex": Role.QUASI_IDENTIFIER, "zip": Role.QUASI_IDENTIFIER})
    ds.frame.loc[::25, "age"] = "(missing)"
    words = {p.column: p.message for p in registry.create("Mondrian").validate(ds, k=5)}
    assert "Mask codes from the right" in words["zip"] and "copy of your table" not in words["zip"]
    assert "Numeric intervals" in words["age"] and "copy of your table" not in words["age"]
    from ppdp_gui.engine.data.missing import numeric_blanks_fix
    fix = numeric_blanks_fix("age")
    assert "Numeric intervals" in fix and "any released column" in fix  # drop rows costs more than age's blanks


def _ages_with_blanks(tmp_path):
    rows = [f"p{i % 150},{'' if i % 17 == 0 else 20 + i % 60},{'F' if i % 2 else 'M'}" for i in range(600)]
    path = tmp_path / "ages.csv"
    path.write_text("patient_id,age,sex\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return path


def test_mondrian_publishes_an_age_with_blanks_as_ranges_and_missing(tmp_path):
    """Seen on the hospital walk: an age with a few blank cells stopped the default mechanism ("quasi-identifier
    'age' has missing values (empty number cells)"). Mondrian now codes the blanks as “(missing)” beside ranges
    of the automatic width, says so in a warning, and every published group still holds k persons."""
    import numpy as np

    from ppdp_gui.engine.data.schema import Role
    ds = read_table(_ages_with_blanks(tmp_path), roles={"patient_id": Role.PERSON, "age": Role.QUASI_IDENTIFIER,
                                                        "sex": Role.QUASI_IDENTIFIER})
    assert ds.spec("age").kind == "numeric"
    mondrian = registry.create("Mondrian")
    problems = mondrian.validate(ds, k=5)
    assert not [p for p in problems if p.level == "error"], problems
    assert any(p.column == "age" and "(missing)" in p.message for p in problems)
    release = [r for r in mondrian.run(ds, rng=np.random.default_rng(0), k=5)][-1]
    table = release.table
    ages = set(table["age"].astype(str))
    assert "(missing)" in ages or "*" in ages
    assert any(a.startswith("[") for a in ages) and not ages & {str(a) for a in range(20, 80)}  # ranges only
    persons = ds.frame["patient_id"].to_numpy()[release.source_rows["table"]]
    groups = table.assign(person=persons).groupby(["age", "sex"], observed=True)["person"].nunique()
    assert groups.min() >= 5


def test_tds_publishes_an_age_with_blanks_too(tmp_path):
    """Before, TDS asked for the age to be made categorical; now its blanks are “(missing)”, under the root of
    the intervals' tree (tests/engine/test_numeric_blanks_kanon.py runs it)."""
    from ppdp_gui.engine.data.schema import Role
    if "TDS" not in registry.names():
        pytest.skip("TDS is not registered")
    ds = read_table(_ages_with_blanks(tmp_path), roles={"patient_id": Role.PERSON, "age": Role.QUASI_IDENTIFIER,
                                                        "sex": Role.QUASI_IDENTIFIER})
    problems = [p for p in registry.create("TDS").validate(ds, k=5) if p.column == "age"]
    assert problems and all(p.level == "warning" for p in problems) and "(missing)" in problems[0].message


def test_the_reason_for_a_kind_in_plain_words():
    from ppdp_gui.engine.data.coltypes import kind_reason
    assert "name" in kind_reason("zip", "categorical", guessed=False)
    assert "read as numeric" in kind_reason("los", "numeric", guessed=True)
    assert "you set or confirmed" in kind_reason("los", "categorical", guessed=False)


def test_the_advice_for_diagnosis_codes_names_the_icd_builder_not_dates(tmp_path):
    """Seen on the hospital walk: after "Make dx_1 a quasi-identifier" the Mechanism step said "build a taxonomy
    for it in the Taxonomies step (“Dates” for dates: month, year, decade)" for ICD-10 codes."""
    import pandas as pd

    from ppdp_gui.engine.data import dataset_from_frame
    from ppdp_gui.engine.data.schema import Role
    codes = [f"{chr(65 + i % 20)}{10 + i % 80}.{i % 7}" for i in range(400)]
    data = dataset_from_frame(pd.DataFrame({"dx_1": codes, "sex": ["F", "M"] * 200}),
                              roles={"dx_1": Role.QUASI_IDENTIFIER, "sex": Role.QUASI_IDENTIFIER})
    words = {p.column: p.message for p in registry.create("Mondrian").validate(data, k=5)}
    assert "ICD-10 diagnoses" in words["dx_1"] and "Dates" not in words["dx_1"]


def test_a_zip_stored_as_numbers_is_a_code_too():
    """An Excel sheet stores 90001 as a number (a typed column, not text): the name rule holds there too."""
    import numpy as np
    import pandas as pd

    from ppdp_gui.engine.data import dataset_from_frame
    zips = np.where(np.arange(300) % 20 == 0, np.nan, 90001.0 + np.arange(300) % 99)
    data = dataset_from_frame(pd.DataFrame({"Zip Code": zips, "age": np.arange(300) % 70}))
    assert data.spec("Zip Code").kind == "categorical" and data.spec("age").kind == "numeric"
    assert data.frame["Zip Code"].iloc[1] == "90002" and data.frame["Zip Code"].iloc[0] == "(missing)"
