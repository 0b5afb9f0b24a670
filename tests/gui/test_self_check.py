"""Tools → Self-check: the chosen DP mechanism's audit runs in the worker and ends in a plain-words message."""

from __future__ import annotations

from PySide6.QtWidgets import QMessageBox


def run_self_check(window, qtbot, mechanism: str):
    window.mechanism_view.combo.setCurrentText(mechanism)
    window.self_check_size = "smoke"  # the plumbing; the statistics are tested in tests/engine/test_verify.py
    window.self_check_box = None
    window.self_check_action.trigger()
    qtbot.waitUntil(lambda: window.self_check_box is not None, timeout=120_000)
    return window.self_check_box


def test_self_check_of_a_dp_mechanism_reports_in_plain_words(make_window, qtbot):
    w = make_window()
    assert w.self_check_action.text() == "&Self-check…"
    box = run_self_check(w, qtbot, "Laplace histogram")
    assert box.objectName() == "self_check_dialog" and box.icon() == QMessageBox.Information
    text = box.text()
    assert text.startswith("Self-check passed:") and "differ in one patient" in text and "ε" in text
    assert "claimed ε" in box.detailedText() and "PASS" in box.detailedText()
    assert w.self_check_action.isEnabled() and "passed" in w.statusBar().currentMessage()


def test_self_check_explains_a_mechanism_without_epsilon(make_window, qtbot):
    w = make_window()
    box = run_self_check(w, qtbot, "Mondrian")
    assert "differentially private" in box.text() and "Mondrian" in box.text()
    assert w._self_check_job is None


def test_self_check_of_the_whole_path_runs_the_pipeline_audit(make_window, qtbot):
    """Tools → Self-check of the whole path: practice files through reader, plan, a practice ledger and the export;
    its verdict in the same plain-words box (the statistics: tests/engine/test_verify_pipeline.py)."""
    w = make_window()
    assert w.self_check_pipeline_action.text() == "Self-check of the &whole path…"
    w.mechanism_view.combo.setCurrentText("Laplace on records")
    w.self_check_size = "smoke"
    w.self_check_box = None
    w.self_check_pipeline_action.trigger()
    assert not w.self_check_action.isEnabled() and not w.self_check_pipeline_action.isEnabled()
    qtbot.waitUntil(lambda: w.self_check_box is not None, timeout=180_000)
    box = w.self_check_box
    details = box.detailedText()
    assert details.startswith("Laplace on records: pipeline smoke audit") and "blank in a released column" in details
    text = box.text()
    assert text.startswith("Self-check passed:") and "whole path" in text or \
        text.startswith("Self-check FAILED") and "Exported files and release notes" in text
    assert w.self_check_action.isEnabled() and w.self_check_pipeline_action.isEnabled()
