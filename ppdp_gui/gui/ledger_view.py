"""The privacy budget ledger in a window: budgets per table (near copies grouped), ε spent against each cap as a
chart, every release charged, every cap change (who, when, why), and an export of it all as CSV.

Tables are named by their file and the day they were first seen, never by a raw hash (the fingerprint is in the
cell's tooltip). The ledger changes here only by the custodian's deliberate acts, each recorded with a reason:
Change cap… (raising a cap is never done by a run) and Acknowledge changes… (after the tamper check found the
ledger changed outside the app; DP releases of the affected tables are refused until then)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import (QDialog, QDialogButtonBox, QFileDialog, QHeaderView, QInputDialog, QLabel,
                               QLineEdit, QPushButton, QSplitter, QTableView, QVBoxLayout, QWidget)
from PySide6.QtCore import Qt

from ppdp_gui.engine.errors import PpdpError
from ppdp_gui.gui.models import DataFrameModel, fit_columns
from ppdp_gui.gui.widgets.messages import show_error


class _LabelledModel(DataFrameModel):
    """A table whose cells may carry a tooltip other than their text (the fingerprint behind a readable name)."""

    def __init__(self, frame, tips: dict, parent=None):
        super().__init__(frame, parent)
        self._cell_tips = tips  # {column position: [tooltip per row]}

    def data(self, index, role=Qt.DisplayRole):
        if role == Qt.ToolTipRole and index.column() in self._cell_tips:
            return self._cell_tips[index.column()][index.row()]
        return super().data(index, role)


_HASH_COLUMNS = ("fingerprint", "budget group", "near copy of", "declared separate from")


def table_names(ledger) -> dict[str, str]:
    """{fingerprint: 'ward.csv (first seen 27 Nov 2026)'} for every known table; two tables of one file name and
    day are told apart by a number."""
    from datetime import datetime
    names: dict[str, str] = {}
    seen: dict[str, int] = {}
    for ds in ledger.datasets():
        try:
            day = datetime.fromisoformat(ds.created).astimezone().strftime("%d %b %Y")
        except (TypeError, ValueError):
            day = "an unknown day"
        base = f"{Path(ds.label).name if ds.label else 'a table without a file name'} (first seen {day})"
        seen[base] = seen.get(base, 0) + 1
        names[ds.fingerprint] = base if seen[base] == 1 else f"{base} #{seen[base]}"
    return names


def readable(frame, names: dict[str, str]):
    """(a copy of `frame` with fingerprints shown as table names, {column position: fingerprints as tooltips})."""
    shown = frame.copy()
    tips = {}
    for pos, col in enumerate(frame.columns):
        if col in _HASH_COLUMNS:
            raw = [str(v) if v == v and v is not None else "" for v in frame[col]]
            shown[col] = [names.get(v, v[:12] + "…" if len(v) > 12 else v) for v in raw]
            tips[pos] = [f"fingerprint {v}" if v else "" for v in raw]
    return shown, tips


def _readable_table(frame, names: dict[str, str], name: str) -> QTableView:
    shown, tips = readable(frame, names)
    return _table(shown, name, tips)


def _table(frame, name: str, tips=None) -> QTableView:
    view = QTableView()
    view.setModel(_LabelledModel(frame, tips or {}, view))
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


def cap_change_table(ledger, names: dict[str, str]):
    """Every cap set or changed: which budget (by its table's name), from, to, who, when, why."""
    import pandas as pd
    rows = [{"budget": names.get(c.budget, c.budget[:12]), "from": "none" if c.old is None else str(c.old),
             "to": str(c.new), "who": c.who, "when": c.at, "why": c.reason} for c in ledger.cap_changes()]
    return pd.DataFrame(rows, columns=["budget", "from", "to", "who", "when", "why"])


class LedgerDialog(QDialog):
    def __init__(self, ledger, parent=None):
        super().__init__(parent)
        self.setWindowTitle("Privacy budget ledger")
        self.ledger = ledger
        from ppdp_gui.engine.privacy.overview import dataset_table, entry_table, group_table
        self.groups, self.tables, self.entries = group_table(ledger), dataset_table(ledger), entry_table(ledger)
        self.names = table_names(ledger)
        self.cap_changes = cap_change_table(ledger, self.names)
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
        self.budgets_view = _readable_table(self.groups, self.names, "Budgets")
        tl.addWidget(self.budgets_view)
        split.addWidget(top)
        split.addWidget(_readable_table(self.tables, self.names, "Tables known to the ledger"))
        split.addWidget(_readable_table(self.entries, self.names, "Releases charged"))
        self.caps_view = _table(self.cap_changes, "Cap changes")
        split.addWidget(self.caps_view)
        self.export_button = QPushButton("&Export releases as CSV…")
        self.export_button.clicked.connect(self.export_csv)
        self.cap_button = QPushButton("Change &cap…")
        self.cap_button.setToolTip("Change the ε cap of the budget selected above. Raising a cap lets more be "
                                   "learned about the same people: it is recorded with your name and reason.")
        self.cap_button.clicked.connect(lambda: self.change_cap())
        self.ack_button = QPushButton("&Acknowledge changes…")
        self.ack_button.setToolTip("The ledger was changed outside this app. After you have found out why, "
                                   "acknowledge it (recorded with your name and reason) to release again.")
        self.ack_button.clicked.connect(lambda: self.acknowledge())
        self.chain_label = QLabel()
        self.chain_label.setWordWrap(True)
        self._show_chain()
        buttons = QDialogButtonBox(QDialogButtonBox.Close)
        for b in (self.cap_button, self.ack_button, self.export_button):
            buttons.addButton(b, QDialogButtonBox.ActionRole)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.chain_label)
        layout.addWidget(split, 1)
        layout.addWidget(buttons)
        self.resize(1000, 700)

    def _show_chain(self) -> None:
        report = getattr(self.ledger, "chain_report", None)
        if report is None:
            text = "The ledger's tamper check could not run: its key is missing or damaged."
        elif report.ok:
            text = "Tamper check: every release and cap change is sealed as it was recorded."
        else:
            text = ("<b>This ledger was changed outside the app</b> (" + "; ".join(report.problems[:3]) + "). "
                    "Differentially private releases of the tables affected are refused until you find out why "
                    "and press <b>Acknowledge changes…</b>.")
        self.chain_label.setText(text)
        self.ack_button.setEnabled(report is not None and not report.ok)

    def _selected_group(self) -> str | None:
        rows = self.budgets_view.selectionModel().selectedRows() or self.budgets_view.selectionModel().selectedIndexes()
        if not rows and len(self.groups) == 1:
            return str(self.groups["budget group"].iloc[0])
        return str(self.groups["budget group"].iloc[rows[0].row()]) if rows else None

    def change_cap(self, value=None, reason: str | None = None, group: str | None = None) -> bool:
        """Ask (or take) the new cap and the reason for the selected budget; recorded by the ledger."""
        from fractions import Fraction
        group = group or self._selected_group()
        if group is None:
            show_error(self, PpdpError("select a budget in the table first"), context="No cap was changed.")
            return False
        name = self.names.get(group, group[:12])
        if value is None:
            value, ok = QInputDialog.getDouble(self, "Change cap", f"New total ε cap for {name}:",
                                               float(self.ledger.cap(group) or 1), 0.01, 1000.0, 2)
            if not ok:
                return False
        if reason is None:
            reason, ok = QInputDialog.getText(self, "Change cap", "Why (recorded with your name and the date):",
                                              QLineEdit.Normal, "")
            if not ok:
                return False
        try:
            self.ledger.set_cap(group, Fraction(str(value)), reason=reason or "")
        except PpdpError as exc:
            show_error(self, exc, context="No cap was changed.")
            return False
        self._refresh()
        return True

    def acknowledge(self, reason: str | None = None) -> bool:
        if reason is None:
            reason, ok = QInputDialog.getText(self, "Acknowledge changes",
                                              "What happened to the ledger, and why is it accepted (recorded with "
                                              "your name and the date):", QLineEdit.Normal, "")
            if not ok:
                return False
        try:
            self.ledger.acknowledge(reason)
        except PpdpError as exc:
            show_error(self, exc, context="Nothing was acknowledged.")
            return False
        self._refresh()
        return True

    def _refresh(self) -> None:
        from ppdp_gui.engine.privacy.overview import dataset_table, entry_table, group_table
        self.groups, self.tables, self.entries = group_table(self.ledger), dataset_table(self.ledger), \
            entry_table(self.ledger)
        self.names = table_names(self.ledger)
        self.cap_changes = cap_change_table(self.ledger, self.names)
        self.budgets_view.setModel(_LabelledModel(*readable(self.groups, self.names), parent=self.budgets_view))
        self.caps_view.setModel(DataFrameModel(self.cap_changes, self.caps_view))
        self._show_chain()

    def export_csv(self, path: str | None = None) -> Path | None:
        if path is None:
            path, _ = QFileDialog.getSaveFileName(self, "Export the releases charged", "ledger_releases.csv",
                                                  "CSV (*.csv)")
            if not path:
                return None
        from ppdp_gui.engine.data.outputs import OutputPlan
        from ppdp_gui.engine.data.writer import export_table
        try:  # the save dialog asked before replacing a file; never the ledger or a table it knows
            outputs = OutputPlan(ledger=self.ledger, overwrite=True,
                                 inputs=[lab for lab in self.tables["table"] if lab and lab != "(no label)"])
            outputs.add(path, "the releases table")
            outputs.check()
            return export_table(self.entries, path, protected=outputs.guard)
        except PpdpError as exc:
            show_error(self, exc, context="The ledger was not exported.")
            return None
