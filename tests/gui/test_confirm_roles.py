"""The Data step's "Confirm roles and kinds" (issue 25, finding 1): a differentially private plan refuses roles
and kinds guessed from the values, with the same words as `ppdp run`; one click confirms what is shown, the plan
no longer refuses, and the project keeps the confirmation. The person role reads well in the role combo; the
missing-value choice starts at keeping every row."""

from __future__ import annotations

import numpy as np
import pandas as pd
from PySide6.QtCore import Qt

from ppdp_gui.engine.data.domains import Domain
from ppdp_gui.engine.data.schema import Role
from ppdp_gui.engine.pipeline.plan import CONFIRM_BUTTON, guessed_problem


def test_confirming_the_roles_and_kinds_lifts_the_dp_refusal(make_window, qtbot, tmp_path, capsys):
    r = np.random.default_rng(3)
    frame = pd.DataFrame({"case_code": [f"C{i % 19:03d}" for i in range(39)], "sex": r.choice(["F", "M"], 39),
                          "age": r.integers(20, 80, 39)})
    frame.loc[5, "sex"] = "?"
    path = tmp_path / "ward.csv"
    frame.to_csv(path, index=False)
    w = make_window()
    assert w.data_view.na_action.currentData() == "category"  # rows kept unless the custodian chooses
    w.open_path(str(path))
    qtbot.waitUntil(lambda: w.session.dataset is not None, timeout=30000)
    assert w.session.dataset.n_rows == 39 and w.session.dataset.source.n_rows_dropped == 0
    w.session.set_domain("sex", Domain(categories=("F", "M")))
    w.go_to(w.mechanism_view)  # Laplace histogram counting sex, chosen as a user would
    w.mechanism_view.combo.setCurrentText("Laplace histogram")
    w.mechanism_view.panel.editor("columns").findItems("sex", Qt.MatchExactly)[0].setCheckState(Qt.Checked)
    refusal = guessed_problem(["case_code", "sex", "age"]).message
    assert [p.message for p in w.mechanism_view.refresh_preview(fresh=True).errors] == [refusal]
    # the command line says the same
    from ppdp_gui.cli import main
    assert main(["run", "Laplace histogram", "-i", str(path), "-o", str(tmp_path / "r.csv"), "--ledger",
                 str(tmp_path / "l.db"), "--domain", "sex=F,M", "-p", "columns=sex", "-p", "epsilon=1"]) == 2
    assert refusal in capsys.readouterr().err
    view = w.data_view
    w.go_to(view)
    assert view.confirm_button.isVisibleTo(w) and view.confirm_button.isEnabled()
    assert view.confirm_button.text() == CONFIRM_BUTTON and "case_code" in view.confirm_label.text()
    qtbot.mouseClick(view.confirm_button, Qt.LeftButton)
    assert not w.session.dataset.guessed_columns
    w.go_to(w.mechanism_view)
    assert not w.mechanism_view.refresh_preview(fresh=True).errors
    assert not view.confirm_button.isEnabled() and "confirmed" in view.confirm_label.text()
    assert w.session.recipe().guessed == {}  # the project keeps the confirmation


def test_the_person_role_reads_well_in_the_role_combo(make_window, qtbot, tmp_path):
    frame = pd.DataFrame({"patient_nbr": [f"P{i % 30}" for i in range(120)], "age": [str(20 + i % 60)
                                                                                     for i in range(120)]})
    path = tmp_path / "enc.csv"
    frame.to_csv(path, index=False)
    w = make_window()
    w.open_path(str(path))
    qtbot.waitUntil(lambda: w.session.dataset is not None, timeout=30000)
    combo = w.data_view.role_combo("patient_nbr")
    at = combo.findData(Role.PERSON)
    assert at >= 0 and combo.itemText(at) == "Person (whose row it is)"
    assert "whose row" in combo.itemData(at, Qt.ToolTipRole)
    # guessed the person (its values repeat): a guess read from the values until the custodian says so
    assert combo.currentIndex() == at and "role" in w.session.dataset.spec("patient_nbr").guessed
    combo.setCurrentIndex(combo.findData(Role.IDENTIFIER))
    combo.setCurrentIndex(at)
    assert w.session.dataset.spec("patient_nbr").role == Role.PERSON
    assert "role" not in w.session.dataset.spec("patient_nbr").guessed  # chosen: no longer a guess


def test_dropping_many_rows_is_no_green_tick(make_window, qtbot, tmp_path):
    """Issue 26: 74 % of the rows dropped showed a green tick and a fix in command-line flags."""
    from ppdp_gui.gui.views.common import WARN
    frame = pd.DataFrame({"age": [str(20 + i % 50) for i in range(200)], "sex": ["F", "M"] * 100,
                          "payer_code": (["MC"] * 3 + ["?"] * 2) * 40})
    path = tmp_path / "enc.csv"
    frame.to_csv(path, index=False)
    w = make_window()
    w.open_path(str(path))
    qtbot.waitUntil(lambda: w.session.dataset is not None, timeout=30000)
    assert w.session.dataset.n_rows == 200 and "dropped" not in w.data_view.state()[1]  # kept by default
    w.data_view.na_action.setCurrentIndex(w.data_view.na_action.findData("drop"))
    qtbot.mouseClick(w.data_view.na_apply, Qt.LeftButton)
    qtbot.waitUntil(lambda: w.session.dataset.n_rows == 120, timeout=30000)
    state, text = w.data_view.state()
    assert state == WARN and "40 % of rows dropped" in text and "Keep missing as its own category" in text
    notes = w.data_view.notes_label.text()
    assert "Reload with this policy" in notes and "Keep missing as its own category" in notes
