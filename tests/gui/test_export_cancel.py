"""Export progress and cancel: the stages are shown while the worker writes; Cancel stops it at once and leaves
no file and no temporary file; a cancel that comes after the worker began to put files in place is refused (the
latch), and a veto just before renaming removes every temporary file (engine export's `before_commit`)."""

from __future__ import annotations

import os
import time

import pytest
from PySide6.QtCore import Qt

from ppdp_gui.engine.errors import Cancelled
from ppdp_gui.engine.mechanisms import registry
from ppdp_gui.gui.workers.tasks import CommitLatch, discard_temporaries, export_job

K = "Mondrian"
pytestmark = pytest.mark.skipif(K not in registry.names(), reason="Mondrian not registered")


@pytest.fixture
def released(loaded_window, qtbot):
    w = loaded_window
    w.go_to(w.mechanism_view)
    w.mechanism_view.combo.setCurrentText(K)
    w.go_to(w.run_view)
    qtbot.mouseClick(w.run_view.run_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: not w.run_view.running, timeout=120000)
    assert w.session.last_release is not None
    return w


def leftovers(folder, name: str) -> list:
    return sorted(p.name for p in folder.iterdir() if p.name == name or p.name.startswith(f".{name}."))


def test_cancel_leaves_no_file_and_no_temporary(released, qtbot, tmp_path):
    import process_jobs
    w = released
    view = w.export_view
    w.go_to(view)
    view.task = process_jobs.slow_export_job
    target = tmp_path / "release.csv"
    view.path_edit.setText(str(target))
    qtbot.mouseClick(view.export_button, Qt.LeftButton)
    assert view.busy and view.cancel_button.isEnabled() and view.progress.isVisibleTo(view)
    # the worker has written the staged file and says so
    qtbot.waitUntil(lambda: any(p.endswith(".ppdp-tmp") for p in leftovers(tmp_path, "release.csv")), timeout=60000)
    qtbot.waitUntil(lambda: "Writing release.csv" in view.stage.text(), timeout=10000)
    qtbot.mouseClick(view.cancel_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: not view.busy, timeout=20000)
    assert "Export cancelled: nothing was written" in view.result.text()
    assert leftovers(tmp_path, "release.csv") == [] and not (tmp_path / "release.release-note.json").exists()
    assert w.session.exported(w.session.last_release) == []
    # and the step can export again afterwards
    view.task = export_job
    qtbot.mouseClick(view.export_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: not view.busy, timeout=60000)
    assert target.is_file() and leftovers(tmp_path, "release.csv") == ["release.csv"]


def test_the_latch_decides_once(tmp_path):
    latch = CommitLatch(tmp_path / "decision")
    assert latch.decision() is None
    assert latch.claim("commit") and not latch.claim("cancel")  # the worker was first: the window must wait
    assert latch.decision() == "commit"
    other = CommitLatch(tmp_path / "other")
    assert other.claim("cancel") and not other.claim("commit")


def test_a_veto_before_renaming_removes_every_temporary(released, tmp_path):
    record = released.session.last_release
    latch = CommitLatch(tmp_path / "decision")
    assert latch.claim("cancel")  # the window cancelled first
    out = tmp_path / "out"
    out.mkdir()
    items = export_job(record, out / "release.csv", out / "release.release-note.json", None, str(latch.path))
    with pytest.raises(Cancelled):
        for _item in items:
            pass
    assert list(out.iterdir()) == []


def test_only_this_exports_temporaries_are_removed(tmp_path):
    old = tmp_path / ".release.csv.abc123abc123abc1.ppdp-tmp"
    old.write_text("someone else's")
    past = time.time() - 3600
    os.utime(old, (past, past))
    since = time.time()
    mine = tmp_path / ".release.csv.def456def456def4.ppdp-tmp"
    mine.write_text("half written")
    other = tmp_path / ".other.csv.9a7894567890abcd.ppdp-tmp"
    other.write_text("another target")
    users = tmp_path / ".release.csv.notours.tmp"  # not a name the writer gives: never touched
    users.write_text("a user's file")
    assert discard_temporaries([tmp_path / "release.csv"], since) == [mine]
    assert old.exists() and other.exists() and users.exists() and not mine.exists()
