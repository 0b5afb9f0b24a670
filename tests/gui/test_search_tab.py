"""Global recoding through the window: chosen in the Mechanism step, run in the worker, its figures shown, and the
Search tab drawing the lattice the search visited; clicking a candidate previews that release."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

from ppdp_gui.engine.checks.claims import check_claims
from ppdp_gui.engine.mechanisms import registry

pytestmark = pytest.mark.skipif("Global recoding" not in registry.names(), reason="global recoding not registered")


def test_global_recoding_search_tab(loaded_window, qtbot):
    w = loaded_window
    w.go_to(w.mechanism_view)
    w.mechanism_view.combo.setCurrentText("Global recoding")
    panel = w.mechanism_view.panel
    panel.editor("k").setValue(10)
    panel.editor("suppression").setValue(5.0)
    preview = w.mechanism_view.refresh_preview()
    assert not preview.errors and preview.cost.k == 10

    w.go_to(w.run_view)
    qtbot.mouseClick(w.run_view.run_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: not w.run_view.running, timeout=120000)
    qtbot.waitUntil(lambda: w.stack.currentWidget() is w.results_view, timeout=5000)
    record = w.session.last_release
    assert record.mechanism == "Global recoding"
    assert all(c.ok for c in check_claims(record.release.tables(), record.claims))
    assert record.figures["suppressed rows"] > 0 and "NCP %" in record.figures
    assert record.figures["smallest group (rows)"] >= 10  # suppressed rows are not a group

    results = w.results_view
    tab = results.tabs.indexOf(results.search)
    assert tab >= 0 and "Search" in results.tabs.tabText(tab)
    results.tabs.setCurrentIndex(tab)
    search = results.search.search
    n_nodes = len(search["levels"])
    assert n_nodes == search["size"]  # every candidate is accounted for
    x, y = results.search.chart.xy
    assert len(x) == n_nodes and results.search.chart.points.data.size == n_nodes
    assert "proven optimal" in results.search.summary_label.text()
    assert results.search.table_model.rowCount() >= 1

    # click the released node's point: its preview agrees with the release
    opt = search["optimum"]
    point = [p for p in results.search.chart.points.points() if p.data() == opt]
    results.search.chart.points.sigClicked.emit(results.search.chart.points, point, None)
    qtbot.waitUntil(lambda: results.search.preview is not None, timeout=60000)
    shown = results.search.preview
    assert shown["anonymous"] and shown["figures"]["suppressed rows"] == record.figures["suppressed rows"]
    assert shown["figures"]["NCP %"] == pytest.approx(record.figures["NCP %"])
    assert results.search.rows_model.rowCount() > 0

    # a candidate that is not anonymous: the preview says so and why (more suppressed rows than allowed)
    state = np.asarray(search["state"])
    other = int(np.flatnonzero(state == 2)[0])
    results.search.select(other)
    qtbot.waitUntil(lambda: results.search.preview is not None and results.search.preview["node"] == other,
                    timeout=60000)
    assert not results.search.preview["anonymous"]
    labels = {label.accessibleName() for label in results.search.preview_box.findChildren(QLabel)}
    assert {"anonymous", "suppressed rows", "NCP %"} <= labels

    # a release without a search record has no Search tab
    w.go_to(w.mechanism_view)
    w.mechanism_view.combo.setCurrentText("Mondrian")
    w.go_to(w.run_view)
    qtbot.mouseClick(w.run_view.run_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: not w.run_view.running, timeout=120000)
    qtbot.waitUntil(lambda: w.session.last_release.mechanism == "Mondrian", timeout=5000)
    qtbot.waitUntil(lambda: results.tabs.indexOf(results.search) < 0, timeout=5000)
