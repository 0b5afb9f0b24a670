"""The Export step writes every output `ppdp run` can (issue 26, finding 6): the table, the release note, a copy of
the custodian record, and PDF copies of both — before, the PDFs existed only on the command line."""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtCore import Qt

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))
from clinical_helpers import heart_like  # noqa: E402


def test_export_writes_pdf_note_and_record(make_window, qtbot, tmp_path):
    path = tmp_path / "heart.csv"
    heart_like().to_csv(path, index=False)
    w = make_window()
    w.open_path(str(path))
    qtbot.waitUntil(lambda: w.session.dataset is not None, timeout=30000)
    w.go_to(w.run_view)
    qtbot.waitUntil(lambda: w.run_view.run_button.isEnabled(), timeout=10000)
    qtbot.mouseClick(w.run_view.run_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: not w.run_view.running and len(w.session.releases) == 1, timeout=120000)

    view = w.export_view
    w.go_to(view)
    view.format_combo.setCurrentText("CSV (.csv)")
    target = tmp_path / "out" / "heart_release.csv"
    target.parent.mkdir()
    view.path_edit.setText(str(target))
    view.report_check.setChecked(True)
    view.record_check.setChecked(True)
    view.pdf_check.setChecked(True)
    qtbot.mouseClick(view.export_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: not view.busy, timeout=60000)
    names = sorted(p.name for p in target.parent.iterdir())
    assert "heart_release.csv" in names
    note = [n for n in names if n.endswith(".json") and "custodian" not in n]
    assert note and note[0].replace(".json", ".pdf") in names, names
    assert "heart_release.custodian-record.json" in names and "heart_release.custodian-record.pdf" in names
    assert (target.parent / "heart_release.custodian-record.pdf").read_bytes().startswith(b"%PDF")
    assert "PDF copies:" in view.result.text()
