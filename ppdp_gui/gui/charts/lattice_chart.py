"""The candidates a mechanism searched, as a lattice: one point per node, its height (sum of levels) upwards,
coloured by what the search learnt about it; the released node is a star. Mechanism-agnostic: it draws the
`record["lattice"]` dict described in `engine.pipeline.candidates`.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtWidgets

from ppdp_gui.gui.charts.common import PALETTE, style_plot

# state code -> (colour, legend text); Okabe-Ito colours, greys for nodes never evaluated
STATE_STYLE = {
    1: (PALETTE[2], "anonymous"),
    2: (PALETTE[1], "not anonymous"),
    3: ("#F2B48C", "not anonymous (inferred)"),
    4: ("#BBBBBB", "pruned (cannot beat the optimum)"),
    0: ("#E4E4E4", "not visited"),
}


def layout(levels: np.ndarray, score: np.ndarray, bound: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(x, y) of every node: y = sum of its levels, x spread over [-1, 1] within its row, ordered by the node's
    score (or bound when not evaluated), so better candidates sit to the left."""
    levels = np.asarray(levels)
    y = levels.sum(axis=1).astype(float) if levels.size else np.zeros(0)
    key = np.where(np.isfinite(score), score, bound)
    key = np.where(np.isfinite(key), key, np.inf)
    x = np.zeros(len(y))
    for h in np.unique(y):
        at = np.flatnonzero(y == h)
        at = at[np.lexsort((at, key[at]))]
        x[at] = np.linspace(-1, 1, at.size) if at.size > 1 else 0.0
    return x, y


class LatticeChart(QtWidgets.QWidget):
    """Scatter of the lattice; `node_clicked(index)` when a point is clicked (index into the record's nodes)."""

    node_clicked = QtCore.Signal(int)

    def __init__(self, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.plot = pg.PlotWidget()
        self.plot.setAccessibleName("Lattice of candidate releases")
        self.plot.setToolTip("Each point is one combination of generalisation levels; higher = more general. "
                             "Click a point to preview that release.")
        self.plot.setMinimumSize(360, 260)
        style_plot(self.plot)
        self.plot.setLabel("left", "levels climbed (sum over the quasi-identifiers)")
        self.plot.setLabel("bottom", "candidates of that height, better ones to the left")
        self.plot.getPlotItem().getAxis("bottom").setTicks([[]])
        self.legend = self.plot.addLegend(offset=(10, 10))
        self.points = pg.ScatterPlotItem(size=7, pxMode=True, hoverable=True)
        self.points.sigClicked.connect(self._clicked)
        self.plot.addItem(self.points)
        self.optimum = pg.ScatterPlotItem(size=18, symbol="star", brush=PALETTE[0], pen=pg.mkPen("k"))
        self.plot.addItem(self.optimum)
        self.selected = pg.ScatterPlotItem(size=16, symbol="o", brush=None, pen=pg.mkPen(PALETTE[6], width=2))
        self.plot.addItem(self.selected)
        self._legend_items: list = []
        self.xy = (np.zeros(0), np.zeros(0))
        layout_ = QtWidgets.QVBoxLayout(self)
        layout_.setContentsMargins(0, 0, 0, 0)
        layout_.addWidget(self.plot)

    def set_search(self, search: dict | None) -> None:
        self.points.clear()
        self.optimum.clear()
        self.selected.clear()
        for item in self._legend_items:
            self.plot.removeItem(item)
        self._legend_items = []
        self.legend.clear()
        if not search:
            self.xy = (np.zeros(0), np.zeros(0))
            return
        state = np.asarray(search["state"])
        x, y = layout(search["levels"], np.asarray(search["score"], dtype=float),
                      np.asarray(search.get("bound", np.full(len(state), np.nan)), dtype=float))
        self.xy = (x, y)
        brushes = [pg.mkBrush(STATE_STYLE.get(int(s), STATE_STYLE[0])[0]) for s in state]
        self.points.setData(x=x, y=y, brush=brushes, pen=None, data=np.arange(len(state)))
        for code, (colour, text) in STATE_STYLE.items():
            if (state == code).any():
                dummy = pg.ScatterPlotItem(size=8, brush=colour, pen=None)
                self.legend.addItem(dummy, f"{text} ({int((state == code).sum()):,})")
        opt = search.get("optimum")
        if opt is not None:
            self.optimum.setData(x=[x[opt]], y=[y[opt]])
            self.legend.addItem(self.optimum, "released")
        self.plot.getPlotItem().enableAutoRange()

    def mark(self, index: int | None) -> None:
        self.selected.clear()
        if index is not None and 0 <= index < len(self.xy[0]):
            self.selected.setData(x=[self.xy[0][index]], y=[self.xy[1][index]])

    def _clicked(self, _item, points, *_args) -> None:
        if len(points):
            self.node_clicked.emit(int(points[0].data()))
