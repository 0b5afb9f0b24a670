"""Nothing read from the values shapes a DP release unless the custodian stated or confirmed it (issue 25,
finding 1), and a mechanism private for one record replaced never publishes a row count that depends on the data
(finding 2)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from ppdp_gui.cli import main
from ppdp_gui.engine.data.domains import Domain, category_set
from ppdp_gui.engine.data.reader import read_table
from ppdp_gui.engine.data.roles import guess_roles_with_reasons
from ppdp_gui.engine.data.schema import NAPolicy, Role
from ppdp_gui.engine.persistence.project import Recipe, read_recipe, recipe_to_json, write_recipe
from ppdp_gui.engine.mechanisms import registry
from ppdp_gui.engine.pipeline import load, plan
from ppdp_gui.engine.pipeline.plan import CONFIRM_BUTTON, guessed_problem

LAPLACE = ("Laplace histogram", {"columns": "sex", "epsilon": 1.0})


def ward(n_codes: int) -> pd.DataFrame:
    """39 rows whose case_code has `n_codes` different values: 19 is just below the share that makes an id-like
    name an identifier (half the rows), 20 of 40 is at it."""
    r = np.random.default_rng(1)
    codes = [f"C{i % n_codes:03d}" for i in range(39)]
    return pd.DataFrame({"case_code": codes, "sex": r.choice(["F", "M"], 39), "age": r.integers(20, 80, 39)})


def read(tmp_path, frame, name, **kw):
    path = tmp_path / name
    frame.to_csv(path, index=False)
    data = read_table(path, **kw)
    return data.with_column("sex", domain=Domain(categories=("F", "M")))


def test_one_record_flips_a_value_based_guess_and_the_dp_plan_refuses_it(tmp_path):
    before = ward(19)
    after = pd.concat([before, pd.DataFrame({"case_code": ["C999"], "sex": ["F"], "age": [50]})],
                      ignore_index=True)
    a, b = read(tmp_path, before, "a.csv"), read(tmp_path, after, "b.csv")
    assert a.spec("case_code").role == Role.INSENSITIVE and b.spec("case_code").role == Role.IDENTIFIER
    for data in (a, b):  # either way the guess read the values: the plan refuses, naming the column
        assert "role" in data.spec("case_code").guessed and data.source.role_reasons["case_code"][1].from_values
        errors = plan(data, *LAPLACE).errors
        assert len(errors) == 1 and "case_code" in errors[0].message and CONFIRM_BUTTON in errors[0].message
        assert set(plan(data, *LAPLACE).unconfirmed_columns) == {"case_code", "sex", "age"}
        assert not plan(data.confirm_guesses(), *LAPLACE).errors  # the custodian confirmed what is shown
    # stated on the command line or in a recipe: no longer a guess
    stated = read(tmp_path, after, "c.csv", roles={"case_code": Role.INSENSITIVE, "sex": Role.QUASI_IDENTIFIER,
                                                   "age": Role.QUASI_IDENTIFIER},
                  kinds={"case_code": "categorical", "sex": "categorical", "age": "numeric"})
    assert stated.spec("case_code").role == Role.INSENSITIVE and not stated.guessed_columns
    assert not plan(stated, *LAPLACE).errors
    # k-anonymity is recounted on the released groups: not affected
    assert not [p for p in plan(b, "Mondrian", {"k": 3}).errors if CONFIRM_BUTTON in p.message]


def test_a_guess_from_the_name_alone_stands_and_a_never_released_column_needs_no_kind(tmp_path):
    frame = ward(19).assign(patient_name=[f"Name {i}" for i in range(39)])
    data = read(tmp_path, frame, "n.csv", roles={"case_code": Role.INSENSITIVE, "sex": Role.QUASI_IDENTIFIER,
                                                 "age": Role.QUASI_IDENTIFIER},
                kinds={"case_code": "categorical", "sex": "categorical", "age": "numeric"})
    spec = data.spec("patient_name")
    assert spec.role == Role.IDENTIFIER and spec.guessed == frozenset({"kind"})  # the name said it
    assert not data.source.role_reasons["patient_name"][1].from_values
    assert not plan(data, *LAPLACE).errors
    reasons = guess_roles_with_reasons(frame)
    assert not reasons["patient_name"][1].from_values and reasons["age"][1].from_values


def test_with_the_opt_in_the_release_is_labelled_not_dp(tmp_path):
    data = read(tmp_path, ward(19), "o.csv")
    planned = plan(data, *LAPLACE, allow_data_domains=True)
    assert not planned.errors
    assert any("guessed from the data" in c and "case_code" in c for c in planned.caveats)


def test_the_recipe_round_trips_the_confirmation(tmp_path):
    path = tmp_path / "w.csv"
    ward(19).to_csv(path, index=False)
    data = load(Recipe(source=str(path))).dataset
    # what the window saves: every role and kind shown, and which of them are still guesses
    recipe = Recipe(source=str(path), kinds={c.name: c.kind for c in data.schema},
                    roles={c.name: c.role for c in data.schema},
                    guessed={c.name: tuple(sorted(c.guessed)) for c in data.schema if c.guessed})
    write_recipe(recipe, tmp_path / "p.ppdp.json")
    doc = json.loads((tmp_path / "p.ppdp.json").read_text())
    assert doc["guessed"]["case_code"] == ["kind", "role"]
    back = load(read_recipe(tmp_path / "p.ppdp.json")).dataset
    assert set(back.guessed_columns) == {"case_code", "sex", "age"}
    recipe.guessed = {}  # the custodian pressed "Confirm roles and kinds"
    write_recipe(recipe, tmp_path / "q.ppdp.json")
    assert "guessed" not in json.loads((tmp_path / "q.ppdp.json").read_text()) or \
        not json.loads((tmp_path / "q.ppdp.json").read_text())["guessed"]
    confirmed = load(read_recipe(tmp_path / "q.ppdp.json")).dataset
    assert not confirmed.guessed_columns
    bad = dict(doc, guessed={"age": ["colour"]})
    (tmp_path / "bad.ppdp.json").write_text(json.dumps(bad))
    with pytest.raises(Exception, match="guessed"):
        read_recipe(tmp_path / "bad.ppdp.json")


def test_the_cli_gives_the_plans_refusal_and_confirm_roles_lifts_it(tmp_path, capsys):
    path = tmp_path / "w.csv"
    ward(19).to_csv(path, index=False)
    argv = ["run", *LAPLACE[:1], "-i", str(path), "-o", str(tmp_path / "r.csv"), "--ledger",
            str(tmp_path / "l.db"), "--domain", "sex=F,M", "-p", "columns=sex", "-p", "epsilon=1"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    expected = guessed_problem(["case_code", "sex", "age"]).message
    assert expected in err and not (tmp_path / "r.csv").exists()
    assert main(argv + ["--confirm-roles"]) == 0, capsys.readouterr().err
    assert (tmp_path / "r.csv").exists()


def test_the_missing_label_is_part_of_every_stated_list_but_the_class_list(tmp_path):
    data = read(tmp_path, ward(19), "m.csv")
    assert category_set(data.spec("sex")).values == ("F", "M", "(missing)")
    cls = data.with_column("sex", role=Role.CLASS)
    assert category_set(cls.spec("sex")).values == ("F", "M")


@pytest.mark.parametrize("mechanism", ["DP-PCA", "Laplace on records", "Exponential on records"])
def test_replace_one_mechanisms_refuse_a_table_read_by_dropping_rows(tmp_path, mechanism):
    frame = ward(19).drop(columns="case_code")
    frame.loc[3, "sex"] = "?"
    kept = read(tmp_path, frame, "k.csv").confirm_guesses()
    dropped = read(tmp_path, frame, "d.csv", na_policy=NAPolicy(action="drop")).confirm_guesses()
    assert dropped.n_rows == kept.n_rows - 1 == 38
    def refused(data) -> bool:
        data = data.with_column("age", domain=Domain(low=0, high=120, integer=True))
        messages = " ".join(p.message for p in plan(data, mechanism, {"epsilon": 1.0}).errors)
        return "Keep missing as its own category" in messages and "one record replaced" in messages
    assert not refused(kept) and refused(dropped)
    no_drop_yet = read(tmp_path, ward(19).drop(columns="case_code"), "n.csv",
                       na_policy=NAPolicy(action="drop")).confirm_guesses()
    assert no_drop_yet.source.n_rows_dropped == 0  # refused all the same: a neighbour with a blank would lose one
    no_drop_yet = no_drop_yet.with_column("age", domain=Domain(low=0, high=120, integer=True))
    assert any("one record replaced" in p.message for p in plan(no_drop_yet, mechanism, {"epsilon": 1.0}).errors)


def test_the_note_says_how_missing_values_were_treated(tmp_path):
    from ppdp_gui.engine.pipeline import release_note, run_release
    frame = ward(19).drop(columns="case_code")
    frame.loc[3, "sex"] = "?"
    data = read(tmp_path, frame, "note.csv").confirm_guesses()
    data = data.with_column("age", domain=Domain(low=0, high=120, integer=True))
    for mechanism, params, words in (("Laplace histogram", {"columns": "sex", "epsilon": 1.0}, "(missing)"),
                                     ("Laplace on records", {"epsilon": 1.0}, "n is that of the file, public")):
        published = list(run_release(plan(data, mechanism, params), seed=1))[-1]
        text = release_note(published)["missing values"]
        assert "(missing)" in text and words in text and not any(ch.isdigit() for ch in text)
        assert "(missing)" in set(published.table["sex"].astype(str))  # a public value like the others


def test_a_number_column_with_blanks_says_what_to_press(tmp_path):
    """Rows are kept, so a blank in a number column stays an empty cell; a mechanism that needs numbers there
    names the column and the two ways out, in the window's words and the command's."""
    frame = ward(19).drop(columns="case_code").astype(str)
    frame.loc[4, "age"] = ""
    data = read(tmp_path, frame, "blank.csv", kinds={"age": "numeric"}).confirm_guesses()
    assert data.n_rows == 39 and data.frame["age"].isna().sum() == 1
    for mechanism, params in (("Laplace histogram", {"columns": "age", "epsilon": 1.0, "low": 0, "high": 120}),
                              ("Fragmentation", {"k": 3})):  # Mondrian, TDS, global recoding publish them
        if mechanism == "Fragmentation":  # as “(missing)” (tests/engine/test_numeric_blanks_kanon.py)
            data = data.with_column("age", role=Role.QUASI_IDENTIFIER)
        found = plan(data, mechanism, params).errors if mechanism != "Fragmentation" else \
            [p for p in registry.create(mechanism).validate(data, **params) if p.level == "error"]
        text = " ".join(p.message for p in found)
        assert "'age' has missing values" in text and "Drop rows that have a missing value" in text
        assert "set the kind of age to categorical" in text and "--na drop" in text


def test_a_person_number_guess_read_the_values(tmp_path):
    """Rule 0 (the person column) reads whether the values repeat, so even the identifier guess that follows it
    for a person-number name depends on the values; a patient's name column does not."""
    frame = pd.DataFrame({"mrn": [f"M{i}" for i in range(120)], "patient_name": [f"N {i}" for i in range(120)],
                          "age": [str(20 + i % 60) for i in range(120)]})
    reasons = guess_roles_with_reasons(frame)
    assert reasons["mrn"][0] == Role.IDENTIFIER and reasons["mrn"][1].from_values
    assert reasons["patient_name"][0] == Role.IDENTIFIER and not reasons["patient_name"][1].from_values


def test_an_empty_number_cell_gets_the_middle_of_the_public_range_for_dp(tmp_path):
    """Rows kept: for a DP release an empty number cell is given the middle of the column's public range (a
    per-record rule), so a blank neither drops the row nor decides whether the release is made."""
    from ppdp_gui.engine.pipeline import run_release
    frame = ward(19).drop(columns="case_code").astype(str)
    frame.loc[4, "age"] = ""
    data = read(tmp_path, frame, "imp.csv", kinds={"age": "numeric"}).confirm_guesses()
    data = data.with_column("age", domain=Domain(low=0, high=120, integer=True))
    for mechanism, params in (("Laplace histogram", {"columns": "age", "epsilon": 1.0, "bin_width": 10}),
                              ("Laplace on records", {"epsilon": 1.0})):
        planned = plan(data, mechanism, params)
        assert not planned.errors, [p.message for p in planned.errors]
        assert planned.dataset.frame["age"].iloc[4] == 60 and planned.dataset.n_rows == 39
        assert any("the middle of its public range" in w for w in planned.warnings)
        published = list(run_release(planned, seed=2))[-1]
        assert "public range" in release_note_text(published) and "1 empty" not in release_note_text(published)


def release_note_text(published) -> str:
    from ppdp_gui.engine.pipeline import release_note
    return json.dumps(release_note(published))
