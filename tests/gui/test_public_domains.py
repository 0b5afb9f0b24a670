"""Public domains in the window (issue 26, finding 7): the ICD list in one click in the domain dialog; an age list
wider than the data, whose missing values the taxonomy editor now adds (it said "missing from the taxonomy:
10-19, 80-89, 90-99" and offered no way to add them); bands over a stated public range 0-120; the dialog names the
table's values as the list must spell them."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ppdp_gui.engine.data.domains import Domain
from ppdp_gui.engine.data.schema import Role
from ppdp_gui.engine.mechanisms.diffgen.mechanism import categorical_taxonomy
from ppdp_gui.gui.widgets.domain_dialog import DomainDialog

AGES = [f"{a}-{a + 9}" for a in range(10, 100, 10)]  # the public list: 10-19 … 90-99


def open_table(w, qtbot, tmp_path):
    r = np.random.default_rng(5)
    n = 286
    frame = pd.DataFrame({"age": r.choice(AGES[2:7], n),  # 30-39 … 70-79 only
                          "diag_1": r.choice(["250.83", "428", "414", "V45.81"], n),
                          "years": r.integers(20, 80, n),
                          "class": r.choice(["no-recurrence-events", "recurrence-events"], n)})
    path = tmp_path / "breast.csv"
    frame.to_csv(path, index=False)
    w.open_path(str(path))
    qtbot.waitUntil(lambda: w.session.dataset is not None, timeout=30000)
    for col in ("age", "diag_1", "years"):
        w.session.set_role(col, Role.QUASI_IDENTIFIER)


def test_icd_list_in_one_click_and_the_editor_adds_what_the_public_list_needs(make_window, qtbot, tmp_path):
    w = make_window()
    open_table(w, qtbot, tmp_path)
    dialog = DomainDialog(w.session, "diag_1", w)
    qtbot.addWidget(dialog)
    dialog.code_buttons["icd9"].click()
    dom = w.session.dataset.spec("diag_1").domain
    assert dom.is_public and "428" in dom.categories and len(dom.categories) > 1000

    tv = w.taxonomy_view
    w.go_to(tv)
    tv.select("diag_1")
    tv.choose_builder("icd9", level="categories")
    tv.build_button.click()
    tax = w.session.dataset.spec("diag_1").taxonomy
    # the public list's tree, with "(missing)" as every public list of values has it
    assert tax.origin == "public" and set(tax.leaf_values()) == set(dom.categories) | {"(missing)"}
    # full codes are written as their category, the level of the public list, and the step says so
    assert sorted(w.session.dataset.frame["diag_1"].unique()) == ["250", "414", "428", "V45"]
    assert not tv.editor.coverage().missing
    assert "3-character category" in tv.summary.text()
    saved = w.session.recipe()  # a saved project: reopened, the column is written at that level again
    from ppdp_gui.engine.pipeline.load import load
    saved.source = str(tmp_path / "breast.csv")
    again = load(saved).dataset
    assert sorted(again.frame["diag_1"].unique()) == ["250", "414", "428", "V45"]

    # an age list wider than the data: the editor lists and adds the values the list needs, the tree stays usable
    w.session.set_domain("age", Domain(categories=tuple(AGES)))
    tv.select("age")
    tv.choose_builder("flat")
    tv.build_button.click()
    editor = tv.editor
    qtbot.waitUntil(lambda: editor.column == "age", timeout=5000)
    assert editor.coverage_panel.public_missing == ["10-19", "20-29", "80-89", "90-99"]
    assert editor.coverage_panel.add_button.isVisibleTo(editor)
    assert editor.add_missing_values()
    tax = w.session.dataset.spec("age").taxonomy
    assert set(tax.leaf_values()) == set(AGES)
    categorical_taxonomy(w.session.dataset, "age")  # DiffGen takes it: no "missing from the taxonomy"

    # bands over a public range wider than the data, filled from the column's name (0-120 for an age)
    tv.select("years")
    tv.choose_builder("bands", low=0, high=120, width=10)
    tv.build_button.click()
    tax = w.session.dataset.spec("years").taxonomy
    assert tax.origin == "public" and {"0", "120"} <= set(tax.leaf_values())


def test_domain_dialog_shows_the_spelling_the_table_uses(make_window, qtbot, tmp_path):
    w = make_window()
    open_table(w, qtbot, tmp_path)
    dialog = DomainDialog(w.session, "class", w)
    qtbot.addWidget(dialog)
    dialog.values_edit.setPlainText("No-recurrence-events\nrecurrence-events")
    text = dialog.spelling_label.text()
    assert "'no-recurrence-events' (the list has 'No-recurrence-events')" in text
    assert not dialog.spelling_label.isHidden()


def test_bands_start_from_the_stated_public_range(make_window, qtbot, tmp_path):
    """An age range wider than the data (0-120): the bands builder starts from it and builds every value of it."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))
    from clinical_helpers import heart_like
    path = tmp_path / "heart.csv"
    heart_like().to_csv(path, index=False)
    w = make_window()
    w.open_path(str(path))
    qtbot.waitUntil(lambda: w.session.dataset is not None, timeout=30000)
    w.session.set_role("age", Role.QUASI_IDENTIFIER)
    w.session.set_domain("age", Domain(low=0, high=110, integer=True))
    tv = w.taxonomy_view
    w.go_to(tv)
    tv.select("age")
    fields = tv.builder_fields["bands"]
    assert (fields["low"].text(), fields["high"].text()) == ("0", "110")  # the stated range, not the data's 29-77
    tv.choose_builder("bands")
    tv.build_button.click()
    tax = w.session.dataset.spec("age").taxonomy
    assert tax.origin == "public" and {"0", "10", "110"} <= set(tax.leaf_values())
    assert not tv.editor.coverage().missing  # every age of the table is in it
