"""Utility-vs-privacy chart of sweeps: a measure's mean and spread against one parameter, several series side by side.

The chart knows no mechanism: it reads parameter and measure names from the summaries it is given, and their plain
names from engine/glossary.py. Plot items are created once per curve and then only updated with setData (pyqtgraph
is fast that way, and the legend stays stable).

It follows the work: `focus(name, param)` shows one series (the sweep just run) with its swept parameter on the
x-axis and one of its own measures; the choices offered are those of the series shown, so an ε sweep never keeps
showing an earlier "NCP against k". Nothing is written inside the plot area but the curves: reference lines are
named in the legend, which sits below the axes, and the axes drop tick labels that would overlap.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from ppdp_gui.engine import glossary
from ppdp_gui.gui.charts import summary as summ
from ppdp_gui.gui.charts.common import (PALETTE, SaveDialog, ask_and_export, ask_png_path, export_plot_png,
                                        style_plot, tidy_axes)

SPREADS = ("Band (mean ± std)", "Error bars (mean ± std)", "Mean only")
_DASHES = [QtCore.Qt.PenStyle.SolidLine, QtCore.Qt.PenStyle.DashLine, QtCore.Qt.PenStyle.DotLine,
           QtCore.Qt.PenStyle.DashDotLine]
_REF_DASHES = [QtCore.Qt.PenStyle.DashLine, QtCore.Qt.PenStyle.DotLine, QtCore.Qt.PenStyle.DashDotLine]


@dataclass
class _Curve:
    """The items of one drawn curve: mean line, band edges + fill, error bars."""

    mean: pg.PlotDataItem
    upper: pg.PlotDataItem
    lower: pg.PlotDataItem
    band: pg.FillBetweenItem
    bars: pg.ErrorBarItem
    x: np.ndarray = field(default_factory=lambda: np.zeros(0))
    std: np.ndarray = field(default_factory=lambda: np.zeros(0))
    y: np.ndarray = field(default_factory=lambda: np.zeros(0))


@dataclass
class _Series:
    name: str
    summary: pd.DataFrame
    param_names: list[str] | None
    colour: str
    curves: list[_Curve] = field(default_factory=list)
    reference: dict[str, float] = field(default_factory=dict)
    _tidied: tuple | None = None
    _tidied_of: tuple | None = None  # (summary, param_names) it was made from

    def tidied(self) -> tuple[pd.DataFrame, list[str], list[str]]:
        """summary.tidy of this series, worked out once per summary (the chart asks for it on every redraw)."""
        if self._tidied_of is None or self._tidied_of[0] is not self.summary \
                or self._tidied_of[1] != self.param_names:
            self._tidied = summ.tidy(self.summary, self.param_names)
            self._tidied_of = (self.summary, self.param_names)
        return self._tidied


class SweepChart(QtWidgets.QWidget):
    """Measure (y, chosen in a combo) against a parameter (x), mean line with spread, reference lines, legend."""

    seriesChanged = QtCore.Signal()

    def __init__(self, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.save_dialog: SaveDialog = ask_png_path
        self._series: dict[str, _Series] = {}
        self._reference: dict[str, float] = {}
        self._ref_lines: dict[str, pg.InfiniteLine] = {}
        self._ref_keys: dict[str, pg.PlotDataItem] = {}  # the legend's sample of each reference line
        self._shown: list[str] | None = None  # the series drawn (None: all)
        self._log_hints: dict[str, bool] = {}
        self._labels: dict[str, str] = {}  # parameter name -> what the user reads (e.g. "Privacy budget ε")
        self._colour_next = 0
        self._build()

    # ---- construction ---------------------------------------------------------------------------------------
    def _build(self) -> None:
        self.measure_combo = QtWidgets.QComboBox()
        self.measure_combo.setAccessibleName("Measure shown on the vertical axis")
        self.measure_combo.setToolTip("Which utility or risk figure to plot against the parameter")
        self.param_combo = QtWidgets.QComboBox()
        self.param_combo.setAccessibleName("Parameter shown on the horizontal axis")
        self.param_combo.setToolTip("The swept parameter to put on the horizontal axis")
        self.param_combo.setSizeAdjustPolicy(QtWidgets.QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.param_combo.setMinimumContentsLength(12)
        self.spread_combo = QtWidgets.QComboBox()
        self.spread_combo.addItems(SPREADS)
        self.spread_combo.setAccessibleName("How the spread over repeats is drawn")
        self.spread_combo.setToolTip("Each grid point was run several times: show the spread as a band or error bars")
        self.log_check = QtWidgets.QCheckBox("&Log scale")
        self.log_check.setAccessibleName("Logarithmic horizontal axis")
        self.log_check.setToolTip("Use a logarithmic horizontal axis (natural for ε)")
        self.ref_check = QtWidgets.QCheckBox("&Reference lines")
        self.ref_check.setChecked(True)
        self.ref_check.setAccessibleName("Show reference lines")
        self.ref_check.setToolTip("Show the reference figures (e.g. accuracy on the original data) as lines")
        self.export_button = QtWidgets.QPushButton("Save as &PNG…")
        self.export_button.setAccessibleName("Save chart as PNG image")
        self.export_button.setToolTip("Save the chart as a PNG image for a report")

        # two rows, so that the chart fits a narrow window (or 200 %) without widening it
        controls = QtWidgets.QVBoxLayout()
        rows = (QtWidgets.QHBoxLayout(), QtWidgets.QHBoxLayout())
        for row, (text, widget) in zip((0, 0, 1), (("&Measure:", self.measure_combo),
                                                   ("P&arameter:", self.param_combo),
                                                   ("&Spread:", self.spread_combo))):
            label = QtWidgets.QLabel(text)
            label.setBuddy(widget)
            rows[row].addWidget(label)
            rows[row].addWidget(widget, 2 if widget is self.measure_combo else 1)
        self.measure_combo.setSizeAdjustPolicy(QtWidgets.QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.measure_combo.setMinimumContentsLength(16)
        rows[1].addWidget(self.log_check)
        rows[1].addWidget(self.ref_check)
        rows[1].addStretch(1)
        rows[1].addWidget(self.export_button)
        for row in rows:
            controls.addLayout(row)

        self.plot = pg.PlotWidget(axisItems=tidy_axes())
        self.plot.setAccessibleName("Utility against privacy chart")
        self.plot.setToolTip("Mean over repeats at each parameter value; shaded: ± one standard deviation")
        self.plot.setMinimumSize(360, 240)
        style_plot(self.plot)
        # below the axes, never over the curves; reference lines are named here rather than on the plot
        self.legend = pg.LegendItem(colCount=1, labelTextColor="#222222", pen="#bbbbbb",
                                    brush=pg.mkBrush(255, 255, 255, 0))
        self.plot.getPlotItem().layout.addItem(self.legend, 4, 1)
        self.plot.sigDeviceRangeChanged.connect(lambda *_a: self._fit_legend())
        # invisible points at the reference values so that auto-range keeps the reference lines in view
        self._ref_anchor = pg.PlotDataItem(pen=pg.mkPen((0, 0, 0, 0)))
        self.plot.addItem(self._ref_anchor)
        self.empty_label = QtWidgets.QLabel("Run a sweep to see how utility changes with the privacy parameter.")
        self.empty_label.setAlignment(QtCore.Qt.AlignmentFlag.AlignCenter)

        layout = QtWidgets.QVBoxLayout(self)
        layout.addLayout(controls)
        layout.addWidget(self.empty_label)
        layout.addWidget(self.plot, 1)

        self.measure_combo.currentIndexChanged.connect(lambda _i: self._measure_changed())
        self.param_combo.currentIndexChanged.connect(lambda _i: self._param_changed())
        self.spread_combo.currentIndexChanged.connect(lambda _i: self._apply_spread())
        self.log_check.toggled.connect(self._log_toggled)
        self.ref_check.toggled.connect(lambda _c: self._update_references())
        self.export_button.clicked.connect(self._ask_export)

    # ---- public API -----------------------------------------------------------------------------------------
    def set_log_hints(self, hints: dict[str, bool]) -> None:
        """Which parameters are best on a log axis (from ParamSpec.log_scale); others are guessed from their range."""
        self._log_hints.update({str(k): bool(v) for k, v in hints.items()})
        self._param_changed()

    def set_labels(self, labels: dict[str, str]) -> None:
        """Readable names of parameters (e.g. ParamSpec labels), shown in the combo and on the axis."""
        self._labels.update({str(k): str(v) for k, v in labels.items()})
        self._refresh_choices()

    def add_series(self, name: str, summary: pd.DataFrame, param_names: list[str] | None = None, *,
                   draw: bool = True) -> None:
        """Add (or replace the data of) the series `name`: a summary with mean/std per grid point. With
        `draw=False` it is only kept, for a `focus` that follows (which draws once instead of twice)."""
        series = self._series.get(name)
        if series is None:
            colour = PALETTE[self._colour_next % len(PALETTE)]
            self._colour_next += 1
            series = _Series(name, summary, param_names, colour)
            self._series[name] = series
        else:
            series.summary, series.param_names = summary, param_names
        if not draw:
            return
        self._refresh_choices()
        self._redraw()
        self.seriesChanged.emit()

    def add_result(self, name: str, result, log_hints: dict[str, bool] | None = None,
                   labels: dict[str, str] | None = None, *, draw: bool = True) -> None:
        """Convenience for a sweep result: its summary() as a series and its reference figures as lines
        (`draw=False`: kept for a `focus` that follows, which draws them and their reference lines)."""
        if log_hints:
            self._log_hints.update(log_hints)
        if labels:
            self._labels.update({str(k): str(v) for k, v in labels.items()})
        self.add_series(name, result.summary(), list(getattr(result, "param_names", []) or []) or None, draw=draw)
        self._series[name].reference = dict(getattr(result, "reference", None) or {})
        if self._series[name].reference and draw:
            self.set_reference(self._series[name].reference)

    def focus(self, names: list[str] | str | None, param: str | None = None, measure: str | None = None) -> None:
        """Draw only the series `names` (None: all), with `param` on the x-axis and `measure` (else the current
        one if those series have it, else their first utility figure): the chart shows the work just done."""
        self.choose(names, param, measure)
        self.draw()

    def choose(self, names: list[str] | str | None, param: str | None = None, measure: str | None = None) -> None:
        """The first half of `focus`: which series, parameter and measure are shown, without drawing them (the
        simulation panel shows its advice on that measure, then draws in a later turn)."""
        self._shown = [names] if isinstance(names, str) else (None if names is None else list(names))
        self._refresh_choices(param=param, measure=measure)

    def draw(self) -> None:
        """The second half of `focus`: draw the series chosen, with their reference lines."""
        refs: dict[str, float] = {}
        for series in self.shown_series():
            refs.update(series.reference)
        self.set_reference(refs)
        self._redraw()
        self._settle()
        self.seriesChanged.emit()

    def _settle(self) -> None:
        """Lay the chart out for what was just drawn before it is painted. Left to itself pyqtgraph finds its new
        size step by step while painting (the legend grows, the empty note goes, the legend's columns are fitted,
        the left axis widens for its labels) and paints the chart three or four times in a row (~10 ms each, back
        to back in the event loop); settled here, it paints once or twice."""
        if not self.isVisible():
            return  # painted when shown, laid out then
        item = self.plot.getPlotItem()
        self.layout().activate()
        item.layout.activate()
        self._fit_legend()
        item.getViewBox().updateAutoRange()
        image = QtGui.QImage(4, 4, QtGui.QImage.Format.Format_ARGB32)
        painter = QtGui.QPainter(image)
        try:  # the axes measure their labels (and widen if they need to) now rather than in the first paint
            for name in ("left", "bottom"):
                item.getAxis(name).generateDrawSpecs(painter)
        finally:
            painter.end()
        item.layout.activate()

    def shown_series(self) -> list[_Series]:
        return [s for n, s in self._series.items() if self._shown is None or n in self._shown]

    def shown_names(self) -> list[str]:
        return [s.name for s in self.shown_series()]

    def set_measure(self, name: str) -> None:
        """Show measure `name` (its raw name; the combo shows its plain title)."""
        i = self.measure_combo.findData(name)
        if i >= 0:
            self.measure_combo.setCurrentIndex(i)

    def remove_series(self, name: str) -> None:
        series = self._series.pop(name, None)
        if series is None:
            return
        for curve in series.curves:
            self._drop_curve(curve)
        self._refresh_choices()
        self._redraw()
        self.seriesChanged.emit()

    def clear(self) -> None:
        for name in list(self._series):
            self.remove_series(name)
        self.set_reference({})
        self._colour_next = 0
        self._shown = None

    def series_names(self) -> list[str]:
        return list(self._series)

    def set_reference(self, reference: dict[str, float]) -> None:
        """Horizontal reference lines, e.g. {"BA %": 85.3, "LA %": 75.5}; drawn when they fit the shown measure and
        named in the legend (with their plain meaning), not on the plot where they would cover ticks and curves."""
        self._reference = {str(k): float(v) for k, v in reference.items() if v is not None and math.isfinite(v)}
        for key in [k for k in self._ref_lines if k not in self._reference]:
            self.plot.removeItem(self._ref_lines.pop(key))
            self.legend.removeItem(self._ref_keys.pop(key))
        for i, (key, value) in enumerate(self._reference.items()):
            line = self._ref_lines.get(key)
            if line is None:
                pen = pg.mkPen("#555555", width=1.5, style=_REF_DASHES[i % len(_REF_DASHES)])
                line = pg.InfiniteLine(angle=0, movable=False, pen=pen)
                self._ref_lines[key] = line
                self._ref_keys[key] = pg.PlotDataItem(pen=pen)
                self.plot.addItem(line, ignoreBounds=True)
            line.setPos(value)
        self._update_references()

    def reference_label(self, key: str) -> str:
        """The legend's words for reference line `key`: 'Accuracy on the original data: BA % = 85.3'."""
        fig = glossary.figure(key)
        text = f"{key} = {self._reference[key]:.4g}"
        return f"{fig.title}: {text}" if fig.title != key else text

    def reference_lines(self) -> dict[str, pg.InfiniteLine]:
        return dict(self._ref_lines)

    def curves(self, name: str) -> list[pg.PlotDataItem]:
        """The mean-line items of series `name` (one per combination of the other swept parameters)."""
        return [c.mean for c in self._series[name].curves if c.mean.isVisible()]

    def export_png(self, path: str | Path, width: int = 1600) -> Path:
        return export_plot_png(self.plot, path, width)

    # ---- drawing --------------------------------------------------------------------------------------------
    def _measure(self) -> str:
        data = self.measure_combo.currentData()
        return str(data) if data is not None else self.measure_combo.currentText()

    def _param(self) -> str:
        """The chosen parameter's name (the combo shows its label)."""
        data = self.param_combo.currentData()
        return str(data) if data is not None else self.param_combo.currentText()

    def label(self, param: str) -> str:
        return self._labels.get(param, param)

    def _refresh_choices(self, param: str | None = None, measure: str | None = None) -> None:
        """The parameters and measures of the series shown; keeps the current choice when they have it."""
        params, measures = [], []
        for series in self.shown_series():
            _f, ps, ms = series.tidied()
            params += [p for p in ps if p not in params]
            measures += [m for m in ms if m not in measures]
        current_param = param if param in params else self._param()
        self.param_combo.blockSignals(True)
        self.param_combo.clear()
        for p in params:
            self.param_combo.addItem(self.label(p), p)
        if current_param in params:
            self.param_combo.setCurrentIndex(params.index(current_param))
        self.param_combo.blockSignals(False)
        current = self._measure()
        wanted = measure if measure in measures else current if current in measures else \
            next((m for m in measures if glossary.figure(m).kind == "utility"), None)
        self.measure_combo.blockSignals(True)
        self.measure_combo.clear()
        for m in measures:
            self.measure_combo.addItem(glossary.label(m), m)
            tip = glossary.figure(m).tooltip()
            if tip:
                self.measure_combo.setItemData(self.measure_combo.count() - 1, tip, QtCore.Qt.ItemDataRole.ToolTipRole)
        if wanted in measures:
            self.measure_combo.setCurrentIndex(measures.index(wanted))
        self.measure_combo.blockSignals(False)
        self._param_changed(redraw=False)
        self.empty_label.setVisible(not self.shown_series())

    def _measure_changed(self) -> None:
        self._redraw()
        self.seriesChanged.emit()  # the panel's advice follows the measure shown

    def _param_changed(self, redraw: bool = True) -> None:
        param = self._param()
        log = self._log_hints.get(param)
        if log is None:  # guess: positive values spanning over a decade read best on a log axis
            xs = self._x_values(param)
            log = bool(xs.size and (xs > 0).all() and xs.max() / xs.min() >= 20)
        self.log_check.blockSignals(True)
        self.log_check.setChecked(log)
        self.log_check.blockSignals(False)
        self.plot.getPlotItem().setLogMode(x=log, y=False)
        self.plot.setLabel("bottom", self.label(param))
        if redraw:
            self._redraw()

    def _x_values(self, param: str) -> np.ndarray:
        values = []
        for series in self.shown_series():
            frame = series.tidied()[0]
            if param in frame.columns:
                values.append(pd.to_numeric(frame[param], errors="coerce").to_numpy(dtype=float))
        xs = np.concatenate(values or [np.zeros(0)])
        return xs[np.isfinite(xs)]

    def _log_toggled(self, log: bool) -> None:
        self._log_hints[self._param()] = log
        self.plot.getPlotItem().setLogMode(x=log, y=False)
        self._set_x_ticks()
        self._apply_spread()

    def _new_curve(self, series: _Series, index: int) -> _Curve:
        pen = pg.mkPen(series.colour, width=2.5, style=_DASHES[index % len(_DASHES)])
        mean = pg.PlotDataItem(pen=pen, symbol="o", symbolSize=7, symbolBrush=series.colour, symbolPen="w")
        edge = pg.mkPen((0, 0, 0, 0))
        upper, lower = pg.PlotDataItem(pen=edge), pg.PlotDataItem(pen=edge)
        fill = pg.mkColor(series.colour)
        fill.setAlpha(50)
        band = pg.FillBetweenItem(upper, lower, brush=pg.mkBrush(fill))
        bars = pg.ErrorBarItem(x=np.zeros(0), y=np.zeros(0), beam=0.0, pen=pg.mkPen(series.colour, width=1.5))
        for item in (band, upper, lower, bars):
            self.plot.addItem(item)
        self.plot.addItem(mean)
        return _Curve(mean, upper, lower, band, bars)

    def _drop_curve(self, curve: _Curve) -> None:
        self.legend.removeItem(curve.mean)
        for item in (curve.mean, curve.upper, curve.lower, curve.band, curve.bars):
            self.plot.removeItem(item)

    def _redraw(self) -> None:
        param, measure = self._param(), self._measure()
        shown = {s.name for s in self.shown_series()}
        for series in self._series.values():
            pts = summ.points_of(series.tidied(), param, measure) \
                if param and measure and series.name in shown else []
            while len(series.curves) < len(pts):
                series.curves.append(self._new_curve(series, len(series.curves)))
            for i, curve in enumerate(series.curves):
                if i < len(pts):
                    p = pts[i]
                    name = f"{series.name} ({p.label})" if p.label else series.name
                    curve.x, curve.y, curve.std = p.x, p.mean, p.std
                    curve.mean.setData(p.x, p.mean)
                    curve.upper.setData(p.x, p.mean + p.std)
                    curve.lower.setData(p.x, p.mean - p.std)
                    label = self.legend.getLabel(curve.mean)
                    if label is None:
                        self.legend.addItem(curve.mean, name)
                    else:
                        label.setText(name)
                    curve.mean.setVisible(True)
                else:
                    curve.x = curve.y = curve.std = np.zeros(0)
                    self.legend.removeItem(curve.mean)
                    curve.mean.setVisible(False)
        self.plot.setLabel("left", glossary.label(measure) if measure else "")
        self._set_x_ticks()
        self._apply_spread()
        self._update_references()

    def _set_x_ticks(self) -> None:
        """Label the grid values themselves (a sweep has few); pyqtgraph's log ticks crowd and overlap."""
        axis = self.plot.getPlotItem().getAxis("bottom")
        xs = np.unique(self._x_values(self._param()))
        log = self.log_check.isChecked()
        if log:
            xs = xs[xs > 0]
        if 0 < xs.size <= 15:
            where = np.log10(xs) if log else xs
            axis.setTicks([[(float(w), f"{v:g}") for w, v in zip(where, xs)], []])
        else:
            axis.setTicks(None)

    def _apply_spread(self) -> None:
        mode = self.spread_combo.currentIndex()
        log = self.log_check.isChecked()
        for series in self._series.values():
            for curve in series.curves:
                shown = curve.mean.isVisible() and curve.x.size > 0
                curve.band.setVisible(shown and mode == 0)
                curve.upper.setVisible(shown and mode == 0)
                curve.lower.setVisible(shown and mode == 0)
                if shown:
                    # error bars are drawn in view coordinates: on a log axis those are log10(x)
                    with np.errstate(divide="ignore", invalid="ignore"):
                        x = np.log10(curve.x) if log else curve.x
                    ok = np.isfinite(x)
                    curve.bars.setData(x=x[ok], y=curve.y[ok], top=curve.std[ok], bottom=curve.std[ok])
                curve.bars.setVisible(shown and mode == 1)  # after setData, which makes the item visible

    def _update_references(self) -> None:
        measures = set()
        for series in self._series.values():
            measures |= set(series.tidied()[2])
        shown_values = []
        for key, line in self._ref_lines.items():
            # a reference named like a measure belongs to that measure only; others (BA, LA) go with any measure
            visible = self.ref_check.isChecked() and (key not in measures or key == self._measure())
            line.setVisible(visible)
            sample = self._ref_keys[key]
            label = self.legend.getLabel(sample)
            if visible and label is None:
                self.legend.addItem(sample, self.reference_label(key))
            elif visible:
                label.setText(self.reference_label(key))
            elif label is not None:
                self.legend.removeItem(sample)
            if visible:
                shown_values.append(self._reference[key])
        xs = np.concatenate([c.x for s in self._series.values() for c in s.curves if c.mean.isVisible()]
                            or [np.zeros(0)])
        xs = xs[np.isfinite(xs) & (xs > 0)] if self.log_check.isChecked() else xs[np.isfinite(xs)]
        if shown_values and xs.size:
            self._ref_anchor.setData(np.full(len(shown_values), xs.min()), np.asarray(shown_values))
        else:
            self._ref_anchor.setData([], [])
        self._fit_legend()

    def _fit_legend(self) -> None:
        """As many legend columns as fit the plot's width: a legend wider than the plot would widen the plot
        beyond the window instead of wrapping."""
        labels = [label for _sample, label in self.legend.items]
        if not labels:
            return
        widest = max(label.boundingRect().width() for label in labels) + 40
        columns = int(max(1, min(len(labels), self.plot.width() // max(widest, 1))))
        if columns != self.legend.columnCount:
            self.legend.setColumnCount(columns)

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self._fit_legend()

    def _ask_export(self) -> None:
        ask_and_export(self, "Save chart as PNG", "sweep.png")
