"""Help → User guide (F1): a short guide bundled with the program, opened at the step shown, covering the steps,
the guarantees, tables of counts, public domains, the ledger, the two documents, advice — and every figure the
window shows, from the same glossary."""

from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt

from ppdp_gui.engine import glossary
from ppdp_gui.gui.help import GuideDialog, guide_html


def test_f1_opens_the_guide_at_the_step_shown(make_window, qtbot):
    w = make_window()
    w.go_to(w.export_view)
    assert w.guide_action.shortcut().toString() == "F1"
    w.activateWindow()
    qtbot.waitUntil(w.isActiveWindow, timeout=3000)
    qtbot.keyClick(w.steps, Qt.Key_F1)
    dialogs = [d for d in w.findChildren(GuideDialog) if d.isVisible()]
    assert len(dialogs) == 1
    browser = dialogs[0].browser
    assert browser.accessibleName() == "User guide"
    qtbot.waitUntil(lambda: browser.verticalScrollBar().value() > 0, timeout=3000)  # scrolled to "6. Export"
    at_export = browser.verticalScrollBar().value()
    w.go_to(w.data_view)
    w.guide_action.trigger()  # the same window again, now at step 1
    assert [d for d in w.findChildren(GuideDialog)] == dialogs
    qtbot.waitUntil(lambda: browser.verticalScrollBar().value() < at_export, timeout=3000)


def test_the_guide_covers_what_the_issue_asked():
    text = guide_html()
    for anchor in [f"step-{i}" for i in range(1, 7)] + ["guarantees", "counts", "domains", "ledger", "documents",
                                                         "advice", "figures"]:
        assert f'<a name="{anchor}"></a>' in text and f'href="#{anchor}"' in text
    for words in ("Does not mean", "repeat each row as many times as its count", "Never publish it",
                  "nothing is run and nothing is charged", "never given back"):
        assert words.lower() in text.lower(), words
    for name, fig in glossary.FIGURES.items():  # every figure of the window, with its formula (as HTML)
        assert escape(fig.title) in text and escape(name) in text
    assert "Σ over groups of (group size)²" in text
