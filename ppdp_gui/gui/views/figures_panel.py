"""The Figures tab of the Results step: what a release is and what it is worth, for every kind of release.

Three boxes, split by who may see what (engine/explain.py): figures read from the released file itself (anyone
holding it can compute them), figures compared with the true data (utility, noise — for the custodian only) and
re-identification risk (for the custodian). Every figure shows its plain title and one line of meaning; its
formula and the name it has in files are in the tooltip (engine/glossary.py). The chart is the release's own
picture: group sizes for a k-anonymous table, the spread of the counts for a table of noisy counts — so a DP
release never shows an empty chart. Nothing here knows a mechanism.
"""

from __future__ import annotations

from PySide6.QtWidgets import QFormLayout, QGroupBox, QHBoxLayout, QLabel, QScrollArea, QVBoxLayout, QWidget

from ppdp_gui.engine import explain, glossary
from ppdp_gui.engine.advice import fmt
from ppdp_gui.engine.claims import KAnonymity
from ppdp_gui.gui.views.common import escape, note

RISK_KINDS = ("risk",)


def fmt_figure(name: str, value: float) -> str:
    """A figure with its unit: '11.2 %', '30,162', '1.47', '5,566,280 pairs of rows'."""
    v = float(value)
    text = f"{v:,.0f}" if v.is_integer() and abs(v) >= 1 else fmt(v)
    return glossary.with_unit(name, text)


def _clear(form: QFormLayout) -> None:
    while form.rowCount():
        form.removeRow(0)


def add_figure(form: QFormLayout, name: str, value: float) -> QLabel:
    """One row: plain title, value in bold and its one-line meaning; the formula in the tooltip."""
    fig = glossary.figure(name)
    tip = fig.tooltip() + (f"\n(In files and the custodian record: “{name}”.)" if fig.title != name else "")
    title = QLabel(fig.title + ":")
    title.setToolTip(tip.strip())
    text = f"<b>{escape(fmt_figure(name, value))}</b>"
    if fig.meaning:
        text += f" <span style='color:#555'>— {escape(fig.meaning)}</span>"
    shown = QLabel(text)
    shown.setWordWrap(True)
    shown.setToolTip(tip.strip())
    shown.setAccessibleName(name)
    shown.setAccessibleDescription(fig.meaning)
    form.addRow(title, shown)
    return shown


def add_line(form: QFormLayout, text: str, *, warn: bool = False) -> None:
    label = QLabel(text)
    label.setWordWrap(True)
    if warn:
        label.setStyleSheet("color: #a33a00;")
    form.addRow(label)


class FiguresPanel(QWidget):
    """`show_release(published)`; None shows the empty state."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.guarantee = note(object_name="release_guarantee")
        self.guarantee.setAccessibleName("Guarantee of this release")
        self.about = note(object_name="release_about")
        self.about.setAccessibleName("What this release is")
        self.release_box = QGroupBox("The release itself (anyone with the file can see these)")
        self.release_form = QFormLayout(self.release_box)
        self.measures_box = QGroupBox("Compared with your data (for you only, never published)")
        self.measures_form = QFormLayout(self.measures_box)
        self.risk_box = QGroupBox("Re-identification risk (for you only)")
        self.risk_form = QFormLayout(self.risk_box)
        for form in (self.release_form, self.measures_form, self.risk_form):
            form.setRowWrapPolicy(QFormLayout.WrapLongRows)
        self.chart_note = note(object_name="chart_note")
        self._histogram = None  # built with the first release shown: pyqtgraph stays out of the window's start
        self._histogram_failed = False
        self._chart_pending = None  # the release whose chart waits for the tab to be shown

        inner = QWidget()
        left = QVBoxLayout(inner)
        for w in (self.about, self.release_box, self.measures_box, self.risk_box):
            left.addWidget(w)
        left.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(inner)
        scroll.setAccessibleName("Figures of this release")
        right = QVBoxLayout()
        right.addWidget(self.chart_note)
        self._right = right
        body = QHBoxLayout()
        body.addWidget(scroll, 1)
        body.addLayout(right, 1)
        layout = QVBoxLayout(self)
        layout.addWidget(self.guarantee)
        layout.addLayout(body, 1)
        self.show_release(None)

    @property
    def histogram(self):
        """The chart of group sizes or counts (None if pyqtgraph is missing), built on first use."""
        if self._histogram is None and not self._histogram_failed:
            try:
                from ppdp_gui.gui.charts import HistogramChart
            except ImportError:  # pragma: no cover
                self._histogram_failed = True
                return None
            self._histogram = HistogramChart()
            self._right.addWidget(self._histogram, 1)
        return self._histogram

    def show_release(self, record, dataset=None) -> None:
        """Show `record`; `dataset` (the table open now) lets a DP table of counts show the Run step's estimate of
        its noise beside the records the noise did add (explain.noise_estimate_of; for the custodian only)."""
        for form in (self.release_form, self.measures_form, self.risk_form):
            _clear(form)
        if record is None:
            self.guarantee.setText("No release yet: run one in the Run step.")
            self.about.setText("")
            for box in (self.release_box, self.measures_box, self.risk_box):
                box.setVisible(False)
            self.chart_note.setText("")
            self._chart_pending = None
            if self._histogram is not None:
                self._histogram.setVisible(False)
            return
        for box in (self.release_box, self.measures_box, self.risk_box):
            box.setVisible(True)
        self.guarantee.setText(f"<b>Guarantee:</b> {escape(record.guarantee_line())}"
                               + ("" if record.holds else " <span style='color:#b00020'>— the release note says "
                                                          "so too.</span>"))
        self.about.setText("<b>What this release is</b><ul style='margin-top:2px'>"
                           + "".join(f"<li>{escape(t)}</li>" for t in explain.published_sentences(record))
                           + "</ul>")
        for name, value in explain.release_figures(record).items():
            add_figure(self.release_form, name, value)
        figures = dict(record.figures)  # each figure once, under its one name (metrics/risk.group_figures)
        risk = {k: v for k, v in figures.items() if glossary.figure(k).kind in RISK_KINDS}
        measures = {k: v for k, v in figures.items() if k not in risk}
        for name, value in {**explain.custodian_figures(record), **measures}.items():
            add_figure(self.measures_form, name, value)
        if not measures:
            add_line(self.measures_form, "Utility such as the accuracy of a model trained on the release needs "
                                         "data the release was not made from: see the Simulate tab.")
        estimate = explain.noise_estimate_of(record, dataset)
        if estimate is not None:
            rows = int(len(dataset.frame))
            add_line(self.measures_form, "Estimated before the run (for you, not published): "
                     + " ".join(estimate.sentences(rows)), warn=estimate.warns(rows))
        for text in record.warnings:
            add_line(self.measures_form, "For you (not published): " + text, warn=True)
        for name, value in risk.items():
            add_figure(self.risk_form, name, value)
        if not risk:
            add_line(self.risk_form, "Group-size risk does not apply: " + (
                "the release is protected by ε-differential privacy — the noise hides each person, whatever "
                "the group sizes." if record.cost.is_dp else "the release has no groups of quasi-identifiers."))
        self._chart(record)

    def showEvent(self, event) -> None:  # noqa: N802 - Qt's name
        super().showEvent(event)
        if self._chart_pending is not None:
            self._chart(self._chart_pending)

    def _chart(self, record) -> None:
        """The release's chart, drawn when the tab is on screen: building it (pyqtgraph) and drawing it took
        ~20 ms, too much for the moment a finished release is handed to the window."""
        if not self.isVisible():
            self._chart_pending = record
            return
        self._chart_pending = None
        if self.histogram is None:
            return
        sizes, counts = record.class_sizes, explain.count_values(record)
        if sizes is not None and len(sizes):
            k = next((c.k for c in record.claims if isinstance(c, KAnonymity)), None)
            self.histogram.set_sizes(sizes, k=k)
            self.chart_note.setText("How large the groups of rows sharing the same published quasi-identifiers "
                                    "are: small groups carry the risk" + (f"; the dashed line is k = {k}." if k else
                                                                          "."))
        elif counts is not None:
            self.histogram.set_sizes(counts, kind="counts")
            self.chart_note.setText("How the released counts are spread: many small counts usually come from "
                                    "noise on combinations few or no people have.")
        else:
            self.histogram.setVisible(False)
            self.chart_note.setText("No chart for this kind of release: it has neither groups nor counts.")
            return
        self.histogram.setVisible(True)
