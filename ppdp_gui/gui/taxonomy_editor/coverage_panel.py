"""Coverage warnings: values in the data that the tree lacks (a release would fail) and tree values the data lacks."""

from __future__ import annotations

import pandas as pd
from PySide6 import QtCore, QtGui, QtWidgets

SHOWN = 200  # list at most this many of each kind; the label gives the full counts


class CoveragePanel(QtWidgets.QGroupBox):
    """A summary line, a list of the offending values and a button (set by the editor) to add missing ones."""

    def __init__(self, parent: QtWidgets.QWidget | None = None):
        super().__init__("Coverage of the data", parent)
        self.setAccessibleName("Coverage of the data by the taxonomy")
        self.coverage = None
        self.public_missing: list[str] = []  # values of the column's public list the tree lacks
        self.summary_label = QtWidgets.QLabel("No data loaded: coverage not checked.")
        self.summary_label.setWordWrap(True)
        self.summary_label.setAccessibleName("Coverage summary")
        self.list = QtWidgets.QListWidget()
        self.list.setAccessibleName("Values not covered")
        self.list.setToolTip("Values in the data but not in the tree must be added before a release; values in "
                             "the tree but not in the data do no harm")
        self.list.setMaximumHeight(140)
        self.add_button = QtWidgets.QToolButton()
        self.add_button.setToolTip("Put the data's values that the tree lacks under the top group")
        layout = QtWidgets.QVBoxLayout(self)
        layout.addWidget(self.summary_label)
        layout.addWidget(self.list)
        layout.addWidget(self.add_button, 0, QtCore.Qt.AlignmentFlag.AlignLeft)

    def update_coverage(self, taxonomy, values: pd.Series | None, public_values=None) -> None:
        """`public_values`: the column's public list (domain); its values the tree lacks are listed too (a
        differentially private release needs the tree to hold exactly that list)."""
        self.list.clear()
        self.public_missing = []
        if taxonomy is not None and public_values:
            leaves = set(taxonomy.leaf_values())
            self.public_missing = [v for v in public_values if v not in leaves]
        if taxonomy is None or values is None:
            self.coverage = None
            self.summary_label.setText("No data loaded: coverage not checked." if values is None
                                       else "The tree has no values yet.")
            self.list.hide()
            self.add_button.hide()
            return
        try:
            from ppdp_gui.engine.taxonomy.coverage import check_coverage
        except ImportError:  # engine without the coverage check: say so rather than fail
            self.coverage = None
            self.summary_label.setText("Coverage check not available in this version.")
            self.list.hide()
            self.add_button.hide()
            return
        self.coverage = cov = check_coverage(taxonomy, values)
        style = self.style()
        warn = style.standardIcon(QtWidgets.QStyle.StandardPixmap.SP_MessageBoxWarning)
        info = style.standardIcon(QtWidgets.QStyle.StandardPixmap.SP_MessageBoxInformation)
        for value in list(cov.missing)[:SHOWN]:
            item = QtWidgets.QListWidgetItem(warn, f"In the data, not in the tree: {value}")
            item.setData(QtCore.Qt.ItemDataRole.UserRole, ("missing", value))
            self.list.addItem(item)
        for value in self.public_missing[:SHOWN]:
            item = QtWidgets.QListWidgetItem(warn, f"In the public list of values, not in the tree: {value}")
            item.setData(QtCore.Qt.ItemDataRole.UserRole, ("public", value))
            self.list.addItem(item)
        for value in list(cov.unused)[:SHOWN]:
            item = QtWidgets.QListWidgetItem(info, f"In the tree, not in the data: {value}")
            item.setData(QtCore.Qt.ItemDataRole.UserRole, ("unused", value))
            item.setForeground(QtGui.QBrush(QtGui.QColor("#555555")))
            self.list.addItem(item)
        n_missing, n_unused, n_public = len(cov.missing), len(cov.unused), len(self.public_missing)
        if not n_missing and not n_unused and not n_public:
            text = "Every value in the data is in the tree, and every value of the tree occurs in the data."
        else:
            parts = []
            if n_missing:
                parts.append(f"⚠ {n_missing} value{'s' if n_missing != 1 else ''} of the data "
                             f"{'are' if n_missing != 1 else 'is'} not in the tree: add them before a release.")
            if n_public:
                parts.append(f"⚠ {n_public} value{'s' if n_public != 1 else ''} of the column's public list "
                             f"{'are' if n_public != 1 else 'is'} not in the tree: add them (Add missing values) "
                             "so a differentially private release can use the list.")
            if n_unused:
                parts.append(f"{n_unused} value{'s' if n_unused != 1 else ''} of the tree "
                             f"{'do' if n_unused != 1 else 'does'} not occur in the data.")
            text = " ".join(parts)
        self.summary_label.setText(text)
        self.summary_label.setStyleSheet("color: #a33a00;" if n_missing or n_public else "")
        self.list.setVisible(bool(n_missing or n_unused or n_public))
        self.add_button.setVisible(bool(n_missing or n_public))
