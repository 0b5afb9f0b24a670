"""Accessibility and fonts: a real font renders (not empty boxes), every input is named for screen readers,
steps are reachable from the keyboard."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont, QFontDatabase, QFontInfo, QFontMetrics, QImage, QPainter
from PySide6.QtWidgets import (QAbstractButton, QAbstractItemView, QAbstractSpinBox, QApplication, QComboBox,
                               QHeaderView,
                               QLabel, QLineEdit, QPlainTextEdit)


def ink_width(text: str, font: QFont) -> int:
    """Columns of the rendered text that hold dark pixels: measures glyphs actually drawn."""
    img = QImage(400, 60, QImage.Format_RGB32)
    img.fill(QColor("white"))
    p = QPainter(img)
    try:
        p.setFont(font)
        p.setPen(QColor("black"))
        p.drawText(5, 40, text)
    finally:
        p.end()
    cols = 0
    for x in range(img.width()):
        if any(QColor(img.pixel(x, y)).lightness() < 128 for y in range(0, img.height(), 2)):
            cols += 1
    return cols


def test_font_resolves_and_renders(qapp):
    font = QApplication.font()
    family = QFontInfo(font).family()
    assert family and family in QFontDatabase.families()
    metrics = QFontMetrics(font)
    assert metrics.inFontUcs4(ord("A")) and metrics.inFontUcs4(ord("ε"))  # ε is on buttons and labels
    assert metrics.horizontalAdvance("iiii") < metrics.horizontalAdvance("WWWW")
    # drawn, not boxes: four i's leave much less ink than four W's (boxes would be equally wide)
    assert 0 < ink_width("iiii", font) < 0.6 * ink_width("WWWW", font)


def unnamed_inputs(window) -> list[str]:
    buddies = {id(label.buddy()) for label in window.findChildren(QLabel) if label.buddy() is not None}
    missing = []
    for cls in (QComboBox, QLineEdit, QAbstractSpinBox, QAbstractItemView, QPlainTextEdit):
        for w in window.findChildren(cls):
            if not w.isVisibleTo(window) or isinstance(w, QHeaderView) or \
                    isinstance(w.parent(), (QComboBox, QAbstractSpinBox)):
                continue
            if not (w.accessibleName() or id(w) in buddies or w.toolTip()):
                missing.append(f"{type(w).__name__} in {type(w.parent()).__name__}")
    for b in window.findChildren(QAbstractButton):
        if isinstance(b.parent(), QAbstractItemView):  # a table's corner "select all" button
            continue
        if b.isVisibleTo(window) and not (b.text() or b.accessibleName() or b.toolTip()):
            missing.append(f"{type(b).__name__} without text in {type(b.parent()).__name__}")
    return missing


def test_every_input_is_named_on_every_step(loaded_window, qtbot):
    w = loaded_window
    for view in w.views:
        w.go_to(view)
        qtbot.wait(10)
        assert unnamed_inputs(w) == [], view.title


def test_steps_by_keyboard(loaded_window, qtbot):
    w = loaded_window
    w.activateWindow()
    for i, view in enumerate(w.views, 1):
        actions = [a for a in w.findChildren(type(w.save_action)) if a.shortcut().toString() == f"Alt+{i}"]
        assert len(actions) == 1
        actions[0].trigger()
        assert w.stack.currentWidget() is view
    # the step list itself moves with the arrow keys
    w.steps.setFocus()
    w.steps.setCurrentRow(0)
    qtbot.keyClick(w.steps, Qt.Key_Down)
    assert w.stack.currentWidget() is w.taxonomy_view
    # each step item says its state in words for screen readers
    texts = [w.steps.item(i).data(Qt.AccessibleTextRole) for i in range(w.steps.count())]
    assert all(t and (":" in t) for t in texts) and "done" in texts[0]
