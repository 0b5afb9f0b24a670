"""Bar chart of re-identification risk: the share of rows in each risk band (a row's risk is 1 / its group size),
for the input and for the release side by side — where the bars move left, the release lowered the risk.

The bands and the counts come from the engine (`metrics.risk_models.risk_histogram`); the two bar items are created
once and updated with setOpts.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6 import QtWidgets

from ppdp_gui.gui.charts.common import (PALETTE, SaveDialog, ask_and_export, ask_png_path, export_plot_png,
                                        style_plot, tidy_axes)

SERIES = ("Your table", "The release")


class RiskChart(QtWidgets.QWidget):
    """`set_histograms(before, after)`: engine risk histograms (DataFrames with band, records, share); after may be
    None (a release on which matching a row to a person is not the measure)."""

    def __init__(self, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.save_dialog: SaveDialog = ask_png_path
        self.export_button = QtWidgets.QPushButton("Save chart as PNG…")
        self.export_button.setAccessibleName("Save the risk chart as a PNG image")
        self.plot = pg.PlotWidget(axisItems=tidy_axes())
        self.plot.setAccessibleName("Risk chart: share of rows by chance of being picked out")
        self.plot.setToolTip("Each bar: the share of rows whose chance of being picked out lies in that range. "
                             "A row's chance is 1 / the number of rows sharing its quasi-identifier values.")
        self.plot.setMinimumSize(320, 200)
        style_plot(self.plot)
        self.plot.setLabel("bottom", "chance of picking out a row, up to … %")
        self.plot.setLabel("left", "share of rows %")
        self.legend = self.plot.getPlotItem().addLegend(offset=(-10, 10), labelTextColor="#222222")
        self.bars = []
        for i, name in enumerate(SERIES):
            bar = pg.BarGraphItem(x=np.zeros(0), height=np.zeros(0), width=0.38, brush=PALETTE[i], pen="w",
                                  name=name)
            self.plot.addItem(bar)  # named items join the legend by themselves
            self.bars.append(bar)
        buttons = QtWidgets.QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.export_button)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.plot, 1)
        layout.addLayout(buttons)
        self.export_button.clicked.connect(self._ask_export)

    def set_histograms(self, before, after=None) -> None:
        frames = [before, after]
        reference = before if before is not None else after
        labels = [f"{round(100 * h, 1):g}" for h in reference["high"]] if reference is not None else []
        x = np.arange(len(labels), dtype=float)
        for i, (bar, frame) in enumerate(zip(self.bars, frames)):
            if frame is None or not len(labels):
                bar.setOpts(x=np.zeros(0), height=np.zeros(0))
                continue
            shift = -0.2 if after is not None and before is not None else 0.0
            bar.setOpts(x=x + (shift if i == 0 else -shift), height=100 * frame["share"].to_numpy(dtype=float),
                        width=0.38 if after is not None and before is not None else 0.6)
        self.legend.setVisible(after is not None and before is not None)
        axis = self.plot.getPlotItem().getAxis("bottom")
        # no labels: plain numbers (an axis with no tick text sizes itself without room for it, and keeps that)
        axis.setTicks([list(zip(x.tolist(), labels)), []] if labels else None)
        self.plot.getPlotItem().enableAutoRange()

    def bar_heights(self) -> list[np.ndarray]:
        return [np.asarray(b.opts["height"], dtype=float) for b in self.bars]

    def export_png(self, path: str | Path, width: int = 1600) -> Path:
        return export_plot_png(self.plot, path, width)

    def _ask_export(self) -> None:
        ask_and_export(self, "Save the risk chart as PNG", "risk.png")
