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
    assert suggested_builder("age") is None and suggested_builder("admit_date") is None


def test_the_large_table_engine_reads_a_zip_by_its_name_too(tmp_path):
    pytest.importorskip("duckdb")
    from ppdp_gui.engine.bigdata.source import open_large
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
