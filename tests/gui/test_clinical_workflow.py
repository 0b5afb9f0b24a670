"""The whole workflow through the window on a generated hospital-shaped table (issue 18): the safe first guesses
with their reasons, the kept rows (no row dropped: a blank reads "(missing)"), the identifying-column check
that blocks Run until it is settled, a Mondrian release, the risk tab before and after, an export with its release
note, and a second release exported to the same place keeping the first note."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt

from ppdp_gui.engine.checks.anonymity import check_release
from ppdp_gui.engine.data.schema import Role
from ppdp_gui.engine.mechanisms import registry
from ppdp_gui.gui.views.risk_panel import percent

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))
from clinical_helpers import diabetes_like  # noqa: E402

pytestmark = pytest.mark.skipif("Mondrian" not in registry.names(), reason="Mondrian is not registered")
N = 2000
QIS = ["race", "gender", "age"]


def clinical_csv(tmp_path: Path) -> tuple[Path, object]:
    """diabetes_like with a `weight` column missing ('?') in 99 % of rows, as in the UCI extract."""
    frame = diabetes_like(N, seed=7)
    weight = np.full(N, "?", dtype=object)
    weight[::100] = "[75-100)"
    frame.insert(5, "weight", weight)
    path = tmp_path / "diabetic_data.csv"
    frame.to_csv(path, index=False)
    return path, frame


def set_role(window, column: str, role: Role) -> None:
    combo = window.data_view.role_combo(column)
    combo.setCurrentIndex(combo.findData(role))


def run(window, qtbot) -> object:
    before = len(window.session.releases)
    window.go_to(window.run_view)
    assert window.run_view.run_button.isEnabled(), window.run_view.summary.text()
    qtbot.mouseClick(window.run_view.run_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: not window.run_view.running and len(window.session.releases) > before, timeout=120000)
    return window.session.last_release


def export(window, qtbot, target: Path) -> str:
    view = window.export_view
    window.go_to(view)
    view.format_combo.setCurrentText("CSV (.csv)")
    view.report_check.setChecked(True)
    view.path_edit.setText(str(target))
    qtbot.mouseClick(view.export_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: not view._busy, timeout=60000)
    return view.result.text()


def test_clinical_table_end_to_end(make_window, qtbot, tmp_path):
    path, frame = clinical_csv(tmp_path)
    w = make_window()
    w.open_path(str(path))
    qtbot.waitUntil(lambda: w.session.dataset is not None, timeout=30000)
    ds = w.session.dataset

    # safe first guesses, each with its reason in the Data step
    # several encounters per patient: patient_nbr is the person column (issue 25), never released
    assert ds.spec("patient_nbr").role == Role.PERSON and ds.spec("encounter_id").role == Role.IDENTIFIER
    assert ds.class_column == "readmitted"
    tip = w.data_view.role_combo("encounter_id").toolTip()
    assert tip.startswith("encounter_id was guessed identifier: ") and "different values" in tip
    assert "outcome" in w.data_view.role_combo("readmitted").toolTip()
    w.data_view.columns.setCurrentCell(list(ds.frame.columns).index("patient_nbr"), 0)
    assert "patient_nbr was guessed person" in w.data_view.why_label.text()

    # kept rows: by default no row is dropped and no column left out; a blank reads "(missing)"
    assert "weight" in ds.frame.columns and ds.n_rows == N and ds.source.n_rows_dropped == 0
    assert ds.source.left_out == () and (ds.frame["weight"] == "(missing)").sum() == N - len(range(0, N, 100))
    assert "dropped" not in w.data_view.file_label.text() and "left out" not in w.data_view.file_label.text()
    assert f"{N:,} rows" in w.step_texts()[0]

    # roles for this release; a changed role says what the first guess was
    for column in frame.columns:
        if column in QIS:
            set_role(w, column, Role.QUASI_IDENTIFIER)
    set_role(w, "patient_nbr", Role.INSENSITIVE)  # what the old guess did: published as is
    assert w.data_view.role_combo("patient_nbr").toolTip().startswith(
        "You chose insensitive for patient_nbr. The first guess was person")

    w.go_to(w.mechanism_view)
    w.mechanism_view.combo.setCurrentText("Mondrian")
    w.mechanism_view.panel.editor("k").setValue(10)

    # the identifying-column check: an error in the Run step, Run disabled until it is settled
    w.go_to(w.run_view)
    run_view = w.run_view
    assert run_view.identifying_box.isVisible()
    assert set(run_view.as_is_checks) == {"patient_nbr"}
    assert not run_view.run_button.isEnabled()
    assert "fix the problems first" in w.step_texts()[3]
    run_view.as_is_checks["patient_nbr"].setChecked(True)  # "publish as is": the plan's publish_as_is
    qtbot.waitUntil(lambda: run_view.run_button.isEnabled(), timeout=5000)
    assert w.session.preview().publish_as_is == ("patient_nbr",)
    assert w.session.recipe().publish_as_is == ("patient_nbr",)
    assert run_view.as_is_checks["patient_nbr"].isChecked()  # shown as confirmed, no longer as an error
    run_view.as_is_checks["patient_nbr"].setChecked(False)
    qtbot.waitUntil(lambda: not run_view.run_button.isEnabled(), timeout=5000)
    qtbot.mouseClick(run_view.leave_out_buttons["patient_nbr"], Qt.LeftButton)  # set its role instead
    qtbot.waitUntil(lambda: not run_view.identifying_box.isVisible(), timeout=5000)
    assert w.session.dataset.spec("patient_nbr").role == Role.IDENTIFIER

    # a Mondrian release, k = 10
    record = run(w, qtbot)
    table = record.table
    assert len(table) == N and check_release(table, QIS, 10).ok
    assert "patient_nbr" not in table.columns and "encounter_id" not in table.columns

    # the risk tab: the input and the release, by hand
    results = w.results_view
    w.go_to(results)
    results.tabs.setCurrentWidget(results.risk)
    panel = results.risk
    panel.set_population(fraction=0.05)
    qtbot.waitUntil(lambda: panel.comparison is not None and not panel.busy, timeout=30000)
    sizes = frame.groupby(QIS).size().to_numpy()
    released = table.groupby(QIS).size().to_numpy()
    assert panel.value("prosecutor: highest risk %", "input") == percent(1 / sizes.min())
    assert panel.value("prosecutor: success rate %", "input") == percent(len(sizes) / N)
    assert panel.value("prosecutor: highest risk %", "release") == percent(1 / released.min())
    assert 1 / released.min() <= 0.1 and panel.value("prosecutor: records at risk %", "release") == "0 %"
    assert panel.value("sample uniques %", "input") == percent((sizes == 1).sum() / N)
    assert panel.value("population uniques %", "release") not in ("", "—")
    assert panel.comparison.input.population.sampling_fraction == pytest.approx(0.05)
    assert "encounter_id" in {f.column for f in panel.comparison.harbor_input}
    assert not {f.column for f in panel.comparison.harbor_release} & {"encounter_id", "patient_nbr"}
    assert panel.harbor_summary.text()
    assert "Quasi-identifiers: race, gender, age." in panel.status.text() and "read again" not in panel.status.text()
    heights = panel.chart.bar_heights()
    assert heights[0].sum() == pytest.approx(100) and heights[1].sum() == pytest.approx(100)

    # export with its release note
    target = tmp_path / "release.csv"
    text = export(w, qtbot, target)
    assert target.is_file(), text
    note_path = tmp_path / "release.csv.release-note.json"
    note = json.loads(note_path.read_text())
    assert note["mechanism"]["name"] == "Mondrian" and note["files"][0]["rows"] == N
    assert "Release note (publish it with the file)" in text and "not overwritten" not in text

    # a second release exported to the same place keeps the first release's note, and the window says so
    w.go_to(w.mechanism_view)
    w.mechanism_view.panel.editor("k").setValue(20)
    second = run(w, qtbot)
    assert second.release_id != record.release_id
    text = export(w, qtbot, target)
    assert "It was not overwritten" in text and record.release_id in text
    assert json.loads(note_path.read_text())["release_id"] == second.release_id


def test_a_patient_number_published_as_is_can_be_marked_person_from_the_run_step(make_window, qtbot, tmp_path):
    """The Run step's identifying-column box offered only "Leave patient_nbr out"; a patient number repeated over
    visits is the person column, and one click there makes k count patients (found in the lead's look at the
    clinical screenshots)."""
    path, frame = clinical_csv(tmp_path)
    w = make_window()
    w.open_path(str(path))
    qtbot.waitUntil(lambda: w.session.dataset is not None, timeout=30000)
    for column in frame.columns:
        if column in QIS:
            set_role(w, column, Role.QUASI_IDENTIFIER)
    set_role(w, "patient_nbr", Role.INSENSITIVE)
    w.go_to(w.mechanism_view)
    w.mechanism_view.combo.setCurrentText("Mondrian")
    w.go_to(w.run_view)
    qtbot.waitUntil(lambda: "patient_nbr" in w.run_view.person_buttons, timeout=5000)
    button = w.run_view.person_buttons["patient_nbr"]
    assert "Person" in button.text() and "patient" in button.toolTip()
    qtbot.mouseClick(button, Qt.LeftButton)
    qtbot.waitUntil(lambda: w.session.dataset.person_column == "patient_nbr", timeout=5000)
    qtbot.waitUntil(lambda: not w.run_view.identifying_box.isVisible(), timeout=5000)
