"""The privacy budget ledger in a window: budgets per table (near copies grouped), ε spent against each cap as a
chart, every release charged, and an export of it all as CSV. Read-only: the ledger changes only by releases
and by the cap a custodian sets deliberately (Mechanism step)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import (QDialog, QDialogButtonBox, QFileDialog, QHeaderView, QLabel, QPushButton,
                               QSplitter, QTableView, QVBoxLayout, QWidget)
from PySide6.QtCore import Qt

from ppdp_gui.engine.errors import PpdpError
from ppdp_gui.gui.models import DataFrameModel, fit_columns
from ppdp_gui.gui.widgets.messages import show_error


def _table(frame, name: str) -> QTableView:
    view = QTableView()
    view.setModel(DataFrameModel(frame, view))
    view.setAccessibleName(name)
    view.verticalHeader().setVisible(False)
    view.horizontalHeader().setSectionResizeMode(QHeaderView.Interactive)
    view.setWordWrap(False)
    fit_columns(view)
    return view


def budget_chart(groups):
    """Bars of ε spent per budget group, with its cap as a line above each bar (pyqtgraph, made once)."""
    import pyqtgraph as pg
    plot = pg.PlotWidget(background="w")
    plot.setAccessibleName("ε spent against the cap, per table")
    plot.setMinimumHeight(plot.fontMetrics().height() * 12)
    item = plot.getPlotItem()
    item.setLabel("left", "ε")
    item.showGrid(y=True, alpha=0.3)
    n = len(groups)
    xs = list(range(n))
    spent = [float(v or 0) for v in groups["ε spent"]] if n else []
    plot.addItem(pg.BarGraphItem(x=xs, height=spent, width=0.6, brush=(70, 110, 170)))
    for x, cap in zip(xs, groups["ε cap"] if n else []):
        if cap is not None and cap == cap:
            plot.plot([x - 0.4, x + 0.4], [cap, cap], pen=pg.mkPen((180, 40, 40), width=2))
    labels = [(x, (str(lbl)[:24] + "…") if len(str(lbl)) > 25 else str(lbl))
              for x, lbl in zip(xs, groups["labels"] if n else [])]
    item.getAxis("bottom").setTicks([labels])
    item.setYRange(0, max([1.0] + spent + [float(c) for c in (groups["ε cap"] if n else []) if c == c and c]) * 1.1)
    return plot


class LedgerDialog(QDialog):
    def __init__(self, ledger, parent=None):
        super().__init__(parent)
        self.setWindowTitle("Privacy budget ledger")
        self.ledger = ledger
        from ppdp_gui.engine.privacy.overview import dataset_table, entry_table, group_table
        self.groups, self.tables, self.entries = group_table(ledger), dataset_table(ledger), entry_table(ledger)
        intro = QLabel(f"Every differentially private release charges ε to its table's budget here "
                       f"(<tt>{ledger.path}</tt>). A near copy of a table shares that table's budget. The red line is "
                       "each budget's cap; nothing is ever refunded."
                       + (" A budget with a release that is private only for one record <i>replaced</i> counts ε "
                          "for one record replaced: its releases for one record added or removed count twice "
                          "there (a replacement is a removal and an addition)."
                          if "replaced" in " ".join(map(str, self.groups.get("ε counted for", []))) else ""))
        intro.setWordWrap(True)
        split = QSplitter(Qt.Vertical)
        top = QWidget()
        tl = QVBoxLayout(top)
        tl.setContentsMargins(0, 0, 0, 0)
        try:
            tl.addWidget(budget_chart(self.groups))
        except ImportError:  # pragma: no cover - pyqtgraph missing: the tables still say it all
            pass
        tl.addWidget(_table(self.groups, "Budgets"))
        split.addWidget(top)
        split.addWidget(_table(self.tables, "Tables known to the ledger"))
        split.addWidget(_table(self.entries, "Releases charged"))
        self.export_button = QPushButton("&Export releases as CSV…")
        self.export_button.clicked.connect(self.export_csv)
        buttons = QDialogButtonBox(QDialogButtonBox.Close)
        buttons.addButton(self.export_button, QDialogButtonBox.ActionRole)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(split, 1)
        layout.addWidget(buttons)
        self.resize(1000, 700)

    def export_csv(self, path: str | None = None) -> Path | None:
        if path is None:
            path, _ = QFileDialog.getSaveFileName(self, "Export the releases charged", "ledger_releases.csv",
                                                  "CSV (*.csv)")
            if not path:
                return None
        from ppdp_gui.engine.data.writer import export_table
        try:
            return export_table(self.entries, path, protected=list(self.ledger.protected_paths()))
        except PpdpError as exc:
            show_error(self, exc, context="The ledger was not exported.")
            return None
