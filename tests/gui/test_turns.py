"""Deferred work in the window (views/common.py): `soon` runs pieces in order, one per turn of the event loop, so
what fell due meanwhile (a timer, a paint, the user's input) comes between two pieces; `Later` runs once however
often it was asked; a piece whose widget is gone is dropped."""

from __future__ import annotations

import time

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QWidget

from ppdp_gui.gui.views.common import Later, soon


def busy(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def test_pieces_run_in_order_with_due_timers_between(qtbot):
    owner = QWidget()
    qtbot.addWidget(owner)
    log: list[str] = []

    def first():
        log.append("first")
        QTimer.singleShot(1, owner, lambda: log.append("timer"))  # falls due while `first` is still busy
        busy(0.03)

    soon(owner, first)
    soon(owner, lambda: log.append("second"))
    soon(owner, lambda: log.append("third"))
    qtbot.waitUntil(lambda: "third" in log, timeout=5000)
    # QTimer.singleShot(0, …) chains would run first/second/third back to back and the timer only after them
    assert log == ["first", "timer", "second", "third"]


def test_a_piece_of_a_deleted_widget_is_dropped(qtbot):
    gone, kept = QWidget(), QWidget()
    qtbot.addWidget(kept)
    log: list[str] = []
    soon(gone, lambda: log.append("gone"))
    soon(kept, lambda: log.append("kept"))
    gone.deleteLater()
    qtbot.waitUntil(lambda: log == ["kept"], timeout=5000)
    qtbot.wait(20)
    assert log == ["kept"]


def test_later_runs_once_and_flush_runs_now(qtbot):
    owner = QWidget()
    qtbot.addWidget(owner)
    calls: list[int] = []
    later = Later(owner, lambda: calls.append(1))
    for _ in range(5):
        later()
    assert later.pending and calls == []
    qtbot.waitUntil(lambda: not later.pending, timeout=5000)
    assert calls == [1]
    later()
    later.flush()  # a caller that needs the result at once
    assert calls == [1, 1] and not later.pending
    qtbot.wait(20)
    assert calls == [1, 1]  # the queued call found nothing left to do
