"""What a custodian reads, through the window: the Run step says what the release will contain before anything is
spent, ε = 0 is shown as invalid and blocks the run (it is never replaced by another value), and the Figures tab of
a DP table of counts explains it and draws its counts — it never says "No release yet" when there is a release."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

from ppdp_gui.engine.mechanisms import registry

LAPLACE = "Laplace histogram"
needs = pytest.mark.skipif(LAPLACE not in registry.names(), reason="Laplace histogram not registered")


def choose_counts(w, columns=("sex", "race")) -> None:
    w.go_to(w.mechanism_view)
    w.mechanism_view.combo.setCurrentText(LAPLACE)
    listing = w.mechanism_view.panel.editor("columns")
    for c in columns:
        listing.findItems(c, Qt.MatchExactly)[0].setCheckState(Qt.Checked)


def labels_text(widget) -> str:
    return " ".join(label.text() for label in widget.findChildren(QLabel) if label.isVisibleTo(widget))


@needs
def test_epsilon_zero_is_flagged_and_blocks_the_run(loaded_window, qtbot):
    w = loaded_window
    choose_counts(w)
    box = w.mechanism_view.panel.editor("epsilon").box
    box.setFocus()
    box.selectAll()
    qtbot.keyClicks(box, "0")
    qtbot.keyClick(box, Qt.Key_Return)
    assert w.session.params["epsilon"] == 0  # kept as typed: never 1, never the minimum
    assert "below the smallest allowed value, 0.001" in labels_text(w.mechanism_view.panel)
    w.go_to(w.run_view)
    assert not w.run_view.run_button.isEnabled()
    assert "below the smallest allowed value, 0.001" in w.run_view.summary.text()  # the field's words
    assert w.session.ledger.entries() == []  # nothing was charged


@needs
def test_the_run_step_says_what_the_release_will_contain(loaded_window, qtbot):
    w = loaded_window
    choose_counts(w)
    w.go_to(w.run_view)
    text = w.run_view.summary.text()
    assert "This release will contain:" in text
    assert "Columns that go out: sex, race, plus the new column count." in text
    assert "Not in the release: age" in text and "table of counts, not one row per person" in text
    assert "Privacy budget ε = 1" in text  # parameters by their labels, not their code names
    assert "spent from this table's privacy budget" in text
    assert "discrete Laplace" in w.run_view.summary.toolTip()  # the formula: for whoever checks


@needs
def test_figures_of_a_dp_count_table(loaded_window, qtbot):
    w = loaded_window
    choose_counts(w)
    w.go_to(w.run_view)
    qtbot.mouseClick(w.run_view.run_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: not w.run_view.running, timeout=60000)
    qtbot.waitUntil(lambda: w.stack.currentWidget() is w.results_view, timeout=5000)
    record = w.session.last_release
    figures = w.results_view.figures
    w.results_view.tabs.setCurrentWidget(figures)
    qtbot.waitUntil(lambda: figures.release_box.isVisibleTo(figures), timeout=5000)
    shown = labels_text(figures)
    assert "No release yet" not in shown
    assert "table of counts, not one row per person" in figures.about.text()
    total = int(record.table["count"].sum())
    assert f"the counts add up to {total:,}" in figures.about.text()
    values = {lab.accessibleName(): lab.text() for lab in figures.findChildren(QLabel) if lab.accessibleName()}
    assert "<b>10</b>" in values["rows released"] and f"<b>{total:,}</b>" in values["total of the counts"]
    assert "<b>30,162</b>" in values["rows in your table"]  # against the true data: in the custodian's box
    assert figures.measures_box.isAncestorOf(
        next(lab for lab in figures.findChildren(QLabel) if lab.accessibleName() == "rows in your table"))
    assert "ε-differential privacy" in labels_text(figures.risk_box)
    # the chart is the release's own: the spread of its counts
    hist = figures.histogram
    assert hist.isVisibleTo(figures) and "10 released rows" in hist.summary_label.text()
    assert sorted(hist._sizes.tolist()) == sorted(record.table["count"].tolist())
    tip = next(lab for lab in figures.findChildren(QLabel) if lab.accessibleName() == "mean abs error").toolTip()
    assert "|noisy count − true count|" in tip


def test_compared_releases_are_headed_by_plain_titles():
    import numpy as np
    import pandas as pd

    from ppdp_gui.engine.claims import KAnonymity
    from ppdp_gui.engine.data.schema import SourceInfo
    from ppdp_gui.engine.mechanisms.base import PrivacyCost, Release
    from ppdp_gui.engine.pipeline.published import Published
    from ppdp_gui.gui.views.results_view import comparison_frame
    table = pd.DataFrame({"age": ["20-29"] * 4})
    release = Release("Mondrian", table, PrivacyCost(k=2), {"k": 2}, claims=(KAnonymity(2, ("age",)),))
    pub = Published("id", "now", "Mondrian", "k-anonymity", "", release, release.claims, {"k": 2}, release.cost,
                    "hash", SourceInfo(path="t.csv", n_rows_read=4), (),
                    figures={"NCP %": 12.5, "highest re-identification risk %": 50.0},
                    class_sizes=np.array([4]))
    frame = comparison_frame([pub])
    assert {"Information loss %", "Highest re-identification risk %", "Rows released"} <= set(frame.columns)
    assert "NCP %" not in frame.columns and frame["Information loss %"][0] == 12.5
