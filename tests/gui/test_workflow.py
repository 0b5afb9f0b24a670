"""The whole workflow on Adult through the window, as a custodian would click it: load, roles, ARX taxonomies,
a k-anonymity release in the worker, figures, a simulation, export, re-read; then the project round trip."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from PySide6.QtCore import Qt

from ppdp_gui.engine.checks.anonymity import check_release
from ppdp_gui.engine.data.reader import read_table
from ppdp_gui.engine.data.schema import Role
from ppdp_gui.engine.mechanisms import registry

K_MECHANISM = next((m for m in ("Mondrian", "TDS") if m in registry.names()), None)
pytestmark = pytest.mark.skipif(K_MECHANISM is None, reason="no k-anonymity mechanism registered")


def set_role(window, column: str, role: Role) -> None:
    combo = window.data_view.role_combo(column)
    combo.setCurrentIndex(combo.findData(role))


def import_adult_hierarchies(window, shared_data) -> None:
    arx = shared_data / "adult" / "hierarchies" / "arx"
    for column in window.taxonomy_view.qi_columns():
        window.taxonomy_view.import_arx(column, str(arx / f"adult_hierarchy_{column}.csv"))


def test_adult_end_to_end(loaded_window, qtbot, shared_data, tmp_path):
    w = loaded_window
    assert "30,162 rows" in w.step_texts()[0]
    # roles: native-country is not a quasi-identifier here
    set_role(w, "native-country", Role.INSENSITIVE)
    assert w.session.dataset.spec("native-country").role == Role.INSENSITIVE
    qis = w.session.dataset.quasi_identifiers
    assert len(qis) == 7 and w.session.dataset.class_column == "salary-class"
    assert "all 7 quasi-identifiers covered" in w.step_texts()[1]  # the bundled sample's own hierarchies
    assert w.session.auto_attached("education")

    # taxonomies from the ARX files
    w.go_to(w.taxonomy_view)
    import_adult_hierarchies(w, shared_data)
    assert all(w.session.dataset.spec(c).taxonomy is not None for c in qis)
    assert "all 7 quasi-identifiers covered" in w.step_texts()[1]
    w.taxonomy_view.select("education")
    assert w.taxonomy_view.editor.column == "education"

    # mechanism and parameters
    w.go_to(w.mechanism_view)
    w.mechanism_view.combo.setCurrentText(K_MECHANISM)
    w.mechanism_view.panel.editor("k").setValue(20)
    preview = w.mechanism_view.refresh_preview()
    assert not preview.errors and preview.cost.k == 20 and not preview.cost.is_dp
    assert "k = 20" in w.mechanism_view.cost_label.text()
    assert "Not charged" in w.mechanism_view.budget_label.text()

    # run in the worker
    w.go_to(w.run_view)
    assert w.run_view.run_button.isEnabled() and w.run_view.run_button.text() == "&Run"
    qtbot.mouseClick(w.run_view.run_button, Qt.LeftButton)
    assert w.run_view.running
    qtbot.waitUntil(lambda: not w.run_view.running, timeout=120000)
    qtbot.waitUntil(lambda: w.stack.currentWidget() is w.results_view, timeout=5000)
    record = w.session.last_release
    table = record.release.table
    assert len(table) == 30162
    assert check_release(table, qis, 20).ok
    assert record.figures["smallest group (rows)"] >= 20 and record.figures["highest re-identification risk %"] <= 5
    assert "NCP %" in record.figures  # the mechanism's own figures, for the custodian
    kept = json.loads(open(record.record_path).read())  # the custodian record, beside the ledger
    assert kept["source"]["rows used"] == 30162 and kept["release_id"] == record.release_id
    qtbot.waitUntil(lambda: not w.results_view.showing, timeout=5000)  # tables added one per turn
    assert w.results_view.table_tabs.count() >= 1
    assert w.results_view.compare_model.rowCount() == 1

    # a simulation: not for publication, drawn in the chart; of a k-anonymity mechanism it reads the own table
    # (no ε to protect) and is not charged
    panel = w.results_view.sweep
    assert "not for publication" in panel.banner.text()
    assert panel.basis == "your own table" and "nothing is charged" in panel.basis_text.text()
    panel.param_combo.setCurrentIndex(panel.param_combo.findData("k"))
    panel.grid_edit.setText("10, 100")
    panel.repeats.setValue(1)
    panel.start()
    qtbot.waitUntil(lambda: not panel.running, timeout=180000)
    qtbot.waitUntil(lambda: not panel.showing, timeout=5000)  # drawn in a later turn
    assert len(w.session.sweeps) == 1
    assert panel.chart.series_names() == [w.session.sweeps[0][0]]
    summary = w.session.sweeps[0][1].summary()
    assert len(summary) == 2

    # export CSV and Parquet, re-read each
    w.go_to(w.export_view)
    for suffix, label in ((".csv", "CSV (.csv)"), (".parquet", "Parquet (.parquet)")):
        w.export_view.format_combo.setCurrentText(label)
        target = tmp_path / f"release{suffix}"
        w.export_view.path_edit.setText(str(target))
        qtbot.mouseClick(w.export_view.export_button, Qt.LeftButton)
        qtbot.waitUntil(lambda: not w.export_view._busy, timeout=60000)
        assert target.is_file(), w.export_view.result.text()
        back = read_table(target)
        assert len(back.frame) == len(table) and list(back.frame.columns) == list(table.columns)
        pd.testing.assert_frame_equal(back.frame.astype(str).reset_index(drop=True),
                                      table.astype(str).reset_index(drop=True), check_dtype=False)
        assert check_release(back.frame, qis, 20).ok
    note = json.loads((tmp_path / "release.csv.release-note.json").read_text())
    assert note["mechanism"]["name"] == K_MECHANISM and note["files"][0]["rows"] == 30162
    assert all(c["ok"] for c in note["checked on the written file"])
    assert "Release note (publish it with the file)" in w.export_view.result.text()
    assert "exported" in w.step_texts()[5]

    # the project restores roles, taxonomies, mechanism and parameters in a new window
    w.session.project_path = str(tmp_path / "adult.ppdp.json")
    assert w.save_project() is not None
    w2 = type(w)(settings=w.settings)
    qtbot.addWidget(w2)
    w2.open_project(str(tmp_path / "adult.ppdp.json"))
    qtbot.waitUntil(lambda: w2.session.dataset is not None and w2.session.mechanism_name == K_MECHANISM
                    and w2.session.dataset.spec("education").taxonomy is not None, timeout=30000)
    ds2 = w2.session.dataset
    assert ds2.spec("native-country").role == Role.INSENSITIVE
    assert ds2.spec("education").taxonomy.to_paths() == w.session.dataset.spec("education").taxonomy.to_paths()
    assert w2.session.params["k"] == 20
    assert len(w2.previous_releases) == 1 and w2.previous_releases[0]["exported_to"]
    assert str(tmp_path / "adult.ppdp.json") in w2.recent_files()
