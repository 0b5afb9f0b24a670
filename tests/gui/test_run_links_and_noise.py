"""The Run step before Run (issue 26, findings 4 and 5): the columns someone else could know that the release would
publish unchanged, with the buttons to press; and, for a table of noisy counts, how much of it will be noise for a
table of the size the custodian states, with a warning and the fix when it is mostly noise."""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtCore import Qt

from ppdp_gui.engine.data.schema import Role

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))
from diabetes_shaped import diabetes_shaped  # noqa: E402


def open_diabetes(make_window, qtbot, tmp_path):
    path = tmp_path / "diabetic_data.csv"
    diabetes_shaped().to_csv(path, index=False)
    w = make_window()
    w.open_path(str(path))
    qtbot.waitUntil(lambda: w.session.dataset is not None, timeout=30000)
    return w


def test_run_step_lists_linkable_columns_and_the_buttons_work(make_window, qtbot, tmp_path):
    w = open_diabetes(make_window, qtbot, tmp_path)
    w.go_to(w.mechanism_view)
    w.mechanism_view.combo.setCurrentText("Mondrian")
    w.go_to(w.run_view)
    run = w.run_view
    qtbot.waitUntil(lambda: not run.refresh_later.pending, timeout=5000)
    assert run.linkable_box.isVisible()
    assert {"diag_2", "diag_3", "payer_code"} <= set(run.make_qi_buttons)
    qtbot.mouseClick(run.make_qi_buttons["diag_2"], Qt.LeftButton)
    assert w.session.dataset.spec("diag_2").role == Role.QUASI_IDENTIFIER
    qtbot.mouseClick(run.linkable_leave_buttons["payer_code"], Qt.LeftButton)
    assert w.session.dataset.spec("payer_code").role == Role.IDENTIFIER
    qtbot.waitUntil(lambda: not run.refresh_later.pending, timeout=5000)
    assert "diag_2" not in run.make_qi_buttons and "payer_code" not in run.make_qi_buttons
    assert "diag_3" in run.make_qi_buttons


def test_run_step_estimates_the_noise_of_a_dp_table_before_the_run(make_window, qtbot, tmp_path):
    w = open_diabetes(make_window, qtbot, tmp_path)
    for column in ("diag_1", "diag_2", "diag_3"):
        w.session.set_role(column, Role.QUASI_IDENTIFIER)
    w.go_to(w.mechanism_view)
    w.mechanism_view.combo.setCurrentText("DiffGen")
    w.session.set_opt_ins(allow_data_domains=True)  # domains from the data: the estimate still reads none of the rows
    w.go_to(w.run_view)
    run = w.run_view
    qtbot.waitUntil(lambda: not run.refresh_later.pending, timeout=5000)
    assert run.noise_estimate is not None and run.noise_box.isVisible()
    assert run.stated_records == w.session.dataset.n_rows  # the table's rows to begin with
    run.records_spin.setValue(101_766)
    text = run.noise_text.text()
    assert "101,766" in text and "noise" in text
    assert run.noise_warning.isVisible() and "smaller h" in run.noise_warning.text()
    cells = run.noise_estimate.cells
    w.mechanism_view.panel.editor("h").setValue(1)  # the fix it names: fewer specialisations, fewer cells
    qtbot.waitUntil(lambda: not run.refresh_later.pending, timeout=5000)
    assert run.noise_estimate.cells < cells and run.stated_records == 101_766
    assert not run.noise_warning.isVisible()
    assert run.run_button.isEnabled() or w.session.preview().errors  # a warning, never a block by itself
    # after the run, the Figures tab shows the same estimate beside the records the noise did add (custodian only)
    assert run.run_button.isEnabled(), run.summary.text()
    qtbot.mouseClick(run.run_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: not run.running and len(w.session.releases) == 1, timeout=120000)
    results = w.results_view
    qtbot.waitUntil(lambda: not results.showing, timeout=10000)
    form = results.figures.measures_form
    lines = [form.itemAt(i).widget().text() for i in range(form.count()) if form.itemAt(i).widget() is not None]
    assert any(t.startswith("Estimated before the run (for you, not published)") for t in lines), lines


def test_the_step_list_says_what_the_run_step_lists(make_window, qtbot, tmp_path):
    w = open_diabetes(make_window, qtbot, tmp_path)
    w.go_to(w.mechanism_view)
    w.mechanism_view.combo.setCurrentText("Mondrian")
    w.go_to(w.run_view)
    qtbot.waitUntil(lambda: not w.run_view.refresh_later.pending, timeout=5000)
    n = len(w.run_view.make_qi_buttons)
    assert n >= 5 and f"ready to run — {n} columns someone could know" in w.step_texts()[3]
