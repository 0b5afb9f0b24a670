"""A hostile project opened in the window: a parameter value that is not one ('5; rm -rf /' for k) is one clear
message naming the parameter — never an uncaught exception in the window (pytest-qt fails a test on one)."""

from __future__ import annotations

import json

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
