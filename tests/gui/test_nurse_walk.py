"""The nurse's walk (issue 26, "Done when"): an emergency-department extract the window was not tuned on
(tests/engine/ed_shaped.py: several visits per patient, a name, arrival dates, ZIP codes, triage, full ICD-10
codes, blanks, a free-text note) taken to a truly ε-differentially private DiffGen release with public domains,
through the window only: roles in the Data step, the domain dialog (a typed list, the Suggest button, the ICD-10
list), the Taxonomies step's builders, Run, Export. What it found is tested here, each where it was seen."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from ppdp_gui.engine.data.schema import Role
from ppdp_gui.engine.mechanisms import registry
from ppdp_gui.gui.widgets.domain_dialog import DomainDialog

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))
from ed_shaped import ed_shaped  # noqa: E402

pytestmark = pytest.mark.skipif("DiffGen" not in registry.names(), reason="DiffGen is not registered")


def open_ed(w, qtbot, tmp_path, n: int = 1500):
    path = tmp_path / "ed_visits.csv"
    ed_shaped(n).to_csv(path, index=False)
    w.open_path(str(path))
    qtbot.waitUntil(lambda: w.session.dataset is not None, timeout=30000)
    return path


def confirm_roles(w) -> None:
    """The Data step's "Confirm roles and kinds" (a DP release refuses roles and kinds guessed from the values
    until the custodian confirms them), when this build has it."""
    button = getattr(w.data_view, "confirm_button", None)
    if button is not None and button.isEnabled():
        w.go_to(w.data_view)
        button.click()


def set_role(w, column: str, role: Role) -> None:
    combo = w.data_view.role_combo(column)
    combo.setCurrentIndex(combo.findData(role))


def typed_domain(w, qtbot, column: str, values: list[str]) -> None:
    dialog = DomainDialog(w.session, column, w)
    qtbot.addWidget(dialog)
    dialog.values_edit.setPlainText("\n".join(values))
    qtbot.mouseClick(dialog.ok_button, Qt.LeftButton)


def dp_walk(w, qtbot, tmp_path):
    """The clicks of the guide's differentially private walk on the emergency table."""
    open_ed(w, qtbot, tmp_path)
    assert w.session.dataset.person_column == "patient_id"
    assert w.session.dataset.class_column == "disposition"  # guessed: the outcome the counts should predict
    set_role(w, "arrival_date", Role.INSENSITIVE)    # a date has no public list of values: left out
    set_role(w, "zip", Role.INSENSITIVE)
    set_role(w, "diagnosis", Role.QUASI_IDENTIFIER)
    confirm_roles(w)                                 # Data step: Confirm roles and kinds
    m = w.mechanism_view
    w.go_to(m)
    i = m.combo.findText("DiffGen")                  # as a click in the list does
    m.combo.setCurrentIndex(i)
    m.combo.activated.emit(i)
    typed_domain(w, qtbot, "disposition", ["discharged", "admitted", "transferred"])
    typed_domain(w, qtbot, "sex", ["F", "M"])
    tv = w.taxonomy_view
    w.go_to(tv)
    tv.select("diagnosis")                           # the public ICD-10 tree: its leaves are the public list
    tv.choose_builder("icd10", level="categories")
    qtbot.mouseClick(tv.build_button, Qt.LeftButton)
    tv.select("age")                                 # bands over 0-120, filled in from the column's name
    tv.choose_builder("bands")
    qtbot.mouseClick(tv.build_button, Qt.LeftButton)
    run = w.run_view
    w.go_to(run)
    qtbot.waitUntil(lambda: not run.refresh_later.pending, timeout=5000)
    return run


def test_a_dp_release_with_public_domains_from_the_window_only(make_window, qtbot, tmp_path):
    w = make_window()
    run = dp_walk(w, qtbot, tmp_path)
    p = w.session.preview()
    assert not p.errors, [e.message for e in p.errors]
    assert all(n.status == "public" for n in p.needs), p.needs
    assert not p.caveats and run.run_button.isEnabled()
    before = len(w.session.releases)
    qtbot.mouseClick(run.run_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: not run.running and len(w.session.releases) > before, timeout=120000)
    view = w.export_view
    w.go_to(view)
    target = tmp_path / "ed_dp.csv"
    view.path_edit.setText(str(target))
    qtbot.mouseClick(view.export_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: not view._busy, timeout=60000)
    note = json.loads((tmp_path / "ed_dp.csv.release-note.json").read_text())
    claim = note["guarantee"]["claims"][0]
    assert claim["claim"] == "differential privacy" and claim["holds"] and not note["guarantee"]["caveats"]
    text = target.read_text()
    assert "Smith" not in text and "J18.9" not in text  # no name, no full code (written as its category)
    # the ledger's words in the Export step name the class column as the Run step did, not "(none)"
    recorded = view.entry_text.toPlainText()
    assert "Class column = disposition (its role is Class)" in recorded and "(none)" not in recorded


def test_run_step_says_epsilon_protects_a_row_when_a_patient_has_several(make_window, qtbot, tmp_path):
    """Seen on the walk: with patient_id as the person column, Mondrian's Run step says k counts patients, but
    DiffGen's said only "a smaller ε hides each person better" — while a patient with 5 visits is protected by
    5·ε. The Run and Mechanism steps now say so, and how to get ε per person."""
    from ppdp_gui.engine.mechanisms.base import PrivacyCost
    from ppdp_gui.gui.plan_words import cost_words
    per_row = PrivacyCost(epsilon=1)  # a guarantee for one record added or removed
    assert "m·ε" in cost_words(per_row, "patient_id") and "patient_id" in cost_words(per_row, "patient_id")
    assert "m·ε" not in cost_words(per_row, None)
    w = make_window()
    run = dp_walk(w, qtbot, tmp_path)
    cost = w.session.preview().cost
    if cost_words(cost, None) == cost_words(cost, "patient_id"):  # a mechanism whose ε is per person says so
        return
    assert "ε protects one row, not one person" in run.summary.text() and "m·ε" in run.summary.text()
    assert "m·ε" in w.mechanism_view.cost_label.text()


def test_linkable_columns_are_named_beside_the_tables_own_quasi_identifiers(make_window, qtbot, tmp_path):
    """The Run step said a diagnosis "can single out a patient together with age and gender" on a table whose
    quasi-identifiers are age, sex and zip (there is no gender column)."""
    w = make_window()
    open_ed(w, qtbot, tmp_path)
    run = w.run_view
    w.go_to(run)
    qtbot.waitUntil(lambda: not run.refresh_later.pending, timeout=5000)
    assert "diagnosis" in run.make_qi_buttons
    texts = " ".join(label.text() for label in run.linkable_box.findChildren(type(run.summary)))
    assert "gender" not in texts and "age, sex" in texts


def test_figures_say_k_counts_patients_as_the_guarantee_does(make_window, qtbot, tmp_path):
    """Figures → "What this release is" said every combination "is shared by at least 10 rows" right under
    "Guarantee: 10-anonymity of persons (patient_id)": the two contradicted each other."""
    from ppdp_gui.engine.explain import published_sentences
    w = make_window()
    open_ed(w, qtbot, tmp_path)
    # zip is read as numbers and has blanks, which Mondrian refuses with the fix in the window's words: the
    # Data step's kind of zip, categorical (its blanks then read "(missing)")
    problems = " ".join(p.message for p in w.session.preview().errors)
    if "set the kind of zip to categorical" in problems:
        w.data_view.kind_combo("zip").setCurrentText("categorical")
        qtbot.waitUntil(lambda: w.session.dataset.spec("zip").kind == "categorical", timeout=30000)
    w.go_to(w.mechanism_view)
    w.mechanism_view.combo.setCurrentText("Mondrian")
    run = w.run_view
    w.go_to(run)
    qtbot.waitUntil(lambda: not run.refresh_later.pending, timeout=5000)
    qtbot.mouseClick(run.run_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: not run.running and bool(w.session.releases), timeout=120000)
    text = " ".join(published_sentences(w.session.last_release))
    assert "at least 10 different persons (patient_id)" in text and "at least 10 rows" not in text


def test_the_icd_lists_are_offered_for_diagnoses_only(make_window, qtbot, tmp_path):
    """The domain dialog of age, sex or disposition offered "Use the ICD-9-CM list" and "Use the ICD-10 (WHO)
    list": one click would make age's public list the 2,000 diagnosis categories."""
    w = make_window()
    open_ed(w, qtbot, tmp_path)
    for column in ("sex", "disposition"):
        dialog = DomainDialog(w.session, column, w)
        qtbot.addWidget(dialog)
        assert not dialog.code_buttons, column
    dialog = DomainDialog(w.session, "diagnosis", w)
    qtbot.addWidget(dialog)
    assert set(dialog.code_buttons) == {"icd9", "icd10"}


# -- the guide's differentially private walk on the diabetes-shaped table (gui/help/guide.html, "walkthrough-dp")
DP_LISTS = {"readmitted": ["NO", ">30", "<30"], "gender": ["Female", "Male"],
            "race": ["Caucasian", "AfricanAmerican", "Hispanic", "Asian", "Other"],
            "age": [f"[{a}-{a + 10})" for a in range(0, 100, 10)]}


def fill_the_selected_domain(w, qtbot) -> str:
    """The guide's clicks for one line of the problem list: Set the domain of … (the first such line is selected
    for you), type the public values one per line, add what the dialog says the table also holds when it is the
    missing-value label, OK. Returns the column."""
    m = w.mechanism_view
    qtbot.waitUntil(lambda: m.domain_button.isVisible(), timeout=5000)
    column = m._selected_domain_column()
    qtbot.mouseClick(m.domain_button, Qt.LeftButton)
    dialog = next(d for d in m.findChildren(DomainDialog) if d.isVisible() and d.column == column)
    values = list(DP_LISTS[column])
    label = getattr(w.session.dataset.source.na_policy, "category_label", None)
    if label and label in dialog.table_values():
        values.append(label)  # "Your table also holds '(missing)'": kept as its own category, so it is listed
    dialog.values_edit.setPlainText("\n".join(values))
    qtbot.mouseClick(dialog.ok_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=5000)
    m.refresh_preview()
    return column


def test_the_guides_dp_walk_on_the_diabetes_table(make_window, qtbot, tmp_path):
    from diabetes_shaped import diabetes_shaped
    path = tmp_path / "diabetic_data.csv"
    diabetes_shaped(3000).to_csv(path, index=False)
    w = make_window()
    w.open_path(str(path))                                                 # File → Open
    qtbot.waitUntil(lambda: w.session.dataset is not None, timeout=30000)
    confirm_roles(w)                                                       # Confirm roles and kinds
    m = w.mechanism_view
    w.go_to(m)                                                             # 3. Mechanism
    i = m.combo.findText("DiffGen")
    m.combo.setCurrentIndex(i)                                             # the list → DiffGen
    m.combo.activated.emit(i)
    m.refresh_preview()
    done = set()
    while m._selected_domain_column() is not None and len(done) < 6:       # Set the domain of …, type, OK
        done.add(fill_the_selected_domain(w, qtbot))
    assert done == set(DP_LISTS), done
    set_role(w, "diag_1", Role.QUASI_IDENTIFIER)                          # Data step: diag_1 → quasi-identifier
    tv = w.taxonomy_view
    w.go_to(tv)                                                            # 2. Taxonomies
    tv.select("diag_1")
    tv.choose_builder("icd9", level="categories")                          # ICD-9, leaves: categories
    qtbot.mouseClick(tv.build_button, Qt.LeftButton)                       # Build for diag_1
    run = w.run_view
    w.go_to(run)                                                           # 4. Run
    qtbot.waitUntil(lambda: not run.refresh_later.pending, timeout=5000)
    p = w.session.preview()
    assert not p.errors, [e.message for e in p.errors]
    assert all(n.status == "public" for n in p.needs) and not p.caveats
    assert "noise" in run.noise_text.text()
    qtbot.mouseClick(run.run_button, Qt.LeftButton)                        # Run and spend ε = 1
    qtbot.waitUntil(lambda: not run.running and bool(w.session.releases), timeout=120000)
    view = w.export_view
    w.go_to(view)                                                          # 6. Export
    view.path_edit.setText(str(tmp_path / "dp.csv"))
    qtbot.mouseClick(view.export_button, Qt.LeftButton)                    # Export
    qtbot.waitUntil(lambda: not view._busy, timeout=60000)
    note = json.loads((tmp_path / "dp.csv.release-note.json").read_text())
    assert note["guarantee"]["claims"][0]["claim"] == "differential privacy"
    assert note["guarantee"]["holds"] and not note["guarantee"]["caveats"]


def test_the_guide_describes_the_dp_walk():
    from ppdp_gui.gui.help import guide_html
    text = guide_html()
    start = text.index('<a name="walkthrough-dp">')
    walk = " ".join(text[start:text.index("<h2>", start)].split())
    for words in ("File → Open", "Confirm roles and kinds", "3. Mechanism", "<b>DiffGen</b>", "Set the domain of readmitted…", "<b>OK</b>",
                  "ICD-9-CM diagnoses", "<b>categories</b>", "Run and spend ε = 1", "6. Export", "<b>Export</b>",
                  "Rows per patient (c)", "no command line"):
        assert words in walk, words
    for column, values in DP_LISTS.items():
        assert f"<code>{column}</code>" in walk
    assert "[0-10)" in walk and "Female, Male" in walk and "&gt;30" in walk
    assert any(p.label == "Rows per patient (c)" for p in registry.get("DiffGen").params)  # as the step shows it
    from ppdp_gui.engine.taxonomy import registry as builders
    labels = {b.label for b in builders.BUILDERS}
    for named in ("ICD-9-CM diagnoses", "ICD-10 diagnoses", "Dates: month → year → decade"):  # as the list says
        assert named in labels and f"<b>{named}</b>" in walk, named


def test_risk_tab_text_does_not_overlap_its_table_after_a_dp_release(make_window, qtbot, tmp_path):
    """Seen on the walk (1280 × 820 window): after the DiffGen release, the Risk tab's orange note ("This release
    is differentially private, so the chance of matching …") was drawn over the last rows of the risk table."""
    w = make_window()
    w.resize(1280, 820)
    run = dp_walk(w, qtbot, tmp_path)
    qtbot.mouseClick(run.run_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: not run.running and bool(w.session.releases), timeout=120000)
    results = w.results_view
    w.go_to(results)
    risk = results.risk
    results.tabs.setCurrentWidget(risk)
    qtbot.waitUntil(lambda: risk.comparison is not None and not risk.busy, timeout=60000)
    qtbot.wait(200)
    assert risk.not_measured.isVisible() and risk.not_measured.text()

    def box(widget):
        top_left = widget.mapTo(risk, widget.rect().topLeft())
        return top_left.y(), top_left.y() + widget.height()
    widgets = [risk.table, risk.not_measured, risk.attribute_box, risk.harbor_box]
    spans = [box(x) for x in widgets]
    for (_top, bottom), (next_top, _b) in zip(spans, spans[1:]):
        assert bottom <= next_top, spans
    assert risk.not_measured.height() >= risk.not_measured.heightForWidth(risk.not_measured.width()) - 1
    # the per-column list called arrival_date "published as is": DiffGen publishes only the quasi-identifiers
    # and the class, and arrival_date (insensitive) is not in the release
    from ppdp_gui.gui.views.risk_panel import attribute_rows
    names = [row[0] for row in attribute_rows(risk.comparison)]
    assert not any("arrival_date" in n for n in names), names
    assert "diagnosis" in names


def test_a_zip_column_gets_a_suggested_public_range():
    """The walk's zip column (numbers) said "No suggestion for a column named “zip”": the nurse had to know that
    a 5-digit ZIP code runs from 0 to 99999."""
    from ppdp_gui.gui.widgets.domain_dialog import suggest_bounds
    for name in ("zip", "ZIP code", "patient_zip", "zipcode"):
        s = suggest_bounds(name)
        assert s is not None and (s.low, s.high, s.whole) == (0, 99999, True), name
    assert suggest_bounds("zipper_size") is None


def test_linkable_lines_are_short_and_not_clipped(make_window, qtbot, tmp_path):
    """The clinical screenshot's Run step (five columns someone else could know): every line repeated "Make it a
    quasi-identifier (it is then generalised) or leave it out." under an intro saying the same, and the lines
    were squeezed until their last words were cut off."""
    from diabetes_shaped import diabetes_shaped
    path = tmp_path / "diabetic_data.csv"
    diabetes_shaped(1500).to_csv(path, index=False)
    w = make_window()
    w.resize(1280, 820)
    w.open_path(str(path))
    qtbot.waitUntil(lambda: w.session.dataset is not None, timeout=30000)
    run = w.run_view
    w.go_to(run)
    qtbot.waitUntil(lambda: not run.refresh_later.pending, timeout=5000)
    qtbot.wait(100)
    assert len(run.make_qi_buttons) >= 4
    labels = [x for x in run.linkable_box.findChildren(type(run.summary)) if x.isVisible()]
    intro, lines = labels[0], labels[1:]
    assert "Make each a quasi-identifier" in intro.text()
    for label in lines:
        assert "Make it a quasi-identifier" not in label.text(), label.text()
        assert label.height() >= label.heightForWidth(label.width()) - 1, label.text()


def test_a_column_with_a_public_list_is_no_taxonomy_warning(make_window, qtbot, tmp_path):
    """After the DP walk, the Taxonomies step kept a warning sign ("1 quasi-identifier without taxonomy") for sex,
    whose public list F, M is all DiffGen needs: a flag with nothing to do."""
    w = make_window()
    dp_walk(w, qtbot, tmp_path)
    tv = w.taxonomy_view
    assert w.session.dataset.spec("sex").taxonomy is None
    icon, words = tv.state()
    assert "without taxonomy" not in words, words
    assert "public list" in tv.column_status("sex")


def test_the_class_setting_names_the_column_its_role_gives(make_window, qtbot, tmp_path):
    """DiffGen's "Class column (optional)" read "(none)" while disposition was the class by its role (and, with
    no class, the error asked for one): it now names the column the empty choice stands for, and still means
    'by role' to the mechanism."""
    w = make_window()
    open_ed(w, qtbot, tmp_path)
    m = w.mechanism_view
    w.go_to(m)
    m.combo.setCurrentText("DiffGen")
    combo = m.panel.editor("class_column")
    assert combo.currentText() == "(by its role: disposition)"
    assert m.panel.values()["class_column"] in (None, "")  # the spec's own "none": the column by its role


def test_when_nothing_can_run_the_default_is_k_anonymity_not_a_dp_histogram(make_window, qtbot, tmp_path):
    """With a ZIP code read as numbers and some blank, no mechanism could run as the table was opened; the
    Mechanism step then stayed on the first of the list, the Laplace histogram (asking for columns to count and
    public domains), instead of Mondrian, whose problem names what to change in the Data step."""
    import numpy as np
    import pandas as pd
    r = np.random.default_rng(8)
    n = 400
    frame = pd.DataFrame({"age": r.integers(0, 100, n), "sex": r.choice(["F", "M"], n),
                          "zip": r.integers(10000, 99999, n).astype(float)})
    frame.loc[::40, "zip"] = np.nan
    frame.loc[::37, "age"] = np.nan
    path = tmp_path / "clinic.csv"
    frame.to_csv(path, index=False)
    w = make_window()
    import importlib
    preview = importlib.import_module("ppdp_gui.engine.pipeline.plan")  # where `runnable` lives
    real = preview.runnable
    try:
        preview.runnable = lambda name, dataset: False  # as when every mechanism refuses the table as it is
        w.open_path(str(path))
        qtbot.waitUntil(lambda: w.session.dataset is not None, timeout=30000)
        w.session._suggested = (w.session.dataset.frame, None)  # the loader found none either
        w.mechanism_view._auto_frame = None
        w.mechanism_view._dataset_changed()
    finally:
        preview.runnable = real
    assert w.mechanism_view.combo.currentText() == "Mondrian"
