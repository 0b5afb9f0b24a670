"""Missing values per column (issue 18, finding 2): one nearly empty column no longer takes the table with it.

By default rows with a missing value are dropped, but a column missing in more than half the rows is left out
instead and the custodian is told; columns can be left out by name; when more than 5 % of the rows still go, a
warning says how many and how to keep them. The notes count rows of the private table: they are shown to the
custodian and never reach a release note."""

import json
import re

import numpy as np
import pandas as pd
import pytest
from clinical_helpers import diabetes_like

from ppdp_gui.cli import main
from ppdp_gui.engine.data.reader import read_table
from ppdp_gui.engine.data.schema import NAPolicy
from ppdp_gui.engine.errors import DataError
from ppdp_gui.engine.persistence.project import Recipe, read_recipe, recipe_to_json

DROP = NAPolicy(action="drop")  # dropping rows is the custodian's explicit choice; these tests make it


def clinical(tmp_path, n=2000, weight_share=0.97, gender_share=0.0):
    """The diabetes-shaped table with a `weight` column known for 3 % of the encounters (as in the UCI
    extract) and, optionally, some missing genders."""
    frame = diabetes_like(n).astype(str)
    r = np.random.default_rng(5)
    frame.insert(5, "weight", np.where(r.random(n) < weight_share, "?", r.choice(["[50-75)", "[75-100)"], n)))
    if gender_share:
        frame.loc[r.random(n) < gender_share, "gender"] = "?"
    path = tmp_path / "encounters.csv"
    frame.to_csv(path, index=False)
    return path, frame


def test_a_mostly_missing_column_is_left_out_instead_of_dropping_nearly_every_row(tmp_path):
    path, frame = clinical(tmp_path)
    data = read_table(path, na_policy=DROP)
    assert data.n_rows == len(frame)  # before: 97 % of the rows were dropped
    assert "weight" not in data.frame.columns and data.source.left_out == ("weight",)
    assert data.source.n_rows_dropped == 0
    missing = int((frame["weight"] == "?").sum())
    assert data.source.missing["weight"] == missing
    (text,) = data.source.notes
    assert "'weight'" in text and f"{missing:,} of {len(frame):,}" in text and "left out" in text
    assert "--na category" in text
    # kinds and roles of the other columns are guessed on the rows kept
    assert data.spec("patient_nbr").role.value == "person"  # several encounters per patient (issue 25)


def test_dropping_more_than_five_percent_of_the_rows_is_a_warning_that_says_how_to_keep_them(tmp_path):
    path, frame = clinical(tmp_path, gender_share=0.12)
    data = read_table(path, na_policy=DROP)
    gone = int((frame["gender"] == "?").sum())
    assert data.source.n_rows_dropped == gone and data.n_rows == len(frame) - gone
    warning = [t for t in data.source.notes if t.startswith("Warning")]
    assert len(warning) == 1
    assert f"{gone:,} of {len(frame):,} rows" in warning[0] and "'gender'" in warning[0]
    assert "Keep missing as its own category" in warning[0] and "--na category" in warning[0]
    # at 2 % there is no warning (only the left-out column's note)
    path2, _ = clinical(tmp_path, gender_share=0.02)
    assert not [t for t in read_table(path2, na_policy=DROP).source.notes if t.startswith("Warning")]


def test_keeping_missing_as_a_category_keeps_every_column_and_row(tmp_path):
    path, frame = clinical(tmp_path)
    data = read_table(path, na_policy=NAPolicy(action="category"))
    assert data.n_rows == len(frame) and "weight" in data.frame.columns and data.source.left_out == ()
    assert (data.frame["weight"] == "(missing)").sum() == (frame["weight"] == "?").sum()
    assert data.source.notes == ()


def test_columns_left_out_by_name_and_the_rule_switched_off(tmp_path):
    path, frame = clinical(tmp_path, gender_share=0.1)
    data = read_table(path, na_policy=NAPolicy(action="drop", leave_out=("gender",)))
    assert set(data.source.left_out) == {"gender", "weight"} and data.n_rows == len(frame)
    assert any(t == "Left out as asked: 'gender'." for t in data.source.notes)
    strict = read_table(path, na_policy=NAPolicy(action="drop", mostly_missing=None))
    assert "weight" in strict.frame.columns and strict.n_rows < 0.1 * len(frame)
    assert any("Warning" in t and "'weight'" in t for t in strict.source.notes)
    with pytest.raises(DataError, match="not in the table: 'nope'"):
        read_table(path, na_policy=NAPolicy(leave_out=("nope",)))
    with pytest.raises(DataError, match="every column"):
        read_table(path, na_policy=NAPolicy(leave_out=tuple(frame.columns) + ("weight",)))


def test_a_table_whose_every_column_is_mostly_missing_keeps_its_columns(tmp_path):
    path = tmp_path / "sparse.csv"
    pd.DataFrame({"a": ["?", "?", "1"], "b": ["x", "?", "?"]}).to_csv(path, index=False)
    with pytest.raises(DataError, match="every one of the 3 rows has a missing value"):
        read_table(path, na_policy=DROP)  # nothing is left out silently: the custodian must choose
    assert read_table(path).n_rows == 3  # kept by default


def test_a_left_out_column_cannot_fail_the_load_even_if_declared_numeric(tmp_path):
    path, _ = clinical(tmp_path)
    data = read_table(path, kinds={"weight": "numeric"}, na_policy=DROP)
    assert "weight" not in data.frame.columns


def test_the_policy_is_saved_in_the_project_and_read_back(tmp_path):
    pol = NAPolicy(leave_out=("weight",), mostly_missing=0.8)
    text = json.dumps(recipe_to_json(Recipe(source=str(tmp_path / "t.csv"), na_policy=pol)))
    (tmp_path / "p.ppdp.json").write_text(text)
    back = read_recipe(tmp_path / "p.ppdp.json").na_policy
    assert back.leave_out == ("weight",) and back.mostly_missing == 0.8
    bad = json.loads(text)
    bad["na_policy"]["mostly_missing"] = 2
    (tmp_path / "bad.ppdp.json").write_text(json.dumps(bad))
    with pytest.raises(DataError, match="mostly_missing"):
        read_recipe(tmp_path / "bad.ppdp.json")


def test_the_cli_says_what_was_left_out_and_the_note_never_counts_rows(tmp_path, capsys):
    path, frame = clinical(tmp_path, gender_share=0.08)
    out = tmp_path / "release.csv"
    argv = ["run", "Laplace histogram", "-i", str(path), "-o", str(out), "--ledger", str(tmp_path / "l.db"),
            "--domain", "race=Caucasian,AfricanAmerican,Hispanic,Other", "-p", "columns=race",
            "-p", "epsilon=0.5", "--leave-out", "medical_specialty", "--report", str(tmp_path / "note.json"),
            "--na", "drop", "--confirm-roles"]
    # weight is left out because the table has it mostly missing: a DP release asks for that to be named
    code = main(argv)
    _out, err = capsys.readouterr()
    assert code == 2 and not out.exists()
    assert "'weight'" in err and "left out" in err and "Left out as asked: 'medical_specialty'" in err
    assert "have a missing value and are dropped" in err and "'gender'" in err
    assert "warning: Warning" not in err  # said once (the nurse review)
    assert "a choice read from the data" in err and "--leave-out weight" in err
    code = main(argv + ["--leave-out", "weight"])
    _out, err = capsys.readouterr()
    assert code == 0, err
    assert "Left out as asked: 'weight', 'medical_specialty'." in err
    note = (tmp_path / "note.json").read_text()
    missing = str(int((frame["weight"] == "?").sum()))
    assert "left out" not in note and "Warning" not in note
    # the count as a number (not inside a hex digest, which may hold any 4 digits by chance)
    assert not re.search(rf"(?<![0-9a-f]){missing}(?![0-9a-f])", note) and f"{int(missing):,}" not in note


def test_a_dp_plan_asks_for_columns_left_out_by_the_data_to_be_named(tmp_path):
    """One record can tip a column over the mostly-missing threshold, changing the released columns and the rows
    kept: for an ε-DP release that choice must be the custodian's (named), as a domain must be public."""
    from ppdp_gui.engine.data.domains import Domain
    from ppdp_gui.engine.pipeline import plan
    path, _frame = clinical(tmp_path)
    params = {"epsilon": 1.0, "columns": "race"}

    def planned(policy, **options):
        data = read_table(path, na_policy=policy).confirm_guesses()
        data = data.with_column("race", domain=Domain(categories=("Caucasian", "AfricanAmerican", "Hispanic",
                                                                  "Other")))
        return plan(data, "Laplace histogram", params, **options)
    refused = planned(DROP)
    assert [p.column for p in refused.errors] == ["weight"]
    assert not planned(NAPolicy(action="drop", leave_out=("weight",))).errors
    assert not planned(NAPolicy()).errors  # rows kept (the default): nothing is left out by the data
    allowed = planned(DROP, allow_data_domains=True)
    assert not allowed.errors
    assert allowed.caveats == ["column weight left out because the data has it mostly missing"]
    # k-anonymity is recounted on the written file whatever the columns: no such question there
    assert all(p.column != "weight" for p in plan(read_table(path, na_policy=DROP), "Mondrian", {"k": 5}).errors)


def test_the_default_keeps_every_row_of_a_diabetes_shaped_extract(tmp_path):
    """Issue 26: payer_code 40 %, medical_specialty 49 % and race 2 % missing dropped 74 % of the rows under the
    old default; now no row is dropped, each blank reads "(missing)", and no column is left out by the data."""
    n = 3000
    frame = diabetes_like(n).astype(str)
    r = np.random.default_rng(7)
    frame["payer_code"] = np.where(r.random(n) < 0.40, "?", r.choice(["MC", "HM", "SP"], n))
    frame["medical_specialty"] = np.where(r.random(n) < 0.49, "?", r.choice(["Cardiology", "Surgery"], n))
    frame.loc[r.random(n) < 0.02, "race"] = "?"
    path = tmp_path / "diabetic.csv"
    frame.to_csv(path, index=False)
    data = read_table(path)
    assert data.source.n_rows_dropped == 0 and data.n_rows == n and data.source.left_out == ()
    assert (data.frame["payer_code"] == "(missing)").sum() == (frame["payer_code"] == "?").sum()
    assert not [t for t in data.source.notes if t.startswith("Warning")]
    dropped = read_table(path, na_policy=DROP)  # the old default, now an explicit choice
    assert dropped.source.n_rows_dropped > 0.5 * n
