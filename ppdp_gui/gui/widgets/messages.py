"""Error messages the user can act on: engine errors as written, anything unexpected with details on demand."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QWidget

from ppdp_gui.engine.errors import (BudgetError, Cancelled, CheckError, DataError, ParameterError, PpdpError,
                                   TaxonomyError)

_TITLES = {
    DataError: "The file or table cannot be used",
    ParameterError: "A setting needs changing",
    TaxonomyError: "A taxonomy needs changing (Taxonomies step)",
    BudgetError: "Not enough privacy budget left",
    CheckError: "The release failed its safety check and must not be published",
    Cancelled: "Cancelled",
}


def describe_error(exc: BaseException) -> tuple[str, str]:
    """(headline, message) for any exception: engine errors speak for themselves, others are labelled a bug."""
    for cls, title in _TITLES.items():
        if isinstance(exc, cls):
            return title, str(exc)
    if isinstance(exc, PpdpError):
        return "The run could not finish", str(exc)
    if isinstance(exc, MemoryError):
        return "Not enough memory", "The computer ran out of memory. Try a smaller table or fewer columns."
    return "Unexpected error", f"{type(exc).__name__}: {exc}\n\nThis is a fault in the program, not in your data."


def show_error(parent: QWidget, exc: BaseException, details: str = "", context: str = "") -> QMessageBox:
    """A window-modal message box that does not block the caller (tests and the event loop keep running)."""
    title, message = describe_error(exc)
    box = QMessageBox(QMessageBox.Warning, title, (context + "\n\n" if context else "") + message,
                      QMessageBox.Ok, parent)
    box.setObjectName("error_dialog")
    box.setAccessibleName(title)
    if details and not isinstance(exc, PpdpError):
        box.setDetailedText(details)
    box.setAttribute(Qt.WA_DeleteOnClose)
    box.open()
    return box
