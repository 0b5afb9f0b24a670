"""DP-PCA and DP-LDA in the window, drawn from their ParamSpecs alone: chosen in the Mechanism step, run in the
worker process, their figures shown in the Results step, and a simulation over k (DP-PCA) and over ε (DP-LDA)
drawn as curves."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from ppdp_gui.engine.mechanisms import registry

pytestmark = pytest.mark.skipif(not {"DP-PCA", "DP-LDA"} <= set(registry.names()), reason="not registered")
COLUMNS = ["age", "sex", "race", "marital-status"]


def choose(w, name: str, columns) -> None:
    w.go_to(w.mechanism_view)
    w.mechanism_view.combo.setCurrentText(name)
    listing = w.mechanism_view.panel.editor("columns")
    for c in columns:
        listing.findItems(c, Qt.MatchExactly)[0].setCheckState(Qt.Checked)


def run_and_wait(w, qtbot):
    w.go_to(w.run_view)
    qtbot.waitUntil(lambda: w.run_view.run_button.isEnabled(), timeout=10000)
    qtbot.mouseClick(w.run_view.run_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: not w.run_view.running, timeout=120000)
    qtbot.waitUntil(lambda: w.stack.currentWidget() is w.results_view, timeout=10000)
    return w.session.last_release


def form_labels(form) -> list[str]:
    """The figure names shown in a form (each value label carries its figure's name as accessible name)."""
    out = []
    for i in range(form.rowCount()):
        item = form.itemAt(i, form.ItemRole.FieldRole)
        if item is not None and item.widget() is not None and item.widget().accessibleName():
            out.append(item.widget().accessibleName())
    return out


def sweep(w, qtbot, param: str, grid: str) -> None:
    """A simulation on the own table (nothing charged: the budget of the releases below stays as the test plans)."""
    panel = w.results_view.sweep
    panel.basis_combo.setCurrentIndex(panel.basis_combo.findData("your own table"))
    panel.param_combo.setCurrentIndex(panel.param_combo.findData(param))
    panel.grid_edit.setText(grid)
    panel.repeats.setValue(1)
    before = len(w.session.sweeps)
    panel.start()
    qtbot.waitUntil(lambda: not panel.running, timeout=180000)
    qtbot.waitUntil(lambda: not panel.showing, timeout=5000)  # drawn in a later turn
    assert len(w.session.sweeps) == before + 1
    assert w.session.sweeps[-1][0] in panel.chart.series_names()


def test_dp_pca_and_dp_lda_through_the_window(loaded_window, qtbot):
    w = loaded_window
    choose(w, "DP-PCA", COLUMNS)
    mv = w.mechanism_view
    assert {"epsilon", "k", "columns"} <= {s.name for s in mv.panel.specs}
    mv.panel.editor("k").setValue(2)
    preview = mv.refresh_preview()
    assert not preview.errors, [p.message for p in preview.errors]
    assert preview.cost.is_dp and "ε = 1" in mv.cost_label.text()

    record = run_and_wait(w, qtbot)
    assert record.mechanism == "DP-PCA" and record.holds
    assert set(record.release.table.columns) == set(COLUMNS) and len(record.release.table) == 30162
    assert {"MSE", "F-norm", "MSE (noisy matrix)"} <= set(record.figures)
    assert any(label.startswith("MSE") for label in form_labels(w.results_view.figures.measures_form))
    sweep(w, qtbot, "k", "1, 3")
    assert len(w.session.sweeps[-1][1].summary()) == 2

    choose(w, "DP-LDA", ["age", "sex", "race"])
    assert {"class_column", "records"} <= {s.name for s in w.mechanism_view.panel.specs}
    w.mechanism_view.panel.editor("records").setValue(3000)  # fewer synthetic records: a quicker test
    # after a replace-one release (DP-PCA, ε = 1) the table's total is stated for one record replaced, where an
    # add/remove release counts twice: ε = 0.5 keeps it at the default cap (1 + 2 × 0.5 = 2)
    w.mechanism_view.panel.editor("epsilon").setValue(0.5)
    assert "for one record replaced" in w.mechanism_view.refresh_preview().budget_text()
    record = run_and_wait(w, qtbot)
    assert record.mechanism == "DP-LDA" and record.holds
    assert set(record.release.table.columns) == {"age", "sex", "race", "salary-class"}
    assert list(record.release.table.columns)[-1] == "salary-class" and len(record.release.table) == 3000
    assert {"ACA LDA %", "AUC tree", "entropy (bits)", "KL divergence (bits)"} <= set(record.figures)
    sweep(w, qtbot, "epsilon", "0.5, 2")
