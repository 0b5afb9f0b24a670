"""Rough edges of issue 26 (finding 8): a taxonomy problem is listed in the Run step, not shown as "The run could
not finish"; closing the window while an export is written asks, and never silently loses it."""

from __future__ import annotations

from PySide6.QtWidgets import QMessageBox

from ppdp_gui.engine.errors import TaxonomyError
from ppdp_gui.engine.taxonomy import Taxonomy
from ppdp_gui.gui.widgets.messages import describe_error


def dialogs(window) -> list[QMessageBox]:
    return [b for b in window.findChildren(QMessageBox) if b.isVisible()]


def test_a_taxonomy_problem_is_a_problem_of_the_run_step(loaded_window, qtbot):
    w = loaded_window
    assert describe_error(TaxonomyError("x"))[0] != "The run could not finish"
    # a taxonomy that lacks a value of the table, slipped in without the plan hearing of it
    ds = w.session.dataset
    qi = next(c for c in ds.quasi_identifiers if ds.spec(c).kind == "categorical")
    values = sorted(ds.frame[qi].dropna().astype(str).unique())
    w.session.dataset = ds.with_column(qi, taxonomy=Taxonomy.flat(qi, values[1:]))
    w.go_to(w.run_view)
    w.run_view.start()
    assert not w.run_view.running  # found before the run: nothing started, nothing charged
    summary = w.run_view.summary.text()  # names the column and the value its tree lacks (the nurse's walk)
    assert "Problem:" in summary and f"of {qi} are not in its taxonomy" in summary and repr(values[0]) in summary
    # and one raised by a mechanism while it runs lands in the step, not in a "could not finish" dialog
    w.run_view._failed(TaxonomyError(f"column {qi!r} has values not in its taxonomy: ['{values[0]}']"), "")
    qtbot.wait(50)
    assert not [b for b in dialogs(w) if b.windowTitle() == "The run could not finish"]
    assert values[0] in w.run_view.message.text()


def test_closing_during_an_export_asks_and_never_loses_it_silently(loaded_window, qtbot, tmp_path):
    import sys
    from pathlib import Path

    from PySide6.QtCore import Qt
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import process_jobs

    w = loaded_window
    w.go_to(w.mechanism_view)
    w.mechanism_view.combo.setCurrentText("Mondrian")
    w.go_to(w.run_view)
    qtbot.mouseClick(w.run_view.run_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: not w.run_view.running and w.session.last_release is not None, timeout=120000)
    view = w.export_view
    w.go_to(view)
    view.task = process_jobs.slow_export_job
    view.path_edit.setText(str(tmp_path / "release.csv"))
    asked = []
    w.ask_export_close = lambda: asked.append("asked") or asked_answer[0]

    asked_answer = ["wait"]
    qtbot.mouseClick(view.export_button, Qt.LeftButton)
    assert view.busy
    w.close()
    assert asked == ["asked"] and w.isVisible() and view.busy  # waits: the export goes on
    assert "closes when it is done" in w.statusBar().currentMessage()
    view.cancel()  # once it has ended, the window closes as asked
    qtbot.waitUntil(lambda: not w.isVisible(), timeout=20000)

    w.show()
    asked_answer[0] = "cancel"
    qtbot.mouseClick(view.export_button, Qt.LeftButton)
    assert view.busy
    w.close()
    qtbot.waitUntil(lambda: not w.isVisible(), timeout=20000)
    assert len(asked) == 2 and not view.busy
    assert "cancelled" in view.result.text().lower() and not (tmp_path / "release.csv").exists()
