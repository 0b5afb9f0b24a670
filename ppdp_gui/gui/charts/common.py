"""What the charts share: a colour-blind-safe palette, axes whose labels never overlap, PNG export and the
injectable save dialog."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pyqtgraph as pg
from PySide6 import QtWidgets

# Okabe–Ito: distinguishable with the common colour-vision deficiencies and in greyscale print
PALETTE = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442"]

SaveDialog = Callable[[QtWidgets.QWidget, str, str], str]


def ask_png_path(parent: QtWidgets.QWidget, caption: str, suggested: str) -> str:
    """The real file dialog; tests replace the chart's `save_dialog` attribute instead."""
    path, _ = QtWidgets.QFileDialog.getSaveFileName(parent, caption, suggested, "PNG image (*.png)")
    return path


class TidyAxis(pg.AxisItem):
    """An axis that drops a tick label overlapping one already drawn (pyqtgraph draws every label of its top
    level, so a sweep's grid values 8, 9, 10 on a wide range, or any value at 200 %, would print over each other).
    Labels are kept left to right (bottom to top), the first always."""

    GAP = 6  # pixels between two labels

    def generateDrawSpecs(self, p):  # noqa: N802 - pyqtgraph's name
        specs = super().generateDrawSpecs(p)
        if specs is None:
            return None
        axis, ticks, texts = specs
        kept: list = []
        horizontal = self.orientation in ("bottom", "top")
        for rect, flags, text in sorted(texts, key=lambda t: t[0].left() if horizontal else t[0].top()):
            grown = rect.adjusted(-self.GAP, 0, self.GAP, 0) if horizontal else rect.adjusted(0, -2, 0, 2)
            if any(grown.intersects(r) for r, _f, _t in kept):
                continue
            kept.append((rect, flags, text))
        return axis, ticks, kept


def tidy_axes() -> dict[str, TidyAxis]:
    return {"bottom": TidyAxis("bottom"), "left": TidyAxis("left")}


def style_plot(plot: pg.PlotWidget) -> None:
    """White background, readable axes: the charts end up in reports and on projectors."""
    plot.setBackground("w")
    item = plot.getPlotItem()
    for name in ("left", "bottom"):
        axis = item.getAxis(name)
        axis.setPen(pg.mkPen("#333333"))
        axis.setTextPen(pg.mkPen("#222222"))
    item.showGrid(x=True, y=True, alpha=0.2)


def export_plot_png(plot: pg.PlotWidget, path: str | Path, width: int = 1600) -> Path:
    """Render the plot (not the controls) to a PNG `width` pixels wide; falls back to a screen grab."""
    path = Path(path)
    if path.suffix.lower() != ".png":
        path = path.with_suffix(".png")
    from ppdp_gui.engine.data.outputs import check_output
    from ppdp_gui.engine.errors import PpdpError
    try:  # the one output guard (never an input or the ledger); the save dialog asked before replacing
        check_output(path, "the chart")
    except PpdpError as exc:
        raise OSError(str(exc)) from None
    try:
        from pyqtgraph.exporters import ImageExporter

        exporter = ImageExporter(plot.getPlotItem())
        exporter.parameters()["width"] = int(width)
        exporter.export(str(path))
    except Exception:  # exporter quirks differ between pyqtgraph versions; a grab is always possible
        if not plot.grab().save(str(path), "PNG"):
            raise OSError(f"could not write {path}")
    if not path.exists() or path.stat().st_size == 0:
        if not plot.grab().save(str(path), "PNG"):
            raise OSError(f"could not write {path}")
    return path


def ask_and_export(chart: QtWidgets.QWidget, caption: str, suggested: str) -> None:
    """A chart's "Save as PNG…": ask for the file with its `save_dialog`, write it with its `export_png`, say so
    in a message box if it could not be written."""
    path = chart.save_dialog(chart, caption, suggested)
    if path:
        try:
            chart.export_png(path)
        except OSError as exc:
            QtWidgets.QMessageBox.warning(chart, "Could not save the chart", str(exc))
