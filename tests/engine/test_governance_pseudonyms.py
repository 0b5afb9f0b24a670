"""Keyed pseudonyms and per-person date shifts (issue 31, Deliver 4): `ppdp run --pseudonym patient_nbr
--shift-dates admission_date:30` on a diabetes-shaped table; the written file is read back: the pseudonym is the
same for every row of a patient and in a second release of the same project, no raw patient number appears, a
patient's dates all moved by the same number of days within the window, the note says what the column is, and
the key lies beside the ledger, never in the release."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from governance_tables import governance_table
from ppdp_gui import cli
from ppdp_gui.engine.data.schema import Role
from ppdp_gui.engine.errors import CheckError
from ppdp_gui.engine.persistence import release_context as cx
from ppdp_gui.engine.governance.pseudonyms import check_no_raw_values, key_path, person_shifts, pseudonyms
from ppdp_gui.engine.persistence.project import Recipe, read_recipe, write_recipe


@pytest.fixture
def project(tmp_path):
    frame = governance_table(400).drop(columns=["patient_name", "phone", "zip", "age_years"])
    src = tmp_path / "extract.csv"
    frame.to_csv(src, index=False)
    recipe = Recipe(source=str(src), roles={"patient_nbr": Role.PERSON, "encounter_id": Role.IDENTIFIER,
                                            "gender": Role.QUASI_IDENTIFIER, "age": Role.QUASI_IDENTIFIER,
                                            "admission_date": Role.INSENSITIVE},
                    mechanism="Mondrian", params={"k": 5})
    cx.store(recipe, cx.ReleaseContext().with_project_id())
    path = tmp_path / "p.ppdp.json"
    write_recipe(recipe, path)
    return frame, path


def _run(tmp_path, project, name):
    out, note = tmp_path / f"{name}.csv", tmp_path / f"{name}.note.json"
    assert cli.main(["run", "--recipe", str(project), "--output", str(out), "--report", str(note), "--na", "category",
                     "--record", str(tmp_path / f"{name}.record.json"),
                     "--pseudonym", "patient_nbr", "--shift-dates", "admission_date:30", "--publish-as-is", "admission_date",
                     "--ledger", str(tmp_path / "ledger.sqlite")]) == 0
    return (pd.read_csv(out, dtype=str, keep_default_na=False), json.loads(note.read_text(encoding="utf-8")),
            out.read_text(encoding="utf-8"))


def test_pseudonyms_and_date_shifts_on_the_written_file(project, tmp_path):
    frame, path = project
    got, note, text = _run(tmp_path, path, "march")
    assert "patient_nbr" not in got.columns and "patient_nbr_pseudonym" in got.columns
    assert got["patient_nbr_pseudonym"].str.fullmatch(r"[0-9a-f]{20}").all()
    # no raw patient number anywhere in the file
    for raw in frame["patient_nbr"].astype(str).unique():
        assert raw not in set(got["patient_nbr_pseudonym"])
    assert not any(f",{p}," in text for p in frame["patient_nbr"].astype(str).unique() if len(p) >= 5)
    # every row of one patient: one pseudonym, and all of the patient's dates moved by the same days (±30)
    key = key_path(tmp_path / "ledger.sqlite", cx.of(read_recipe(path)).project_id)
    frame = frame.assign(p=pseudonyms(frame["patient_nbr"], key.read_bytes()))
    assert set(got["patient_nbr_pseudonym"]) == set(frame["p"])
    before = pd.to_datetime(frame["admission_date"]).groupby(frame["p"])
    after = pd.to_datetime(got["admission_date"]).groupby(got["patient_nbr_pseudonym"])
    low = (after.min() - before.min()).dt.days
    high = (after.max() - before.max()).dt.days
    assert (low == high).all() and low.abs().max() <= 30 and low.nunique() > 10
    assert (after.size() == before.size()).all()
    # the note says what the column is, with the window, and nothing secret
    words = json.dumps(note["details"]["pseudonyms and date shifts"])
    assert "keyed pseudonym of patient_nbr" in words and "-30 and +30" in words
    # the key lies beside the ledger and is not in the release
    assert key.parent.parent == tmp_path and key.read_bytes().hex() not in text
    # the dossier names the techniques, the value map maps each patient number to its pseudonym
    dossier = tmp_path / "d.md"
    assert cli.main(["dossier", "--record", str(tmp_path / "march.record.json"), "--recipe", str(path),
                     "--out", str(dossier)]) == 0
    md = dossier.read_text(encoding="utf-8")
    assert "| patient_nbr_pseudonym | other | pseudonymisation | keyed pseudonym of patient_nbr" in md
    assert "| admission_date | other | noise addition | dates shifted per person by up to ±30 days |" in md
    mapped = tmp_path / "map.csv"
    assert cli.main(["value-map", "--record", str(tmp_path / "march.record.json"), "--recipe", str(path),
                     "--out", str(mapped)]) == 0
    table = pd.read_csv(mapped, dtype=str, keep_default_na=False)
    rows = table[table["column"] == "patient_nbr"]
    assert dict(zip(rows["original value"], rows["released value"])) == dict(zip(
        frame["patient_nbr"].astype(str), frame["p"]))
    # a second release of the same project: the same pseudonyms
    again, _, _ = _run(tmp_path, path, "april")
    assert set(again["patient_nbr_pseudonym"]) == set(got["patient_nbr_pseudonym"])


def test_one_shift_per_person_within_the_window():
    persons = pd.Series(np.repeat(np.arange(300), 4).astype(str))
    shifts = person_shifts(persons, b"k" * 32, 30)
    per = pd.Series(shifts).groupby(persons).nunique()
    assert (per == 1).all() and shifts.min() >= -30 and shifts.max() <= 30
    assert len(set(shifts)) > 30  # spread over the window, not one value
    assert (person_shifts(persons, b"j" * 32, 30) != shifts).any()  # another project, other shifts


def test_the_check_refuses_a_raw_identifier_in_the_output():
    raw = pd.Series(["1234567", "7654321"])
    ok = pd.DataFrame({"patient_nbr_pseudonym": ["ab12", "cd34"], "ward": ["3", "4"]})
    assert check_no_raw_values(ok, raw, "patient_nbr") == 2
    leaked = pd.DataFrame({"patient_nbr_pseudonym": ["ab12", "cd34"], "note": ["seen 7654321", "7654321"]})
    with pytest.raises(CheckError, match="note"):
        check_no_raw_values(leaked, raw, "patient_nbr")


def test_the_project_states_the_treatments_and_a_number_with_blanks_is_checked_as_written(tmp_path):
    """The same engine entry the window's worker calls (governance/treatments.py): the project's statement is
    applied; a patient number column with blanks is read as floats, and its raw values are looked for in the
    written file as 12997332, not 12997332.0."""
    from ppdp_gui.engine.data.reader import dataset_from_frame
    from ppdp_gui.engine.governance import treatments as tr
    frame = pd.DataFrame({"mrn": [12997332.0, 15993126.0, None, 12997332.0] * 5, "age": [30, 40, 50, 60] * 5})
    data = dataset_from_frame(frame, roles={"mrn": Role.IDENTIFIER, "age": Role.QUASI_IDENTIFIER})
    ctx = tr.in_context(cx.ReleaseContext(), tr.Treatments(("mrn",)))
    assert ctx.project_id and tr.of_context(cx.context_from_json(ctx.to_json())).pseudonyms == ("mrn",)
    treated, done = tr.prepare(data, tr.of_context(ctx), ledger_path=tmp_path / "ledger.sqlite",
                               project_id=ctx.project_id)
    assert "mrn_pseudonym" in treated.frame.columns and done.confirmed == ("mrn_pseudonym",)
    assert set(done.raw["mrn"]) == {"12997332", "15993126"}
    leaked = pd.DataFrame({"mrn_pseudonym": ["ab", "cd"], "note": ["x", "12997332"]})
    with pytest.raises(CheckError, match="note"):
        check_no_raw_values(leaked, done.raw["mrn"], "mrn")
    # a quasi-identifier cannot be replaced by a pseudonym: the project's choice is refused by name
    with pytest.raises(Exception, match="age"):
        tr.prepare(data, tr.Treatments(("age",)), ledger_path=tmp_path / "ledger.sqlite", project_id=ctx.project_id)
