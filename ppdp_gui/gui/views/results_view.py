"""Results step: the released table (and any further tables), what the release is with its figures (figures_panel),
re-identification risk of your table and of the release (risk_panel), the candidates the mechanism searched (a Search tab, for any release that describes its search), a comparison of
the releases made so far, and the simulation panel (utility against privacy, with advice)."""

from __future__ import annotations

import pandas as pd
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QHeaderView, QLabel, QTableView, QTabWidget, QVBoxLayout

from ppdp_gui.engine import explain, glossary
from ppdp_gui.engine.pipeline.candidates import search_of
from ppdp_gui.gui.models import DataFrameModel, fit_columns
from ppdp_gui.gui.plan_words import params_text, short_cost
from ppdp_gui.gui.views.common import DONE, TODO, Later, StepView, heading, note, soon
from ppdp_gui.gui.views.figures_panel import FiguresPanel
from ppdp_gui.gui.views.risk_panel import RiskPanel
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


def column_title(name: str) -> str:
    """A figure's plain title as a column heading, with its unit: 'Information loss %', 'Pairs of look-alike
    rows (pairs of rows)'."""
    title, unit = glossary.figure(name).title, glossary.unit(name)
    if unit == "%":
        return title + ("" if title.endswith("%") else " %")
    return f"{title} ({unit})" if unit else title


def comparison_frame(releases) -> pd.DataFrame:
    """One row per release: what it was, what it guarantees, and every figure measured on it."""
    rows = []
    for i, p in enumerate(releases, 1):
        row = {"release": i, "mechanism": p.mechanism, "privacy": short_cost(p.cost),
               "guarantee holds": "yes" if p.holds else "NO (domain from the data)",
               "parameters": params_text(dict(p.params))}
        for name, value in {**explain.release_figures(p), **p.figures}.items():
            key = column_title(name)
            if key in row and row[key] != round(value, 4):
                key = glossary.label(name)  # two figures of one title that differ: both, by their names
            row[key] = round(value, 4)
        rows.append(row)
    return pd.DataFrame(rows)


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
        self.figures = FiguresPanel()
        self.compare_model = DataFrameModel(parent=self)
        self.compare = QTableView()
        self.compare.setModel(self.compare_model)
        self.compare.setAccessibleName("Releases compared")
        self.sweep = SweepPanel(session, runner)
        self.search = SearchPanel(session, runner)
        self.risk = RiskPanel(session, runner)
        self.tabs.addTab(self.table_tabs, "Released &table")
        self.tabs.addTab(self.figures, "&Figures")
        self.tabs.addTab(self.risk, "&Risk before / after")
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

        self._table_queue: list = []  # (name, tab label, frame) still to add, one per turn
        self._table_round = 0  # which showing the queued tables belong to
        self._show_later = Later(self, self._show)
        self._compare_later = Later(self, self._fill_compare)
        self.release_combo.currentIndexChanged.connect(self._show)
        session.releases_changed.connect(self._releases_changed)
        self.sweep.state_changed.connect(self.state_changed)  # the step list counts simulations at once
        self._releases_changed()

    def forget_table(self) -> None:
        """A new table: its releases and simulations start empty (the session's TableState); the risk tab's
        population size and the simulation's applied-advice line were about the table before."""
        self.risk.population_mode.setCurrentIndex(0)
        self.sweep.applied.setText("")

    def _releases_changed(self) -> None:
        records = self.session.releases
        self.release_combo.blockSignals(True)
        self.release_combo.clear()
        for i, r in enumerate(records, 1):
            self.release_combo.addItem(f"{i}. {r.mechanism} — {short_cost(r.cost)}"
                                       + ("" if r.holds else " — NOT ε-DP"))
        self.release_combo.setCurrentIndex(len(records) - 1)
        self.release_combo.blockSignals(False)
        if records or self.compare_model.rowCount():  # nothing to show or clear when the window opens
            self._compare_later()
        self.empty.setVisible(not records)
        self._show_later()  # the figures, then the tables, each in a turn of its own
        self.state_changed.emit()

    def _fill_compare(self) -> None:
        self.compare_model.set_frame(comparison_frame(self.session.releases))
        fit_columns(self.compare)

    @property
    def record(self):
        i = self.release_combo.currentIndex()
        return self.session.releases[i] if 0 <= i < len(self.session.releases) else None

    def _show(self, *_args) -> None:
        """The release chosen: its figures now (the chart when its tab is on screen), its tables one per later
        turn of the event loop (`tables_pending` until they are all there)."""
        self._show_later.pending = False
        record = self.record
        while self.table_tabs.count():
            w = self.table_tabs.widget(0)
            self.table_tabs.removeTab(0)
            w.deleteLater()
        self.figures.show_release(record, self.session.dataset)
        self.risk.set_release(record)
        self._show_search(record)
        self._table_queue = []
        self._table_round += 1
        if record is None:
            return
        rel = record.release
        self._table_queue = [("Released table", "Release", rel.table)] + [
            (name, name, frame) for name, frame in (rel.extra_tables or {}).items()]
        soon(self, lambda r=self._table_round: self._add_next_table(r))

    def _add_next_table(self, round_: int) -> None:
        """One table of the release shown, then the next one in a later turn (not if another was shown since)."""
        if round_ != self._table_round or not self._table_queue:
            return
        name, label, frame = self._table_queue.pop(0)
        self.table_tabs.addTab(table_view(frame, name), f"{label} ({len(frame):,} rows)")
        if self._table_queue:
            soon(self, lambda: self._add_next_table(round_))

    @property
    def showing(self) -> bool:
        """True while the release just made (or chosen) is still being shown: its figures, its tables or the
        comparison are added in later turns of the event loop (tests wait for it)."""
        return self._show_later.pending or self._compare_later.pending or self.tables_pending

    @property
    def tables_pending(self) -> bool:
        """True while the tables of the release shown are still being added."""
        return bool(self._table_queue)

    def _show_search(self, record) -> None:
        """The Search tab, after Figures, only for a release that describes the candidates it searched."""
        has = record is not None and search_of(record) is not None
        at = self.tabs.indexOf(self.search)
        if has and at < 0:
            self.tabs.insertTab(self.tabs.indexOf(self.risk) + 1, self.search, "&Search (candidates)")
        elif not has and at >= 0:
            self.tabs.removeTab(at)
        self.search.set_release(record if has else None)

    def state(self) -> tuple[str, str]:
        n, sweeps = len(self.session.releases), len(self.session.sweeps)
        extra = f", {sweeps} simulation{'s' if sweeps != 1 else ''}" if sweeps else ""
        if self.sweep.running:
            extra += f", simulating… {self.sweep.percent} %"
        if not n:
            return TODO, "no release yet" + extra
        return DONE, f"{n} release{'s' if n != 1 else ''}{extra}"
