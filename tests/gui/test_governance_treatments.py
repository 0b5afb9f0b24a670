"""Keyed pseudonyms and per-patient date shifts chosen in the window (issue 31, Deliver 4): a nurse who only uses
the window picks "Replace with a keyed pseudonym" for the patient number and "Shift dates per patient" for the
admission date in the Data step's "Released as" column; the choice is saved in the project; the release made in
the window is read back from the written file (no raw patient number, one pseudonym per patient, each patient's
dates moved together), its note says what the columns are and lists the raw-value check, and `ppdp run --recipe`
with the saved project writes a byte-identical table."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from PySide6.QtCore import Qt

from ppdp_gui.cli import main
from ppdp_gui.engine.data.schema import Role
from ppdp_gui.engine.persistence import release_context as cx
from ppdp_gui.engine.governance import treatments as tr
from ppdp_gui.engine.governance.pseudonyms import key_path, pseudonyms
from ppdp_gui.engine.persistence.project import read_recipe

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))  # diabetes_shaped
SHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"


def hospital_table(path: Path, n: int = 1200) -> pd.DataFrame:
    """Encounters of a diabetes-shaped extract (repeated patients, '?' blanks, ICD-9 codes) with an admission date
    (some blank)."""
    from diabetes_shaped import diabetes_shaped
    frame = diabetes_shaped(n, seed=31).drop(columns=["num_lab_procedures", "num_medications", "diag_2", "diag_3"])
    frame["patient_nbr"] = frame["patient_nbr"] * 1117 + 8222157  # eight digits, as in the real extract
    r = np.random.default_rng(7)
    dates = (pd.Timestamp("2019-01-01") + pd.to_timedelta(r.integers(0, 700, n), unit="D")).strftime("%Y-%m-%d")
    frame["admission_date"] = np.where(r.random(n) < 0.05, "?", dates)
    frame.to_csv(path, index=False)
    return frame


def test_pseudonym_and_date_shift_chosen_in_the_window(make_window, qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("PPDP_TEST_SEED", "20261127")  # Mondrian shuffles its rows: the same seed in both
    src = tmp_path / "encounters.csv"
    frame = hospital_table(src)
    w = make_window()
    w.open_path(str(src))
    qtbot.waitUntil(lambda: w.session.dataset is not None, timeout=30000)
    ds = w.session.dataset
    assert ds.person_column == "patient_nbr" and ds.spec("encounter_id").role == Role.IDENTIFIER
    d = w.data_view
    role = d.role_combo("admission_date")  # released as it is (then shifted), not generalised
    role.setCurrentIndex(role.findData(Role.INSENSITIVE))
    # the identifier and the person column offer a keyed pseudonym; the date column a per-patient shift
    combo = d.treatment_combo("patient_nbr")
    assert [combo.itemText(i) for i in range(combo.count())] == [tr.LEAVE_OUT, tr.PSEUDONYM]
    assert d.treatment_combo("encounter_id").itemText(1) == tr.PSEUDONYM
    assert d.treatment_combo("gender") is None
    dates = d.treatment_combo("admission_date")
    assert dates.itemText(1) == "Shift dates per patient (within ± 30 days)"
    combo.setCurrentIndex(1)  # Replace with a keyed pseudonym
    d.shift_days.setValue(20)
    dates = d.treatment_combo("admission_date")
    assert dates.itemText(1) == "Shift dates per patient (within ± 20 days)"
    dates.setCurrentIndex(1)
    if os.environ.get("PPDP_SCREENSHOTS"):  # the README's picture, made on request only
        w.resize(1400, 860)
        qtbot.wait(50)
        d.columns.scrollToItem(d.columns.item(0, 0))
        d.grab().save(str(SHOTS / "9_pseudonym_choice.png"))
        from PIL import Image  # a small file: 64 colours are plenty for a window
        shot = SHOTS / "9_pseudonym_choice.png"
        Image.open(shot).convert("RGB").quantize(64).save(shot, optimize=True)
    assert w.session.treatments() == tr.Treatments(("patient_nbr",), ("admission_date",), 20)
    d.reload()  # the same file read again (as after another missing-value policy): the choices stay
    qtbot.waitUntil(lambda: not d._loading and not d._columns_later.pending, timeout=30000)
    assert w.session.treatments() == tr.Treatments(("patient_nbr",), ("admission_date",), 20)
    assert d.treatment_combo("patient_nbr").currentText() == tr.PSEUDONYM

    m = w.mechanism_view
    w.go_to(m)
    m.combo.setCurrentText("Mondrian")
    run = w.run_view
    w.go_to(run)
    qtbot.waitUntil(lambda: not run.refresh_later.pending, timeout=5000)
    assert "patient_nbr goes out only as patient_nbr_pseudonym" in run.summary.text()
    for column, check in run.as_is_checks.items():  # the dates and codes: "Publish as is", as a custodian ticks
        check.setChecked(True)
    qtbot.waitUntil(lambda: run.run_button.isEnabled(), timeout=10000)
    qtbot.mouseClick(run.run_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: not run.running, timeout=120000)
    assert len(w.session.releases) == 1, run.message.text()

    project = tmp_path / "encounters.ppdp.json"
    w.session.project_path = str(project)
    assert w.save_project() is not None
    saved = cx.of(read_recipe(project))
    assert saved.pseudonyms == ("patient_nbr",) and saved.project_id
    assert saved.date_shift == {"columns": ["admission_date"], "window_days": 20}

    view = w.export_view
    w.go_to(view)
    (tmp_path / "gui").mkdir()
    target = tmp_path / "gui" / "release.csv"
    view.path_edit.setText(str(target))
    qtbot.mouseClick(view.export_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: not view._busy, timeout=60000)
    assert target.is_file()

    got = pd.read_csv(target, dtype=str, keep_default_na=False)
    text = target.read_text(encoding="utf-8")
    assert "patient_nbr" not in got.columns and "encounter_id" not in got.columns
    assert got["patient_nbr_pseudonym"].str.fullmatch(r"[0-9a-f]{20}").all()
    raw = set(frame["patient_nbr"].astype(str))
    assert not raw & set(got["patient_nbr_pseudonym"])
    assert not any(f",{p}," in text or text.startswith(f"{p},") for p in raw)
    # the same patient, the same pseudonym: the project's key (beside the ledger) gives each patient's, and each
    # pseudonym has as many rows as its patient has encounters
    key = key_path(os.environ["PPDP_LEDGER"], saved.project_id).read_bytes()
    frame["p"] = pseudonyms(frame["patient_nbr"], key)
    assert dict(got["patient_nbr_pseudonym"].value_counts()) == dict(frame["p"].astype(str).value_counts())
    # each patient's dates moved by one number of days, within ± 20; blanks stay blank
    assert (got["admission_date"] == "(missing)").sum() == (frame["admission_date"] == "?").sum()
    before = frame[frame["admission_date"] != "?"]
    after = got[got["admission_date"] != "(missing)"]
    b_dates = pd.to_datetime(before["admission_date"]).groupby(before["p"])
    a_dates = pd.to_datetime(after["admission_date"]).groupby(after["patient_nbr_pseudonym"])
    low, high = (a_dates.min() - b_dates.min()).dt.days, (a_dates.max() - b_dates.max()).dt.days
    assert (low == high).all() and low.abs().max() <= 20 and low.nunique() > 5
    note = json.loads(Path(str(target) + ".release-note.json").read_text(encoding="utf-8"))
    said = json.dumps(note["details"]["pseudonyms and date shifts"])
    assert "keyed pseudonym of patient_nbr" in said and "-20 and +20" in said
    assert {"claim": "no raw value of patient_nbr appears", "table": "table", "ok": True} in \
        note["checked on the written file"]

    # ppdp run with the saved project (same ledger folder, so the same key): the same table, byte for byte
    cli_out = tmp_path / "cli.csv"
    assert main(["run", "--recipe", str(project), "--output", str(cli_out)]) == 0
    assert cli_out.read_bytes() == target.read_bytes()

    # the project opened again in a window shows the same choices
    again = make_window()
    again.open_project(str(project))
    qtbot.waitUntil(lambda: again.session.dataset is not None and again.session.mechanism_name == "Mondrian",
                    timeout=30000)
    assert again.session.treatments() == tr.Treatments(("patient_nbr",), ("admission_date",), 20)
    assert again.data_view.treatment_combo("patient_nbr").currentText() == tr.PSEUDONYM
    assert again.data_view.treatment_combo("admission_date").currentText() == tr.shift_words(20)
    assert again.data_view.shift_days.value() == 20
