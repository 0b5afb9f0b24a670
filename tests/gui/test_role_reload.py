"""Under "drop rows that have a missing value" (the custodian's choice; rows are kept by default), a column with
blanks that the custodian marks as an identifier after loading stops costing rows: identifiers are
never released, so (as when the reader guesses one by its name) its blanks drop no row; setting it back to a
released role drops them again. The table is read again by the same engine rule, not patched in the window."""

from __future__ import annotations

import pandas as pd

from ppdp_gui.engine.data.schema import Role


def test_marking_a_column_with_blanks_as_identifier_gives_its_rows_back(make_window, qtbot, tmp_path):
    frame = pd.DataFrame({"age": [str(20 + i % 50) for i in range(300)], "sex": ["F", "M"] * 150,
                          "room_code": ["" if i % 4 == 0 else f"R{i % 9}" for i in range(300)]})
    path = tmp_path / "ward.csv"
    frame.to_csv(path, index=False)
    w = make_window()
    w.data_view.na_action.setCurrentIndex(w.data_view.na_action.findData("drop"))  # the custodian's choice
    w.open_path(str(path))
    qtbot.waitUntil(lambda: w.session.dataset is not None, timeout=30000)
    assert w.session.dataset.n_rows == 225 and w.session.dataset.spec("room_code").role != Role.IDENTIFIER
    combo = w.data_view.role_combo("room_code")
    combo.setCurrentIndex(combo.findData(Role.IDENTIFIER))
    qtbot.waitUntil(lambda: w.session.dataset.n_rows == 300, timeout=30000)
    assert w.session.dataset.spec("room_code").role == Role.IDENTIFIER  # the role survives the reload
    combo = w.data_view.role_combo("room_code")
    combo.setCurrentIndex(combo.findData(Role.QUASI_IDENTIFIER))
    qtbot.waitUntil(lambda: w.session.dataset.n_rows == 225, timeout=30000)
    assert w.session.dataset.spec("room_code").role == Role.QUASI_IDENTIFIER


def test_an_empty_class_column_parameter_names_the_class_column():
    """'Class column = (none)' reads as 'there is no class'; the parameter means 'the column whose role is
    Class', so the Run step names it."""
    from ppdp_gui.engine.data import dataset_from_frame
    from ppdp_gui.engine.mechanisms import registry
    from ppdp_gui.gui.plan_words import params_text
    data = dataset_from_frame(pd.DataFrame({"age": ["30", "40"] * 20, "readmitted": ["NO", "<30"] * 20}))
    specs = registry.get("DiffGen").params
    text = params_text({"epsilon": 1.0, "class_column": ""}, specs, data)
    assert "Class column = readmitted (its role is Class)" in text
    assert "Class column = (none)" in params_text({"class_column": ""}, specs)  # no table: nothing to name


def test_leave_out_by_name_names_the_mostly_missing_columns(make_window, qtbot, tmp_path):
    """A column left out for being mostly missing is a choice read from the data; one click makes it the
    custodian's own (named in the policy, kept in the project), which a DP release asks for."""
    frame = pd.DataFrame({"age": [str(20 + i % 50) for i in range(300)], "sex": ["F", "M"] * 150,
                          "weight": ["" if i % 10 else "70" for i in range(300)]})
    path = tmp_path / "ward.csv"
    frame.to_csv(path, index=False)
    w = make_window()
    w.data_view.na_action.setCurrentIndex(w.data_view.na_action.findData("drop"))  # the custodian's choice
    w.open_path(str(path))
    qtbot.waitUntil(lambda: w.session.dataset is not None, timeout=30000)
    src = w.session.dataset.source
    assert src.left_out == ("weight",) and src.na_policy.leave_out == ()
    assert w.data_view.leave_out_button.isVisibleTo(w)
    w.data_view.leave_out_button.click()
    qtbot.waitUntil(lambda: w.session.dataset.source.na_policy.leave_out == ("weight",), timeout=30000)
    assert w.session.dataset.n_rows == 300 and not w.data_view.leave_out_button.isVisibleTo(w)
    assert w.session.recipe().na_policy.leave_out == ("weight",)  # saved with the project
