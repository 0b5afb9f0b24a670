"""The simulation through the window: the step list counts it at once, the chart shows the sweep just run (its
parameter, its measures), the advice names a value and why, and "Apply this advice" sets that value in the
Mechanism step — nothing is run, nothing is charged. By default it runs on a DP copy of the table, whose ε is
shown before running and charged to the ledger; on the own table the advice says it is not accounted."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from ppdp_gui.engine.mechanisms import registry
from ppdp_gui.engine.pipeline.proxy import DP_COPY, OWN

MECHANISM = "DiffGen"
pytestmark = pytest.mark.skipif(MECHANISM not in registry.names(), reason="DiffGen not registered")


def simulate(w, qtbot, param: str, values: str, repeats: int = 1, on: str = OWN) -> None:
    panel = w.results_view.sweep
    panel.basis_combo.setCurrentIndex(panel.basis_combo.findData(on))
    panel.param_combo.setCurrentIndex(panel.param_combo.findData(param))
    panel.grid_edit.setText(values)
    panel.repeats.setValue(repeats)
    qtbot.mouseClick(panel.run_button, Qt.LeftButton)
    assert panel.running
    qtbot.waitUntil(lambda: not panel.running, timeout=180000)
    qtbot.waitUntil(lambda: not panel.showing, timeout=5000)  # the chart and advice follow in a later turn


def test_simulate_follow_and_apply_advice(loaded_window, qtbot, monkeypatch):
    monkeypatch.setenv("PPDP_TEST_SEED", "7")  # the held-out split and the noise: the same simulation every time
    w = loaded_window
    w.go_to(w.mechanism_view)
    w.mechanism_view.combo.setCurrentText(MECHANISM)
    w.mechanism_view.panel.editor("h").setValue(3)  # not a value of the grid: the advice will change it
    w.go_to(w.results_view)
    panel = w.results_view.sweep
    w.results_view.tabs.setCurrentWidget(panel)
    before = w.session.ledger.datasets()

    simulate(w, qtbot, "h", "2, 4, 8, 12", repeats=2)
    assert "1 simulation" in w.step_texts()[4]  # counted when it finished, not one step later
    chart = panel.chart
    assert chart.param_combo.currentData() == "h" and chart.shown_names() == [w.session.sweeps[0][0]]
    assert chart.measure_combo.currentData() == "CA %"
    assert "Classification accuracy (CA %)" in chart.plot.getPlotItem().getAxis("left").labelText

    advice = panel.advice
    assert advice is not None and advice.applicable and advice.parameter == "h"
    assert advice.value in (2, 4, 8, 12) and w.session.params["h"] == 3
    text = panel.advice_text.text()
    assert f"Advice: h = {advice.value}." in text and "classification accuracy" in text.lower()
    assert "The Mechanism step has h = 3 now." in panel.applied.text() and panel.apply_button.isEnabled()

    qtbot.mouseClick(panel.apply_button, Qt.LeftButton)
    assert w.session.params["h"] == advice.value
    assert w.mechanism_view.panel.values()["h"] == advice.value  # shown in the Mechanism step
    assert "nothing was charged" in panel.applied.text().lower() and not panel.apply_button.isEnabled()
    assert w.session.releases == [] and w.session.ledger.datasets() == before and not w.run_view.running

    # a second simulation of another parameter: the chart shows that one, not the earlier curve
    simulate(w, qtbot, "epsilon", "0.5, 2")
    assert "2 simulations" in w.step_texts()[4]
    assert [chart.param_combo.itemData(i) for i in range(chart.param_combo.count())] == ["epsilon"]
    assert chart.curves(w.session.sweeps[0][0]) == [] and len(chart.curves(w.session.sweeps[1][0])) == 1
    assert panel.shown_combo.currentIndex() == 1
    panel.shown_combo.setCurrentIndex(0)  # back to the first: its axis and its advice
    assert chart.param_combo.currentData() == "h" and panel.advice.parameter == "h"
    assert "already set" in panel.applied.text() and not panel.apply_button.isEnabled()


def test_simulation_on_a_dp_copy_shows_its_charge_first_and_the_ledger_holds_it(loaded_window, qtbot, monkeypatch):
    monkeypatch.setenv("PPDP_TEST_SEED", "7")
    w = loaded_window
    w.go_to(w.mechanism_view)
    w.mechanism_view.combo.setCurrentText(MECHANISM)
    w.go_to(w.results_view)
    panel = w.results_view.sweep
    w.results_view.tabs.setCurrentWidget(panel)
    assert panel.basis == DP_COPY  # the default: advice that does not leak
    panel.copy_epsilon.setValue(0.2)
    assert "ε = 0.2" in panel.basis_text.text() and "charged" in panel.basis_text.text()  # before anything runs
    identity = w.session.ledger.identify(w.session.dataset)
    before = w.session.ledger.spent(identity)
    simulate(w, qtbot, "h", "4, 8", on=DP_COPY)
    from fractions import Fraction
    assert w.session.ledger.spent(identity) - before == Fraction(1, 5)
    assert "the copy cost ε = 0.2" in panel.message.text()
    assert "synthetic copy of your table" in panel.advice_text.text() and w.session.releases == []
    # on the own table: nothing charged, and the advice says it is not accounted
    simulate(w, qtbot, "h", "4, 8", on=OWN)
    assert w.session.ledger.spent(identity) - before == Fraction(1, 5)
    assert "no ε accounts for" in panel.advice_text.text()
