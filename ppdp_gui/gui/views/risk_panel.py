"""The Risk tab of the Results step: how easily a person's row could be picked out, in your table and in the
release, for the custodian only (nothing here is published).

Figures and words come from the engine: `explain.compare_risk` (the three attacker models, population uniqueness
from a population size or sampling fraction the custodian gives, the HIPAA Safe Harbor screen of both tables),
the titles, meanings and formulas from `glossary`. For a release where matching a row to a person is not the
measure (differentially private, counts, synthetic rows) the release column stays empty and a sentence says why.
The computation runs in a worker thread; a newer request makes an older result stale.
"""

from __future__ import annotations

import math

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (QComboBox, QDoubleSpinBox, QFrame, QGroupBox, QHBoxLayout, QHeaderView, QLabel,
                               QListWidget, QListWidgetItem, QScrollArea, QSplitter, QTableWidget, QTableWidgetItem,
                               QVBoxLayout, QWidget)

from ppdp_gui.engine import glossary
from ppdp_gui.gui.views.common import escape, note

POPULATION_MODES = (("not known", None), ("people in the population", "size"),
                    ("share of the population in your table (%)", "fraction"))
#: (figure name in the glossary, how to read it from a RiskReport)
ROWS = (
    ("prosecutor: records at risk %", lambda r: r.prosecutor.records_at_risk),
    ("prosecutor: highest risk %", lambda r: r.prosecutor.highest_risk),
    ("prosecutor: success rate %", lambda r: r.prosecutor.success_rate),
    ("journalist: records at risk %", lambda r: r.journalist.records_at_risk),
    ("journalist: highest risk %", lambda r: r.journalist.highest_risk),
    ("journalist: success rate %", lambda r: r.journalist.success_rate),
    ("marketer: success rate %", lambda r: r.marketer.success_rate),
    ("sample uniques %", lambda r: r.population.sample_uniqueness if r.population else r.sample_uniques),
    ("population uniques %", lambda r: r.population.dankar if r.population else None),
)


def percent(value) -> str:
    if value is None:
        return "—"
    if isinstance(value, float) and math.isnan(value):
        return "no estimate"
    v = 100 * float(value)
    text = f"{v:.3g}" if v < 10 else f"{v:.1f}"
    return (text[:-2] if text.endswith(".0") else text) + " %"


#: the per-column table's headers and what each means (tooltips)
ATTRIBUTE_HEADERS = (
    ("Column", "A quasi-identifier, or a column someone else could know that is published unchanged."),
    ("Different values", "How many different values the column has in your table."),
    ("Your table: unique on it alone", "Share of rows whose value of this column no other row has: anyone who "
                                       "knows that value finds the row."),
    ("Your table: uniqueness it adds", "Rows unique on the quasi-identifiers with this column, minus rows unique "
                                       "without it: what leaving it out (or generalising it) would take away."),
    ("Release: unique on it alone", "The same, on the released values (empty when the release has no such rows "
                                    "or does not hold the column)."),
    ("Release: uniqueness it adds", "The same, on the released values."),
)


def attribute_rows(comparison) -> list[tuple[str, ...]]:
    """The per-column table's texts: one row per column of the input's part in the risk (largest first), with the
    release's figures beside it where the release has them."""
    after = {a.column: a for a in getattr(comparison, "attributes_release", ())}
    rows = []
    for a in getattr(comparison, "attributes_input", ()):
        r = after.get(a.column)
        name = a.column if a.in_set else f"{a.column} (published as is)"
        rows.append((name, f"{a.distinct:,}", percent(a.unique_alone), percent(a.drop),
                     percent(r.unique_alone) if r else "—", percent(r.drop) if r else "—"))
    return rows


def risk_job(published, frame, options):
    """The worker's computation (plain Python): the engine's comparison of the input and the release."""
    from ppdp_gui.engine import explain
    yield explain.compare_risk(published, frame, **options)


class RiskPanel(QWidget):
    """`set_release(published)`; None empties it."""

    def __init__(self, session, runner, parent=None):
        super().__init__(parent)
        self.session, self.runner = session, runner
        self.record = None
        self.comparison = None
        self.busy = False
        self._request = 0
        self._stale = False

        self.intro = note("For you only, never published: how easily someone could pick out a person's row using "
                          "the quasi-identifiers, in your table and in the release. A row's chance is 1 ÷ the "
                          "number of rows that share its values; rows count as at risk above a 10 % chance.",
                          object_name="risk_intro")
        self.population_mode = QComboBox()
        for text, key in POPULATION_MODES:
            self.population_mode.addItem(text, key)
        self.population_mode.setAccessibleName("What you know about the population")
        self.population_mode.setToolTip("The people your table was drawn from (for example everyone living in the "
                                        "hospital's area). Knowing how many there are lets the window estimate how "
                                        "many of them are the only one with their values.")
        self.population_spin = QDoubleSpinBox()
        self.population_spin.setAccessibleName("Population size or share")
        self.population_spin.setDecimals(0)
        self.population_spin.setRange(1, 1e10)
        self.population_spin.setGroupSeparatorShown(True)
        self.population_spin.setEnabled(False)
        self.population_spin.setVisible(False)
        controls = QHBoxLayout()
        label = QLabel("P&opulation:")
        label.setBuddy(self.population_mode)
        controls.addWidget(label)
        controls.addWidget(self.population_mode)
        controls.addWidget(self.population_spin)
        controls.addStretch(1)

        self.status = note("", object_name="risk_status")
        self.table = QTableWidget(len(ROWS), 3)
        self.table.setHorizontalHeaderLabels(["", "Your table", "The release"])
        self.table.setAccessibleName("Re-identification risk, your table and the release")
        self.table.verticalHeader().setVisible(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.Stretch)
        for col in (1, 2):
            header.setSectionResizeMode(col, QHeaderView.ResizeToContents)
        self.table.setWordWrap(True)
        for i, (name, _get) in enumerate(ROWS):
            fig = glossary.figure(name)
            head = QTableWidgetItem(fig.title)
            head.setToolTip(fig.tooltip())
            self.table.setItem(i, 0, head)
        self.table.resizeRowsToContents()
        self.table.setEditTriggers(QTableWidget.NoEditTriggers)
        self.not_measured = note("", warn=True, object_name="risk_not_measured")
        self.not_measured.setAccessibleName("Why the release has no risk figures")

        self.harbor_box = QGroupBox("HIPAA Safe Harbor check: what still looks like one of the 18 kinds of "
                                    "identifiers")
        self.harbor_summary = note("", object_name="harbor_summary")
        self.harbor_list = QListWidget()
        self.harbor_list.setAccessibleName("Safe Harbor findings in the release")
        self.harbor_list.setWordWrap(True)
        self.harbor_list.setMinimumHeight(self.fontMetrics().height() * 4)
        hb = QVBoxLayout(self.harbor_box)
        hb.addWidget(self.harbor_summary)
        hb.addWidget(self.harbor_list, 1)

        self.attribute_box = QGroupBox("Each column's part in the risk")
        self.attribute_table = QTableWidget(0, len(ATTRIBUTE_HEADERS))
        self.attribute_table.setObjectName("attribute_risk")
        self.attribute_table.setAccessibleName("Each column's part in the risk, your table and the release")
        self.attribute_table.setHorizontalHeaderLabels([h for h, _t in ATTRIBUTE_HEADERS])
        for i, (_h, tip) in enumerate(ATTRIBUTE_HEADERS):
            self.attribute_table.horizontalHeaderItem(i).setToolTip(tip)
        self.attribute_table.verticalHeader().setVisible(False)
        self.attribute_table.setEditTriggers(QTableWidget.NoEditTriggers)
        self.attribute_table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeToContents)
        self.attribute_note = note("Columns that make many rows unique are the first to generalise or leave out. "
                                   "“Published as is”: not a quasi-identifier, but an insurer or a neighbour could "
                                   "know it (make it one in the Data step, or in the Run step's list).",
                                   object_name="attribute_note")
        ab = QVBoxLayout(self.attribute_box)
        ab.addWidget(self.attribute_note)
        ab.addWidget(self.attribute_table, 1)

        # the chart (pyqtgraph) is built on first use, not with the window: importing it took ~0.5-0.9 s of the
        # window's start (benchmarks/bench_start.py)
        self._chart = None
        self._chart_failed = False
        self._histograms = (None, None)  # what the chart shows, kept until it is built
        self._chart_holder = QWidget()
        self._chart_layout = QVBoxLayout(self._chart_holder)
        self._chart_layout.setContentsMargins(0, 0, 0, 0)

        left = QWidget()
        lv = QVBoxLayout(left)
        lv.setContentsMargins(0, 0, 0, 0)
        lv.addWidget(self.table)
        lv.addWidget(self.not_measured)
        lv.addWidget(self.attribute_box, 1)
        lv.addWidget(self.harbor_box, 1)
        # scrolled, never squeezed: with the DP note shown the column is taller than a 820-pixel window, and a
        # squeezed layout drew the note over the risk table's last rows
        self.left_scroll = QScrollArea()
        self.left_scroll.setWidgetResizable(True)
        self.left_scroll.setFrameShape(QFrame.NoFrame)
        self.left_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.left_scroll.setWidget(left)
        split = QSplitter(Qt.Horizontal)
        split.addWidget(self.left_scroll)
        split.addWidget(self._chart_holder)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.addWidget(self.intro)
        layout.addLayout(controls)
        layout.addWidget(self.status)
        layout.addWidget(split, 1)

        self.population_mode.currentIndexChanged.connect(self._mode_changed)
        self.population_spin.editingFinished.connect(self.recompute)
        self.set_release(None)

    # -- inputs ----------------------------------------------------------------------------------------------
    def _mode_changed(self, _index=None) -> None:
        mode = self.population_mode.currentData()
        self.population_spin.blockSignals(True)
        if mode == "fraction":
            self.population_spin.setDecimals(2)
            self.population_spin.setRange(0.01, 100)
            self.population_spin.setSuffix(" %")
            self.population_spin.setValue(10)
        elif mode == "size":
            rows = len(self.session.dataset.frame) if self.session.dataset is not None else 1
            self.population_spin.setDecimals(0)
            self.population_spin.setRange(max(1, rows), 1e10)
            self.population_spin.setSuffix("")
            self.population_spin.setValue(max(rows * 10, 1))
        self.population_spin.blockSignals(False)
        self.population_spin.setEnabled(mode is not None)
        self.population_spin.setVisible(mode is not None)
        self.recompute()

    def set_population(self, *, size: float | None = None, fraction: float | None = None) -> None:
        """What a user types: a population size, or the table's share of the population (0..1)."""
        mode = "size" if size is not None else "fraction" if fraction is not None else None
        self.population_mode.blockSignals(True)
        self.population_mode.setCurrentIndex(self.population_mode.findData(mode))
        self.population_mode.blockSignals(False)
        self._mode_changed()
        if mode is not None:
            self.population_spin.setValue(size if size is not None else 100 * fraction)
            self.recompute()

    def options(self) -> dict:
        mode, value = self.population_mode.currentData(), self.population_spin.value()
        if mode == "size":
            return {"population_size": value}
        if mode == "fraction":
            return {"sampling_fraction": value / 100}
        return {}

    # -- computing ---------------------------------------------------------------------------------------------
    def set_release(self, record) -> None:
        """Show `record`'s risk; computed when the tab is on screen (not for every release made unseen)."""
        self.record = record
        self._stale = True
        if self.isVisible() or record is None:
            self.recompute()

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().resizeEvent(event)
        self._fit_table()  # titles wrap differently at another width

    @property
    def chart(self):
        """The rows-by-risk chart, built (and pyqtgraph imported) on first use; None without pyqtgraph."""
        if self._chart is None and not self._chart_failed:
            try:
                from ppdp_gui.gui.charts import RiskChart
                self._chart = RiskChart()
                self._chart_layout.addWidget(self._chart)
                self._chart.set_histograms(*self._histograms)
            except ImportError:  # pragma: no cover - pyqtgraph is a dependency; the figures stand without it
                self._chart_failed = True
        return self._chart

    def _set_histograms(self, before, after) -> None:
        """Draw them now if the chart exists (or the tab is shown), else when it is built."""
        self._histograms = (before, after)
        if self._chart is not None or self.isVisible():
            chart = self.chart
            if chart is not None:
                chart.set_histograms(before, after)

    def showEvent(self, event) -> None:  # noqa: N802 - Qt's name
        self.chart  # noqa: B018 - the chart appears with the tab
        super().showEvent(event)
        if self._stale:
            self.recompute()

    def recompute(self) -> None:
        self._stale = False
        self._request += 1
        self.comparison = None
        ds = self.session.dataset
        if self.record is None or ds is None:
            self.busy = False
            self._show(None)
            self.status.setText("No release yet: run one in the Run step.")
            return
        self.busy = True
        self.status.setText("Computing the risk…")
        token, record, frame, options = self._request, self.record, ds.frame, self.options()
        self.runner.start(lambda: risk_job(record, frame, options),
                          on_done=lambda result, t=token: self._done(t, result),
                          on_error=lambda exc, _tb, t=token: self._failed(t, exc))

    def _done(self, token: int, comparison) -> None:
        if token != self._request:
            return  # a newer request is on its way
        self.busy = False
        self.comparison = comparison
        self._show(comparison)

    def _failed(self, token: int, exc: BaseException) -> None:
        if token != self._request:
            return
        self.busy = False
        self._show(None)
        self.status.setText(f"The risk could not be computed: {escape(exc)}")

    # -- showing -----------------------------------------------------------------------------------------------
    def value(self, name: str, which: str = "input") -> str:
        """The text shown for figure `name` of "input" or "release" (for tests and screen readers)."""
        row = [n for n, _g in ROWS].index(name)
        item = self.table.item(row, 1 if which == "input" else 2)
        return item.text() if item is not None else ""

    def _show(self, comparison) -> None:
        for row in range(self.table.rowCount()):
            for col in (1, 2):
                self.table.setItem(row, col, QTableWidgetItem(""))
        self.harbor_list.clear()
        self.not_measured.setVisible(False)
        self._show_attributes(comparison)
        if comparison is None:
            self.harbor_summary.setText("")
            self._set_histograms(None, None)
            return
        if not comparison.qis:
            self.status.setText("No column is a quasi-identifier, so nobody can be picked out through them; set "
                                "roles in the Data step to measure this.")
        else:
            person = getattr(comparison.input, "person", None)
            self.status.setText(f"Quasi-identifiers: {escape(', '.join(comparison.qis))}."
                                + ("" if person is None else f" Counted in patients ({escape(person)}): a group's "
                                   "size is the number of different patients in it, not its rows.")
                                + ("" if self.options() else " Give the size of the population (or your table's "
                                   "share of it) above to estimate how many people are unique in it.")
                                + ("" if self._same_table() else " <span style='color:#a33a00'>Your table was read "
                                   "again since this release was made (another missing-value policy): “Your "
                                   "table” is the table as it is now.</span>"))
        for col, report in enumerate((comparison.input, comparison.release), 1):
            if report is None:
                continue
            for row, (name, get) in enumerate(ROWS):
                item = QTableWidgetItem(percent(get(report)))
                item.setTextAlignment(Qt.AlignRight | Qt.AlignVCenter)
                fig = glossary.figure(name)
                tip = fig.tooltip()
                if name == "population uniques %" and report.population is not None:
                    pop = report.population
                    tip += (f"\nDankar's rule chose {pop.dankar_model}. Pitman {percent(pop.pitman)}, Zayatz "
                            f"{percent(pop.zayatz)}, SNB {percent(pop.snb)}.")
                item.setToolTip(tip)
                self.table.setItem(row, col, item)
        self._fit_table()
        if comparison.release is None:
            self.not_measured.setText(comparison.not_measured)
            self.not_measured.setVisible(bool(comparison.not_measured))
        self._show_harbor(comparison)
        self._set_histograms(comparison.input.histogram if comparison.input else None,
                             comparison.release.histogram if comparison.release else None)

    def _show_attributes(self, comparison) -> None:
        rows = attribute_rows(comparison) if comparison is not None else []
        self.attribute_table.setRowCount(len(rows))
        for r, texts in enumerate(rows):
            for c, text in enumerate(texts):
                item = QTableWidgetItem(text)
                if c:
                    item.setTextAlignment(Qt.AlignRight | Qt.AlignVCenter)
                item.setToolTip(ATTRIBUTE_HEADERS[c][1])
                self.attribute_table.setItem(r, c, item)
        self.attribute_box.setVisible(bool(rows))

    def attribute_value(self, column: str, header: str) -> str:
        """The text shown for `column` under `header` of the per-column table (for tests and screen readers)."""
        c = [h for h, _t in ATTRIBUTE_HEADERS].index(header)
        for r in range(self.attribute_table.rowCount()):
            name = self.attribute_table.item(r, 0).text()
            if name == column or name.startswith(column + " ("):
                return self.attribute_table.item(r, c).text()
        return ""

    def _same_table(self) -> bool:
        """Whether the table open now is the one the shown release was made from (same file, same rows used)."""
        ds, record = self.session.dataset, self.record
        if ds is None or record is None:
            return True
        src, now = record.source, ds.source
        return (src.sha256 == now.sha256 and src.na_policy == now.na_policy
                and src.n_rows_read - src.n_rows_dropped == len(ds.frame))

    def _fit_table(self) -> None:
        """Rows sized to their (wrapped) titles, and the table as tall as all of them: nine figures, no scrolling."""
        self.table.resizeRowsToContents()
        height = self.table.horizontalHeader().height() + 2 * self.table.frameWidth()
        height += sum(self.table.rowHeight(r) for r in range(self.table.rowCount()))
        self.table.setFixedHeight(height + 2)

    def _show_harbor(self, comparison) -> None:
        before, after = comparison.harbor_input, comparison.harbor_release
        if after:
            self.harbor_summary.setText(
                f"<b>The release does not pass:</b> {len(after)} finding{'s' if len(after) != 1 else ''} below "
                f"(your table had {len(before)}, in grey). This is a screen, not a certificate: free text can hide "
                "anything.")
        else:
            self.harbor_summary.setText(
                f"Nothing found in the release (your table had {len(before)} finding"
                f"{'s' if len(before) != 1 else ''}, listed in grey). This is a screen, not a certificate: Safe Harbor also "
                "needs you to know of no other way to identify someone, and free text can hide anything.")
        for finding in after:
            self.harbor_list.addItem(f"In the release — {finding.column} ({finding.identifier}): {finding.reason}")
        for finding in before:
            item = QListWidgetItem(f"In your table — {finding.column} ({finding.identifier}): {finding.reason}")
            item.setForeground(QBrush(QColor("#666666")))
            self.harbor_list.addItem(item)
