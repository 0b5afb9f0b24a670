"""A hand-made ward table as a nurse would export it (MRN, patient name, dates of birth and admission, 5-digit ZIP
codes, an age column with '90+', free-text notes blank in a third of the rows): a person's name and the notes are
guessed identifiers (left out), blank notes cost no row, and the Safe Harbor screen does not take dates or 8-digit
record numbers for telephone numbers."""

import datetime as dt

import numpy as np
import pandas as pd
import pytest

from ppdp_gui.engine.data import NAPolicy, Role, guess_roles, read_table
from ppdp_gui.engine.data import roles as R
from ppdp_gui.engine.data.roles import guess_roles_with_reasons, role_rule_text
from ppdp_gui.engine.metrics.safe_harbor import screen

I, N = Role.IDENTIFIER, Role.INSENSITIVE


def ward_table(n: int = 600, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    dob = pd.Timestamp("1925-01-01") + pd.to_timedelta(rng.integers(0, 365 * 95, n), unit="D")
    notes = np.array(["Pt stable, d/c home", "Fall at home, L hip pain", "SOB on exertion; O2 2L",
                      "Wound dressing changed", "Refused meds this AM"])
    note = [f"{notes[i % 5]} ({i})" for i in range(n)]
    blank = rng.random(n) < 0.3
    return pd.DataFrame({
        "MRN": [f"{x:08d}" for x in rng.choice(10**8, n, replace=False)],
        "patient_name": [f"{a} {b}" for a, b in zip(rng.choice(["Ann", "Bob", "Eve", "Jon"], n),
                                                   rng.choice(["Lee", "Kim", "Cole", "Ward", "Khan"], n))],
        "date_of_birth": dob.strftime("%Y-%m-%d"),
        "zip": rng.choice(["02139", "02140", "01002"], n),
        "sex": rng.choice(["F", "M"], n),
        "age": rng.choice(["45", "67", "90+", "81"], n),
        "ward": rng.choice(["Cardio", "Ortho", "ICU"], n),
        "hospital_name": rng.choice([f"site{i}" for i in range(40)], n),
        "nurse_notes": np.where(blank, "", note),
    })


def test_people_names_are_identifiers_but_named_codes_are_not():
    reasons = guess_roles_with_reasons(ward_table())
    assert reasons["patient_name"][0] == I and "people's names" in reasons["patient_name"][1]
    assert reasons["hospital_name"][0] == N  # 40 hospitals: a code, not a person
    assert reasons["MRN"][0] == I
    roles = guess_roles(pd.DataFrame({"name": ["a", "b"], "Name": ["a", "b"], "contact_name": ["a", "b"],
                                      "GivenName": ["a", "b"], "ward_name": ["a", "b"]}))
    assert roles == {"name": I, "Name": I, "contact_name": I, "GivenName": I, "ward_name": N}


@pytest.mark.parametrize("column", sorted(getattr(R, "FREE_TEXT_WORDS", {"notes"})))
def test_free_text_by_its_name_is_an_identifier(column):
    reasons = guess_roles_with_reasons(pd.DataFrame({f"nurse_{column}": ["ok", "ok"]}))
    role, reason = reasons[f"nurse_{column}"]
    assert role == I and "free text" in reason and column in role_rule_text()


def test_free_text_by_its_values_is_an_identifier_whatever_its_name():
    n = 200
    frame = pd.DataFrame({"observations": [f"patient seen by Dr Ross on ward {i}" for i in range(n)],
                          "ward_title": ["Cardiology ward east"] * n,  # many words, one value: a label
                          "code": [f"c{i % 7}" for i in range(n)]})
    reasons = guess_roles_with_reasons(frame)
    assert reasons["observations"][0] == I and "free text" in reasons["observations"][1]
    assert reasons["ward_title"][0] == N and reasons["code"][0] == N


def test_blank_notes_do_not_drop_rows(tmp_path):
    frame = ward_table()
    blanks = int((frame["nurse_notes"] == "").sum())
    assert blanks > 0.25 * len(frame)
    path = tmp_path / "ward.csv"
    frame.to_csv(path, index=False)
    data = read_table(path, na_policy=NAPolicy(action="drop"))  # even when rows with a blank are dropped
    assert len(data.frame) == len(frame) and data.source.n_rows_dropped == 0
    roles = {c.name: c.role for c in data.schema}
    assert roles["nurse_notes"] == I and roles["patient_name"] == I
    assert any("nurse_notes" in note and "kept" in note for note in data.source.notes)
    assert not any("dropped" in note for note in data.source.notes)
    # a blank in a column that is released still drops its row, and the warning does not blame the notes
    frame.loc[: len(frame) // 5, "ward"] = ""
    frame.to_csv(path, index=False)
    assert read_table(path).source.n_rows_dropped == 0  # rows kept by default
    data = read_table(path, na_policy=NAPolicy(action="drop"))
    assert data.source.n_rows_dropped == len(frame) // 5 + 1
    warning = next(note for note in data.source.notes if "dropped" in note)
    assert "'ward'" in warning and "nurse_notes" not in warning
    # an explicit role counts too: blanks in a column set as identifier keep their rows
    data = read_table(path, roles={"ward": Role.IDENTIFIER}, na_policy=NAPolicy(action="drop"))
    assert data.source.n_rows_dropped == 0


def test_safe_harbor_does_not_take_dates_or_record_numbers_for_telephone_numbers():
    frame = ward_table(200)
    found = {(f.column, f.identifier) for f in screen(frame, today=dt.date(2026, 6, 1))}
    assert ("date_of_birth", "dates (except year)") in found
    assert ("date_of_birth", "telephone numbers") not in found
    assert ("MRN", "telephone numbers") not in found and ("MRN", "medical record numbers") in found
    codes = pd.DataFrame({"chart": [f"{i:08d}" for i in range(200)],
                          "reach": [f"0{441234000 + i}" for i in range(200)]})  # 10 digits: a phone number
    found = {(f.column, f.identifier) for f in screen(codes)}
    assert ("reach", "telephone numbers") in found and ("chart", "telephone numbers") not in found


@pytest.mark.parametrize("mechanism", ["Mondrian", "Global recoding"])
def test_text_quasi_identifiers_without_taxonomy_warn_before_the_run(tmp_path, mechanism):
    """A date of birth read as text and an age with '90+' have no taxonomy: the release would show '*' in nearly
    every row (seen on the ward table), so the plan warns, naming them, and the Run step's sentences say it."""
    from ppdp_gui.engine.mechanisms import registry
    from ppdp_gui.engine.pipeline import plan
    path = tmp_path / "ward.csv"
    ward_table().to_csv(path, index=False)
    data = read_table(path)
    planned = plan(data, mechanism, {})
    warned = {p.column: p.message for p in planned.problems if p.level == "warning" and p.column}
    assert "date_of_birth" in warned and "'*'" in warned["date_of_birth"] and "Taxonomies step" in warned["date_of_birth"]
    assert "zip" not in warned and "sex" not in warned and "age" not in warned  # 3, 2 and 4 values
    assert not planned.errors
    if mechanism == "Mondrian":
        shape = registry.create(mechanism).describe_release(data, planned.params)
        assert any("date_of_birth" in s and "no taxonomy" in s and "'*'" in s for s in shape.sentences)


def test_global_recoding_says_how_to_give_a_number_taxonomy_in_both_places(shared_data):
    from ppdp_gui.engine.pipeline import plan
    data = read_table(shared_data / "pima" / "pima-indians-diabetes.csv")
    message = next(p.message for p in plan(data, "Global recoding", {}).errors if p.column == "age")
    assert "Taxonomies step" in message and "--taxonomy age=" in message


def test_an_age_with_90_plus_is_told_why_it_is_text_and_what_to_do():
    from ppdp_gui.engine.data import dataset_from_frame
    from ppdp_gui.engine.pipeline import plan
    ages = [str(a) for a in range(18, 90)] + ["90+"]
    frame = pd.DataFrame({"age": (ages * 10)[:700], "sex": (["F", "M"] * 350)})
    data = dataset_from_frame(frame)
    assert data.spec("age").kind == "categorical"  # '90+' is not a number
    message = next(p.message for p in plan(data, "Mondrian", {}).problems if p.column == "age")
    assert "'90+'" in message and "read as text" in message and "Numeric intervals" in message


def test_date_spelling_is_read_only_when_it_is_certain():
    from ppdp_gui.engine.errors import TaxonomyError
    from ppdp_gui.engine.taxonomy.dates import date_format_of, date_hierarchy
    assert date_format_of("d", ["2020-03-07", "1999-12-31"]) is None
    assert date_format_of("d", ["07/03/2020", "25/12/2020"]) == "%d/%m/%Y"  # 25 is a day
    assert date_format_of("d", ["03.07.2020", "12.25.2020"]) == "%m.%d.%Y"
    for bad, words in ((["03/04/2020", "05/06/2020"], "day or the month"),
                       (["07/03/2020", "25.12.2020"], "mixes"), (["07/03/2020", "soon"], "'soon'")):
        with pytest.raises(TaxonomyError, match=words):
            date_format_of("d", bad)
    ward = ward_table(100)
    tax = date_hierarchy("date_of_birth", ward["date_of_birth"],
                         date_format=date_format_of("date_of_birth", ward["date_of_birth"]))
    assert tax.origin == "data" and tax.height == 4


def test_noise_example_is_about_the_columns_counted(tmp_path, shared_data):
    """A sex × ward histogram read 'for example ages below your youngest patient', about nothing in it."""
    from ppdp_gui.engine.data.domains import Domain
    from ppdp_gui.engine.explain import plan_sentences
    from ppdp_gui.engine.pipeline import plan
    path = tmp_path / "ward.csv"
    ward_table().to_csv(path, index=False)
    data = read_table(path).with_column("sex", domain=Domain(categories=("F", "M"))) \
        .with_column("ward", domain=Domain(categories=("Cardio", "Ortho", "ICU")))
    text = " ".join(plan_sentences(plan(data, "Laplace histogram", {"columns": ["sex", "ward"]})))
    assert "youngest" not in text and "a combination of sex and ward that no one in your table has" in text
    pima = read_table(shared_data / "pima" / "pima-indians-diabetes.csv")
    pima = pima.with_column("age", domain=Domain(low=0, high=120, integer=True)) \
        .with_column("class", domain=Domain(categories=("0", "1")))
    text = " ".join(plan_sentences(plan(pima, "DiffGen", {})))
    assert "youngest patient, when the public domain of age starts lower" in text


def test_every_global_recoding_figure_has_plain_words(tmp_path):
    """Results showed 'NCP % date_of_birth', 'Precision %', 'suppressed rows' with no meaning beside them."""
    from ppdp_gui.engine.glossary import figure
    from ppdp_gui.engine.pipeline import plan, run_release
    path = tmp_path / "ward.csv"
    ward_table().to_csv(path, index=False)
    planned = plan(read_table(path), "Global recoding", {})
    published = None
    for item in run_release(planned, ledger=tmp_path / "ledger.sqlite"):
        published = item
    names = [n for n in published.figures if not n.startswith("prosecutor") and not n.startswith("journalist")]
    assert "NCP % date_of_birth" in names and "Precision %" in names and "suppressed rows" in names
    unexplained = [n for n in names if not figure(n).meaning]
    assert not unexplained, unexplained
    assert figure("NCP % date_of_birth").title == "Information loss of date_of_birth"


def test_release_note_says_a_column_without_taxonomy_was_kept_or_starred(tmp_path):
    """The note said 'taxonomy' for date_of_birth although none was given (every value became '*')."""
    from ppdp_gui.engine.pipeline import plan, run_release
    path = tmp_path / "ward.csv"
    ward_table().to_csv(path, index=False)
    published = None
    for item in run_release(plan(read_table(path), "Mondrian", {}), ledger=tmp_path / "ledger.sqlite"):
        published = item
    how = published.release.note["generalisation"]
    assert how["date_of_birth"] == "no taxonomy: a value or '*'" and how["sex"] == "no taxonomy: a value or '*'"


def test_a_date_column_is_a_quasi_identifier_whatever_its_name():
    """'admitted' holding 07/03/2024 was published as is: no word of its name is in a list."""
    n = 300
    days = pd.date_range("2024-01-01", periods=n, freq="D")
    frame = pd.DataFrame({"admitted": days.strftime("%d/%m/%Y"), "seen": days.strftime("%Y-%m-%d %H:%M"),
                          "ward": ["A", "B", "C"] * 100, "version": ["1.2.2024"] * 10 + ["x"] * (n - 10)})
    reasons = guess_roles_with_reasons(frame)
    assert reasons["admitted"][0] == Role.QUASI_IDENTIFIER and "dates" in reasons["admitted"][1]
    assert reasons["seen"][0] == Role.QUASI_IDENTIFIER
    assert reasons["ward"][0] == N and reasons["version"][0] == N
    assert "dates with a day" in role_rule_text()


def test_pima_measurements_are_sensitive(shared_data):
    """Pima's glucose, insulin, blood pressure and BMI were 'insensitive: nothing suggests a role'."""
    data = read_table(shared_data / "pima" / "pima-indians-diabetes.csv")
    roles = {c.name: c.role for c in data.schema}
    for column in ("pregnancies", "plasma-glucose", "diastolic-bp", "serum-insulin", "bmi", "diabetes-pedigree"):
        assert roles[column] == Role.SENSITIVE, column
    assert roles["age"] == Role.QUASI_IDENTIFIER and roles["class"] == Role.CLASS
    assert roles["triceps-skinfold"] == N  # a measurement with no listed word: still the custodian's call


def test_numeric_intervals_take_a_top_coded_age():
    from ppdp_gui.engine.errors import TaxonomyError
    from ppdp_gui.engine.taxonomy.builders import numbers_with_top_codes, numeric_intervals
    ages = pd.Series(["22", "90+", "82", "45", "90+"])
    assert numbers_with_top_codes(ages) and not numbers_with_top_codes(pd.Series(["22", "unknown"]))
    tax = numeric_intervals("age", ages, 10)
    assert tax.generalise(ages, tax.nodes_at_level(1)).tolist() == \
        ["[20, 30)", "[90, 100)", "[80, 90)", "[40, 50)", "[90, 100)"]
    assert tax.has_value("90+")
    with pytest.raises(TaxonomyError, match="top code"):
        numeric_intervals("age", pd.Series(["22", "unknown"]), 10)
