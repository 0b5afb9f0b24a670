"""The window's Figures tab shows each group and risk figure once, under the record's name: nothing is hidden
at display time any more (the figures come from one source, metrics/risk.group_figures; issue 29)."""

from __future__ import annotations

import numpy as np
from PySide6.QtWidgets import QLabel

from ppdp_gui.engine.metrics import risk
from ppdp_gui.engine.pipeline import plan, run_release
from ppdp_gui.gui.views import figures_panel
from tests.engine.kanon_helpers import random_dataset


def shown(form) -> list[str]:
    out = []
    for row in range(form.rowCount()):
        item = form.itemAt(row, form.ItemRole.FieldRole)
        if item is not None and isinstance(item.widget(), QLabel) and item.widget().accessibleName():
            out.append(item.widget().accessibleName())
    return out


def test_the_figures_tab_shows_the_records_figures_each_once(qtbot):
    assert not hasattr(figures_panel, "_without_repeats")  # no de-duplication at display time
    data = random_dataset(np.random.default_rng(3), 240, n_num=0, n_cat=3)
    published = list(run_release(plan(data, "Mondrian", {"k": 5}), seed=7, write_record=False))[-1]
    panel = figures_panel.FiguresPanel()
    qtbot.addWidget(panel)
    panel.show_release(published, data)
    risk_names = shown(panel.risk_form)
    names = risk_names + shown(panel.measures_form)
    assert len(names) == len(set(names))
    assert {risk.HIGHEST_RISK, risk.AVERAGE_RISK} <= set(risk_names) and risk.GROUPS in names
    assert set(published.figures) <= set(names)  # the record's figures, all of them, under the record's names
