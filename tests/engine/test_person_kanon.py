"""The person as the unit of the k-anonymity family (issue 25, item 3): with a person column (Role.PERSON) every
class of a k = 5 release holds the rows of at least 5 different patients, recounted on the written file; the
checker refuses a release that counts rows; without a person column the release says in words that one row is
one unit."""

import numpy as np
import pandas as pd
import pytest

from ppdp_gui.engine.checks.claims import check_claims, failures
from ppdp_gui.engine.claims import KAnonymity, LDiversity, RiskBound, Suppression, TCloseness
from ppdp_gui.engine.data.reader import dataset_from_frame
from ppdp_gui.engine.data.schema import Role
from ppdp_gui.engine.errors import CheckError
from ppdp_gui.engine.pipeline import plan, run_release
from ppdp_gui.engine.pipeline.export import export
from ppdp_gui.engine.taxonomy.from_spec import build_taxonomy

K = 5
MECHANISMS = {
    "Mondrian": {"k": K},
    "TDS": {"k": K},
    "Global recoding": {"k": K, "suppression": 5},
    "Local recoding": {"k": K},
    "Fragmentation": {"k": K},
}


def hospital(n_patients: int = 300, seed: int = 3) -> pd.DataFrame:
    """Several encounters per patient (1–6): the patient's age, sex and ZIP repeat (the age may move by a year),
    the diagnosis changes from visit to visit."""
    rng = np.random.default_rng(seed)
    visits = rng.integers(1, 7, n_patients)
    patient = np.repeat(np.arange(100_000, 100_000 + n_patients), visits)
    base_age = np.repeat(rng.integers(18, 90, n_patients), visits)
    age = base_age + rng.integers(0, 2, patient.size)
    sex = np.repeat(rng.choice(["F", "M"], n_patients), visits)
    zipc = np.repeat(rng.choice([f"021{i:02d}" for i in range(30)], n_patients), visits)
    icd = rng.choice(["250.0", "428.0", "414.0", "486", "584.9", "599.0"], patient.size)
    readmitted = rng.choice(["NO", "<30", ">30"], patient.size)
    frame = pd.DataFrame({"patient_nbr": patient.astype(str), "age": age, "sex": sex, "zip": zipc,
                          "diagnosis": icd, "readmitted": readmitted})
    return frame.sample(frac=1.0, random_state=seed).reset_index(drop=True)  # encounters not grouped by patient


def dataset(frame: pd.DataFrame, person: bool = True):
    roles = {"patient_nbr": Role.PERSON if person else Role.IDENTIFIER, "age": Role.QUASI_IDENTIFIER,
             "sex": Role.QUASI_IDENTIFIER, "zip": Role.QUASI_IDENTIFIER, "diagnosis": Role.SENSITIVE,
             "readmitted": Role.CLASS}
    data = dataset_from_frame(frame, roles=roles, kinds={"age": "numeric", "zip": "categorical"})
    taxonomies = {"age": build_taxonomy("age", data.frame["age"], "intervals:5"),
                  "zip": build_taxonomy("zip", data.frame["zip"], "mask"),
                  "sex": build_taxonomy("sex", data.frame["sex"], "flat")}
    for name, tax in taxonomies.items():
        data = data.with_column(name, taxonomy=tax)
    return data


def publish(data, mechanism: str, tmp_path):
    p = plan(data, mechanism, MECHANISMS[mechanism])
    assert not p.errors, [e.message for e in p.errors]
    published = None
    for item in run_release(p, seed=7):
        published = item
    exported = export(published, tmp_path / f"{mechanism.replace(' ', '_')}.csv")
    return published, exported


def persons_per_class(written: pd.DataFrame, qis: list[str], ids: np.ndarray, marker: str | None = None):
    """Distinct persons per group of the written rows (suppressed rows, '*' in every QI, left out)."""
    keep = np.ones(len(written), dtype=bool)
    if marker is not None:
        keep = ~(written[qis].astype(str) == marker).all(axis=1).to_numpy()
    frame = written[keep].astype(str).assign(_person=ids[keep])
    return frame.groupby(qis)["_person"].nunique()


def _written_tables(published, exported) -> dict[str, pd.DataFrame]:
    names = list(published.release.tables())
    return {name: pd.read_csv(path, dtype=str, keep_default_na=False) for name, path in zip(names, exported.files)}


@pytest.mark.parametrize("mechanism", list(MECHANISMS))
def test_k5_with_a_person_column_has_five_persons_in_every_class_of_the_written_file(mechanism, tmp_path):
    frame = hospital()
    data = dataset(frame)
    published, exported = publish(data, mechanism, tmp_path)
    source_ids = data.frame["patient_nbr"].to_numpy()
    written = _written_tables(published, exported)
    for claim in published.claims:
        if not isinstance(claim, KAnonymity):
            continue
        assert claim.person == "patient_nbr" and "persons (patient_nbr)" in claim.describe()
        table = written[claim.table]
        assert "patient_nbr" not in table.columns  # never written
        rows = np.asarray(published.release.source_rows[claim.table])
        # the alignment is right: the published-as-is columns of each written row are its source row's
        same = [c for c in table.columns if c not in claim.columns and c in ("diagnosis",)]
        for col in same:
            assert (table[col].to_numpy() == data.frame[col].astype(str).to_numpy()[rows]).all()
        per_class = persons_per_class(table, list(claim.columns), source_ids[rows], marker="*")
        assert per_class.min() >= K, (mechanism, claim.table, per_class.min())
    assert all(c.ok for c in exported.checks)
    assert any(isinstance(c.claim, KAnonymity) for c in exported.checks)


def test_row_level_k_leaves_classes_of_fewer_persons():
    """Why it matters: the same table released with k counting rows has classes made of fewer than 5 patients
    (several encounters of one patient)."""
    frame = hospital()
    data = dataset(frame, person=False)
    p = plan(data, "Mondrian", {"k": K})
    published = [x for x in run_release(p, seed=7)][-1]
    rows = np.asarray(published.release.source_rows["table"])
    ids = data.frame["patient_nbr"].to_numpy()[rows]
    per_class = persons_per_class(published.table, ["age", "sex", "zip"], ids)
    assert per_class.min() < K


# ---- the checker ---------------------------------------------------------------------------------------------------
def _table():
    """Two groups of 5 rows: group A holds 5 patients, group B 5 rows of only 2 patients; a suppressed row."""
    table = pd.DataFrame({"age": ["20-29"] * 5 + ["30-39"] * 5 + ["*"], "sex": ["F"] * 10 + ["*"],
                          "diagnosis": ["a", "b", "c", "a", "b", "a", "a", "a", "b", "a", "c"]})
    ids = np.array([1, 2, 3, 4, 5, 6, 6, 6, 6, 7, 8])
    return table, ids


def test_checker_counts_persons_not_rows():
    table, ids = _table()
    claim = KAnonymity(5, ("age", "sex"), person="patient_nbr")
    rows_ok = check_claims({"table": table}, [KAnonymity(5, ("age", "sex")), Suppression(0.1, ("age", "sex"))])
    assert not failures(rows_ok)  # row-level k = 5 holds
    checks = check_claims({"table": table}, [claim, Suppression(0.1, ("age", "sex"))], person="patient_nbr",
                          persons={"table": ids})
    bad = failures(checks)
    assert len(bad) == 1 and "fewer than k = 5 persons (patient_nbr)" in bad[0].message
    assert bad[0].figures["smallest group (persons)"] == 2


def test_checker_leaves_suppressed_rows_out_of_the_persons():
    table, ids = _table()
    ids = ids.copy()
    ids[6:10] = [10, 11, 12, 13]  # group B now 5 patients; the suppressed row's patient is alone
    claims = [KAnonymity(5, ("age", "sex"), person="p"), Suppression(0.1, ("age", "sex"))]
    assert not failures(check_claims({"table": table}, claims, person="p", persons={"table": ids}))


def test_checker_refuses_row_level_claims_when_the_table_has_a_person_column():
    """A planted bug: the mechanism counts rows (its claim has no person) though the table has a person
    column."""
    table, ids = _table()
    bad = failures(check_claims({"table": table}, [KAnonymity(2, ("age", "sex"))], person="patient_nbr",
                                persons={"table": ids}))
    assert bad and "counts rows, but the table has a person column (patient_nbr)" in bad[0].message


def test_checker_refuses_person_claims_without_aligned_ids():
    table, ids = _table()
    claim = KAnonymity(2, ("age", "sex"), person="patient_nbr")
    assert "not known" in failures(check_claims({"table": table}, [claim], person="patient_nbr"))[0].message
    short = failures(check_claims({"table": table}, [claim], person="patient_nbr", persons={"table": ids[:-1]}))
    assert "do not line up" in short[0].message
    assert "no person column" in failures(check_claims({"table": table}, [claim]))[0].message


def test_l_diversity_and_t_closeness_count_each_value_once_per_person():
    """A patient with three rows of 'a' weighs as one: entropy l-diversity that holds on rows fails on persons."""
    table = pd.DataFrame({"q": ["x"] * 8, "s": ["a", "a", "a", "a", "a", "b", "c", "d"]})
    ids = np.array([1, 2, 2, 2, 2, 3, 4, 5])
    # rows: a 5, b, c, d 1 each -> exp(entropy) 2.93 < 3; persons: a 2, b, c, d 1 each -> 3.79
    by_rows = check_claims({"table": table}, [LDiversity(3, "entropy", "s", ("q",))])
    by_persons = check_claims({"table": table}, [LDiversity(3, "entropy", "s", ("q",), person="p")], person="p",
                              persons={"table": ids})
    assert failures(by_rows) and not failures(by_persons)
    t_rows = check_claims({"table": table}, [TCloseness(0.0, "s", ("q",))])
    t_persons = check_claims({"table": table}, [TCloseness(0.0, "s", ("q",), person="p")], person="p",
                             persons={"table": ids})
    assert not failures(t_rows) and not failures(t_persons)  # one group: its distribution is the table's
    assert not failures(check_claims({"table": table}, [RiskBound("highest", 0.15, ("q",))]))  # 1/8 rows
    risk = check_claims({"table": table}, [RiskBound("highest", 0.15, ("q",), person="p")], person="p",
                        persons={"table": ids})
    assert failures(risk) and "20 %" in failures(risk)[0].message  # 1/5 persons


@pytest.mark.parametrize("mechanism", list(MECHANISMS))
def test_a_mechanism_that_counts_rows_is_stopped_before_anything_is_written(mechanism, monkeypatch, tmp_path):
    """The planted bug 'row-level k with a person column': the mechanism groups by rows (its person ids are
    taken away) but claims persons; the checker recounts persons and stops the release."""
    import ppdp_gui.engine.mechanisms.kanon.common as common
    monkeypatch.setattr(common, "person_codes", lambda data: None)
    data = dataset(hospital())
    p = plan(data, mechanism, MECHANISMS[mechanism])
    with pytest.raises(CheckError, match="persons"):
        list(run_release(p, seed=7))


def test_the_export_recounts_persons_on_the_written_bytes(tmp_path):
    """Person ids that do not line up with the written rows (an alignment bug) make the export refuse."""
    import dataclasses
    data = dataset(hospital())
    p = plan(data, "Mondrian", {"k": K})
    published = list(run_release(p, seed=7))[-1]
    ids = published.person_ids["table"]
    shuffled = dataclasses.replace(published, person_ids={"table": np.sort(ids)})
    with pytest.raises(CheckError, match="persons"):
        export(shuffled, tmp_path / "out.csv")
    assert not (tmp_path / "out.csv").exists()
    export(published, tmp_path / "ok.csv")


# ---- words ---------------------------------------------------------------------------------------------------------
def test_the_note_and_record_say_what_k_counts(tmp_path):
    from ppdp_gui.engine.pipeline.published import custodian_record, release_note
    with_person = list(run_release(plan(dataset(hospital()), "Mondrian", {"k": K}), seed=7))[-1]
    note = release_note(with_person)
    assert note["guarantee"]["statement"] == "5-anonymity of persons (patient_nbr)"
    assert any("k counts persons (patient_nbr)" in line for line in note["what this means"]["means"])
    assert "k counts persons (patient_nbr)" in custodian_record(with_person)["k counts"]
    assert note["details"]["k counts"] == "persons (patient_nbr)"
    without = list(run_release(plan(dataset(hospital(), person=False), "Mondrian", {"k": K}), seed=7))[-1]
    note = release_note(without)
    assert any("One row is one unit" in line and "a person with several rows" in line and "protected less" in line
               for line in note["what this means"]["means"])
    assert "k counts" not in note["details"]


@pytest.mark.parametrize("mechanism", list(MECHANISMS))
def test_the_run_step_says_what_k_counts(mechanism):
    from ppdp_gui.engine.pipeline.plan import resolve_mechanism
    mech = resolve_mechanism(mechanism)
    params = mech.resolve_params(**MECHANISMS[mechanism])
    with_person = " ".join(mech.describe_release(dataset(hospital()), params).sentences)
    assert "k counts persons (patient_nbr)" in with_person
    without = " ".join(mech.describe_release(dataset(hospital(), person=False), params).sentences)
    assert "One row is one unit" in without and "a patient with several rows is protected less" in without


# ---- the first guess -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["patient_nbr", "PatientID", "MRN", "subject_id", "member_no", "patient"])
def test_an_id_like_name_whose_values_repeat_is_guessed_the_person(name):
    from ppdp_gui.engine.data.roles import guess_roles_with_reasons
    frame = pd.DataFrame({name: np.arange(600) // 2, "age": np.arange(600) % 80})
    role, reason = guess_roles_with_reasons(frame, {"age": "numeric"})[name]
    assert role == Role.PERSON and "300 different values have 600 rows" in reason


@pytest.mark.parametrize("name", ["patient_name", "encounter_id", "visit_nbr", "patient_type"])
def test_other_names_are_not_the_person(name):
    from ppdp_gui.engine.data.roles import guess_roles_with_reasons
    frame = pd.DataFrame({name: (np.arange(600) // 2).astype(str)})
    assert guess_roles_with_reasons(frame)[name][0] != Role.PERSON


def test_only_the_first_person_like_column_is_guessed_person():
    from ppdp_gui.engine.data.roles import guess_roles_with_reasons
    frame = pd.DataFrame({"patient_nbr": np.arange(600) // 2, "subject_id": np.arange(600) // 3})
    roles = {k: v[0] for k, v in guess_roles_with_reasons(frame).items()}
    assert roles == {"patient_nbr": Role.PERSON, "subject_id": Role.IDENTIFIER}


def test_two_person_columns_are_refused_with_a_clear_message():
    frame = hospital().assign(mrn=lambda f: f["patient_nbr"])
    data = dataset(frame).with_column("mrn", role=Role.PERSON)
    for mechanism, params in [*MECHANISMS.items(), ("Laplace histogram", {"columns": "sex"})]:
        p = plan(data, mechanism, params)
        assert any("a table has one person column" in e.message and "Identifier" in e.message
                   for e in p.errors), mechanism


# ---- ppdp: --role COL=person, recipes, the large-table engine -------------------------------------------------------
def _csv(tmp_path):
    path = tmp_path / "encounters.csv"
    hospital().to_csv(path, index=False)
    return path


def test_ppdp_run_with_role_person_counts_persons(tmp_path, capsys):
    import json

    from ppdp_gui.cli import main
    src = _csv(tmp_path)
    code = main(["run", "Mondrian", "-i", str(src), "-o", str(tmp_path / "out.csv"), "--role", "patient_nbr=person",
                 "--param", "k=5", "--report", str(tmp_path / "note.json"), "--ledger", str(tmp_path / "l.db")])
    assert code == 0
    out = capsys.readouterr().out
    assert "5-anonymity of persons (patient_nbr)" in out and "k counts persons (patient_nbr)" in out
    note = json.loads((tmp_path / "note.json").read_text())
    assert note["guarantee"]["claims"][0]["unit"] == "persons (patient_nbr)"
    written = pd.read_csv(tmp_path / "out.csv", dtype=str)
    assert "patient_nbr" not in written.columns


def test_a_recipe_keeps_the_person_role(tmp_path):
    from ppdp_gui.engine.persistence.project import Recipe, read_recipe, write_recipe
    src = _csv(tmp_path)
    recipe = Recipe(source=str(src), roles={"patient_nbr": Role.PERSON})
    write_recipe(recipe, tmp_path / "p.ppdp.json")
    assert read_recipe(tmp_path / "p.ppdp.json").roles["patient_nbr"] == Role.PERSON


def test_the_large_table_engine_counts_persons(tmp_path, capsys):
    """`--engine duckdb` with a person column: every class holds k patients, recounted on the written file, and
    the release note says what k counts (tests/engine/test_big_tables_persons.py compares with memory)."""
    import json

    from ppdp_gui.cli import main
    src = tmp_path / "encounters.parquet"
    hospital().to_parquet(src)
    for mechanism in ("Mondrian", "Global recoding"):
        out, note = tmp_path / f"{mechanism}.parquet", tmp_path / f"{mechanism}.json"
        code = main(["run", mechanism, "-i", str(src), "--engine", "duckdb", "-o", str(out), "--report", str(note),
                     "--role", "patient_nbr=person", "--param", "k=5", "--build-taxonomy", "age=intervals",
                     "--ledger", str(tmp_path / "l.db")])
        err = capsys.readouterr().err
        assert code == 0 and out.exists(), err
        assert json.loads(note.read_text())["details"]["k counts"] == "persons (patient_nbr)"
        assert "patient_nbr" not in pd.read_parquet(out).columns


# ---- risk per person -----------------------------------------------------------------------------------------------
def test_risk_models_count_persons():
    from ppdp_gui.engine.metrics.risk_models import risk_report
    # one class of 4 rows that are 2 patients' (2 rows each), one class of 5 rows of 5 patients
    frame = pd.DataFrame({"q": ["a"] * 4 + ["b"] * 5})
    ids = np.array([1, 1, 2, 2, 3, 4, 5, 6, 7])
    rows = risk_report(frame, ["q"])
    persons = risk_report(frame, ["q"], persons=ids, person="patient_nbr", sampling_fraction=0.5)
    assert rows.prosecutor.highest_risk == pytest.approx(1 / 4) and rows.person is None
    assert persons.prosecutor.highest_risk == pytest.approx(1 / 2) and persons.person == "patient_nbr"
    assert persons.rows == 7 and persons.prosecutor.success_rate == pytest.approx(2 / 7)
    assert persons.marketer.success_rate == pytest.approx(2 / 7)


def test_compare_risk_counts_persons_before_and_after():
    from ppdp_gui.engine import explain
    data = dataset(hospital())
    published = list(run_release(plan(data, "Mondrian", {"k": K}), seed=7))[-1]
    out = explain.compare_risk(published, data.frame)
    assert out.input.person == "patient_nbr" and out.release.person == "patient_nbr"
    assert out.release.prosecutor.highest_risk <= 1 / K  # at least 5 persons in every class
    # a class's size is its patients: 300 patients, each counted once per class their rows fall in
    assert data.frame["patient_nbr"].nunique() == 300 <= out.input.rows < len(data.frame)
    flat = dataset(hospital(), person=False)
    by_rows = explain.compare_risk(list(run_release(plan(flat, "Mondrian", {"k": K}), seed=7))[-1], flat.frame)
    assert by_rows.release.person is None and by_rows.release.rows == len(flat.frame)


def test_the_sql_recount_refuses_per_person_claims_it_cannot_recount():
    import duckdb

    from ppdp_gui.engine.bigdata.recount import recount
    con = duckdb.connect()
    con.execute("CREATE TABLE t AS SELECT * FROM (VALUES ('a'), ('a')) AS v(q)")
    (check,) = recount(con, "t", [KAnonymity(2, ("q",), person="patient_nbr")])  # no person ids to count with
    assert not check.ok and "no person column to recount them with" in check.message
    (check,) = recount(con, "t", [KAnonymity(2, ("q",))])
    assert check.ok


@pytest.mark.parametrize("mechanism,params", [
    ("Mondrian", {"k": K, "l": 2, "diversity": "entropy"}),
    ("Global recoding", {"k": K, "l": 2, "diversity": "recursive", "c": 4.0, "suppression": 10}),
    ("Global recoding", {"k": K, "t": 0.4, "suppression": 10, "max_risk": 20, "avg_risk": 10}),
    ("Fragmentation", {"k": K, "l": 2}),
])
def test_l_t_and_risk_models_hold_per_person_on_the_written_file(mechanism, params, tmp_path):
    data = dataset(hospital())
    p = plan(data, mechanism, params)
    assert not p.errors, [e.message for e in p.errors]
    published = list(run_release(p, seed=7))[-1]
    per_person = [c for c in published.claims if isinstance(c, (KAnonymity, LDiversity, TCloseness, RiskBound))]
    assert len(per_person) >= 2 and all(c.person == "patient_nbr" for c in per_person)
    exported = export(published, tmp_path / "out.csv")
    assert {type(c.claim) for c in exported.checks} >= {type(c) for c in per_person}
    assert all(c.ok for c in exported.checks)


def test_the_release_figures_count_persons():
    data = dataset(hospital())
    published = list(run_release(plan(data, "Mondrian", {"k": K}), seed=7))[-1]
    assert published.figures["smallest group (persons)"] >= K
    assert published.figures["highest re-identification risk %"] <= 100 / K + 1e-9
    rows = list(run_release(plan(dataset(hospital(), person=False), "Mondrian", {"k": K}), seed=7))[-1]
    assert "smallest group (rows)" in rows.figures and "smallest group (persons)" not in rows.figures


def test_a_zip_code_column_read_as_text_is_explained_in_words():
    data = dataset(hospital()).with_column("zip", taxonomy=None)
    (problem,) = [p for p in plan(data, "Mondrian", {"k": K}).problems if p.column == "zip"]
    assert "leading zeros" in problem.message and "Its values are numbers and ," not in problem.message


def test_global_recoding_suppresses_a_group_of_many_rows_of_few_patients(tmp_path):
    """Two patients of a far-away ZIP with 4 encounters each: 8 rows, so row-level k = 5 publishes them as a
    group; counted in patients the group has 2, so its rows are suppressed ('*'), and the checker leaves the
    suppressed rows (lined up with their patients) out of the recount on the written file."""
    extra = pd.DataFrame({"patient_nbr": ["900001"] * 4 + ["900002"] * 4, "age": [50] * 8, "sex": ["F"] * 8,
                          "zip": ["99999"] * 8, "diagnosis": ["250.0"] * 8, "readmitted": ["NO"] * 8})
    frame = pd.concat([hospital(), extra], ignore_index=True)
    params = {"k": K, "suppression": 5}
    source_ids = dataset(frame).frame["patient_nbr"].astype(str).to_numpy()
    rows = list(run_release(plan(dataset(frame, person=False), "Global recoding", params), seed=7))[-1]
    far = np.isin(source_ids[np.asarray(rows.release.source_rows["table"])], ["900001", "900002"])
    assert far.sum() == 8 and (rows.table["zip"].astype(str)[far] != "*").all()  # a group of 2 patients
    published, exported = publish(dataset(frame), "Global recoding", tmp_path)
    written = _written_tables(published, exported)["table"]
    rows_at = np.asarray(published.release.source_rows["table"])
    ids = source_ids[rows_at]
    far = np.isin(ids, ["900001", "900002"])
    assert far.sum() == 8 and (written["zip"][far] == "*").all()  # suppressed
    assert persons_per_class(written, ["age", "sex", "zip"], ids, marker="*").min() >= K
    assert all(c.ok for c in exported.checks)


def test_the_alignment_is_checked_not_trusted(monkeypatch):
    """A mechanism that says the wrong source rows (a planted bug) gets no person ids: its release is stopped."""
    import dataclasses

    import ppdp_gui.engine.mechanisms.kanon.mondrian as mondrian
    from ppdp_gui.engine.checks.persons import released_person_ids
    data = dataset(hospital())
    published = list(run_release(plan(data, "Mondrian", {"k": K}), seed=7))[-1]
    rows = np.asarray(published.release.source_rows["table"])
    args = (data.frame["patient_nbr"], published.release.tables(), data.frame, ("diagnosis",))
    assert "table" in released_person_ids(args[0], {"table": rows}, *args[1:])
    assert "table" not in released_person_ids(args[0], {"table": np.sort(rows)}, *args[1:])
    original = mondrian.Release

    def wrong_rows(*a, **kw):
        release = original(*a, **kw)
        return dataclasses.replace(release, source_rows={"table": np.sort(release.source_rows["table"])})

    monkeypatch.setattr(mondrian, "Release", wrong_rows)
    with pytest.raises(CheckError, match="not known"):
        list(run_release(plan(data, "Mondrian", {"k": K}), seed=7))
