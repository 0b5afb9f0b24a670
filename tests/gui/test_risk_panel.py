"""The Risk tab on its own: a DP release shows your table's figures only and says in words why the release has
none; the population figures appear once a population size is given, and follow the spin box."""

from __future__ import annotations

import sys
from pathlib import Path

from ppdp_gui.engine import explain
from ppdp_gui.engine.data import Role, dataset_from_frame
from ppdp_gui.engine.noise import NoiseSource
from ppdp_gui.engine.pipeline import plan, run_release
from ppdp_gui.gui.session import Session
from ppdp_gui.gui.views.risk_panel import ROWS, RiskPanel
from ppdp_gui.gui.workers import JobRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))
from clinical_helpers import diabetes_like  # noqa: E402


def test_dp_release_has_no_release_figures_and_says_why(qtbot):
    frame = diabetes_like(800)
    data = dataset_from_frame(frame).with_roles({"race": Role.QUASI_IDENTIFIER, "gender": Role.QUASI_IDENTIFIER,
                                                 "age": Role.QUASI_IDENTIFIER})
    planned = plan(data, "Laplace histogram", {"columns": "gender,readmitted", "epsilon": 1},
                   allow_data_domains=True)
    published = list(run_release(planned, rng=NoiseSource.for_tests(2), seed=2))[-1]
    session = Session()
    session.dataset = data
    runner = JobRunner()
    panel = RiskPanel(session, runner)
    qtbot.addWidget(panel)
    panel.show()
    panel.set_release(published)
    qtbot.waitUntil(lambda: panel.comparison is not None, timeout=30000)
    assert panel.not_measured.isVisible() and panel.not_measured.text().startswith(explain.RISK_DP_SENTENCE)
    assert all(panel.value(name, "release") == "" for name, _g in ROWS)  # nothing misleading
    assert panel.value("prosecutor: highest risk %", "input").endswith("%")
    assert panel.value("population uniques %", "input") == "—"  # no population given yet
    assert "Give the size of the population" in panel.status.text()
    assert panel.chart.bar_heights()[1].size == 0  # no release bars

    panel.set_population(size=1_000_000)
    qtbot.waitUntil(lambda: panel.comparison is not None and not panel.busy, timeout=30000)
    assert panel.comparison.input.population.population_size == 1_000_000
    first = panel.value("population uniques %", "input")
    assert first.endswith("%")
    panel.population_spin.setValue(2_000)  # another population: another estimate
    panel.population_spin.editingFinished.emit()
    qtbot.waitUntil(lambda: panel.comparison is not None and not panel.busy
                    and panel.comparison.input.population.population_size == 2_000, timeout=30000)
    assert panel.value("population uniques %", "input") != first
    runner.wait_all()


def test_each_columns_part_in_the_risk_for_the_input_and_the_release(qtbot):
    """Per-attribute risk (issue 26, finding 5): diag_2, published unchanged, makes many rows unique; the table says
    so for your table and for the release."""
    from diabetes_shaped import diabetes_shaped
    frame = diabetes_shaped(1500).replace("?", "(missing)")
    data = dataset_from_frame(frame).with_roles({"race": Role.QUASI_IDENTIFIER, "gender": Role.QUASI_IDENTIFIER,
                                                 "age": Role.QUASI_IDENTIFIER, "encounter_id": Role.IDENTIFIER,
                                                 "patient_nbr": Role.IDENTIFIER})
    planned = plan(data, "Mondrian", {"k": 5}, publish_as_is=tuple(data.frame.columns))
    assert planned.ok, planned.errors
    published = list(run_release(planned, rng=NoiseSource.for_tests(2), seed=2))[-1]
    session = Session()
    session.dataset = data
    runner = JobRunner()
    panel = RiskPanel(session, runner)
    qtbot.addWidget(panel)
    panel.show()
    panel.set_release(published)
    qtbot.waitUntil(lambda: panel.comparison is not None, timeout=30000)
    assert panel.attribute_box.isVisible()
    added = panel.attribute_value("diag_2", "Your table: uniqueness it adds")
    assert added.endswith("%") and float(added.rstrip(" %")) > 20
    assert panel.attribute_table.item(0, 0).text().endswith("(published as is)")  # the largest part first
    assert panel.attribute_value("diag_2", "Release: uniqueness it adds").endswith("%")
    assert panel.attribute_value("age", "Your table: unique on it alone").endswith("%")
    runner.wait_all()
