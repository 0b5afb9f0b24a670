"""What the charts share: a colour-blind-safe palette, PNG export and the injectable save dialog."""

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
