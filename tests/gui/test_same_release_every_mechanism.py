"""The conformance kit's window half (issue 29, Deliver 5): for every registered mechanism, `ppdp run` and the
window make byte-identical releases (every table and the release note) of the same project with the same test
seed — shown before for DiffGen only (test_same_release.py). Tiny tables (tests/conformance_helpers.py), so the
whole registry stays fast."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from ppdp_gui.cli import main
from ppdp_gui.engine.mechanisms import registry

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from conformance_helpers import ward_recipe  # noqa: E402


@pytest.mark.parametrize("name", registry.names())
def test_cli_and_window_make_byte_identical_releases(name, make_window, qtbot, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PPDP_TEST_SEED", "20261127")
    recipe = ward_recipe(tmp_path / "project", name)
    (tmp_path / "cli").mkdir()
    (tmp_path / "gui").mkdir()
    code = main(["run", "--recipe", str(recipe), "-o", str(tmp_path / "cli" / "release.csv"), "--report",
                 str(tmp_path / "cli" / "release.csv.release-note.json"), "--ledger", str(tmp_path / "cli.sqlite")])
    assert code == 0, capsys.readouterr().err

    w = make_window()
    w.open_project(str(recipe))
    qtbot.waitUntil(lambda: w.session.dataset is not None and w.session.mechanism_name == name, timeout=30000)
    w.go_to(w.run_view)
    qtbot.waitUntil(lambda: w.run_view.run_button.isEnabled(), timeout=10000)
    qtbot.mouseClick(w.run_view.run_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: not w.run_view.running, timeout=120000)
    assert len(w.session.releases) == 1, w.run_view.message.text()
    w.go_to(w.export_view)
    w.export_view.path_edit.setText(str(tmp_path / "gui" / "release.csv"))
    assert w.export_view.report_check.isChecked()
    qtbot.mouseClick(w.export_view.export_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: not w.export_view._busy, timeout=60000)

    cli = sorted(p.name for p in (tmp_path / "cli").iterdir() if not p.name.endswith(".pdf"))
    gui = sorted(p.name for p in (tmp_path / "gui").iterdir() if not p.name.endswith(".pdf"))
    assert cli == gui and "release.csv" in cli
    for f in cli:
        assert (tmp_path / "cli" / f).read_bytes() == (tmp_path / "gui" / f).read_bytes(), f
