"""The rough edges a nurse met on the hospital extract (scripts/hospital_extract.py) after the first walk: a
parameter shown as "0.0000", a figure without a unit, a warning for a 2-valued column, exact dates without a
suggestion to build a Dates tree. Each test clicks the real window."""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

from ppdp_gui.gui.widgets.param_panel import NumberField

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from hospital_extract import hospital_extract  # noqa: E402


def open_extract(w, qtbot, tmp_path, rows: int = 900):
    path = tmp_path / "hospital.csv"
    hospital_extract(rows, seed=3).to_csv(path, index=False)
    w.open_path(str(path))
    qtbot.waitUntil(lambda: w.session.dataset is not None, timeout=30000)
    return path


def test_automatic_interval_width_reads_automatic_not_zero(make_window, qtbot, tmp_path):
    """Before: "Interval width for numbers without taxonomy (0 = automatic)" showed 0.0000, read as a tiny
    width. Now the box says "automatic" (the spec's special value), a typed width reads 5.00, and typing the
    word gives the automatic value back; the Run step's parameters say "= automatic" too."""
    w = make_window()
    open_extract(w, qtbot, tmp_path)
    mv = w.mechanism_view
    w.go_to(mv)
    mv.combo.setCurrentText("Mondrian")
    field = next(f for f in mv.findChildren(NumberField) if f.spec.name == "grid_width" and f.isVisible())
    assert field.box.text() == "automatic"
    field.box.selectAll()
    qtbot.keyClicks(field.box, "5")
    qtbot.keyClick(field.box, Qt.Key_Return)
    assert field.value() == 5.0 and field.box.text() == "5.00"
    field.box.selectAll()
    qtbot.keyClicks(field.box, "automatic")
    qtbot.keyClick(field.box, Qt.Key_Return)
    assert field.value() == 0.0 and field.box.text() == "automatic"
    w.go_to(w.run_view)
    qtbot.waitUntil(lambda: not w.run_view.refresh_later.pending, timeout=5000)
    assert "(0 = automatic) = automatic" in w.run_view.summary.text()
    w.go_to(mv)
    mv.combo.setCurrentText("Global recoding")
    t = next(f for f in mv.findChildren(NumberField) if f.spec.name == "t" and f.isVisible())
    assert t.box.text() == "off"


def run_default(w, qtbot):
    run = w.run_view
    w.go_to(run)
    qtbot.waitUntil(lambda: not run.refresh_later.pending, timeout=5000)
    before = len(w.session.releases)
    qtbot.mouseClick(run.run_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: not run.running and len(w.session.releases) > before, timeout=120000)


def test_the_group_size_figure_has_a_plain_name_and_a_unit(make_window, qtbot, tmp_path):
    """Before: "Group-size penalty: 5,566,280" — no unit, nothing a nurse can picture. Now the Figures tab
    names it by what it counts, pairs of rows shown alike, with the unit after the number and the formula
    (the discernibility metric) in the tooltip."""
    w = make_window()
    open_extract(w, qtbot, tmp_path)
    run_default(w, qtbot)
    results = w.results_view
    w.go_to(results)
    results.tabs.setCurrentIndex(1)
    def figure_label():
        return next((lab for lab in results.figures.findChildren(QLabel) if lab.accessibleName() == "discernibility"),
                    None)
    qtbot.waitUntil(lambda: figure_label() is not None, timeout=10000)
    shown = figure_label()
    assert "pairs of rows</b>" in shown.text() and "DM = Σ" in shown.toolTip()
    titles = [lab.text() for lab in results.findChildren(QLabel)]
    assert "Pairs of look-alike rows:" in titles and "Group-size penalty:" not in titles
