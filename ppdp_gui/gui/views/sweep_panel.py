"""The custodian's own simulation: a grid of one numeric parameter × repeats, drawn as utility against privacy,
with advice on which value to release with.

Runs engine.pipeline.sweep.simulate in a worker process, on what "Simulate on" names (engine/pipeline/proxy.py):
a DP copy of the table released by the Marginal synthesizer under a small ε charged to the ledger (the default:
the charge is shown before running, and the advice then reads only the copy), a public table of the same columns
(nothing charged), or the custodian's own table (nothing charged, but a value chosen from it is itself a release
that no ε accounts for). Nothing here may be published, which the panel says in its first line. The chart shows the simulation just run (or the one chosen);
the advice is engine/advice.py's rule on the figure shown, and "Apply this advice" only sets the parameter in the
session (the Mechanism step shows it): nothing is run, nothing is charged.
"""

from __future__ import annotations

import math

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDoubleSpinBox, QFileDialog, QGroupBox, QHBoxLayout, QLabel,
                               QLineEdit, QProgressBar, QPushButton, QSpinBox, QVBoxLayout, QWidget)

from ppdp_gui.engine.advice import advise, epsilon_cost, fmt_value, short_label
from ppdp_gui.engine.errors import ParameterError
from ppdp_gui.engine.mechanisms import registry
from ppdp_gui.engine.mechanisms.base import ParamSpec
from ppdp_gui.engine.pipeline.proxy import DP_COPY, OWN, PROXY_EPSILON, PUBLIC, cost_words, default_basis
from ppdp_gui.engine.pipeline.sweep import table_identity
from ppdp_gui.gui.plan_words import params_text
from ppdp_gui.gui.views.common import Later, escape
from ppdp_gui.gui.widgets.messages import show_error
from ppdp_gui.gui.workers.tasks import sweep_job

SIMULATION_NOTE = ("Simulation — not for publication. Each point is a fresh run on part of the table chosen "
                   "under 'Simulate on'; only a release made in the Run step and exported is real.")
BASIS_LABELS = ((DP_COPY, "a DP copy of your table (charged)"), (PUBLIC, "a public table of the same columns…"),
                (OWN, "your own table (advice not accounted)"))


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
    state_changed = Signal()  # running, progress or a new simulation: the step list follows at once

    def __init__(self, session, runner, parent=None):
        super().__init__(parent)
        self.session, self.runner = session, runner
        self._runs: dict[str, tuple[str, str, dict]] = {}  # label -> (mechanism, parameter, other parameters)
        self.advice = None
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
        self.basis_combo = QComboBox()
        self.basis_combo.setAccessibleName("Simulate on")
        for kind, text in BASIS_LABELS:
            self.basis_combo.addItem(text, kind)
        self.copy_epsilon = QDoubleSpinBox()
        self.copy_epsilon.setDecimals(3)
        self.copy_epsilon.setRange(0.01, 1.0)
        self.copy_epsilon.setSingleStep(0.05)
        self.copy_epsilon.setValue(float(PROXY_EPSILON))
        self.copy_epsilon.setAccessibleName("ε of the DP copy")
        self.copy_epsilon.setToolTip("The ε the synthetic copy is made with: charged once to this table's budget.")
        self.public_path = ""
        self.public_button = QPushButton("Choose public &table…")
        self.basis_text = QLabel("")
        self.basis_text.setObjectName("basis_text")
        self.basis_text.setWordWrap(True)
        self.run_button = QPushButton("Run &simulation")
        self.cancel_button = QPushButton("Cance&l")
        self.cancel_button.setEnabled(False)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setAccessibleName("Simulation progress")
        self.message = QLabel("")
        self._job = None
        self._to_chart: list = []  # (label, spec, result) of simulations the chart has not drawn yet
        self._show_later = Later(self, lambda: self._show_sweep(later=True))  # the advice of the one shown …
        self._draw_later = Later(self, self._draw_chart)  # … and then its chart
        # the chart (pyqtgraph) is built when the tab is first shown or a simulation needs it, not with the window
        self._chart = None
        self._chart_holder = QVBoxLayout()

        row = QHBoxLayout()
        for text, w in (("&Vary:", self.param_combo), ("V&alues:", self.grid_edit), ("Re&peats:", self.repeats)):
            label = QLabel(text)
            label.setBuddy(w)
            row.addWidget(label)
            row.addWidget(w, 2 if w is self.grid_edit else 0)
        row.addWidget(self.run_button)
        row.addWidget(self.cancel_button)
        basis_row = QHBoxLayout()
        basis_label = QLabel("Simulate &on:")
        basis_label.setBuddy(self.basis_combo)
        basis_row.addWidget(basis_label)
        basis_row.addWidget(self.basis_combo)
        basis_row.addWidget(QLabel("ε of the copy:"))
        basis_row.addWidget(self.copy_epsilon)
        basis_row.addWidget(self.public_button)
        basis_row.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addWidget(self.banner)
        layout.addLayout(basis_row)
        layout.addWidget(self.basis_text)
        layout.addLayout(row)
        progress_row = QHBoxLayout()
        progress_row.addWidget(self.progress, 1)
        progress_row.addWidget(self.message, 2)
        layout.addLayout(progress_row)
        self.shown_combo = QComboBox()
        self.shown_combo.setAccessibleName("Simulation shown")
        self.shown_combo.setToolTip("Which of your simulations the chart and the advice are about (the last one run "
                                    "is shown first).")
        self.compare_check = QCheckBox("Also draw earlier simulations of the same parameter")
        self.compare_check.setToolTip("Draw, beside the chosen simulation, the others that varied the same parameter.")
        shown_row = QHBoxLayout()
        shown_label = QLabel("Sh&own:")
        shown_label.setBuddy(self.shown_combo)
        shown_row.addWidget(shown_label)
        shown_row.addWidget(self.shown_combo, 1)
        shown_row.addWidget(self.compare_check)
        self.advice_box = QGroupBox("Advice from this simulation")
        self.advice_text = QLabel("")
        self.advice_text.setObjectName("advice_text")
        self.advice_text.setWordWrap(True)
        self.advice_text.setAccessibleName("Advice")
        self.apply_button = QPushButton("Appl&y this advice")
        self.apply_button.setObjectName("apply_advice")
        self.apply_button.setToolTip("Sets the advised value in the Mechanism step. Nothing is run and nothing is "
                                     "charged: you run the release yourself in the Run step.")
        self.applied = QLabel("")
        self.applied.setObjectName("advice_applied")
        self.applied.setWordWrap(True)
        advice_layout = QVBoxLayout(self.advice_box)
        advice_layout.addWidget(self.advice_text)
        apply_row = QHBoxLayout()
        apply_row.addWidget(self.apply_button)
        apply_row.addWidget(self.applied, 1)
        advice_layout.addLayout(apply_row)
        self.advice_box.setVisible(False)
        layout.addLayout(shown_row)
        layout.addLayout(self._chart_holder, 1)
        layout.addWidget(self.advice_box)

        self.param_combo.currentIndexChanged.connect(self._param_chosen)
        self.basis_combo.currentIndexChanged.connect(lambda _i: self._basis_changed())
        self.copy_epsilon.valueChanged.connect(lambda _v: self._basis_changed())
        self.public_button.clicked.connect(self.choose_public)
        self.run_button.clicked.connect(self.start)
        self.cancel_button.clicked.connect(self.cancel)
        session.mechanism_changed.connect(self._mechanism_changed)
        session.mechanism_changed.connect(self._show_advice)  # the parameter may now hold the advised value
        session.dataset_changed.connect(self._clear_if_new_table)
        session.sweeps_changed.connect(self._sweeps_changed)
        self.shown_combo.currentIndexChanged.connect(lambda _i: self._show_sweep())
        self.compare_check.toggled.connect(lambda _on: self._show_sweep())
        self.apply_button.clicked.connect(self.apply_advice)
        self._mechanism = None
        self._mechanism_changed()
        self._basis_changed()

    @property
    def chart(self):
        """The utility-against-privacy chart, built (and pyqtgraph imported) on first use."""
        if self._chart is None:
            try:
                from ppdp_gui.gui.charts import SweepChart
                self._chart = SweepChart()
            except ImportError:  # pragma: no cover - the chart widget is built alongside
                self._chart = QLabel("The chart widget is not available in this build.")
            if hasattr(self._chart, "seriesChanged"):
                self._chart.seriesChanged.connect(self._show_advice)  # the measure shown changed
            self._chart_holder.addWidget(self._chart)
        return self._chart

    def showEvent(self, event) -> None:  # noqa: N802 - Qt's name
        self.chart  # noqa: B018 - the empty chart appears with the tab
        super().showEvent(event)

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
        basis = default_basis(self._mechanism) if self._mechanism else OWN
        self.basis_combo.setCurrentIndex(self.basis_combo.findData(basis))

    def _clear_if_new_table(self) -> None:
        if not self.session.sweeps:
            if self._chart is not None and hasattr(self._chart, "clear"):
                self._chart.clear()
            self._sweeps_changed()

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
        on, ledger, public = self.basis, None, None
        if on == DP_COPY:
            try:
                ledger = str(s.ledger.path)  # the worker process opens the same ledger file and charges the copy
            except Exception as exc:  # noqa: BLE001 - no ledger: no DP copy (said, nothing run)
                show_error(self, exc, context="The DP copy is charged to the budget ledger, which cannot be opened.")
                return
        elif on == PUBLIC:
            if not self.public_path:
                self.choose_public()
                if not self.public_path:
                    return
            import dataclasses
            public = dataclasses.replace(s.recipe(), source=self.public_path, source_sha256=None)
        name, data, params, repeats = s.mechanism_name, s.dataset, dict(s.params), self.repeats.value()
        params.pop(spec.name, None)
        label = f"{len(s.sweeps) + 1}. {name}: {spec.label}"
        self._runs[label] = (name, spec.name, dict(params))
        self.progress.setValue(0)
        self.message.setText("Simulating…")
        self.run_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.applied.setText("")
        from ppdp_gui.engine.pipeline.release import test_seed  # tests only: a reproducible simulation
        self._job = self.runner.start_process(sweep_job, (registry.get(name), data, params, grid, repeats,
                                                          test_seed(), on, ledger, self.copy_epsilon.value(),
                                                          public),
                                              on_done=lambda result: self._done(label, spec, result),
                                              on_error=self._failed, on_progress=self._progress,
                                              on_cancelled=self._cancelled)
        self.state_changed.emit()

    def cancel(self) -> None:
        if self._job is not None:
            self._job.cancel()
            self.cancel_button.setEnabled(False)
            self.message.setText("Cancelling…")

    @property
    def running(self) -> bool:
        return self._job is not None

    def _progress(self, fraction: float, message: str) -> None:
        before = self.percent
        self.progress.setValue(int(round(1000 * max(0.0, min(1.0, fraction)))))
        if message:
            self.message.setText(message)
        if self.percent != before:
            self.state_changed.emit()

    @property
    def percent(self) -> int:
        return self.progress.value() // 10

    def _end(self) -> None:
        self._job = None
        self.cancel_button.setEnabled(False)
        self.run_button.setEnabled(self.param_combo.count() > 0)
        self.state_changed.emit()

    def _done(self, label: str, spec: ParamSpec, result) -> None:
        """The simulation is back: counted at once (step list, combo); the chart and the advice follow in a
        later turn of the event loop (`showing` until then), drawn once."""
        self.progress.setValue(1000)
        basis = getattr(result, "basis", None)
        cost = (f"the copy cost ε = {float(basis.epsilon):g}" if basis is not None and basis.epsilon
                else "not charged")
        self.message.setText(f"Done: {len(result.rows)} runs simulated ({cost}).")
        self._to_chart.append((label, spec, result))
        self._end()
        self.session.add_sweep(label, result)  # the chart and the advice show it (sweeps_changed)
        if basis is not None and basis.epsilon:  # the copy was charged: the budget left shown elsewhere changes
            self.session.releases_changed.emit()

    # -- the simulation shown, and its advice --------------------------------------------------------------------
    def _sweeps_changed(self) -> None:
        labels = [label for label, _r in self.session.sweeps]
        self.shown_combo.blockSignals(True)
        self.shown_combo.clear()
        self.shown_combo.addItems(labels)
        self.shown_combo.setCurrentIndex(len(labels) - 1)  # the one just run
        self.shown_combo.blockSignals(False)
        self._show_later()
        self.state_changed.emit()

    @property
    def showing(self) -> bool:
        """True while a simulation's chart and advice are still to be drawn (tests wait for it)."""
        return self._show_later.pending or self._draw_later.pending

    def _add_to_chart(self) -> None:
        """Simulations finished since the chart last drew: kept by the chart, drawn by the `focus` that follows."""
        pending, self._to_chart = self._to_chart, []
        if not hasattr(self.chart, "add_result"):
            return
        known = {label for label, _r in self.session.sweeps}
        for label, spec, result in pending:
            if label in known:  # not one of a table closed meanwhile
                self.chart.add_result(label, result, log_hints={spec.name: bool(spec.log_scale)},
                                      labels={spec.name: spec.label}, draw=False)

    def shown(self):
        """(label, SweepResult, ParamSpec) of the simulation shown, or None."""
        i = self.shown_combo.currentIndex()
        if not 0 <= i < len(self.session.sweeps):
            return None
        label, result = self.session.sweeps[i]
        mech = self._runs.get(label, (result.mechanism, None, {}))[0]
        name = self._runs.get(label, (None, None, {}))[1] or next(iter(result.param_names), None)
        try:
            spec = registry.get(mech).param(name)
        except Exception:  # noqa: BLE001 - a simulation of a mechanism no longer installed is still drawn
            spec = ParamSpec(name or "", name or "", "float")
        return label, result, spec

    def _show_sweep(self, later: bool = False) -> None:
        """Draw the simulation chosen and show its advice. `later` (a simulation just finished, the table
        changed): the advice now and the chart in a later turn of the event loop, each in a turn of its own; the
        advice comes first because it changes the panel's layout, which would make a chart already drawn paint
        again."""
        self._show_later.pending = False
        self._add_to_chart()
        shown = self.shown()
        if shown is None:
            self.advice = None
            self.advice_box.setVisible(False)
            return
        label, result, spec = shown
        if hasattr(self.chart, "focus"):
            names = [label]
            if self.compare_check.isChecked():
                names += [lab for lab, r in self.session.sweeps if lab != label and spec.name in r.param_names]
            if later:
                self.chart.choose(names, spec.name)  # the measure the advice is about, not drawn yet
                self._show_advice()
                self._draw_later()
                return
            self.chart.focus(names, spec.name)  # its seriesChanged shows the advice
        if not hasattr(self.chart, "seriesChanged"):
            self._show_advice()

    def _draw_chart(self) -> None:
        """The chart of the simulation chosen, a turn after its advice (see `_show_sweep`)."""
        self.chart.blockSignals(True)  # its seriesChanged would work the advice out again, for the same measure
        try:
            self.chart.draw()
        finally:
            self.chart.blockSignals(False)

    def _show_advice(self) -> None:
        shown = self.shown()
        if shown is None:
            return
        label, result, spec = shown
        measure = self.chart._measure() if hasattr(self.chart, "_measure") else None
        mech, _name, base = self._runs.get(label, (result.mechanism, spec.name, {}))
        budget_left, cost = self._budget(mech, spec.name, base)
        self.advice = advise(result, spec.name, measure=measure, more_private=spec.more_private,
                             label=short_label(spec), budget_left=budget_left, cost=cost)
        self.advice_box.setVisible(self.advice is not None)
        if self.advice is None:
            return
        a = self.advice
        head = (f"<b>Advice: {escape(short_label(spec))} = {escape(fmt_value(a.value))}.</b> " if a.applicable
                else "<b>No value advised.</b> " if a.rule in ("guessing", "budget")
                else "<b>No single value advised.</b> ")
        lines = [head + escape(a.reason)] + [escape(d) for d in a.details]
        basis = getattr(result, "basis", None)
        if basis is not None:
            colour = "#555" if basis.accounted else "#a33"
            lines.append(f"<span style='color:{colour}'>{escape(basis.words)}</span>")
        if base:
            lines.append(f"<span style='color:#555'>Simulated with {escape(params_text(base, registry.get(mech).params))}"
                         f" on {result.n_train:,} rows.</span>")
        self.advice_text.setText("<br>".join(lines))
        current = self.session.params.get(spec.name) if self.session.mechanism_name == mech else None
        same_mechanism = self.session.mechanism_name == mech
        same_table = self.session.dataset is not None and a.applies_to(table_identity(self.session.dataset))
        # nothing to follow (no better than guessing, beyond the budget, no level-off): no button at all
        self.apply_button.setVisible(a.applicable)
        self.apply_button.setEnabled(a.applicable and same_mechanism and same_table and current != a.value)
        self.apply_button.setToolTip(
            "This simulation was run on another table; run it again on the table open now." if not same_table
            else "Sets the advised value in the Mechanism step. Nothing is run and nothing is charged."
            if same_mechanism else f"This simulation is of {mech}; choose {mech} in the Mechanism step to apply it.")
        if a.applicable and same_mechanism and current != a.value:
            self.applied.setText(f"The Mechanism step has {short_label(spec)} = {fmt_value(current)} now.")
        elif not (a.applicable and same_mechanism and current == a.value):
            self.applied.setText("")
        elif not self.applied.text() or self.applied.text().startswith("The Mechanism step has"):
            self.applied.setText(f"{short_label(spec)} = {fmt_value(a.value)} is already set in the Mechanism step.")

    # -- what the simulation reads, and what it costs ------------------------------------------------------------
    @property
    def basis(self) -> str:
        return self.basis_combo.currentData() or DP_COPY

    def _basis_changed(self) -> None:
        """Say before running what the simulation will read and what that costs (the DP copy's ε is charged)."""
        on = self.basis
        self.copy_epsilon.setVisible(on == DP_COPY)
        self.public_button.setVisible(on == PUBLIC)
        words = cost_words(on, self.copy_epsilon.value())
        if on == PUBLIC:
            words += f" Table: {self.public_path}." if self.public_path else " Choose the table first."
        self.basis_text.setText(words)
        self.basis_text.setStyleSheet("" if on != OWN else "color: #a33;")

    def choose_public(self) -> None:
        path, _filter = QFileDialog.getOpenFileName(self, "Public table with the same columns", "",
                                                    "Tables (*.csv *.tsv *.txt *.gz *.xlsx *.parquet);;All files (*)")
        if path:
            self.public_path = path
            self._basis_changed()

    def _budget(self, mech: str, parameter: str, base: dict):
        """(ε left for this table, cost of a value): what the advice may not exceed. The budget is the Run step's
        (the plan of the current choice, for this table); the cost is priced with the parameters the Mechanism
        step has now when the simulation is of that mechanism (applying sets only the swept one)."""
        if self.session.dataset is None or self.session.mechanism_name != mech:
            return None, None
        try:
            mechanism = registry.create(mech)
            plan = self.session.preview()
        except Exception:  # noqa: BLE001 - no plan: the advice then knows no budget (the Run step says why)
            return None, None
        budget = getattr(plan, "budget", None)
        remaining = getattr(budget, "remaining", None)
        params = {k: v for k, v in {**base, **self.session.params}.items() if k != parameter}
        return (None if remaining is None else float(remaining)), epsilon_cost(mechanism, params, parameter)

    def apply_advice(self) -> None:
        """Set the advised value in the session (the Mechanism step shows it). Nothing is run or charged; advice
        worked out on another table is refused (`Advice.apply`)."""
        shown = self.shown()
        if shown is None or self.advice is None or not self.advice.applicable or self.session.dataset is None:
            return
        label, _result, spec = shown
        mech = self._runs.get(label, (_result.mechanism,))[0]
        if self.session.mechanism_name != mech:
            return
        try:
            params = self.advice.apply(self.session.params, table_identity(self.session.dataset))
        except ParameterError as exc:
            self.applied.setText(str(exc))
            self.apply_button.setEnabled(False)
            return
        value = spec.coerce(params[spec.name])
        self.applied.setText(f"{short_label(spec)} = {fmt_value(value)} is now set in the Mechanism step. Nothing "
                             "was run and nothing was charged: run the release in the Run step when you are ready.")
        self.session.set_params({**params, spec.name: value})

    def _failed(self, exc: BaseException, details: str) -> None:
        self._end()
        self.message.setText("The simulation failed.")
        show_error(self, exc, details, context="The simulation did not finish.")

    def _cancelled(self) -> None:
        self._end()
        self.progress.setValue(0)
        self.message.setText("Simulation cancelled.")
