"""The custodian's own simulation: a grid of one numeric parameter × repeats, drawn as utility against privacy.

Runs engine.pipeline.sweep.run_sweep in a worker process; nothing is charged to the ledger and nothing here may be
published, which the panel says in its first line.
"""

from __future__ import annotations

import math

from PySide6.QtWidgets import (QComboBox, QHBoxLayout, QLabel, QLineEdit, QProgressBar, QPushButton, QSpinBox,
                               QVBoxLayout, QWidget)

from ppdp_gui.engine.errors import ParameterError
from ppdp_gui.engine.mechanisms import registry
from ppdp_gui.engine.mechanisms.base import ParamSpec
from ppdp_gui.gui.widgets.messages import show_error
from ppdp_gui.gui.workers.tasks import sweep_job

SIMULATION_NOTE = ("Simulation on your own data — not charged to the budget, not for publication. "
                   "Each point is a fresh run on part of your table; only a release made in the Run step and "
                   "exported is real.")


def _nice(v: float) -> float:
    return float(f"{v:.2g}")


def default_grid(spec: ParamSpec, current=None) -> list:
    """A few values spanning the parameter's range: 1-3-10 steps on a log scale, else five even steps."""
    lo, hi = spec.low, spec.high
    if lo is None or hi is None or hi <= lo:
        base = float(current if current not in (None, 0) else 1)
        values = [base / 4, base / 2, base, base * 2, base * 4]
    elif lo > 0 and (spec.log_scale or hi / lo >= 50):
        values = []
        for e in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1):
            for m in (1, 3):
                v = m * 10.0 ** e
                if lo <= v <= hi:
                    values.append(v)
        while len(values) > 7:
            values = values[::2]
    else:
        values = [lo + (hi - lo) * i / 4 for i in range(5)]
    if spec.kind == "int":
        values = [int(round(v)) for v in values]
        if spec.low is not None:
            values = [max(int(spec.low), v) for v in values]
    else:
        values = [_nice(v) for v in values]
    return list(dict.fromkeys(values))


def parse_grid(spec: ParamSpec, text: str) -> list:
    """'0.1, 1, 10' -> coerced values; ParameterError names the bad entry."""
    parts = [p.strip() for p in text.replace(";", ",").split(",") if p.strip()]
    if not parts:
        raise ParameterError(f"{spec.label}: give at least one value to try")
    return list(dict.fromkeys(spec.coerce(p) for p in parts))


class SweepPanel(QWidget):
    def __init__(self, session, runner, parent=None):
        super().__init__(parent)
        self.session, self.runner = session, runner
        self.banner = QLabel(SIMULATION_NOTE)
        self.banner.setWordWrap(True)
        self.banner.setObjectName("simulation_banner")
        self.banner.setStyleSheet("background: #fff4d6; color: #5a4100; border: 1px solid #e0c46c; "
                                  "padding: 6px; font-weight: bold;")
        self.param_combo = QComboBox()
        self.param_combo.setAccessibleName("Parameter to vary")
        self.grid_edit = QLineEdit()
        self.grid_edit.setAccessibleName("Values to try")
        self.grid_edit.setToolTip("Values of the parameter to try, separated by commas.")
        self.repeats = QSpinBox()
        self.repeats.setRange(1, 50)
        self.repeats.setValue(3)
        self.repeats.setAccessibleName("Repeats per value")
        self.repeats.setToolTip("Each value is run this many times to show the spread of the results.")
        self.run_button = QPushButton("Run &simulation")
        self.cancel_button = QPushButton("Cance&l")
        self.cancel_button.setEnabled(False)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setAccessibleName("Simulation progress")
        self.message = QLabel("")
        self._job = None
        try:
            from ppdp_gui.gui.charts import SweepChart
            self.chart = SweepChart()
        except ImportError:  # pragma: no cover - the chart widget is built alongside
            self.chart = QLabel("The chart widget is not available in this build.")

        row = QHBoxLayout()
        for text, w in (("&Vary:", self.param_combo), ("V&alues:", self.grid_edit), ("Re&peats:", self.repeats)):
            label = QLabel(text)
            label.setBuddy(w)
            row.addWidget(label)
            row.addWidget(w, 2 if w is self.grid_edit else 0)
        row.addWidget(self.run_button)
        row.addWidget(self.cancel_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.banner)
        layout.addLayout(row)
        progress_row = QHBoxLayout()
        progress_row.addWidget(self.progress, 1)
        progress_row.addWidget(self.message, 2)
        layout.addLayout(progress_row)
        layout.addWidget(self.chart, 1)

        self.param_combo.currentIndexChanged.connect(self._param_chosen)
        self.run_button.clicked.connect(self.start)
        self.cancel_button.clicked.connect(self.cancel)
        session.mechanism_changed.connect(self._mechanism_changed)
        session.dataset_changed.connect(self._clear_if_new_table)
        self._mechanism = None
        self._mechanism_changed()

    # -- parameter and grid -----------------------------------------------------------------------------------
    def numeric_specs(self) -> list[ParamSpec]:
        if not self.session.mechanism_name:
            return []
        return [p for p in registry.get(self.session.mechanism_name).params if p.kind in ("float", "int")]

    def _mechanism_changed(self) -> None:
        if self.session.mechanism_name == self._mechanism:
            return
        self._mechanism = self.session.mechanism_name
        self.param_combo.blockSignals(True)
        self.param_combo.clear()
        for spec in self.numeric_specs():
            self.param_combo.addItem(spec.label, spec.name)
        self.param_combo.blockSignals(False)
        self._param_chosen()
        self.run_button.setEnabled(self.param_combo.count() > 0 and self._job is None)

    def _clear_if_new_table(self) -> None:
        if not self.session.sweeps and hasattr(self.chart, "clear"):
            self.chart.clear()

    def spec(self) -> ParamSpec | None:
        name = self.param_combo.currentData()
        for spec in self.numeric_specs():
            if spec.name == name:
                return spec
        return None

    def _param_chosen(self, *_args) -> None:
        spec = self.spec()
        if spec is not None:
            grid = default_grid(spec, self.session.params.get(spec.name))
            self.grid_edit.setText(", ".join(f"{v:g}" for v in grid))
            self.grid_edit.setToolTip(f"Values of {spec.label} to try, separated by commas. {spec.help}")

    # -- running ------------------------------------------------------------------------------------------------
    def start(self) -> None:
        s, spec = self.session, self.spec()
        if self._job is not None or s.dataset is None or spec is None:
            return
        try:
            grid = {spec.name: parse_grid(spec, self.grid_edit.text())}
        except ParameterError as exc:
            show_error(self, exc)
            return
        name, data, params, repeats = s.mechanism_name, s.dataset, dict(s.params), self.repeats.value()
        params.pop(spec.name, None)
        label = f"{name}: {spec.label} ({len(s.sweeps) + 1})"
        self.progress.setValue(0)
        self.message.setText("Simulating…")
        self.run_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self._job = self.runner.start_process(sweep_job, (registry.get(name), data, params, grid, repeats),
                                              on_done=lambda result: self._done(label, spec, result),
                                              on_error=self._failed, on_progress=self._progress,
                                              on_cancelled=self._cancelled)

    def cancel(self) -> None:
        if self._job is not None:
            self._job.cancel()
            self.cancel_button.setEnabled(False)
            self.message.setText("Cancelling…")

    @property
    def running(self) -> bool:
        return self._job is not None

    def _progress(self, fraction: float, message: str) -> None:
        self.progress.setValue(int(round(1000 * max(0.0, min(1.0, fraction)))))
        if message:
            self.message.setText(message)

    def _end(self) -> None:
        self._job = None
        self.cancel_button.setEnabled(False)
        self.run_button.setEnabled(self.param_combo.count() > 0)

    def _done(self, label: str, spec: ParamSpec, result) -> None:
        self._end()
        self.progress.setValue(1000)
        self.message.setText(f"Done: {len(result.rows)} runs simulated (not charged).")
        self.session.add_sweep(label, result)
        if hasattr(self.chart, "add_result"):
            self.chart.add_result(label, result, log_hints={spec.name: bool(spec.log_scale)},
                                  labels={spec.name: spec.label})

    def _failed(self, exc: BaseException, details: str) -> None:
        self._end()
        self.message.setText("The simulation failed.")
        show_error(self, exc, details, context="The simulation did not finish.")

    def _cancelled(self) -> None:
        self._end()
        self.progress.setValue(0)
        self.message.setText("Simulation cancelled.")
