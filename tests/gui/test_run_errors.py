"""Runs through the window: DP budget reserved and shown, over-budget refused with a clear dialog, cancel,
failures that never crash, malformed files reported with line and column."""

from __future__ import annotations

import os
from fractions import Fraction

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from ppdp_gui.engine.mechanisms import registry
from process_jobs import Slow  # Qt-free module: the worker process imports it to run the mechanism

DP = "Laplace histogram"


def error_dialogs(window) -> list[QMessageBox]:
    return [b for b in window.findChildren(QMessageBox) if b.objectName() == "error_dialog" and b.isVisible()]


@pytest.fixture
def slow_registered(monkeypatch):
    names, get = registry.names, registry.get
    monkeypatch.setattr(registry, "names", lambda: names() + ["Slow test"])
    monkeypatch.setattr(registry, "get", lambda name: Slow if name == "Slow test" else get(name))


@pytest.mark.skipif(DP not in registry.names(), reason="Laplace histogram not registered")
def test_dp_release_reserves_budget_and_refuses_beyond_cap(loaded_window, qtbot):
    w = loaded_window
    w.go_to(w.mechanism_view)
    w.mechanism_view.combo.setCurrentText(DP)
    panel = w.mechanism_view.panel
    panel.editor("epsilon").setValue(0.5)
    columns = panel.editor("columns")
    columns.findItems("sex", Qt.MatchExactly)[0].setCheckState(Qt.Checked)
    ledger = w.session.ledger
    identity = ledger.identify(w.session.dataset)
    ledger.set_cap(identity, Fraction(3, 4))
    p = w.mechanism_view.refresh_preview(fresh=True)
    assert not p.errors and p.cost.epsilon == Fraction(1, 2)
    assert "0.5 of the 0.75 left" in w.mechanism_view.budget_label.text()
    w.go_to(w.run_view)
    assert w.run_view.run_button.text() == "&Run and spend ε = 0.5" and w.run_view.reserve_note.isVisibleTo(w)
    qtbot.mouseClick(w.run_view.run_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: not w.run_view.running, timeout=60000)
    record = w.session.last_release
    assert record is not None and ledger.budget(identity).spent == Fraction(1, 2)
    assert record.ledger_entry is not None and record.ledger_entry.epsilon == Fraction(1, 2)
    assert record.ledger_entry.output_hash is None  # no output until a file is put in place
    w.go_to(w.export_view)
    entry = w.export_view.entry_text.toPlainText()
    assert f"Charged ε = 0.5 on " in entry and f"(ledger entry #{record.ledger_entry.id})" in entry
    assert "Spent on this table so far: ε = 0.5 of its cap of 0.75 (0.25 left)." in entry
    assert "records no output" in entry and "{" not in entry  # plain words, not a dict

    # 0.25 left: a second run at 0.5 is blocked before it starts…
    w.go_to(w.run_view)
    assert not w.run_view.run_button.isEnabled()
    qtbot.waitUntil(lambda: "over the budget" in w.step_texts()[2], timeout=5000)
    # …and if started anyway, the ledger refuses it with a dialog, nothing is spent, the window lives on
    w.run_view.start()
    qtbot.waitUntil(lambda: not w.run_view.running, timeout=30000)
    qtbot.waitUntil(lambda: bool(error_dialogs(w)), timeout=5000)
    box = error_dialogs(w)[0]
    assert "budget" in box.windowTitle().lower() or "budget" in box.text().lower()
    box.close()
    assert ledger.budget(identity).spent == Fraction(1, 2) and len(w.session.releases) == 1


def test_cancel_stops_the_run(slow_registered, loaded_window, qtbot):
    w = loaded_window
    w.mechanism_view.combo.setCurrentText("Slow test")
    w.go_to(w.run_view)
    qtbot.mouseClick(w.run_view.run_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: w.run_view.progress.value() > 0, timeout=60000)
    job = w.run_view._job
    qtbot.mouseClick(w.run_view.cancel_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: not w.run_view.running, timeout=20000)
    assert "Cancelled" in w.run_view.message.text() and "stays spent" not in w.run_view.message.text()
    assert not w.session.releases and not error_dialogs(w)
    assert w.runner.wait_all(10000)
    with pytest.raises(ProcessLookupError):  # the worker process was terminated and reaped
        os.kill(job.pid, 0)


def test_failure_is_a_dialog_not_a_crash(slow_registered, loaded_window, qtbot):
    w = loaded_window
    w.mechanism_view.combo.setCurrentText("Slow test")
    w.mechanism_view.panel.editor("fail").setChecked(True)
    w.go_to(w.run_view)
    w.run_view.start()
    qtbot.waitUntil(lambda: not w.run_view.running, timeout=60000)
    qtbot.waitUntil(lambda: bool(error_dialogs(w)), timeout=5000)
    box = error_dialogs(w)[0]
    assert "no partition satisfies k" in box.text() and box.windowTitle() == "The run could not finish"
    box.close()
    assert "failed" in w.step_texts()[3] and not w.session.releases
    # the window still works: choose again, run again
    w.mechanism_view.panel.editor("fail").setChecked(False)
    assert w.run_view.run_button.isEnabled()


def test_malformed_file_reports_line_and_column(make_window, qtbot, tmp_path, adult_sample):
    bad = tmp_path / "ragged.csv"
    bad.write_text("a,b,c\n1,2,3\n4,5\n")
    w = make_window()
    w.open_path(str(bad))
    qtbot.waitUntil(lambda: w.data_view.error_text != "", timeout=20000)
    text = w.data_view.error_label.text()
    assert "line 3" in text and w.data_view.error_label.isVisibleTo(w)
    assert "could not load" in w.step_texts()[0]
    assert w.session.dataset is None
    # a good file afterwards clears the error
    w.open_path(str(adult_sample))
    qtbot.waitUntil(lambda: w.session.dataset is not None, timeout=30000)
    assert not w.data_view.error_label.isVisibleTo(w)


def test_first_mechanism_shown_can_run_on_the_table(loaded_window):
    w = loaded_window
    name = w.mechanism_view.combo.currentText()
    names = registry.names()
    assert name in names and names.index(name) > 0  # the first (a histogram needing columns chosen) cannot
    p = w.mechanism_view.refresh_preview(fresh=True)
    assert not p.errors and "problem" not in w.step_texts()[2]
