"""Finding 9 of the release-integrity audit: the window and `ppdp` make the same release of the same recipe.

Both load the recipe with the engine's one loader (ARX hierarchies beside the table included), plan, run and
export through the same engine calls; with the same test seed (PPDP_TEST_SEED) the released table and the
release note must be byte-identical."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
from PySide6.QtCore import Qt

from ppdp_gui.cli import main
from ppdp_gui.engine.data.schema import Role
from ppdp_gui.engine.persistence.project import Recipe, write_recipe
from ppdp_gui.engine.package_files import sample_table, taxonomies_folder



def ward_recipe(tmp_path: Path) -> Path:
    """3,000 rows of the Adult sample as 'ward.csv' with the ARX hierarchies named after it, and a DiffGen recipe."""
    frame = pd.read_csv(sample_table(), dtype=str,
                        keep_default_na=False).head(3000)
    table = tmp_path / "data" / "ward.csv"
    table.parent.mkdir()
    frame.to_csv(table, index=False)
    for f in (taxonomies_folder() / "adult").glob("adult_hierarchy_*.csv"):
        shutil.copy(f, table.parent / f.name.replace("adult_", "ward_"))
    recipe = Recipe(source=str(table), roles={"salary-class": Role.CLASS}, mechanism="DiffGen",
                    params={"epsilon": 1.0, "h": 6, "utility": "Max", "class_column": "salary-class",
                            "output": "counts"})
    return write_recipe(recipe, tmp_path / "ward.ppdp.json")


def test_cli_and_window_make_byte_identical_releases(make_window, qtbot, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PPDP_TEST_SEED", "20261124")
    recipe = ward_recipe(tmp_path)
    (tmp_path / "cli").mkdir()
    (tmp_path / "gui").mkdir()
    code = main(["run", "--recipe", str(recipe), "-o", str(tmp_path / "cli" / "release.csv"), "--report",
                 str(tmp_path / "cli" / "release.csv.release-note.json"), "--ledger", str(tmp_path / "cli.sqlite"),
                 "--confirm-roles"])
    assert code == 0, capsys.readouterr().err

    w = make_window()
    w.open_project(str(recipe))
    qtbot.waitUntil(lambda: w.session.dataset is not None and w.session.mechanism_name == "DiffGen", timeout=30000)
    w.data_view.confirm_button.click()  # as --confirm-roles on the command line
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

    for name in ("release.csv", "release.csv.release-note.json"):
        cli, gui = (tmp_path / "cli" / name).read_bytes(), (tmp_path / "gui" / name).read_bytes()
        assert cli == gui, name
    note = json.loads((tmp_path / "gui" / "release.csv.release-note.json").read_text())
    assert note["seeded for a test"] is True and note["guarantee"]["holds"]
    assert note["details"]["bounds source"] == {"age": "taxonomy"}  # the hierarchy beside the table, in both
