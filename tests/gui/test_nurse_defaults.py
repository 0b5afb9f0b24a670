"""The window's first choices on a table the project was not tuned on (UCI nursery: no column looks like a
quasi-identifier, so only KRIMP could run with its defaults): a generator with no formal privacy guarantee is never
preselected, and when the custodian chooses it the Mechanism step says it gives no guarantee (not "a syntactic
guarantee")."""

from __future__ import annotations

import pytest

from ppdp_gui.engine.mechanisms import registry

pytestmark = pytest.mark.skipif("KRIMP synthetic" not in registry.names(), reason="KRIMP is not registered")


def test_no_guarantee_generator_is_never_the_default(make_window, qtbot, shared_data):
    w = make_window()
    w.open_path(str(shared_data / "nursery" / "nursery.csv.gz"))
    qtbot.waitUntil(lambda: w.session.dataset is not None, timeout=30000)
    mv = w.mechanism_view
    qtbot.wait(50)
    assert mv.combo.currentText() != "KRIMP synthetic"
    assert "KRIMP" not in w.step_texts()[2]
    mv.combo.setCurrentText("KRIMP synthetic")
    mv.refresh_preview(fresh=True)
    qtbot.waitUntil(lambda: "no formal privacy guarantee" in mv.budget_label.text(), timeout=10000)
    assert "syntactic" not in mv.budget_label.text()


def test_k_anonymity_budget_line_has_no_jargon(shared_data):
    from ppdp_gui.engine.data import read_table
    from ppdp_gui.engine.pipeline import plan
    data = read_table(shared_data / "pima" / "pima-indians-diabetes.csv")
    text = plan(data, "Mondrian", {}).budget_text()
    assert "k = 10" in text and "spends no ε" in text and "syntactic" not in text


def test_dates_button_builds_a_date_taxonomy(make_window, qtbot, tmp_path):
    """The engine could build date taxonomies but the window offered no way to: a ward table's admission dates
    (07/03/2024, day first) get day → month → year → decade from the Taxonomies step, and the k-anonymity warning
    about '*' in nearly every row goes away."""
    import pandas as pd
    days = pd.date_range("2024-01-01", periods=300, freq="D")
    frame = pd.DataFrame({"admission_date": days.strftime("%d/%m/%Y"), "sex": ["F", "M"] * 150})
    path = tmp_path / "ward.csv"
    frame.to_csv(path, index=False)
    w = make_window()
    w.open_path(str(path))
    qtbot.waitUntil(lambda: w.session.dataset is not None, timeout=30000)
    assert w.session.dataset.spec("admission_date").role.value == "quasi-identifier"
    tv = w.taxonomy_view
    w.go_to(tv)
    tv.select("admission_date")
    tv.choose_builder("dates")
    tv.build_button.click()
    tax = w.session.dataset.spec("admission_date").taxonomy
    assert tax is not None and tax.height == 4
    assert tax.generalise(pd.Series(["07/03/2024"]), tax.nodes_at_level(2)).tolist() == ["2024"]
    # the list and the tree editor count levels the same way (the list said 5, the editor 4)
    assert tv.column_status("admission_date").startswith("4 levels, 300 values")
    assert tv.editor is None or "4 levels" in tv.editor.title_label.text()
    assert tv.columns.wordWrap()


def test_taxonomy_step_does_not_repeat_the_data_steps_missing_value_notes(make_window, qtbot, tmp_path):
    import pandas as pd
    frame = pd.DataFrame({"age": [str(20 + i % 50) for i in range(200)], "sex": ["F", "M"] * 100,
                          "ward": (["A"] * 9 + [""]) * 20})  # 20 rows dropped: a note for the Data step
    path = tmp_path / "ward.csv"
    frame.to_csv(path, index=False)
    w = make_window()
    w.data_view.na_action.setCurrentIndex(w.data_view.na_action.findData("drop"))  # the custodian's choice
    w.open_path(str(path))
    qtbot.waitUntil(lambda: w.session.dataset is not None, timeout=30000)
    notes = w.session.dataset.source.notes
    assert notes and w.data_view.notes_label.isVisibleTo(w)
    summary = w.taxonomy_view.summary_text()
    assert not any(n[:40] in summary for n in notes), summary


def test_run_step_parameters_say_what_zero_means():
    from ppdp_gui.engine.mechanisms import registry
    from ppdp_gui.gui.plan_words import params_text
    specs = registry.create("Mondrian").params
    text = params_text({s.name: s.default for s in specs}, specs)
    assert "Interval width for numbers without taxonomy (0 = automatic) = automatic" in text  # the word, not 0
    assert "l (sensitive values per group, 0 = off) = off" in text


def test_intervals_for_an_age_read_as_text_because_of_90_plus(make_window, qtbot, tmp_path):
    import pandas as pd
    ages = [str(a) for a in range(18, 90)] + ["90+"]
    frame = pd.DataFrame({"age": (ages * 4)[:292], "sex": ["F", "M"] * 146})
    path = tmp_path / "ages.csv"
    frame.to_csv(path, index=False)
    w = make_window()
    w.open_path(str(path))
    qtbot.waitUntil(lambda: w.session.dataset is not None, timeout=30000)
    assert w.session.dataset.spec("age").kind == "categorical"
    tv = w.taxonomy_view
    w.go_to(tv)
    tv.select("age")
    tv.choose_builder("intervals", width=10)
    assert tv.build_button.isEnabled()  # it was disabled: the column is text
    tv.build_button.click()
    tax = w.session.dataset.spec("age").taxonomy
    assert tax is not None and tax.generalise(pd.Series(["90+", "18"]), tax.nodes_at_level(1)).tolist() == \
        ["[90, 100)", "[10, 20)"]
