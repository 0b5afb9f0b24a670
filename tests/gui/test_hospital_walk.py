"""The nurse's walk on a hospital extract the window was never tuned on (scripts/hospital_extract.py: several
stays per patient under MRN_internal, ZIP codes 90001-90099 without leading zeros and with blanks, an age with
blanks, ICD-10 codes in three diagnosis columns). What blocked or misled her is tested here, through the window."""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtCore import Qt

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from hospital_extract import hospital_extract  # noqa: E402


def open_extract(w, qtbot, tmp_path, rows: int = 1200):
    path = tmp_path / "hospital.csv"
    hospital_extract(rows, seed=3).to_csv(path, index=False)
    w.open_path(str(path))
    qtbot.waitUntil(lambda: w.session.dataset is not None, timeout=30000)
    return path


def test_the_zip_column_no_longer_blocks_mondrian_and_masking_is_offered(make_window, qtbot, tmp_path):
    """Before: zip read as numbers, its blanks stopped Mondrian ("quasi-identifier 'zip' has missing values
    (empty number cells)"), and the Taxonomies step offered Numeric intervals for it."""
    w = make_window()
    open_extract(w, qtbot, tmp_path)
    ds = w.session.dataset
    assert ds.spec("zip").kind == "categorical" and "kind" not in ds.spec("zip").guessed
    w.go_to(w.mechanism_view)
    w.mechanism_view.combo.setCurrentText("Mondrian")
    problems = [p for p in w.session.preview().errors if p.column == "zip"]
    assert not problems, [p.message for p in problems]
    tv = w.taxonomy_view
    w.go_to(tv)
    tv.select("age")
    tv.choose_builder("intervals")
    tv.select("zip")
    assert tv.builder_name() == "mask" and tv.build_button.isEnabled()
    qtbot.mouseClick(tv.build_button, Qt.LeftButton)
    tax = w.session.dataset.spec("zip").taxonomy
    assert tax is not None and "9000*" in [tax.label(a) for a in tax.ancestors(tax.leaf_node("90001"))]


def test_an_age_with_blanks_made_categorical_can_get_numeric_intervals(make_window, qtbot, tmp_path):
    """The advice for an age with blanks says: make it categorical, then build Numeric intervals. Before, the
    Build button then said "age holds text, not numbers: choose another builder" (its blanks read “(missing)”)."""
    w = make_window()
    open_extract(w, qtbot, tmp_path)
    combo = w.data_view.kind_combo("age")
    combo.setCurrentIndex(combo.findText("categorical"))
    qtbot.waitUntil(lambda: w.session.dataset.spec("age").kind == "categorical", timeout=30000)
    tv = w.taxonomy_view
    w.go_to(tv)
    tv.select("age")
    tv.choose_builder("intervals")
    assert tv.build_button.isEnabled(), tv.builder_help.text()
    qtbot.mouseClick(tv.build_button, Qt.LeftButton)
    assert w.session.dataset.spec("age").taxonomy is not None


def test_the_data_step_has_no_green_tick_while_roles_are_to_confirm(make_window, qtbot, tmp_path):
    from ppdp_gui.gui.views.common import DONE, WARN
    w = make_window()
    open_extract(w, qtbot, tmp_path)
    state, text = w.data_view.state()
    assert "to confirm" in text and state == WARN
    qtbot.mouseClick(w.data_view.confirm_button, Qt.LeftButton)
    state, text = w.data_view.state()
    assert "to confirm" not in text and state == DONE


def test_the_default_path_runs_on_the_extract_without_any_change(make_window, qtbot, tmp_path):
    """Open the file, keep every default (Mondrian), press Run, then Export: before, Run stayed grey with
    "quasi-identifier 'zip' has missing values (empty number cells)" and the same for age."""
    w = make_window()
    open_extract(w, qtbot, tmp_path)
    run = w.run_view
    w.go_to(run)
    qtbot.waitUntil(lambda: not run.refresh_later.pending, timeout=5000)
    assert w.mechanism_view.combo.currentText() == "Mondrian"
    assert run.run_button.isEnabled(), [p.message for p in w.session.preview().errors]
    before = len(w.session.releases)
    qtbot.mouseClick(run.run_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: not run.running and len(w.session.releases) > before, timeout=120000)
    table = w.session.releases[-1].release.table
    assert "(missing)" in set(table["zip"].astype(str)) | set(table["age"].astype(str)) | {"*"}
    view = w.export_view
    w.go_to(view)
    target = tmp_path / "release.csv"
    view.path_edit.setText(str(target))
    qtbot.mouseClick(view.export_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: not view._busy, timeout=60000)
    assert target.exists() and "MRN_internal" not in target.read_text().splitlines()[0]


def test_the_data_step_says_why_zip_is_categorical(make_window, qtbot, tmp_path):
    """Before, the kind rule was shown nowhere in the window: a nurse saw zip 'numeric' (or 'categorical') and
    could not learn why. Now the Kind header's tooltip holds the rule, and the line under the list says why."""
    w = make_window()
    open_extract(w, qtbot, tmp_path)
    view = w.data_view
    view.kind_combo("zip")  # the list is filled
    assert "zip" in view.columns.horizontalHeaderItem(1).toolTip()
    view.columns.setCurrentCell(list(w.session.dataset.frame.columns).index("zip"), 0)
    assert "its name says it holds codes" in view.why_label.text()
    view.columns.setCurrentCell(list(w.session.dataset.frame.columns).index("length_of_stay"), 0)
    assert "read as numeric" in view.why_label.text()


def test_a_diagnosis_made_a_quasi_identifier_is_offered_the_icd_tree(make_window, qtbot, tmp_path):
    """Run step: “Make dx_1 a quasi-identifier”; the Mechanism step then said to build “Dates” for it, and the
    Taxonomies step offered “Flat (one level)”. Now both name the ICD-10 tree, and Build makes it."""
    w = make_window()
    open_extract(w, qtbot, tmp_path)
    run = w.run_view
    w.go_to(run)
    qtbot.waitUntil(lambda: "dx_1" in getattr(run, "make_qi_buttons", {}), timeout=10000)
    qtbot.mouseClick(run.make_qi_buttons["dx_1"], Qt.LeftButton)
    assert w.session.dataset.spec("dx_1").role.name == "QUASI_IDENTIFIER"
    w.go_to(w.mechanism_view)
    words = [p.message for p in w.session.preview().problems if p.column == "dx_1"]
    assert words and "ICD-10 diagnoses" in words[0] and "Dates" not in words[0]
    tv = w.taxonomy_view
    w.go_to(tv)
    tv.select("admit_date")
    assert tv.builder_name() == "dates"
    tv.select("dx_1")
    assert tv.builder_name() == "icd10" and tv.build_button.isEnabled()
    qtbot.mouseClick(tv.build_button, Qt.LeftButton)
    assert w.session.dataset.spec("dx_1").taxonomy is not None


def test_the_risk_tab_shows_rows_unique_in_the_table_without_a_population(make_window, qtbot, tmp_path):
    """Before, with the population "not known" (the default), "Rows unique in your table" read "—": a figure of
    the table alone, hidden until a population size was given."""
    w = make_window()
    open_extract(w, qtbot, tmp_path)
    run = w.run_view
    w.go_to(run)
    qtbot.waitUntil(lambda: not run.refresh_later.pending, timeout=5000)
    qtbot.mouseClick(run.run_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: not run.running and bool(w.session.releases), timeout=120000)
    results = w.results_view
    w.go_to(results)
    results.tabs.setCurrentWidget(results.risk)
    panel = results.risk
    qtbot.waitUntil(lambda: panel.comparison is not None and not panel.busy, timeout=60000)
    assert panel.value("sample uniques %", "input") not in ("", "—")
    assert panel.value("sample uniques %", "release") == "0 %"  # every group holds k persons
    assert panel.value("population uniques %", "input") in ("", "—")  # that one needs the population
