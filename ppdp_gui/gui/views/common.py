"""What every step view shares: a title, a one-line state for the step list, and small layout helpers."""

from __future__ import annotations

from html import escape as _escape

from PySide6.QtCore import Signal
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

    def state(self) -> tuple[str, str]:
        return TODO, ""


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
