"""KRIMP synthetic in the window: drawn from its ParamSpecs alone, run in the worker, its figures shown — the
normalised anonymity score with the utility figures, the copied-rare-rows figure in the risk box — and the
guarantee said plainly ("no formal guarantee") before and after the run."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

from ppdp_gui.engine.mechanisms.krimp import GUARANTEE
from ppdp_gui.engine.mechanisms.krimp.mechanism import measure_names

NAMES = measure_names()


def form_keys(form) -> list[str]:
    """The figure names shown in a form (each value label carries its figure's name as accessible name)."""
    out = []
    for row in range(form.rowCount()):
        item = form.itemAt(row, form.ItemRole.FieldRole)
        if item is not None and isinstance(item.widget(), QLabel) and item.widget().accessibleName():
            out.append(item.widget().accessibleName())
    return out


def test_krimp_synthetic_through_the_window(loaded_window, qtbot):
    w = loaded_window
    w.go_to(w.mechanism_view)
    w.mechanism_view.combo.setCurrentText("KRIMP synthetic")
    panel = w.mechanism_view.panel
    for name in ("min_sup", "n_records", "candidates", "laplace", "bins", "numbers_as", "prune"):
        assert panel.editor(name) is not None  # every parameter drawn from its spec
    panel.editor("min_sup").setValue(200)
    panel.editor("n_records").setValue(3000)
    preview = w.mechanism_view.refresh_preview()
    assert not preview.errors and not preview.cost.is_dp
    assert "no formal guarantee" in w.mechanism_view.cost_label.text()
    assert GUARANTEE in w.mechanism_view.about.text()
    assert any("no formal privacy guarantee" in w.mechanism_view.problems.item(i).text()
               for i in range(w.mechanism_view.problems.count()))

    w.go_to(w.run_view)
    qtbot.mouseClick(w.run_view.run_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: not w.run_view.running, timeout=180000)
    qtbot.waitUntil(lambda: w.stack.currentWidget() is w.results_view, timeout=5000)
    record = w.session.last_release
    assert record.mechanism == "KRIMP synthetic" and len(record.table) == 3000
    assert record.guarantee_line() == GUARANTEE
    assert 0 <= record.figures[NAMES["nas"]] <= 1
    figures = w.results_view.figures
    qtbot.waitUntil(lambda: bool(form_keys(figures.risk_form)), timeout=5000)
    measures, risk = form_keys(figures.measures_form), form_keys(figures.risk_form)
    assert NAMES["nas"] in measures and NAMES["equal"] in measures and NAMES["ds"] in measures
    assert NAMES["rare"] in risk and NAMES["rare"] not in measures
    assert GUARANTEE in figures.guarantee.text()
