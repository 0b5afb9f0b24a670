"""`ppdp-gui --self-test`, the bundle's smoke test, run here from the source tree: it must load the bundled sample
with its hierarchies, release through a worker process and export the file with its release note."""

from __future__ import annotations

import json
import os

from ppdp_gui.gui import self_test


def test_self_test_releases_through_the_worker_and_exports(qtbot, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PPDP_LEDGER", str(tmp_path / "unused.sqlite"))  # run() points it into OUT; restored after
    out = tmp_path / "out"
    assert self_test.main(["ppdp-gui", "--self-test", str(out)]) == 0
    text = capsys.readouterr().out
    assert "sample loaded: 30,162 rows; taxonomies attached to 9 columns" in text
    worker = int(text.split("release made in worker process ")[1].split()[0])
    assert worker != os.getpid()
    note = json.loads((out / "release.csv.release-note.json").read_text())
    assert note["guarantee"]["holds"] and "self-test passed" in text
    assert (out / "ledger.sqlite").is_file() and not (tmp_path / "unused.sqlite").exists()
