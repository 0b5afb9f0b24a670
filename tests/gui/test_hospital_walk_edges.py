"""The rough edges a nurse met on the hospital extract (scripts/hospital_extract.py) after the first walk: a
parameter shown as "0.0000", a figure without a unit, a warning for a 2-valued column, exact dates without a
suggestion to build a Dates tree. Each test clicks the real window."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

from ppdp_gui.gui.widgets.param_panel import NumberField
from tests.gui.test_hospital_walk import open_extract as open_walk_extract


def open_extract(w, qtbot, tmp_path, rows: int = 900):
    """The first walk's extract (tests/gui/test_hospital_walk.py), 900 rows."""
    return open_walk_extract(w, qtbot, tmp_path, rows)


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


def test_a_two_valued_column_is_no_warning_in_the_taxonomies_step(make_window, qtbot, tmp_path):
    """Before: sex (F, M) counted among "4 quasi-identifiers without taxonomy" with a warning sign, as if it
    needed work. A two-valued column is kept or shown as '*' whatever tree it has: now it reads "no tree
    needed" and only zip and the two dates are counted."""
    w = make_window()
    open_extract(w, qtbot, tmp_path)
    tv = w.taxonomy_view
    w.go_to(tv)
    items = {tv.columns.item(i).data(Qt.UserRole): tv.columns.item(i).text() for i in range(tv.columns.count())}
    assert "no tree needed: F, M" in items["sex"]
    assert tv.state()[1] == "3 quasi-identifiers without taxonomy"
    assert "build “Dates”" in items["admit_date"]


def test_exact_dates_are_offered_a_dates_tree_in_one_click(make_window, qtbot, tmp_path):
    """Before: two exact dates as quasi-identifiers gave '*' in nearly every row, and nothing before the run
    suggested the Dates builder. Now the Run step lists them (and the ZIP code, for masking), and “Build a Dates
    tree for admit_date” builds the tree the Taxonomies step's Dates builder builds; the box goes once each has
    one."""
    w = make_window()
    open_extract(w, qtbot, tmp_path)
    run = w.run_view
    w.go_to(run)
    qtbot.waitUntil(lambda: not run.refresh_later.pending, timeout=5000)
    assert run.trees_box.isVisible() and set(run.tree_buttons) == {"zip", "admit_date", "discharge_date"}
    assert run.run_button.isEnabled()  # a suggestion, not a block
    assert "3 trees to build" in run.state()[1]
    qtbot.mouseClick(run.tree_buttons["admit_date"], Qt.LeftButton)
    tax = w.session.dataset.spec("admit_date").taxonomy
    assert tax is not None
    day = w.session.dataset.frame["admit_date"].dropna().iloc[0]
    assert day[:7] in [tax.label(a) for a in tax.ancestors(tax.leaf_node(day))]  # its month, 2023-04
    qtbot.waitUntil(lambda: not run.refresh_later.pending, timeout=5000)
    assert set(run.tree_buttons) == {"zip", "discharge_date"}
    qtbot.mouseClick(run.tree_buttons["discharge_date"], Qt.LeftButton)
    qtbot.mouseClick(run.tree_buttons["zip"], Qt.LeftButton)  # the ZIP code: masked from the right
    qtbot.waitUntil(lambda: not run.refresh_later.pending, timeout=5000)
    assert not run.trees_box.isVisible()
    tax = w.session.dataset.spec("zip").taxonomy
    code = next(z for z in w.session.dataset.frame["zip"] if z != "(missing)")
    assert code[:4] + "*" in [tax.label(a) for a in tax.ancestors(tax.leaf_node(code))]
