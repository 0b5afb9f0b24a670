"""Bar chart of sizes: how many groups (or records) have each group size with k marked — or, for a table of noisy
counts, how many released rows have each count.

Small groups are where re-identification risk lives, so sizes up to 50 get one bar each; larger ranges are binned.
The same chart serves both kinds of release (`set_sizes(..., kind="counts")`), so the Figures step always has a
picture of the release it shows.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtWidgets

from ppdp_gui.gui.charts.common import (PALETTE, SaveDialog, ask_and_export, ask_png_path, export_plot_png,
                                        style_plot, tidy_axes)

KINDS = {  # kind -> (x-axis label, (what the bars count: in the mode combo))
    "classes": ("group size (rows sharing the same quasi-identifiers)", ("Number of groups", "Number of rows in them")),
    "counts": ("noisy count of a released row", ("Number of released rows", "Records they stand for")),
}
COUNT_MODES = KINDS["classes"][1]


def size_histogram(sizes: np.ndarray, records: bool = False, max_bars: int = 40) -> tuple[np.ndarray, np.ndarray,
                                                                                           np.ndarray]:
    """(bar centres, heights, widths) of the class-size distribution; heights count classes or their records."""
    sizes = np.asarray(sizes, dtype=np.int64)
    sizes = sizes[sizes > 0]
    if sizes.size == 0:
        return np.zeros(0), np.zeros(0), np.zeros(0)
    weights = sizes if records else None
    top = int(sizes.max())
    if top <= 50:
        heights = np.bincount(sizes, weights=weights, minlength=top + 1)[1:]
        centres = np.arange(1, top + 1, dtype=float)
        keep = heights > 0
        return centres[keep], heights[keep].astype(float), np.full(int(keep.sum()), 0.8)
    edges = np.unique(np.linspace(1, top + 1, max_bars + 1).round())
    heights, edges = np.histogram(sizes, bins=edges, weights=weights)
    widths = np.diff(edges)
    return edges[:-1] + widths / 2, heights.astype(float), widths * 0.9


def count_bins(values: np.ndarray, records: bool = False) -> tuple[np.ndarray, list[str]]:
    """Heights and labels of 1-2-5 bins of positive counts (1, 2, 3–4, 5–9, 10–19, …): noisy counts run from a
    few to thousands, and equal-width bins would put almost all of them into the first bar."""
    values = np.asarray(values, dtype=np.int64)
    values = values[values > 0]
    if values.size == 0:
        return np.zeros(0), []
    edges, step = [1, 2, 3, 5], 10
    while edges[-1] <= values.max():
        edges += [step, 2 * step, 5 * step]
        step *= 10
    edges = [e for e in edges if e <= values.max()] + [int(values.max()) + 1]
    heights, _ = np.histogram(values, bins=edges, weights=values if records else None)
    labels = [str(lo) if hi - lo == 1 else f"{lo}–{hi - 1}" for lo, hi in zip(edges[:-1], edges[1:])]
    keep = heights > 0
    return heights[keep].astype(float), [lab for lab, k in zip(labels, keep) if k]


class HistogramChart(QtWidgets.QWidget):
    """Distribution of equivalence-class sizes; `set_sizes(sizes, k=None)` updates the one bar item in place."""

    def __init__(self, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.save_dialog: SaveDialog = ask_png_path
        self._sizes = np.zeros(0, dtype=np.int64)
        self.mode_combo = QtWidgets.QComboBox()
        self.mode_combo.addItems(COUNT_MODES)
        self.mode_combo.setAccessibleName("Count classes or records")
        self.mode_combo.setToolTip("Height of each bar: how many equivalence classes, or how many records in them")
        self.export_button = QtWidgets.QPushButton("Save as &PNG…")
        self.export_button.setAccessibleName("Save histogram as PNG image")
        self.export_button.setToolTip("Save the histogram as a PNG image for a report")
        self.summary_label = QtWidgets.QLabel("No release yet.")
        self.summary_label.setWordWrap(True)
        self._kind = "classes"
        self.summary_label.setAccessibleName("Class size summary")

        controls = QtWidgets.QHBoxLayout()
        label = QtWidgets.QLabel("&Bars show:")
        label.setBuddy(self.mode_combo)
        controls.addWidget(label)
        controls.addWidget(self.mode_combo)
        controls.addStretch(1)
        controls.addWidget(self.export_button)

        self.plot = pg.PlotWidget(axisItems=tidy_axes())
        self.plot.setAccessibleName("Equivalence class size histogram")
        self.plot.setToolTip("Sizes of the groups of records that share the same quasi-identifier values")
        self.plot.setMinimumSize(320, 220)
        style_plot(self.plot)
        self.plot.setLabel("bottom", KINDS["classes"][0])
        self.bars = pg.BarGraphItem(x=np.zeros(0), height=np.zeros(0), width=0.8, brush=PALETTE[0], pen="w")
        self.plot.addItem(self.bars)
        self.k_line = pg.InfiniteLine(angle=90, movable=False, pen=pg.mkPen(PALETTE[1], width=2,
                                                                           style=QtCore.Qt.PenStyle.DashLine),
                                      label="", labelOpts={"position": 0.92, "color": PALETTE[1]})
        self.k_line.setVisible(False)
        self.plot.addItem(self.k_line, ignoreBounds=True)

        layout = QtWidgets.QVBoxLayout(self)
        layout.addLayout(controls)
        layout.addWidget(self.summary_label)
        layout.addWidget(self.plot, 1)
        self.mode_combo.currentIndexChanged.connect(lambda _i: self._redraw())
        self.export_button.clicked.connect(self._ask_export)

    def set_sizes(self, sizes, k: int | None = None, kind: str = "classes") -> None:
        """`sizes`: one entry per equivalence class (e.g. `table.groupby(qis).size()`), or with kind "counts" the
        count of every released row of a table of counts."""
        self._sizes = np.asarray(sizes, dtype=np.int64)
        if kind != self._kind:
            self._kind = kind
            self.mode_combo.blockSignals(True)
            for i, text in enumerate(KINDS[kind][1]):
                self.mode_combo.setItemText(i, text)
            self.mode_combo.blockSignals(False)
            self.plot.setLabel("bottom", KINDS[kind][0])
            self.plot.setAccessibleName("Histogram of the released counts" if kind == "counts" else
                                        "Equivalence class size histogram")
        if k is None:
            self.k_line.setVisible(False)
        else:
            self.k_line.setVisible(True)  # before setFormat: a hidden label ignores text changes
            self.k_line.setPos(k - 0.5)  # bars are centred on integers: the line sits just left of size k
            self.k_line.label.setFormat(f"k = {k}")
        self._redraw()

    def bar_data(self) -> tuple[np.ndarray, np.ndarray]:
        opts = self.bars.opts
        return np.asarray(opts["x"], dtype=float), np.asarray(opts["height"], dtype=float)

    def export_png(self, path: str | Path, width: int = 1600) -> Path:
        return export_plot_png(self.plot, path, width)

    def _redraw(self) -> None:
        records = self.mode_combo.currentIndex() == 1
        axis = self.plot.getPlotItem().getAxis("bottom")
        if self._kind == "counts":  # one bar per 1-2-5 bin, labelled with its range
            height, labels = count_bins(self._sizes, records=records)
            x = np.arange(len(labels), dtype=float)
            self.bars.setOpts(x=x, height=height, width=0.8)
            axis.setTicks([list(zip(x.tolist(), labels)), []])
        else:
            x, height, width = size_histogram(self._sizes, records=records)
            self.bars.setOpts(x=x, height=height, width=width if width.size else 0.8)
            axis.setTicks(None)
        self.plot.setLabel("left", KINDS[self._kind][1][int(records)].lower())
        sizes = self._sizes[self._sizes > 0]
        zeros = int((self._sizes <= 0).sum())
        if self._kind == "counts":
            self.summary_label.setText(
                f"{self._sizes.size:,} released rows · counts from "
                f"{(self._sizes.min() if self._sizes.size else 0):,} to {(self._sizes.max() if self._sizes.size else 0):,}"
                f" · they add up to {int(sizes.sum()):,} records"
                + (f" · {zeros:,} row{'s' if zeros != 1 else ''} with count 0 (not drawn)" if zeros else ""))
        elif sizes.size:
            self.summary_label.setText(f"{sizes.size:,} groups · smallest {sizes.min():,} · median "
                                       f"{int(np.median(sizes)):,} · largest {sizes.max():,} rows")
        else:
            self.summary_label.setText("No release yet.")
        self.plot.getPlotItem().enableAutoRange()

    def _ask_export(self) -> None:
        ask_and_export(self, "Save histogram as PNG", "class_sizes.png")
