"""The public-domain editor through the window: a DP release's refusal naming a column is answered from the
Mechanism step (double-click or "Set the domain of C…"), the Data step shows and edits each column's domain,
invalid input keeps the dialog open, and no value is ever offered from the table."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from ppdp_gui.engine.data.domains import Domain
from ppdp_gui.engine.mechanisms import registry
from ppdp_gui.gui.widgets.domain_dialog import DomainDialog, read_values_file, suggest_bounds
from test_accessibility import unnamed_inputs

LAPLACE, DIFFGEN = "Laplace histogram", "DiffGen"
RACES = ["Amer-Indian-Eskimo", "Asian-Pac-Islander", "Black", "Other", "White"]
needs = pytest.mark.skipif(not {LAPLACE, DIFFGEN} <= set(registry.names()), reason="mechanism not registered")


def open_dialogs(w) -> list[DomainDialog]:
    return [d for d in w.findChildren(DomainDialog) if d.isVisible()]


def wait_dialog(w, qtbot) -> DomainDialog:
    qtbot.waitUntil(lambda: len(open_dialogs(w)) == 1, timeout=5000)
    return open_dialogs(w)[0]


def count_columns(w, qtbot, columns) -> None:
    """Mechanism step: Laplace histogram counting `columns` (ticked in the parameter form, as a user would)."""
    w.go_to(w.mechanism_view)
    w.mechanism_view.combo.setCurrentText(LAPLACE)
    listing = w.mechanism_view.panel.editor("columns")
    for c in columns:
        listing.findItems(c, Qt.MatchExactly)[0].setCheckState(Qt.Checked)


def problems(w) -> list[str]:
    lst = w.mechanism_view.problems
    return [lst.item(i).text() for i in range(lst.count())]


def problem_item(w, column: str):
    lst = w.mechanism_view.problems
    found = [lst.item(i) for i in range(lst.count()) if lst.item(i).data(Qt.UserRole) == column]
    return found[0] if found else None


def double_click(qtbot, view, rect) -> None:
    """A user's double-click on an item view (QTest's double-click alone does not pass the view's press check)."""
    qtbot.mouseClick(view.viewport(), Qt.LeftButton, pos=rect.center())
    qtbot.mouseDClick(view.viewport(), Qt.LeftButton, pos=rect.center())


def type_lines(qtbot, edit, lines) -> None:
    for i, line in enumerate(lines):
        if i:
            qtbot.keyClick(edit, Qt.Key_Return)
        qtbot.keyClicks(edit, line)


@needs
def test_age_bounds_set_from_the_mechanism_problem(loaded_window, qtbot):
    w = loaded_window
    w.session.set_taxonomy("age", None)  # the bundled age hierarchy states bounds; without it age has none
    count_columns(w, qtbot, ["age"])
    mv = w.mechanism_view
    qtbot.waitUntil(lambda: problem_item(w, "age") is not None, timeout=5000)
    item = problem_item(w, "age")
    assert item.text().startswith("Error: age needs public lower and upper bounds")
    assert mv.domain_button.isVisibleTo(w) and mv.domain_button.text() == "Set the &domain of age…"
    rect = mv.problems.visualItemRect(item)
    double_click(qtbot, mv.problems, rect)
    dialog = wait_dialog(w, qtbot)
    assert dialog.column == "age" and dialog.numeric
    assert dialog.low_edit.text() == "" and dialog.high_edit.text() == ""  # nothing from the table
    qtbot.mouseClick(dialog.suggest_button, Qt.LeftButton)
    assert (dialog.low_edit.text(), dialog.high_edit.text(), dialog.whole_check.isChecked()) == ("0", "120", True)
    qtbot.mouseClick(dialog.ok_button, Qt.LeftButton)
    assert not open_dialogs(w)
    assert w.session.dataset.spec("age").domain == Domain(low=0, high=120, integer=True)
    qtbot.waitUntil(lambda: not any("age" in t for t in problems(w)), timeout=5000)
    assert not mv.domain_button.isVisibleTo(w)
    assert not mv.current_preview.errors and "problem" not in w.step_texts()[2]


@needs
def test_race_values_typed_then_completed(loaded_window, qtbot):
    w = loaded_window
    w.session.set_taxonomy("race", None)
    count_columns(w, qtbot, ["race"])
    mv = w.mechanism_view
    qtbot.waitUntil(lambda: mv.domain_button.isVisibleTo(w), timeout=5000)
    assert "race needs a public list of its values" in mv.problems.currentItem().text()
    qtbot.mouseClick(mv.domain_button, Qt.LeftButton)
    dialog = wait_dialog(w, qtbot)
    assert dialog.values_edit.toPlainText() == "" and dialog.taxonomy_button is None
    type_lines(qtbot, dialog.values_edit, ["White", "Black"])
    assert dialog.count_label.text().startswith("2 values.")
    qtbot.mouseClick(dialog.ok_button, Qt.LeftButton)
    assert w.session.dataset.spec("race").domain == Domain(categories=("White", "Black"))
    # public now, but the table holds three other races: the engine refuses, naming the count
    qtbot.waitUntil(lambda: any("has 3 value(s) outside its domain" in t for t in problems(w)), timeout=5000)
    assert not any("race needs" in t for t in problems(w))

    # the Data step shows the domain and edits it: paste the full published list
    w.go_to(w.data_view)
    assert w.data_view.domain_item("race").text() == "White, Black"
    qtbot.mouseClick(w.data_view.domain_button("race"), Qt.LeftButton)
    dialog = wait_dialog(w, qtbot)
    assert dialog.values_edit.toPlainText() == "White\nBlack"  # the domain stated before, not the table's
    QApplication.clipboard().setText("\n".join(RACES) + "\n\nWhite\n")
    dialog.values_edit.selectAll()
    qtbot.keyClick(dialog.values_edit, Qt.Key_V, Qt.ControlModifier)
    assert dialog.count_label.text().startswith("5 values (1 repeated line and 1 blank line will be left out)")
    qtbot.mouseClick(dialog.ok_button, Qt.LeftButton)
    assert w.session.dataset.spec("race").domain == Domain(categories=tuple(RACES))
    assert w.data_view.domain_item("race").text() == ", ".join(RACES)
    w.go_to(w.mechanism_view)
    p = mv.refresh_preview()
    assert not p.errors and not p.data_domain_columns


def test_invalid_bounds_keep_the_dialog_open_and_cancel_changes_nothing(loaded_window, qtbot):
    w = loaded_window
    before = w.session.dataset
    qtbot.mouseClick(w.data_view.domain_button("age"), Qt.LeftButton)
    dialog = wait_dialog(w, qtbot)
    qtbot.keyClicks(dialog.low_edit, "120")
    qtbot.keyClicks(dialog.high_edit, "0")
    qtbot.mouseClick(dialog.ok_button, Qt.LeftButton)
    assert dialog.isVisible() and dialog.message.isVisible()
    assert "The lowest value (120) must be below the highest value (0)." == dialog.message.text()
    dialog.low_edit.setText("0.5")
    dialog.high_edit.setText("120")
    qtbot.keyClick(dialog.whole_check, Qt.Key_Space)
    assert dialog.whole_check.isChecked()
    qtbot.mouseClick(dialog.ok_button, Qt.LeftButton)
    assert dialog.isVisible() and "0.5 is not" in dialog.message.text()
    dialog.low_edit.setText("1,5")
    qtbot.mouseClick(dialog.ok_button, Qt.LeftButton)
    assert dialog.isVisible() and "comma" in dialog.message.text()
    dialog.low_edit.setText("0")
    dialog.step_edit.setText("-1")
    qtbot.mouseClick(dialog.ok_button, Qt.LeftButton)
    assert dialog.isVisible() and "grid step must be above 0" in dialog.message.text()
    assert w.session.dataset is before
    qtbot.mouseClick(dialog.cancel_button, Qt.LeftButton)
    assert not open_dialogs(w) and w.session.dataset is before and before.spec("age").domain is None


def test_public_domain_column_shows_the_domain_and_remove(loaded_window, qtbot):
    w = loaded_window
    dv = w.data_view
    assert dv.columns.horizontalHeaderItem(5).text() == "Public domain"  # after Role, Released as, Distinct
    assert dv.domain_item("age").text() == "0 to 100 (taxonomy)"  # what the bundled hierarchy's labels state
    w.session.set_taxonomy("race", None)
    assert dv.domain_item("race").text() == "—"
    qtbot.mouseClick(dv.domain_button("age"), Qt.LeftButton)
    dialog = wait_dialog(w, qtbot)
    qtbot.mouseClick(dialog.suggest_button, Qt.LeftButton)
    dialog.step_edit.setText("5")
    qtbot.mouseClick(dialog.ok_button, Qt.LeftButton)
    assert dv.domain_item("age").text() == "0 to 120 (whole numbers)"
    assert w.session.dataset.spec("age").domain == Domain(low=0, high=120, integer=True, step=5)
    # double-clicking the cell opens it again, filled with the stated domain; Remove domain removes it
    rect = dv.columns.visualItemRect(dv.domain_item("age"))
    double_click(qtbot, dv.columns, rect)
    dialog = wait_dialog(w, qtbot)
    assert (dialog.low_edit.text(), dialog.high_edit.text(), dialog.step_edit.text()) == ("0", "120", "5")
    qtbot.mouseClick(dialog.remove_button, Qt.LeftButton)
    assert w.session.dataset.spec("age").domain is None
    assert dv.domain_item("age").text() == "0 to 100 (taxonomy)"


@needs
def test_flat_taxonomy_is_data_and_diffgen_asks_for_public_values(loaded_window, qtbot):
    """Release-integrity finding 5 through the window: a flat tree built from the table is not a public domain."""
    w = loaded_window
    w.go_to(w.taxonomy_view)
    tv = w.taxonomy_view
    tv.select("race")
    tv.choose_builder("flat")
    qtbot.mouseClick(tv.build_button, Qt.LeftButton)
    assert w.session.dataset.spec("race").taxonomy.origin == "data"
    assert "built from the table's values" in tv.columns.currentItem().text()
    assert "— (taxonomy built from the table)" == w.data_view.domain_item("race").text()
    w.go_to(w.mechanism_view)
    w.mechanism_view.combo.setCurrentText(DIFFGEN)
    mv = w.mechanism_view
    qtbot.waitUntil(lambda: problem_item(w, "race") is not None, timeout=5000)
    text = problem_item(w, "race").text()
    assert text.startswith("Error: race needs a public list") and "built from the table's own values" in text
    assert mv.domain_button.text() == "Set the &domain of race…"
    qtbot.mouseClick(mv.domain_button, Qt.LeftButton)
    dialog = wait_dialog(w, qtbot)
    # the tree's values came from the table: not offered, and the box is empty
    assert dialog.taxonomy_button is None and dialog.values_edit.toPlainText() == ""
    QApplication.clipboard().setText("\n".join(RACES))
    qtbot.keyClick(dialog.values_edit, Qt.Key_V, Qt.ControlModifier)
    qtbot.mouseClick(dialog.ok_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: problem_item(w, "race") is None, timeout=5000)
    assert not any("race" in t for t in problems(w))
    assert "race" not in mv.current_preview.data_domain_columns and not mv.current_preview.errors


def test_dialog_never_offers_the_tables_values(loaded_window, qtbot):
    w = loaded_window
    ds = w.session.dataset
    # a domain read from the data (e.g. an opted-in release, or an old project) is not shown as if it were public
    w.session.set_domain("race", Domain(categories=tuple(RACES), origin="data"))
    w.session.set_domain("age", Domain(low=17, high=90, integer=True, origin="data"))
    assert w.data_view.domain_item("age").text() == "not public, read from the table: 17 to 90 (whole numbers)"
    for name in [c.name for c in ds.schema]:
        dialog = w.data_view.edit_domain(name)
        assert dialog.isVisible() and unnamed_inputs(dialog) == [], name
        if dialog.numeric:
            assert dialog.low_edit.text() == dialog.high_edit.text() == dialog.step_edit.text() == "", name
        else:
            assert dialog.values_edit.toPlainText() == "", name
            # the bundled taxonomies were imported from files: their values may be used, on request only
            assert dialog.taxonomy_button is not None, name
        if name in ("race", "age"):
            assert "read from the table, so it is not public" in dialog.current.text()
        dialog.reject()
    dialog = w.data_view.edit_domain("race")
    qtbot.mouseClick(dialog.taxonomy_button, Qt.LeftButton)
    assert dialog.values_edit.toPlainText().splitlines() == ds.spec("race").taxonomy.leaf_values()
    dialog.reject()
    assert w.session.dataset.spec("race").domain.origin == "data"  # cancelled: unchanged


def test_suggestions_come_from_the_name_only():
    assert suggest_bounds("age") == suggest_bounds("Age (years)") == suggest_bounds("age_at_admission")
    assert (suggest_bounds("age").low, suggest_bounds("age").high, suggest_bounds("age").whole) == (0, 120, True)
    assert (suggest_bounds("hours-per-week").low, suggest_bounds("hours-per-week").high) == (0, 168)
    assert (suggest_bounds("month").low, suggest_bounds("month").high) == (1, 12)
    assert (suggest_bounds("Day of month").low, suggest_bounds("Day of month").high) == (1, 31)
    assert suggest_bounds("weight_kg").high == 500 and suggest_bounds("BMI").high == 100
    assert suggest_bounds("Fat (%)").high == 100
    for name in ("stage", "average", "days", "day_of_week", "gestational_age", "weight", "fnlwgt", "months"):
        assert suggest_bounds(name) is None, name


def test_values_from_a_file(loaded_window, qtbot, tmp_path):
    w = loaded_window
    csv_file = tmp_path / "races.csv"
    csv_file.write_text("race;group\n" + "".join(f"{r};x\n" for r in RACES))
    txt_file = tmp_path / "races.txt"
    txt_file.write_text("White\n\n  Black \nWhite\n")
    assert read_values_file(str(csv_file), "race") == RACES  # heading named like the column skipped
    dialog = w.data_view.edit_domain("race")
    dialog.load_file(str(txt_file))
    assert dialog.values_edit.toPlainText().splitlines() == ["White", "", "Black", "White"]
    assert "2 values (1 repeated line and 1 blank line will be left out)" in dialog.count_label.text()
    dialog.load_file(str(tmp_path / "missing.txt"))
    assert dialog.message.isVisible() and "Could not read missing.txt" in dialog.message.text()
    dialog.load_file(str(csv_file))
    qtbot.mouseClick(dialog.ok_button, Qt.LeftButton)
    assert w.session.dataset.spec("race").domain == Domain(categories=tuple(RACES))
