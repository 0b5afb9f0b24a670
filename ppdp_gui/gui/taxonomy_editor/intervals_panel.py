"""Auto-build a numeric column's taxonomy as nested intervals, with a live preview before it replaces the tree.

The builder is the engine's `numeric_intervals`; this panel only collects width, fan-out and bounds. Bounds taken
from the data are said so on screen (they are computed from private values), and the user can set them instead.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from PySide6 import QtCore, QtWidgets

from ppdp_gui.engine.errors import PpdpError
from ppdp_gui.engine.taxonomy import DEFAULT_INTERVAL_WIDTH
from ppdp_gui.engine.taxonomy.builders import default_width
from ppdp_gui.engine.taxonomy.editing import EditTree
from ppdp_gui.gui.taxonomy_editor.model import TaxonomyModel


class IntervalBuilder(QtWidgets.QGroupBox):
    """Width, fan-out and bounds in; a preview tree out; "Apply" hands the built Taxonomy to the editor."""

    applyRequested = QtCore.Signal(object)

    def __init__(self, parent: QtWidgets.QWidget | None = None):
        super().__init__("Build intervals for numbers", parent)
        self.setAccessibleName("Build intervals for a numeric column")
        self.setToolTip("Group numbers into intervals of equal width, and those intervals into wider ones")
        self._column = ""
        self._values = ()  # no column yet (an array once one is chosen; numpy is not needed for the first paint)
        self._raw = None  # the column's values as given (a Series once a column is chosen)
        self._preview = None
        self._timer = QtCore.QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(150)
        self._timer.timeout.connect(self.preview_now)

        self.width_spin = QtWidgets.QDoubleSpinBox()
        self.width_spin.setRange(1e-6, 1e12)
        self.width_spin.setDecimals(4)
        self.width_spin.setValue(DEFAULT_INTERVAL_WIDTH)
        self.width_spin.setAccessibleName("Interval width")
        self.width_spin.setToolTip("Width of the narrowest intervals, e.g. 10 for 20-29, 30-39, …")
        self.fan_spin = QtWidgets.QSpinBox()
        self.fan_spin.setRange(2, 50)
        self.fan_spin.setValue(2)
        self.fan_spin.setAccessibleName("Intervals merged per level")
        self.fan_spin.setToolTip("How many intervals are merged into one at each level above (2 doubles the width)")
        self.bounds_check = QtWidgets.QCheckBox("Set the &range myself")
        self.bounds_check.setAccessibleName("Set the interval range myself")
        self.bounds_check.setToolTip("Bounds taken from the data reveal its smallest and largest values; "
                                     "prefer public bounds (e.g. ages 0 to 120)")
        self.low_spin, self.high_spin = QtWidgets.QDoubleSpinBox(), QtWidgets.QDoubleSpinBox()
        for spin, name in ((self.low_spin, "Lowest value"), (self.high_spin, "Highest value")):
            spin.setRange(-1e12, 1e12)
            spin.setDecimals(4)
            spin.setEnabled(False)
            spin.setAccessibleName(name)
            spin.setToolTip(f"{name} covered by the intervals")
        self.bounds_note = QtWidgets.QLabel()
        self.bounds_note.setWordWrap(True)
        self.bounds_note.setAccessibleName("Where the interval bounds come from")
        self.preview_model = TaxonomyModel(EditTree(), self, editable=False)
        self.preview_view = QtWidgets.QTreeView()
        self.preview_view.setModel(self.preview_model)
        self.preview_view.setAccessibleName("Preview of the interval taxonomy")
        self.preview_view.setToolTip("What the taxonomy will look like; nothing changes until you press Apply")
        self.preview_view.setUniformRowHeights(True)
        self.summary_label = QtWidgets.QLabel()
        self.summary_label.setAccessibleName("Preview summary")
        self.summary_label.setWordWrap(True)
        self.apply_button = QtWidgets.QPushButton("&Apply intervals")
        self.apply_button.setAccessibleName("Replace the taxonomy with these intervals")
        self.apply_button.setToolTip("Replace the tree with the previewed intervals (undo with Ctrl+Z)")
        self.apply_button.setEnabled(False)

        form = QtWidgets.QFormLayout()
        form.addRow("Interval &width:", self.width_spin)
        form.addRow("&Merge per level:", self.fan_spin)
        form.addRow(self.bounds_check)
        bounds = QtWidgets.QHBoxLayout()
        bounds.addWidget(self.low_spin)
        bounds.addWidget(QtWidgets.QLabel("to"))
        bounds.addWidget(self.high_spin)
        form.addRow("&From:", bounds)
        for row in range(form.rowCount()):
            item = form.itemAt(row, QtWidgets.QFormLayout.ItemRole.LabelRole)
            field = form.itemAt(row, QtWidgets.QFormLayout.ItemRole.FieldRole)
            if item and isinstance(item.widget(), QtWidgets.QLabel) and field and field.widget():
                item.widget().setBuddy(field.widget())
        form.labelForField(bounds).setBuddy(self.low_spin)
        layout = QtWidgets.QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.bounds_note)
        layout.addWidget(self.preview_view, 1)
        layout.addWidget(self.summary_label)
        layout.addWidget(self.apply_button)

        for spin in (self.width_spin, self.low_spin, self.high_spin):
            spin.valueChanged.connect(self._schedule)
        self.fan_spin.valueChanged.connect(self._schedule)
        self.bounds_check.toggled.connect(self._bounds_toggled)
        self.apply_button.clicked.connect(self._apply)

    # ---- public ---------------------------------------------------------------------------------------------
    def set_values(self, column: str, values) -> None:
        """The numeric values to cover (the column's data, or the tree's values when no data is loaded)."""
        self._column = column
        raw = pd.Series(values).dropna()
        numbers = pd.to_numeric(raw, errors="coerce")
        keep = np.isfinite(numbers.to_numpy(dtype=float))
        self._raw = raw[keep]  # handed to the builder as given, so leaf labels match the data's spelling
        self._values = numbers.to_numpy(dtype=float)[keep]
        whole = bool(self._values.size) and bool(np.all(self._values == np.round(self._values)))
        for spin in (self.width_spin, self.low_spin, self.high_spin):
            spin.setDecimals(0 if whole else 4)
        self.width_spin.setMinimum(1 if whole else 1e-4)
        if self._values.size:
            low, high = float(self._values.min()), float(self._values.max())
            for spin in (self.width_spin, self.low_spin, self.high_spin):
                spin.blockSignals(True)
            self.width_spin.setValue(default_width(low, high))
            self.low_spin.setValue(math.floor(low))
            self.high_spin.setValue(math.ceil(high))
            for spin in (self.width_spin, self.low_spin, self.high_spin):
                spin.blockSignals(False)
        self.preview_now()

    def preview(self):
        """The previewed Taxonomy (None when the settings cannot build one)."""
        return self._preview

    def preview_now(self) -> None:
        self._timer.stop()
        self._preview = None
        self.apply_button.setEnabled(False)
        if not len(self._values):
            self.summary_label.setText("No numbers to build intervals from.")
            self.preview_model.set_tree(EditTree(self._column))
            return
        low = self.low_spin.value() if self.bounds_check.isChecked() else None
        high = self.high_spin.value() if self.bounds_check.isChecked() else None
        if low is None:
            self.bounds_note.setText(f"Range taken from the data ({self._values.min():g} to {self._values.max():g}): "
                                     "these bounds reveal the extremes; set public bounds if you can.")
        else:
            self.bounds_note.setText("Range set by you.")
        try:
            from ppdp_gui.engine.taxonomy.builders import numeric_intervals

            raw = self._raw if self._raw is not None else pd.Series([], dtype=object)
            tax = numeric_intervals(self._column, raw, self.width_spin.value(), fan_out=self.fan_spin.value(),
                                    low=low, high=high)
        except (PpdpError, ValueError, ImportError) as exc:
            self.summary_label.setText(f"Cannot build intervals: {exc}")
            self.preview_model.set_tree(EditTree(self._column))
            return
        self._preview = tax
        tree = EditTree.from_taxonomy(tax)
        self.preview_model.set_tree(tree)
        self.preview_view.expandToDepth(1)
        self.preview_view.resizeColumnToContents(0)
        groups = len(tree.groups) - 1
        self.summary_label.setText(f"{len(tree.values())} values in {groups} groups over {tax.height} levels.")
        self.apply_button.setEnabled(True)

    # ---- internals ------------------------------------------------------------------------------------------
    def _schedule(self, *_args) -> None:
        self._timer.start()

    def _bounds_toggled(self, on: bool) -> None:
        self.low_spin.setEnabled(on)
        self.high_spin.setEnabled(on)
        self._schedule()

    def _apply(self) -> None:
        if self._preview is not None:
            self.applyRequested.emit(self._preview)
