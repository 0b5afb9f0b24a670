"""Results step: the released table (and any further tables), its utility and risk figures, the candidates the
mechanism searched (a Search tab, for any release that describes its search), a comparison of the releases made so
far, and the simulation panel (utility against privacy from sweeps)."""

from __future__ import annotations

import pandas as pd
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import (QComboBox, QFormLayout, QGroupBox, QHBoxLayout, QHeaderView, QLabel, QTableView,
                               QTabWidget, QVBoxLayout, QWidget)

from ppdp_gui.engine.claims import KAnonymity
from ppdp_gui.engine.pipeline.candidates import search_of
from ppdp_gui.gui.models import DataFrameModel, fit_columns
from ppdp_gui.gui.preview import short_cost
from ppdp_gui.gui.views.common import DONE, TODO, StepView, heading, note
from ppdp_gui.gui.views.run_view import params_text
from ppdp_gui.gui.views.search_panel import SearchPanel
from ppdp_gui.gui.views.sweep_panel import SweepPanel


def table_view(frame: pd.DataFrame, name: str, parent=None) -> QTableView:
    view = QTableView(parent)
    model = DataFrameModel(frame, view)
    view.setModel(model)
    view.setAccessibleName(name)
    view.verticalHeader().setSectionResizeMode(QHeaderView.Fixed)
    view.verticalHeader().setDefaultSectionSize(view.fontMetrics().height() + 6)
    view.setWordWrap(False)
    fit_columns(view)
    return view


def comparison_frame(releases) -> pd.DataFrame:
    """One row per release: what it was, what it guarantees, and every figure measured on it."""
    rows = []
    for i, p in enumerate(releases, 1):
        row = {"release": i, "mechanism": p.mechanism, "privacy": short_cost(p.cost),
               "guarantee holds": "yes" if p.holds else "NO (domain from the data)",
               "parameters": params_text(dict(p.params)), "rows": len(p.table)}
        row.update({k: round(v, 4) for k, v in p.figures.items()})
        rows.append(row)
    return pd.DataFrame(rows)


def fmt_figure(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() and abs(value) >= 1 else f"{value:.4g}"


class ResultsView(StepView):
    title = "Results"

    def __init__(self, session, runner, parent=None):
        super().__init__(session, runner, parent)
        self.release_combo = QComboBox()
        self.release_combo.setAccessibleName("Release shown")
        self.tabs = QTabWidget()
        self.tabs.setAccessibleName("Results")
        self.table_tabs = QTabWidget()
        self.table_tabs.setAccessibleName("Released tables")
        self.measures_box = QGroupBox("Utility (measured against your data: for you, never published)")
        self.measures_form = QFormLayout(self.measures_box)
        self.risk_box = QGroupBox("Re-identification risk (from the released table's groups)")
        self.risk_form = QFormLayout(self.risk_box)
        self.guarantee = note(object_name="release_guarantee")
        self.guarantee.setAccessibleName("Guarantee of this release")
        self.histogram = None
        try:
            from ppdp_gui.gui.charts import HistogramChart
            self.histogram = HistogramChart()
        except ImportError:  # pragma: no cover
            pass
        figures = QWidget()
        fl = QVBoxLayout(figures)
        fl.addWidget(self.guarantee)
        boxes = QHBoxLayout()
        boxes.addWidget(self.measures_box, 1)
        boxes.addWidget(self.risk_box, 1)
        fl.addLayout(boxes)
        if self.histogram is not None:
            fl.addWidget(self.histogram, 1)
        self.compare_model = DataFrameModel(parent=self)
        self.compare = QTableView()
        self.compare.setModel(self.compare_model)
        self.compare.setAccessibleName("Releases compared")
        self.sweep = SweepPanel(session, runner)
        self.search = SearchPanel(session, runner)
        self.tabs.addTab(self.table_tabs, "Released &table")
        self.tabs.addTab(figures, "&Figures")
        self.tabs.addTab(self.compare, "&Compare releases")
        self.tabs.addTab(self.sweep, "Si&mulate (utility vs privacy)")
        self.empty = note("No release yet: run one in the Run step. You can already simulate utility against "
                          "privacy in the last tab.")

        top = QHBoxLayout()
        label = QLabel("R&elease:")
        label.setBuddy(self.release_combo)
        top.addWidget(label)
        top.addWidget(self.release_combo, 1)
        layout = QVBoxLayout(self)
        layout.addWidget(heading("5. Results"))
        layout.addWidget(self.empty)
        layout.addLayout(top)
        layout.addWidget(self.tabs, 1)

        self.release_combo.currentIndexChanged.connect(self._show)
        session.releases_changed.connect(self._releases_changed)
        self._releases_changed()

    def _releases_changed(self) -> None:
        records = self.session.releases
        self.release_combo.blockSignals(True)
        self.release_combo.clear()
        for i, r in enumerate(records, 1):
            self.release_combo.addItem(f"{i}. {r.mechanism} — {short_cost(r.cost)}"
                                       + ("" if r.holds else " — NOT ε-DP"))
        self.release_combo.setCurrentIndex(len(records) - 1)
        self.release_combo.blockSignals(False)
        self.compare_model.set_frame(comparison_frame(records))
        fit_columns(self.compare)
        self.empty.setVisible(not records)
        QTimer.singleShot(0, self._show)  # the table and charts in their own turn of the event loop
        self.state_changed.emit()

    @property
    def record(self):
        i = self.release_combo.currentIndex()
        return self.session.releases[i] if 0 <= i < len(self.session.releases) else None

    def _show(self, *_args) -> None:
        record = self.record
        while self.table_tabs.count():
            w = self.table_tabs.widget(0)
            self.table_tabs.removeTab(0)
            w.deleteLater()
        for form in (self.measures_form, self.risk_form):
            while form.rowCount():
                form.removeRow(0)
        if record is None:
            if self.histogram is not None:
                self.histogram.set_sizes([])
            self._show_search(None)
            return
        rel = record.release
        self._show_search(record)
        self.table_tabs.addTab(table_view(rel.table, "Released table"), f"Release ({len(rel.table):,} rows)")
        for name, frame in (rel.extra_tables or {}).items():
            self.table_tabs.addTab(table_view(frame, name), f"{name} ({len(frame):,} rows)")
        self.guarantee.setText(f"<b>Guarantee:</b> {record.guarantee_line()}"
                               + ("" if record.holds else " <span style='color:#b00020'>— the release note says "
                                                          "so too.</span>"))
        sizes = record.class_sizes
        risk_keys = {"smallest group (rows)", "groups", "highest re-identification risk %",
                     "average re-identification risk %", "share of records with risk above 10 %"}
        measures = {k: v for k, v in record.figures.items() if k not in risk_keys}
        risk = {k: v for k, v in record.figures.items() if k in risk_keys}
        no_measures = ("No figures for this release on its own: utility such as classification accuracy needs "
                       "held-out data. See the Simulate tab.")
        no_risk = ("Group-size risk does not apply: " + ("the release is protected by ε-differential privacy."
                                                         if rel.cost.is_dp else
                                                         "the release has no groups of quasi-identifiers."))
        for form, figures, empty in ((self.measures_form, measures, no_measures),
                                     (self.risk_form, risk, no_risk)):
            if not figures:
                label = QLabel(empty)
                label.setWordWrap(True)
                form.addRow(label)
            for key, value in figures.items():
                val = QLabel(fmt_figure(value))
                val.setAccessibleName(key)
                form.addRow(key + ":", val)
        for text in record.warnings:
            label = QLabel("For you (not published): " + text)
            label.setWordWrap(True)
            self.measures_form.addRow(label)
        if self.histogram is not None:
            k = next((c.k for c in record.claims if isinstance(c, KAnonymity)), None)
            self.histogram.set_sizes([] if sizes is None else sizes, k=k)

    def _show_search(self, record) -> None:
        """The Search tab, after Figures, only for a release that describes the candidates it searched."""
        has = record is not None and search_of(record) is not None
        at = self.tabs.indexOf(self.search)
        if has and at < 0:
            self.tabs.insertTab(2, self.search, "&Search (candidates)")
        elif not has and at >= 0:
            self.tabs.removeTab(at)
        self.search.set_release(record if has else None)

    def state(self) -> tuple[str, str]:
        n, sweeps = len(self.session.releases), len(self.session.sweeps)
        extra = f", {sweeps} simulation{'s' if sweeps != 1 else ''}" if sweeps else ""
        if not n:
            return TODO, "no release yet" + extra
        return DONE, f"{n} release{'s' if n != 1 else ''}{extra}"
