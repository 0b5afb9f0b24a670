"""The user guide's walk-through of a hospital table (gui/help/guide.html, "A hospital table, step by step"; issue
26, Deliver 9), clicked through the window on a diabetes-shaped table: ~3,000 encounters, repeated patient numbers,
`?` for missing (payer_code ~40 %, medical_specialty ~47 %, race 2 %), three ICD-9 diagnosis columns with hundreds of
codes, age bands and the readmitted class. Another table is opened first, as a custodian's day goes.

The clicks are the guide's and no more: open the file; in the Run step, for each column listed under "Columns
someone else could know", *Make … a quasi-identifier* (the diagnoses) or *Leave … out* (payer, specialty); *Run*;
in the Export step, the file name and *Export*. The written file is read back: identifiers absent, k recounted on
it, nothing of the earlier table in it.

The checks that need other helpers' work are separate tests marked xfail(strict): flip them after merging."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd
import pytest
from PySide6.QtCore import Qt

from ppdp_gui.engine.checks.anonymity import check_release
from ppdp_gui.engine.data.schema import Role
from ppdp_gui.engine.mechanisms import registry
from ppdp_gui.engine.package_files import sample_table

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))
from diabetes_shaped import diabetes_shaped  # noqa: E402

pytestmark = pytest.mark.skipif("Mondrian" not in registry.names(), reason="Mondrian is not registered")
N = 3000
K = 10  # Mondrian's default: the walk-through changes no setting
IDENTIFIERS = ("encounter_id", "patient_nbr")
MAKE_QI = ("diag_1", "diag_2", "diag_3")  # what the guide says to press for diagnoses
LEAVE_OUT = ("payer_code", "medical_specialty")  # … and for the payer and the specialty


def open_table(w, qtbot, path) -> None:
    before = w.session.dataset
    w.open_path(str(path))
    qtbot.waitUntil(lambda: w.session.dataset is not None and w.session.dataset is not before
                    and w.session.dataset.source.path == str(path), timeout=30000)


def earlier_table(w, qtbot) -> None:
    """The custodian's earlier table of the day (the bundled Adult sample), with a setting changed on it."""
    open_table(w, qtbot, sample_table())
    w.go_to(w.mechanism_view)
    w.mechanism_view.combo.setCurrentText("Mondrian")
    w.mechanism_view.panel.editor("k").setValue(25)


def walk(w, qtbot, tmp_path) -> tuple[pd.DataFrame, dict, Path]:
    """The guide's clicks on the diabetes-shaped table, from opening it to the exported file read back."""
    path = tmp_path / "diabetic_data.csv"
    diabetes_shaped(N).to_csv(path, index=False)
    open_table(w, qtbot, path)                                            # click: File → Open
    run = w.run_view
    w.go_to(run)                                                           # click: 4. Run
    qtbot.waitUntil(lambda: not run.refresh_later.pending, timeout=5000)
    listed = set(run.make_qi_buttons)
    assert set(MAKE_QI) | set(LEAVE_OUT) <= listed, run.summary.text()
    for column in MAKE_QI:                                                 # clicks: Make … a quasi-identifier
        qtbot.mouseClick(run.make_qi_buttons[column], Qt.LeftButton)
        qtbot.waitUntil(lambda: not run.refresh_later.pending, timeout=5000)
    for column in LEAVE_OUT:                                               # clicks: Leave … out
        qtbot.mouseClick(run.linkable_leave_buttons[column], Qt.LeftButton)
        qtbot.waitUntil(lambda: not run.refresh_later.pending, timeout=5000)
    assert not run.linkable_box.isVisible()
    assert run.run_button.isEnabled(), run.summary.text()
    before = len(w.session.releases)
    qtbot.mouseClick(run.run_button, Qt.LeftButton)                        # click: Run
    qtbot.waitUntil(lambda: not run.running and len(w.session.releases) > before, timeout=120000)
    view = w.export_view
    w.go_to(view)                                                          # click: 6. Export
    target = tmp_path / "diabetes_release.csv"
    view.path_edit.setText(str(target))                                    # the file name
    qtbot.mouseClick(view.export_button, Qt.LeftButton)                    # click: Export
    qtbot.waitUntil(lambda: not view._busy, timeout=60000)
    assert target.is_file(), view.result.text()
    note = json.loads((tmp_path / "diabetes_release.csv.release-note.json").read_text())
    return pd.read_csv(target, dtype=str, keep_default_na=False), note, target


def test_walkthrough_to_an_exported_k_anonymous_file(make_window, qtbot, tmp_path):
    w = make_window()
    earlier_table(w, qtbot)
    adult_columns = set(w.session.dataset.frame.columns)
    written, note, _target = walk(w, qtbot, tmp_path)
    ds = w.session.dataset
    # the defaults the guide relies on: numbers left out, the outcome as class, the demographics protected
    assert all(ds.spec(c).role.never_released for c in IDENTIFIERS)
    assert ds.class_column == "readmitted" and w.session.mechanism_name == "Mondrian"
    assert {"race", "gender", "age"} <= set(ds.quasi_identifiers)
    # identifiers and the columns left out are absent from the written file
    assert not set(IDENTIFIERS) & set(written.columns) and not set(LEAVE_OUT) & set(written.columns)
    # k recounted on the written file, over every quasi-identifier, the diagnoses included
    qis = list(ds.quasi_identifiers)
    assert set(MAKE_QI) <= set(qis)
    k = w.session.params["k"]
    assert check_release(written, qis, k).ok
    assert written.groupby(qis).size().min() >= k
    assert note["mechanism"]["name"] == "Mondrian"
    # nothing of the earlier table: none of its own columns, none of its taxonomies on a column both share (age)
    assert not (adult_columns - set(ds.frame.columns)) & set(written.columns)
    assert ds.spec("age").taxonomy is None or "[0-10)" in ds.spec("age").taxonomy.leaf_values()
    assert [p.mechanism for p in w.session.releases] == ["Mondrian"] and w.session.sweeps == []


def test_walkthrough_keeps_at_least_95_percent_of_the_rows(make_window, qtbot, tmp_path):
    w = make_window()
    written, note, _target = walk(w, qtbot, tmp_path)
    assert len(written) >= 0.95 * N
    assert w.session.dataset.source.n_rows_dropped <= 0.05 * N


def test_walkthrough_starts_from_the_defaults_after_an_earlier_table(make_window, qtbot, tmp_path):
    w = make_window()
    earlier_table(w, qtbot)
    written, _note, _target = walk(w, qtbot, tmp_path)
    assert w.session.params["k"] == K  # not the earlier table's 25: the guide's walk changes no setting
    assert written.groupby(list(w.session.dataset.quasi_identifiers)).size().min() >= K


def test_walkthrough_knows_whose_rows_they_are(make_window, qtbot, tmp_path):
    """patient_nbr guessed the person column (Role.PERSON), so k counts patients, not encounters: recounted on the
    written file with the source's patient numbers lined up with the written rows."""
    w = make_window()
    written, note, _target = walk(w, qtbot, tmp_path)
    ds = w.session.dataset
    assert ds.spec("patient_nbr").role == Role.PERSON and ds.person_column == "patient_nbr"
    published = w.session.last_release
    rows = published.release.source_rows["table"]
    ids = ds.frame["patient_nbr"].to_numpy()[rows]
    qis = list(ds.quasi_identifiers)
    assert written[qis].assign(_p=ids).groupby(qis)["_p"].nunique().min() >= w.session.params["k"]
    assert note["guarantee"]["claims"][0]["unit"] == "persons (patient_nbr)"


def test_the_guide_describes_these_clicks():
    from ppdp_gui.gui.help import guide_html
    text = guide_html()
    start = text.index('<a name="walkthrough">')
    walk_text = " ".join(text[start:text.index("<h2>", start + 10)].split())
    for words in ("File → Open", "4. Run", "Make diag_1 a quasi-identifier", "Leave payer_code out",
                  "Leave medical_specialty out", "<b>Run</b>", "6. Export", "<b>Export</b>", "k = 10"):
        assert words in walk_text, words
