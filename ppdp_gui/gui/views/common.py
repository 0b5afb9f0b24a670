"""What every step view shares: a title, a one-line state for the step list, and small layout helpers."""

from __future__ import annotations

from collections import deque
from html import escape as _escape

import shiboken6
from PySide6.QtCore import QCoreApplication, QObject, QTimer, Signal
from PySide6.QtWidgets import QLabel, QWidget

from ppdp_gui.gui.session import Session
from ppdp_gui.gui.workers import JobRunner

# step states, shown as a mark in the step list
TODO, DONE, WARN, BLOCKED = "todo", "done", "warn", "blocked"


class StepView(QWidget):
    """Base of the six step views. `state()` returns (kind, one-line text) for the step list."""

    title = ""
    state_changed = Signal()

    def __init__(self, session: Session, runner: JobRunner, parent=None):
        super().__init__(parent)
        self.session = session
        self.runner = runner
        self.setAccessibleName(f"{self.title} step")
        session.table_opened.connect(self.forget_table)

    def state(self) -> tuple[str, str]:
        return TODO, ""

    def forget_table(self) -> None:
        """Another table was opened (`Session.table_opened`, before its `dataset_changed`): forget whatever this
        view keeps that was derived from, typed for or offered about the table before. Views override it."""


class _Turns(QObject):
    """Deferred pieces of work, one per turn of the event loop, in the order asked.

    A zero-interval QTimer fires once per pass of the event loop, after the events already waiting (input,
    paints, other timers): so between two pieces the window repaints and answers the user. Several
    `QTimer.singleShot(0, f)` asked in one slot, by contrast, are delivered back to back in the next pass, and
    their times add up (benchmarks/bench_gui_heartbeat.py found 30 + 35 ms that way)."""

    def __init__(self):
        super().__init__(QCoreApplication.instance())
        self._queue: deque = deque()
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._next)

    def add(self, owner: QObject, func) -> None:
        self._queue.append((owner, func))
        if not self._timer.isActive():
            self._timer.start()

    def _next(self) -> None:
        try:
            while self._queue:
                owner, func = self._queue.popleft()
                if shiboken6.isValid(owner):  # its widget may have been deleted meanwhile
                    func()
                    break
        finally:
            # started again only now, after the piece: timers that fell due meanwhile (and the events waiting)
            # come first; a repeating timer would be re-armed from the start of the pass and run two pieces
            # back to back
            if self._queue:
                self._timer.start()

    def flush(self) -> None:
        """Run everything waiting now (closing a window, tests that need it all done)."""
        while self._queue:
            self._next()


_TURNS: _Turns | None = None


def soon(owner: QObject, func) -> None:
    """Call `func` in a later turn of the event loop, after what was asked before it (see _Turns); dropped if
    `owner` is deleted first."""
    global _TURNS
    if _TURNS is None or not shiboken6.isValid(_TURNS):
        _TURNS = _Turns()
    _TURNS.add(owner, func)


class Later:
    """`func` called once in a later turn of the event loop (`soon`), however often it was asked for meanwhile.

    One slot that changes the session often emits several signals (a new table: dataset, releases and simulations
    changed, then the mechanism chosen for it); a view that redraws on each would redo the same work three or four
    times while the window cannot repaint or react. Asking `Later` instead redraws once, in a turn of its own, so
    the event loop is never held by one long chain of redraws (benchmarks/bench_gui_heartbeat.py). `flush()` runs
    a pending call now (for code that needs the result at once); calling the function directly makes a pending
    call moot if it sets `pending = False`."""

    def __init__(self, owner: QObject, func):
        self._owner, self._func, self.pending = owner, func, False

    def __call__(self, *_args) -> None:
        if not self.pending:
            self.pending = True
            soon(self._owner, self.flush)

    def flush(self) -> None:
        if self.pending:
            self.pending = False
            self._func()


def heading(text: str) -> QLabel:
    label = QLabel(text)
    font = label.font()
    font.setPointSizeF(font.pointSizeF() * 1.35)
    font.setBold(True)
    label.setFont(font)
    label.setAccessibleName(text)
    return label


def note(text: str = "", *, warn: bool = False, object_name: str = "") -> QLabel:
    """A wrapped explanatory line; `warn` draws it in the warning colour."""
    label = QLabel(text)
    label.setWordWrap(True)
    label.setTextInteractionFlags(label.textInteractionFlags())
    if warn:
        label.setStyleSheet("color: #a33a00;")
    if object_name:
        label.setObjectName(object_name)
    return label


def escape(text: str) -> str:
    """Text for a rich-text label: <, > and & escaped; quotes kept as they read."""
    return _escape(str(text), quote=False)
