"""The in-app user guide: a short HTML text bundled with the program, shown in a QTextBrowser.

Written for a custodian who does not code: the six steps, what each guarantee means and does not mean, tables of
counts, public domains, the budget ledger, the release note and the custodian record, simulations and advice. Its
last section, the figures, is generated from engine/glossary.py, so the guide and the window never disagree on
what a figure means. F1 opens it at the step the window shows.
"""

from __future__ import annotations

from html import escape
from pathlib import Path

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QTextBrowser, QVBoxLayout, QWidget

from ppdp_gui.engine import glossary

GUIDE = Path(__file__).with_name("guide.html")


def figures_section() -> str:
    """One line per figure (titles shared by several names listed once), from the engine's glossary."""
    rows, seen = [], set()
    for fig in glossary.FIGURES.values():
        key = (fig.title, fig.meaning)
        if key in seen:
            continue
        seen.add(key)
        names = [n for n, f in glossary.FIGURES.items() if (f.title, f.meaning) == key]
        rows.append(f"<li><b>{escape(fig.title)}</b> <span style='color:#555'>({escape(', '.join(names))})</span>: "
                    f"{escape(fig.meaning)}" + (f"<br><i>{escape(fig.formula)}</i>" if fig.formula else "") + "</li>")
    return "<ul>" + "".join(rows) + "</ul>"


def guide_html() -> str:
    return GUIDE.read_text(encoding="utf-8") + figures_section()


class GuideDialog(QDialog):
    """The guide in a non-modal window; `show_at(anchor)` scrolls to a section ("step-3", "ledger", …)."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("ppdp — user guide")
        self.setObjectName("guide_dialog")
        self.browser = QTextBrowser()
        self.browser.setAccessibleName("User guide")
        self.browser.setOpenExternalLinks(False)
        self.browser.setHtml(guide_html())
        buttons = QDialogButtonBox(QDialogButtonBox.Close)
        buttons.rejected.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.browser, 1)
        layout.addWidget(buttons)
        self.resize(760, 680)

    def show_at(self, anchor: str = "") -> None:
        self.show()
        self.raise_()
        self.activateWindow()
        if anchor:
            self.browser.scrollToAnchor(anchor)
        else:
            self.browser.verticalScrollBar().setValue(0)


def open_guide(parent: QWidget, anchor: str = "") -> GuideDialog:
    """Open (or raise) the parent's guide window at `anchor`."""
    dialog = parent.findChild(GuideDialog, "guide_dialog")
    if dialog is None:
        dialog = GuideDialog(parent)
    dialog.show_at(anchor)
    return dialog
