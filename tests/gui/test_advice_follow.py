"""The advice panel (issue 26, finding 3): when no value of the simulation beats always guessing, the panel says
so and what to try, and offers no *Apply this advice* button; advice worked out on another table is not applied."""

from __future__ import annotations

import pandas as pd

from ppdp_gui.engine.pipeline.sweep import SweepResult, table_identity


def _result(table: str, ca: list[float], guess: float) -> SweepResult:
    rows = [{"epsilon": e, "repeat": r, "seconds": 0.1, "CA %": m + (r - 1) * 0.2}
            for e, m in zip([0.1, 0.3, 1.0, 3.0], ca) for r in range(3)]
    return SweepResult("DiffGen", ["epsilon"], pd.DataFrame(rows), {"BA %": 80.0, "LA %": guess}, 100, 50, table)


def _show(w, qtbot, result) -> object:
    w.go_to(w.mechanism_view)
    w.mechanism_view.combo.setCurrentText("DiffGen")
    w.go_to(w.results_view)
    panel = w.results_view.sweep
    w.results_view.tabs.setCurrentWidget(panel)
    w.session.add_sweep("1. DiffGen: Privacy budget ε", result)
    qtbot.waitUntil(lambda: not panel.showing, timeout=5000)
    return panel


def test_no_better_than_guessing_says_what_to_try_and_offers_no_apply(loaded_window, qtbot):
    w = loaded_window
    result = _result(table_identity(w.session.dataset), [53.7, 53.85, 53.88, 53.9], guess=53.91)
    panel = _show(w, qtbot, result)
    assert panel.advice is not None and not panel.advice.applicable
    text = panel.advice_text.text()
    assert "No value advised." in text and "No value in this range beats guessing" in text
    assert "fewer columns" in text and "coarser taxonomies" in text
    assert panel.advice_box.isVisible() and not panel.apply_button.isVisible()
    before = dict(w.session.params)
    panel.apply_advice()  # even asked directly, nothing is set
    assert w.session.params == before


def test_advice_of_another_table_is_not_applied(loaded_window, qtbot):
    w = loaded_window
    panel = _show(w, qtbot, _result("sha256:another-table", [60, 70, 75, 75.1], guess=50))
    a = panel.advice
    assert a is not None and a.applicable
    assert panel.apply_button.isVisible() and not panel.apply_button.isEnabled()
    assert "another table" in panel.apply_button.toolTip()
    before = dict(w.session.params)
    panel.apply_advice()
    assert w.session.params == before and "another table" in panel.applied.text()
