"""A mechanism's parameter form, built from its `ParamSpec`s alone (no mechanism is known by name here).

float -> slider + typed value box (log10 slider for `log_scale`), int -> slider + spin box (or spin box only when
unbounded), choice -> combo, bool -> check box, column -> combo of the columns allowed by `roles`/`column_kind`,
columns -> checkable list. Help text becomes a caption under the editor; help and formula the tooltip.

A typed number outside the parameter's range is kept as typed and shown as invalid with a message (the run is
blocked by the plan's problem) — never silently replaced: a custodian who types ε = 0 must not find ε = 1 spent.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QValidator
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDoubleSpinBox, QFormLayout, QHBoxLayout, QLabel,
                               QListWidget, QListWidgetItem, QSlider, QSpinBox, QAbstractSpinBox, QVBoxLayout,
                               QWidget)

from ppdp_gui.engine.data.schema import Dataset
from ppdp_gui.engine.mechanisms.base import ParamSpec

NONE_LABEL = "(none)"
_STEPS = 1000


def tooltip(spec: ParamSpec) -> str:
    """The plain meaning, then the exact rule for whoever checks."""
    return spec.help + (f"\n\nHow it works: {spec.formula}" if spec.formula else "")


class _Stepping:
    """Arrow keys and buttons stay inside the parameter's range; typed values may leave it (and are flagged).

    The spec's special value (0 = automatic) reads as its word; typing the word (or a start of it) gives the
    value. Qt's own special-value text only works at the box's minimum, which is far below the range here."""

    bounds: tuple = (None, None)
    special: tuple | None = None

    def textFromValue(self, value) -> str:  # noqa: N802 - Qt's name
        if self.special is not None and value == self.special[0]:
            return self.special[1]
        return super().textFromValue(value)

    def valueFromText(self, text: str):  # noqa: N802 - Qt's name
        if self.special is not None and text.strip().lower() == self.special[1].lower():
            return self.special[0]
        return super().valueFromText(text)

    def validate(self, text: str, pos: int):
        if self.special is not None and text.strip():
            word = self.special[1].lower()
            if text.strip().lower() == word:
                return QValidator.Acceptable, text, pos
            if word.startswith(text.strip().lower()) and not text.strip()[0].isdigit():
                return QValidator.Intermediate, text, pos
        return super().validate(text, pos)

    def stepBy(self, steps: int) -> None:  # noqa: N802 - Qt's name
        super().stepBy(steps)
        low, high = self.bounds
        if low is not None and self.value() < low:
            self.setValue(low)
        elif high is not None and self.value() > high:
            self.setValue(high)


class _IntBox(_Stepping, QSpinBox):
    pass


class _FloatBox(_Stepping, QDoubleSpinBox):
    pass


class NumberField(QWidget):
    """Slider and typed box kept in step; the slider runs on log10 of the value when `log` is set."""

    valueChanged = Signal()

    def __init__(self, spec: ParamSpec, integer: bool, parent=None):
        super().__init__(parent)
        self.spec, self.integer = spec, integer
        low, high = spec.low, spec.high
        self.log = bool(spec.log_scale and low is not None and low > 0)
        self.box: QAbstractSpinBox = _IntBox() if integer else _FloatBox()
        self.box.bounds = (low, high)
        self.box.special = spec.special
        big = 2_000_000_000 if integer else 1e12
        self.box.setRange(-big, big)  # typing is not clamped: an out-of-range value is shown as invalid
        if not integer:
            self.box.setDecimals(self._decimals())
            self.box.setStepType(QAbstractSpinBox.AdaptiveDecimalStepType)
        self.box.setKeyboardTracking(False)
        self.box.setAccessibleName(f"{spec.label} value")
        self.box.setToolTip(tooltip(spec))
        self.box.setMinimumWidth(110)
        self.slider: QSlider | None = None
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        # an optional number (default None) is only passed when the user ticks "set"; else the mechanism decides
        self.use: QCheckBox | None = None
        if spec.optional:
            self.use = QCheckBox("set")
            self.use.setAccessibleName(f"Set {spec.label}")
            self.use.setToolTip("Unticked: no value is given and the mechanism uses its own rule (see help).")
            self.use.toggled.connect(self._use_toggled)
            layout.addWidget(self.use)
        if low is not None and high is not None and high > low:
            self.slider = QSlider(Qt.Horizontal)
            self.slider.setRange(0, _STEPS)
            self.slider.setPageStep(_STEPS // 20)
            self.slider.setMinimumWidth(160)
            self.slider.setAccessibleName(f"{spec.label} slider" + (" (logarithmic)" if self.log else ""))
            self.slider.setToolTip(tooltip(spec))
            self.slider.valueChanged.connect(self._slid)
            layout.addWidget(self.slider, 1)
        layout.addWidget(self.box)
        self.box.valueChanged.connect(self._typed)
        if self.use is not None:
            self._use_toggled(False)

    def _use_toggled(self, on: bool) -> None:
        self.box.setEnabled(on)
        if self.slider is not None:
            self.slider.setEnabled(on)
        self.valueChanged.emit()

    def _decimals(self) -> int:
        """The spec's own, else from its range: a share 0-1 needs 4 (0.0500), a bounded range 3, a quantity
        with no upper bound (a width, seconds) 2 — "10.00", not "10.0000"."""
        if self.spec.decimals is not None:
            return self.spec.decimals
        low = self.spec.low
        if self.log and low:
            return int(min(8, max(2, math.ceil(-math.log10(low)) + 2)))
        if self.spec.high is None:
            return 2
        span = self.spec.high - (low or 0)
        return 4 if span <= 1 else 3

    # slider position <-> value
    def _to_pos(self, v: float) -> int:
        lo, hi = float(self.spec.low), float(self.spec.high)
        if self.log:
            t = (math.log10(max(v, lo)) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))
        else:
            t = (v - lo) / (hi - lo)
        return int(round(min(1.0, max(0.0, t)) * _STEPS))

    def _from_pos(self, pos: int) -> float:
        lo, hi = float(self.spec.low), float(self.spec.high)
        t = pos / _STEPS
        v = 10 ** (math.log10(lo) + t * (math.log10(hi) - math.log10(lo))) if self.log else lo + t * (hi - lo)
        if self.integer:
            return int(round(v))
        # round to 3 significant digits so a dragged ε reads 0.316, not 0.31622776
        return float(f"{v:.3g}") if self.log else round(v, self._decimals())

    def _slid(self, pos: int) -> None:
        self.box.blockSignals(True)
        self.box.setValue(self._from_pos(pos))
        self.box.blockSignals(False)
        self.valueChanged.emit()

    def _typed(self, _v) -> None:
        if self.slider is not None:
            self.slider.blockSignals(True)
            self.slider.setValue(self._to_pos(self.box.value()))
            self.slider.blockSignals(False)
        self.valueChanged.emit()

    def value(self) -> float | int | None:
        if self.use is not None and not self.use.isChecked():
            return None
        return int(self.box.value()) if self.integer else float(self.box.value())

    def problem(self) -> str:
        """Why the typed value cannot be used ('' when it can)."""
        return self.spec.range_problem(self.value())  # the plan's own rule and words

    def setValue(self, v) -> None:
        if self.use is not None:
            self.use.blockSignals(True)
            self.use.setChecked(v is not None)
            self.use.blockSignals(False)
            self._use_toggled(v is not None)
        if v is None:
            return
        self.box.setValue(int(v) if self.integer else float(v))
        self._typed(v)


class ParamPanel(QWidget):
    """The form; `values()` gives the loose values the plan resolves (once) for the Mechanism and Run steps."""

    changed = Signal()

    def __init__(self, specs: Sequence[ParamSpec], dataset: Dataset | None = None, parent=None):
        super().__init__(parent)
        self.specs = tuple(specs)
        self.dataset = dataset
        self._editors: dict[str, QWidget] = {}
        self._labels: dict[str, QLabel] = {}
        form = QFormLayout(self)
        form.setFieldGrowthPolicy(QFormLayout.AllNonFixedFieldsGrow)
        self._problems: dict[str, QLabel] = {}
        for spec in self.specs:
            editor = self._make_editor(spec)
            self._editors[spec.name] = editor
            label = QLabel(spec.label + ("" if not spec.optional else " (optional)"))
            label.setBuddy(editor)
            label.setToolTip(tooltip(spec))
            editor.setToolTip(tooltip(spec))
            editor.setAccessibleName(spec.label)
            editor.setAccessibleDescription(spec.help)
            editor.setObjectName(f"param_{spec.name}")
            self._labels[spec.name] = label
            holder = QWidget()
            box = QVBoxLayout(holder)
            box.setContentsMargins(0, 0, 0, 0)
            box.setSpacing(1)
            box.addWidget(editor)
            if isinstance(editor, NumberField):
                problem = QLabel("")
                problem.setWordWrap(True)
                problem.setObjectName(f"problem_{spec.name}")
                problem.setStyleSheet("color: #b00020; font-weight: bold;")
                problem.setVisible(False)
                self._problems[spec.name] = problem
                box.addWidget(problem)
                editor.valueChanged.connect(lambda n=spec.name: self._show_problem(n))
            if spec.help:
                caption = QLabel(spec.help)
                caption.setWordWrap(True)
                caption.setProperty("role", "help")
                caption.setStyleSheet("color: palette(placeholder-text); font-size: 90%;")
                box.addWidget(caption)
            form.addRow(label, holder)
        self.set_values({})

    # -- editors -------------------------------------------------------------------------------------------
    def _make_editor(self, spec: ParamSpec) -> QWidget:
        if spec.kind in ("float", "int"):
            w = NumberField(spec, integer=spec.kind == "int")
            w.valueChanged.connect(self.changed)
        elif spec.kind == "bool":
            w = QCheckBox(spec.label)
            w.toggled.connect(self.changed)
        elif spec.kind == "choice":
            w = QComboBox()
            w.addItems(list(spec.choices))
            w.currentIndexChanged.connect(self.changed)
        elif spec.kind == "column":
            w = QComboBox()
            w.currentIndexChanged.connect(self.changed)
        elif spec.kind == "columns":
            w = QListWidget()
            w.setMaximumHeight(150)
            w.itemChanged.connect(lambda _i: self.changed.emit())
        else:  # pragma: no cover - ParamKind is closed
            raise ValueError(f"unknown parameter kind {spec.kind}")
        return w

    def editor(self, name: str) -> QWidget:
        return self._editors[name]

    def _show_problem(self, name: str) -> None:
        field, label = self._editors[name], self._problems[name]
        text = field.problem()
        label.setText(f"{field.spec.label}: {text}" if text else "")
        label.setVisible(bool(text))
        field.box.setStyleSheet("border: 2px solid #b00020;" if text else "")
        field.box.setAccessibleDescription(text)

    def problems(self) -> dict[str, str]:
        """Parameters whose typed value is outside its range, with the message shown under them."""
        return {name: self._editors[name].problem() for name in self._problems if self._editors[name].problem()}

    def _none_text(self, spec: ParamSpec) -> str:
        """'(by its role: disposition)' when an empty choice stands for the one column with the spec's role (the
        class column of DiffGen): "(none)" read as "no class column" beside an error asking for one."""
        roles = tuple(getattr(spec, "roles", ()) or ())
        if self.dataset is None or not roles:
            return NONE_LABEL
        found = [c.name for c in self.dataset.schema if c.role in roles]
        return f"(by its role: {found[0]})" if len(found) == 1 else NONE_LABEL

    def _fill_columns(self, spec: ParamSpec, value: Any) -> None:
        w = self._editors[spec.name]
        names = spec.allowed_columns(self.dataset)
        w.blockSignals(True)
        w.clear()
        if spec.kind == "column":
            if spec.optional or not names:
                w.addItem(self._none_text(spec), NONE_LABEL)  # the item's data says "none" whatever it reads
            w.addItems(names)
            i = w.findText(str(value)) if value not in (None, "") else -1
            w.setCurrentIndex(i if i >= 0 else 0)
        else:
            chosen = set(value or ())
            for name in names:
                item = QListWidgetItem(name)
                item.setFlags(item.flags() | Qt.ItemIsUserCheckable)
                item.setCheckState(Qt.Checked if name in chosen else Qt.Unchecked)
                w.addItem(item)
        w.blockSignals(False)

    # -- values -------------------------------------------------------------------------------------------
    def set_dataset(self, dataset: Dataset | None) -> None:
        """New data (or new roles): refill the column pickers, keeping choices that are still allowed."""
        current = self.values()
        self.dataset = dataset
        for spec in self.specs:
            if spec.kind in ("column", "columns"):
                self._fill_columns(spec, current.get(spec.name))
        self.changed.emit()

    def set_values(self, values: dict[str, Any]) -> None:
        """Show `values`; parameters not given show their default."""
        for spec in self.specs:
            v = values.get(spec.name, spec.default)
            w = self._editors[spec.name]
            w.blockSignals(True)
            try:
                if spec.kind in ("float", "int"):
                    w.setValue(v if v is not None or spec.optional else (spec.low if spec.low is not None else 0))
                elif spec.kind == "bool":
                    w.setChecked(bool(v))
                elif spec.kind == "choice":
                    i = w.findText(str(v)) if v is not None else -1
                    w.setCurrentIndex(max(i, 0))
            finally:
                w.blockSignals(False)
            if spec.kind in ("column", "columns"):
                self._fill_columns(spec, v)
            if spec.name in self._problems:
                self._show_problem(spec.name)
        self.changed.emit()

    def values(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for spec in self.specs:
            w = self._editors[spec.name]
            if spec.kind in ("float", "int"):
                out[spec.name] = w.value()
            elif spec.kind == "bool":
                out[spec.name] = w.isChecked()
            elif spec.kind == "choice":
                out[spec.name] = w.currentText()
            elif spec.kind == "column":
                text = NONE_LABEL if w.currentData() == NONE_LABEL else w.currentText()
                # an optional column left empty is the spec's own "none" (None or ""), as `ppdp run` gives it,
                # so both record the same parameters in the release note
                none = spec.default if spec.default in (None, "") else None
                out[spec.name] = none if text in ("", NONE_LABEL) and spec.optional else \
                    ("" if text == NONE_LABEL else text)
            else:
                out[spec.name] = tuple(w.item(i).text() for i in range(w.count())
                                       if w.item(i).checkState() == Qt.Checked)
        return out

    def empty_column_hints(self) -> list[str]:
        return [text for spec in self.specs if (text := spec.no_column_problem(self.dataset))]
