"""A hostile project opened in the window: a parameter value that is not one ('5; rm -rf /' for k) is one clear
message naming the parameter — never an uncaught exception in the window (pytest-qt fails a test on one)."""

from __future__ import annotations

import json
import os

import pytest
from PySide6.QtWidgets import QMessageBox


def _error_texts(window) -> list[str]:
    return [b.text() for b in window.findChildren(QMessageBox) if b.objectName() == "error_dialog" and b.isVisible()]


def test_a_project_with_a_shell_command_for_k_is_a_clear_message(make_window, qtbot, tmp_path):
    table = tmp_path / "ward.csv"
    table.write_text("age,sex,zip\n" + "".join(f"{20 + i % 50},{'FM'[i % 2]},{2100 + i % 7}\n"
                                               for i in range(60)), encoding="utf-8")
    project = tmp_path / "ward.ppdp.json"
    project.write_text(json.dumps({"schema_version": 2, "source": {"path": str(table)},
                                   "mechanism": {"name": "Mondrian", "params": {"k": "5; rm -rf /"}}}),
                       encoding="utf-8")
    w = make_window()
    w.open_project(str(project))
    qtbot.waitUntil(lambda: w.session.dataset is not None and bool(_error_texts(w)), timeout=30000)
    text = " ".join(_error_texts(w))
    assert "'5; rm -rf /'" in text and "Mechanism step" in text, text
    assert w.session.project_path == str(project)  # the rest of the project was still applied


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")
def test_the_windows_loader_refuses_a_fifo_at_once(tmp_path):
    """The window's loader (workers.tasks.load_job, run in a worker thread) goes through the engine's reader: a
    FIFO as the table is one clear DataError, not a worker waiting forever."""
    import threading

    from ppdp_gui.engine.errors import DataError
    from ppdp_gui.engine.persistence.project import Recipe
    from ppdp_gui.gui.workers.tasks import load_job

    fifo = tmp_path / "ward.csv"
    os.mkfifo(fifo)
    box = {}

    def target():
        try:
            list(load_job(Recipe(source=str(fifo))))
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            box["error"] = exc
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(20)
    assert not thread.is_alive(), "the loader is still waiting on the FIFO"
    assert isinstance(box.get("error"), DataError) and "FIFO" in str(box["error"])
