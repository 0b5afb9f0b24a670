"""The Data step offers the person role and says in plain words why a patient number was guessed person
(issue 25); the Run step says what k counts."""

from __future__ import annotations

import sys
from pathlib import Path

from ppdp_gui.engine.data.schema import Role

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))
from test_person_kanon import hospital  # noqa: E402


def test_data_step_offers_person_and_says_why(make_window, qtbot, tmp_path):
    path = tmp_path / "encounters.csv"
    hospital().to_csv(path, index=False)
    w = make_window()
    w.open_path(str(path))
    qtbot.waitUntil(lambda: w.session.dataset is not None, timeout=30000)
    assert w.session.dataset.person_column == "patient_nbr"
    combo = w.data_view.role_combo("patient_nbr")
    assert "Person (whose row it is)" in [combo.itemText(i) for i in range(combo.count())]
    assert combo.currentData() == Role.PERSON
    w.data_view.columns.setCurrentCell(list(w.session.dataset.frame.columns).index("patient_nbr"), 0)
    text = w.data_view.why_label.text()
    assert "patient_nbr was guessed person" in text and "300 different values have 1,041 rows" in text
    assert "the rows of one patient are protected together" in text
    # the Run step says what k counts, for a k-anonymity mechanism
    for column in ("age", "sex", "zip"):
        box = w.data_view.role_combo(column)
        box.setCurrentIndex(box.findData(Role.QUASI_IDENTIFIER))
    w.go_to(w.mechanism_view)
    w.mechanism_view.combo.setCurrentText("Mondrian")
    w.go_to(w.run_view)
    qtbot.waitUntil(lambda: "k counts persons (patient_nbr)" in _texts(w.run_view), timeout=10000)


def _texts(widget) -> str:
    from PySide6.QtWidgets import QLabel
    return " ".join(label.text() for label in widget.findChildren(QLabel))


def test_risk_tab_counts_patients(qtbot):
    from ppdp_gui.engine.pipeline import plan, run_release
    from ppdp_gui.gui.session import Session
    from ppdp_gui.gui.views.risk_panel import RiskPanel
    from ppdp_gui.gui.workers import JobRunner
    from test_person_kanon import dataset

    data = dataset(hospital())
    published = list(run_release(plan(data, "Mondrian", {"k": 5}), seed=7))[-1]
    session = Session()
    session.dataset = data
    panel = RiskPanel(session, JobRunner())
    qtbot.addWidget(panel)
    panel.show()
    panel.set_release(published)
    qtbot.waitUntil(lambda: panel.comparison is not None and not panel.busy, timeout=30000)
    assert "Counted in patients (patient_nbr)" in panel.status.text()
    assert panel.comparison.release.person == "patient_nbr"
    assert panel.comparison.release.prosecutor.highest_risk <= 1 / 5
