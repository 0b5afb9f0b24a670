"""The Results step's Search tab: the candidate releases a mechanism searched (any mechanism that describes its
search in `record["lattice"]`, see `engine.pipeline.candidates`), drawn as a lattice and listed best first.
Clicking a point or a row previews that candidate — its levels, suppressed rows, loss and risk, and its first rows —
computed by the engine in a worker thread, so the custodian sees why the released candidate won and what another
trade-off would give. Nothing here is published.

The lattice chart (pyqtgraph, ~0.2 s to import) is built the first time a release with a search is shown, so
that opening the window never waits for it (benchmarks/bench_start.py).
"""

from __future__ import annotations

from PySide6.QtWidgets import (QFormLayout, QGroupBox, QHBoxLayout, QLabel, QSplitter, QTableView, QVBoxLayout,
                               QWidget)
from PySide6.QtCore import Qt

from ppdp_gui.engine.pipeline.candidates import candidates_frame, preview_job, search_of, summary
from ppdp_gui.gui.models import DataFrameModel, fit_columns
from ppdp_gui.gui.views.common import note


def _fmt(value) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:,.0f}" if value.is_integer() and abs(value) >= 1 else f"{value:.4g}"
    return str(value)


class SearchPanel(QWidget):
    """`set_release(published)` shows its search (or nothing); `select(index)` previews one candidate."""

    def __init__(self, session, runner, parent=None):
        super().__init__(parent)
        self.session, self.runner = session, runner
        self.published = None
        self.search: dict | None = None
        self.preview: dict | None = None
        self.preview_error = ""
        self._job = None
        self.banner = note("The candidates the search considered, for you only: computed from your data, never "
                           "published. Click a point or a row to preview that release.")
        self.summary_label = note()
        self.summary_label.setAccessibleName("Search summary")
        self._chart = None
        self._chart_holder = QWidget()
        self._chart_holder.setLayout(QVBoxLayout())
        self._chart_holder.layout().setContentsMargins(0, 0, 0, 0)
        self.table_model = DataFrameModel(parent=self)
        self.table = QTableView()
        self.table.setModel(self.table_model)
        self.table.setAccessibleName("Anonymous candidates, best first")
        self.table.setSelectionBehavior(QTableView.SelectRows)
        self.table.setSelectionMode(QTableView.SingleSelection)
        self.table.selectionModel().currentRowChanged.connect(self._row_chosen)
        self.preview_box = QGroupBox("Preview of the chosen candidate")
        self.preview_form = QFormLayout(self.preview_box)
        self.preview_status = QLabel("Choose a candidate.")
        self.preview_status.setWordWrap(True)
        self.preview_status.setAccessibleName("Preview status")
        self.preview_form.addRow(self.preview_status)
        self.rows_model = DataFrameModel(parent=self)
        self.rows_view = QTableView()
        self.rows_view.setModel(self.rows_model)
        self.rows_view.setAccessibleName("First rows of the previewed release")

        left = QSplitter(Qt.Vertical)
        left.addWidget(self._chart_holder)
        left.addWidget(self.table)
        right = QWidget()
        rl = QVBoxLayout(right)
        rl.addWidget(self.preview_box)
        rl.addWidget(self.rows_view, 1)
        body = QSplitter(Qt.Horizontal)
        body.addWidget(left)
        body.addWidget(right)
        body.setStretchFactor(0, 3)
        body.setStretchFactor(1, 2)
        top = QHBoxLayout()
        top.addWidget(self.summary_label, 1)
        layout = QVBoxLayout(self)
        layout.addWidget(self.banner)
        layout.addLayout(top)
        layout.addWidget(body, 1)

    @property
    def chart(self):
        """The lattice chart, built (and pyqtgraph imported) on first use."""
        if self._chart is None:
            from ppdp_gui.gui.charts.lattice_chart import LatticeChart
            self._chart = LatticeChart()
            self._chart.node_clicked.connect(self.select)
            self._chart_holder.layout().addWidget(self._chart)
        return self._chart

    # -- content ---------------------------------------------------------------------------------------------
    def set_release(self, published) -> None:
        self.published = published
        self.search = search_of(published) if published is not None else None
        self.preview, self.preview_error = None, ""
        if self.search is not None or self._chart is not None:
            self.chart.set_search(self.search)
        if self.search is None:
            self.summary_label.setText("")
            self.table_model.clear()
            self._clear_preview("")
            return
        self.summary_label.setText(summary(self.search))
        self._frame = candidates_frame(self.search)
        self.table_model.set_frame(self._frame)
        fit_columns(self.table)
        self._clear_preview("Choose a candidate.")

    def _clear_preview(self, text: str) -> None:
        while self.preview_form.rowCount() > 1:
            self.preview_form.removeRow(1)
        self.preview_status.setText(text)
        self.rows_model.clear()

    def _row_chosen(self, current, _previous) -> None:
        if current.isValid() and self.search is not None and current.row() < len(self._frame):
            self.select(int(self._frame["node"].iloc[current.row()]))

    # -- preview ---------------------------------------------------------------------------------------------
    def select(self, index: int) -> None:
        """Preview candidate `index` (a node of the search record) in a worker thread."""
        if self.search is None or self.published is None or self.session.dataset is None:
            return
        self.chart.mark(index)
        self._clear_preview("Computing the preview…")
        search, data = self.search, self.session.dataset
        mech, params = self.published.mechanism, dict(self.published.params)
        self._job = self.runner.start(lambda: preview_job(mech, data, params, search, index),
                                      on_done=self._shown, on_error=self._failed)

    @property
    def busy(self) -> bool:
        return self._job is not None

    def _shown(self, result: dict) -> None:
        self._job = None
        self.preview, self.preview_error = result, ""
        levels = ", ".join(f"{k} {v}" for k, v in result.get("levels", {}).items())
        self.preview_status.setText(f"Levels: {levels}" + (f" — {result['state']}" if result.get("state") else ""))
        ok = QLabel(_fmt(bool(result.get("anonymous"))))
        ok.setAccessibleName("anonymous")
        self.preview_form.addRow("Meets the privacy models:", ok)
        for key, value in result.get("figures", {}).items():
            label = QLabel(_fmt(value))
            label.setAccessibleName(key)
            self.preview_form.addRow(key + ":", label)
        for text in result.get("warnings", []):
            w = QLabel(text)
            w.setWordWrap(True)
            self.preview_form.addRow(w)
        table = result.get("table")
        if table is not None:
            self.rows_model.set_frame(table)
            fit_columns(self.rows_view)

    def _failed(self, exc: BaseException, _trace: str) -> None:
        self._job = None
        self.preview, self.preview_error = None, str(exc)
        self.preview_status.setText(f"No preview: {exc}")
