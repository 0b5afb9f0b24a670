"""Blank cells of a number quasi-identifier (an age; rows are kept by default) in TDS and global recoding.

Before, only the in-memory Mondrian published them (as “(missing)” beside its ranges); TDS and global recoding
refused the table ("quasi-identifier 'age' has missing values (empty number cells)"). Now "(missing)" is a value
of its own under the root of the column's taxonomy (or of the intervals' tree TDS builds without one): its rows
form groups of k persons, or are hidden with the rest — and the export's recount on the written bytes agrees.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ppdp_gui.engine.checks.claims import check_claims
from ppdp_gui.engine.claims import KAnonymity
from ppdp_gui.engine.data import read_table
from ppdp_gui.engine.data.schema import MISSING_LABEL, Role
from ppdp_gui.engine.mechanisms import registry
from ppdp_gui.engine.noise import NoiseSource
from ppdp_gui.engine.pipeline import export, plan, run_release
from ppdp_gui.engine.taxonomy.from_spec import build_taxonomy

ROLES = {"patient_id": Role.PERSON, "age": Role.QUASI_IDENTIFIER, "sex": Role.QUASI_IDENTIFIER,
         "outcome": Role.CLASS}


def stays(tmp_path, blank_every: int = 17, rows: int = 600):
    """Several stays per patient; an age blank in some rows (a whole patient's, or one stay's)."""
    lines = [f"p{i % 150},{'' if i % blank_every == 0 else 20 + (i % 150) % 60},{'F' if i % 2 else 'M'},"
             f"{'yes' if i % 3 else 'no'}" for i in range(rows)]
    path = tmp_path / "stays.csv"
    path.write_text("patient_id,age,sex,outcome\n" + "\n".join(lines) + "\n", encoding="utf-8")
    return read_table(path, roles=ROLES)


def with_intervals(ds):
    """A Numeric intervals tree built from the numbers (the Taxonomies step's builder): no "(missing)" in it."""
    tax = build_taxonomy("age", ds.frame["age"], "intervals:10")
    assert not tax.has_value(MISSING_LABEL)
    return ds.with_column("age", taxonomy=tax)


def publish(ds, mechanism, params):
    planned = plan(ds, mechanism, params)
    assert not planned.errors, [p.message for p in planned.errors]
    return planned, list(run_release(planned, rng=NoiseSource.for_tests(3), write_record=False))[-1]


def persons_per_group(ds, published, columns=("age", "sex")) -> pd.Series:
    table = published.release.table
    persons = ds.frame["patient_id"].to_numpy()[published.release.source_rows["table"]]
    kept = ~(table[list(columns)].astype(str) == "*").all(axis=1).to_numpy()
    return table[kept].assign(person=persons[kept]).groupby(list(columns), observed=True)["person"].nunique()


@pytest.mark.parametrize("tree", [False, True])
def test_tds_publishes_blank_ages_as_missing_in_groups_of_k_persons(tmp_path, tree):
    ds = stays(tmp_path)
    ds = with_intervals(ds) if tree else ds
    assert ds.spec("age").kind == "numeric" and ds.frame["age"].isna().any()
    planned, published = publish(ds, "TDS", {"k": 5})
    said = [p.message for p in planned.problems if p.column == "age"]
    assert said and "“(missing)”" in said[0]
    ages = set(published.release.table["age"].astype(str))
    assert MISSING_LABEL in ages and not ages & {str(a) for a in range(20, 80)}
    assert persons_per_group(ds, published).min() >= 5
    ex = export(published, tmp_path / "out.csv")
    assert ex.checks and all(c.ok for c in ex.checks), [c.message for c in ex.checks]
    assert MISSING_LABEL in (tmp_path / "out.csv").read_text(encoding="utf-8")


def test_global_recoding_puts_blank_ages_under_the_root_of_their_tree(tmp_path):
    ds = with_intervals(stays(tmp_path))
    planned, published = publish(ds, "Global recoding", {"k": 5, "suppression": 5.0})
    assert any("“(missing)”" in p.message for p in planned.problems if p.column == "age")
    table = published.release.table
    blank = ds.frame["age"].isna().to_numpy()[published.release.source_rows["table"]]
    shown = set(table["age"].astype(str)[blank])
    assert shown <= {MISSING_LABEL, "*"} and not set(table["age"].astype(str)[~blank]) & {MISSING_LABEL}
    assert persons_per_group(ds, published).min() >= 5
    ex = export(published, tmp_path / "out.csv")
    assert ex.checks and all(c.ok for c in ex.checks), [c.message for c in ex.checks]


@pytest.mark.parametrize("mechanism", ["Mondrian", "Local recoding"])
def test_a_tree_for_the_age_and_its_blanks_are_published_together(tmp_path, mechanism):
    """Before, Mondrian took the blanks only without a tree (a tree of Numeric intervals made it refuse them);
    local recoding shares global recoding's check and coding (kanon/lattice.py): the blanks come with them."""
    ds = with_intervals(stays(tmp_path))
    _planned, published = publish(ds, mechanism, {"k": 5})
    blank = ds.frame["age"].isna().to_numpy()[published.release.source_rows["table"]]
    assert set(published.release.table["age"].astype(str)[blank]) <= {MISSING_LABEL, "*"}
    assert persons_per_group(ds, published).min() >= 5
    ex = export(published, tmp_path / "out.csv")
    assert ex.checks and all(c.ok for c in ex.checks), [c.message for c in ex.checks]


def test_too_few_blank_patients_are_suppressed_or_generalised_never_published_alone(tmp_path):
    """Two patients' stays have a blank age: fewer than k = 5 persons, so “(missing)” cannot stand alone."""
    ds = stays(tmp_path, blank_every=75)  # rows 0, 75, 150, … : patients p0 and p75
    assert ds.frame.loc[ds.frame["age"].isna(), "patient_id"].nunique() == 2
    ds = with_intervals(ds)
    for mechanism, params in (("Global recoding", {"k": 5, "suppression": 5.0}), ("TDS", {"k": 5})):
        _planned, published = publish(ds, mechanism, params)
        table = published.release.table
        blank = ds.frame["age"].isna().to_numpy()[published.release.source_rows["table"]]
        assert MISSING_LABEL not in set(table["age"].astype(str)[blank]), mechanism
        assert persons_per_group(ds, published).min() >= 5, mechanism


def test_the_recount_counts_a_missing_group_like_any_other():
    """The checker reads “(missing)” as a value: a group of it with fewer than k persons fails the claim."""
    table = pd.DataFrame({"age": ["[20, 40)"] * 6 + [MISSING_LABEL] * 3, "sex": ["F"] * 9})
    persons = np.array([1, 2, 3, 4, 5, 6, 7, 7, 8])
    claim = KAnonymity(3, ("age", "sex"), person="patient_id")
    ok = check_claims({"table": table}, [claim], person="patient_id", persons={"table": persons})
    assert not ok[0].ok  # "(missing)" holds persons 7 and 8 only
    persons[-1] = 9
    table.loc[8, "age"] = MISSING_LABEL
    table = pd.concat([table, pd.DataFrame({"age": [MISSING_LABEL], "sex": ["F"]})], ignore_index=True)
    ok = check_claims({"table": table}, [claim], person="patient_id", persons={"table": np.r_[persons, 10]})
    assert ok[0].ok


def test_the_large_table_engines_still_name_the_fix(tmp_path):
    pytest.importorskip("duckdb")
    from ppdp_gui.engine.bigdata.large_dataset import open_large
    stays(tmp_path)
    ds = open_large(tmp_path / "stays.csv", hashes=False, roles={"age": Role.QUASI_IDENTIFIER,
                                                                 "sex": Role.QUASI_IDENTIFIER,
                                                                 "outcome": Role.CLASS})
    try:
        for mechanism in ("Mondrian", "Global recoding"):
            errors = [p for p in registry.create(mechanism).validate(ds, k=5) if p.level == "error"]
            assert any(p.column == "age" and "categorical" in p.message for p in errors), mechanism
    finally:
        ds.table.close()
