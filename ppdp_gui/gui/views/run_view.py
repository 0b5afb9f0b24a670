"""Run step: what will happen, then the release in a worker process with progress and cancel.

For a DP mechanism the pipeline reserves ε in the ledger before it computes anything; the view says so on the
button and beside it, because cancelling cannot give the budget back.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (QCheckBox, QGridLayout, QGroupBox, QHBoxLayout, QLabel, QListWidget, QProgressBar,
                               QPushButton, QSpinBox, QVBoxLayout)

from ppdp_gui.engine.data.linkable import ADVICE, known_columns
from ppdp_gui.engine.data.roles import person_by_name
from ppdp_gui.engine.data.schema import Role
from ppdp_gui.engine.errors import DataError, ParameterError, PpdpError, TaxonomyError
from ppdp_gui.engine.mechanisms import registry
from ppdp_gui.engine.taxonomy import registry as builders
from ppdp_gui.gui.views.common import BLOCKED, DONE, TODO, WARN, Later, StepView, escape, heading, note, soon
from ppdp_gui.engine.explain import plan_sentences
from ppdp_gui.engine.claims import epsilon_text
from ppdp_gui.gui.plan_words import cost_tooltip, cost_words, params_text
from ppdp_gui.gui.widgets.messages import show_error
from ppdp_gui.gui.workers.tasks import release_job


class RunView(StepView):
    title = "Run"
    run_finished = Signal()

    def __init__(self, session, runner, parent=None):
        super().__init__(session, runner, parent)
        self.summary = note(object_name="run_summary")
        self.summary.setAccessibleName("What this run will do")
        self.reserve_note = note("A differentially private run reserves its ε in the budget ledger <b>before</b> "
                                 "anything is computed. The budget is never given back, also not when you cancel "
                                 "or the run fails.")
        self.run_button = QPushButton("&Run")
        self.run_button.setObjectName("run_button")
        self.cancel_button = QPushButton("&Cancel")
        self.cancel_button.setEnabled(False)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setAccessibleName("Run progress")
        self.progress.setFormat("%p %")
        self.message = QLabel("")
        self.message.setObjectName("run_message")
        self.log = QListWidget()
        self.log.setAccessibleName("Run log")
        self._job = None
        self._dp = False
        self._failed_text = ""
        self._refused_output = ""  # why the file named in the Export step may not be written (the last Run press)
        self._table = None  # (path, sha256) of the table the log is about
        # columns the plan finds unique or nearly unique per row and the release would publish as they are
        self.identifying_box = QGroupBox("Columns that could identify patients")
        self.identifying_box.setObjectName("identifying_box")
        self.identifying_box.setStyleSheet("QGroupBox#identifying_box { color: #b00020; font-weight: bold; }")
        self.identifying_grid = QGridLayout(self.identifying_box)
        self.identifying_box.setVisible(False)
        self._identifying_shown: tuple = ()
        self.leave_out_buttons: dict[str, QPushButton] = {}
        self.as_is_checks: dict[str, QCheckBox] = {}
        self.person_buttons: dict[str, QPushButton] = {}  # "mark it Person", for a column named like a patient number
        # columns someone else can know (data/linkable.py) that the release would publish unchanged
        self.linkable_box = QGroupBox("Columns someone else could know, published unchanged")
        self.linkable_box.setObjectName("linkable_box")
        self.linkable_box.setStyleSheet("QGroupBox#linkable_box { color: #a33a00; font-weight: bold; }")
        self.linkable_grid = QGridLayout(self.linkable_box)
        self.linkable_box.setVisible(False)
        self._linkable_shown: tuple = ()
        self.make_qi_buttons: dict[str, QPushButton] = {}
        self.linkable_leave_buttons: dict[str, QPushButton] = {}
        # quasi-identifiers that would show '*' in nearly every row although a builder fits them — exact dates,
        # ZIP codes (data/tree_offers.py): one click builds the tree the Taxonomies step would (from_spec)
        self.trees_box = QGroupBox("Columns that would show '*' in nearly every row")
        self.trees_box.setObjectName("trees_box")
        self.trees_box.setStyleSheet("QGroupBox#trees_box { color: #a33a00; font-weight: bold; }")
        self.trees_grid = QGridLayout(self.trees_box)
        self.trees_box.setVisible(False)
        self._trees_shown: tuple = ()
        self.tree_buttons: dict[str, QPushButton] = {}
        # how much of a table of noisy counts will be noise (Mechanism.noise_estimate), for the custodian only
        self.noise_box = QGroupBox("How much of the table will be noise (for you only, never published)")
        self.noise_box.setObjectName("noise_box")
        self.noise_text = note("", object_name="noise_text")
        self.noise_text.setAccessibleName("How much of the table will be noise")
        self.noise_warning = note("", warn=True, object_name="noise_warning")
        self.records_spin = QSpinBox()
        self.records_spin.setRange(1, 2_000_000_000)
        self.records_spin.setGroupSeparatorShown(True)
        self.records_spin.setAccessibleName("Records you expect the table to have")
        self.records_spin.setToolTip("The number of records (people or stays) the table stands for, as you know "
                                     "it. It only sizes this estimate; it is not used by the release.")
        records_row = QHBoxLayout()
        records_label = QLabel("A table of about")
        records_row.addWidget(records_label)
        records_row.addWidget(self.records_spin)
        records_row.addWidget(QLabel("records (the size you state; your table's rows to begin with)"), 1)
        nb = QVBoxLayout(self.noise_box)
        nb.addLayout(records_row)
        nb.addWidget(self.noise_text)
        nb.addWidget(self.noise_warning)
        self.noise_box.setVisible(False)
        self.noise_estimate = None
        self._records_for = None  # the table the records box was filled in for

        buttons = QHBoxLayout()
        buttons.addWidget(self.run_button)
        buttons.addWidget(self.cancel_button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addWidget(heading("4. Run"))
        layout.addWidget(self.summary)
        layout.addWidget(self.identifying_box)
        layout.addWidget(self.linkable_box)
        layout.addWidget(self.trees_box)
        layout.addWidget(self.noise_box)
        layout.addWidget(self.reserve_note)
        layout.addLayout(buttons)
        layout.addWidget(self.progress)
        layout.addWidget(self.message)
        layout.addWidget(QLabel("Log:"))
        layout.addWidget(self.log, 1)

        self.run_button.clicked.connect(self.start)
        self.cancel_button.clicked.connect(self.cancel)
        self.records_spin.valueChanged.connect(lambda _v: self._show_noise_text())
        # the plan is worked out again once per turn of the event loop, however many changes one slot made
        self.refresh_later = Later(self, self.refresh)
        session.mechanism_changed.connect(self.refresh_later)
        session.dataset_changed.connect(self.refresh_later)
        session.releases_changed.connect(self.refresh_later)
        self.refresh()

    @property
    def running(self) -> bool:
        return self._job is not None

    def refresh(self) -> None:
        self.refresh_later.pending = False
        if self.running:
            return
        s = self.session
        table = (s.dataset.source.path, s.dataset.source.sha256) if s.dataset is not None else None
        if table != self._table:  # another table: the last run's progress and log were about the previous one
            self._table = table
            self.log.clear()
            self.progress.setValue(0)
            self.message.setText("")
            self._failed_text = self._refused_output = ""
        if s.dataset is None or not s.mechanism_name:
            self.summary.setText("Load a table and choose a mechanism first.")
            self._show_identifying(None)
            self._show_linkable(None)
            self._show_trees()
            self._show_noise(None)
            self.run_button.setEnabled(False)
            self.run_button.setText("&Run")
        else:
            p = s.preview()
            specs = registry.get(s.mechanism_name).params
            lines = [f"<b>{s.mechanism_name}</b> on {s.dataset.n_rows:,} rows.",
                     f"Parameters: {escape(params_text(p.params or s.params, specs, s.dataset))}."]
            if p.cost is not None:
                lines.append(f"<b>Privacy:</b> {escape(cost_words(p.cost, s.dataset.person_column))}.")
            contents = plan_sentences(p) if not p.errors else []
            if contents:  # keyed pseudonyms and date shifts chosen in the Data step ("Released as")
                from ppdp_gui.engine.governance.treatments import sentences
                contents = contents + sentences(s.treatments())
            if contents:
                lines.append("<b>This release will contain:</b><ul style='margin-top:0'>"
                             + "".join(f"<li>{escape(t)}</li>" for t in contents) + "</ul>")
            if p.caveats:
                lines.append("<span style='color:#b00020'><b>Not ε-differentially private:</b> "
                             + "; ".join(p.caveats) + " (you allowed this).</span>")
            if p.budget_text():
                lines.append(p.budget_text())
            identifying = set(getattr(p, "identifying_columns", ()))
            for problem in p.errors:
                if problem.column not in identifying:  # those are listed in the box below, with what to do
                    lines.append(f"<span style='color:#b00020'>Problem: {problem.message}</span>")
            self.summary.setText("<br>".join(lines).replace("</ul><br>", "</ul>"))
            self._show_identifying(p)
            self._show_linkable(p)
            self._show_trees()
            self._show_noise(p)
            self.summary.setToolTip(cost_tooltip(p.cost))
            ok = not p.errors and not p.over_budget
            self.run_button.setEnabled(ok)
            dp = bool(p.cost and p.cost.is_dp)
            self.run_button.setText(f"&Run and spend ε = {epsilon_text(p.cost.epsilon)}" if dp else "&Run")
            self.reserve_note.setVisible(dp)
        self.state_changed.emit()

    def _show_identifying(self, plan) -> None:
        """One line per nearly unique column the release would publish: the plan's message, a button to leave it
        out (role: identifier) and a "publish as is" tick (the plan's `publish_as_is`). Run stays disabled while
        one is neither left out nor ticked, because the plan reports it as an error."""
        columns = tuple(getattr(plan, "identifying_columns", ()) or ()) if plan is not None else ()
        messages = {pr.column: pr for pr in plan.problems if pr.column in columns} if plan is not None else {}
        shown = tuple((c, messages[c].level, messages[c].message) for c in columns if c in messages)
        if shown == self._identifying_shown:
            return
        self._identifying_shown = shown
        while self.identifying_grid.count():
            item = self.identifying_grid.takeAt(0)
            if item.widget() is not None:
                item.widget().deleteLater()
        self.leave_out_buttons, self.as_is_checks, self.person_buttons = {}, {}, {}
        self.identifying_box.setVisible(bool(shown))
        if not shown:
            return
        unresolved = [c for c, level, _m in shown if level == "error"]
        intro = QLabel("Each of these columns has a different value in (nearly) every row and would be published "
                       "as it is. Leave it out, or tick “Publish as is” if you are sure it cannot point to a "
                       "person." + (" You cannot run until each one is settled." if unresolved else ""))
        intro.setWordWrap(True)
        intro.setStyleSheet("font-weight: normal;")
        self.identifying_grid.addWidget(intro, 0, 0, 1, 4)
        for row, (column, level, message) in enumerate(shown, 1):
            text = QLabel(escape(message[:1].upper() + message[1:]))
            text.setWordWrap(True)
            text.setStyleSheet("font-weight: normal;" + (" color: #b00020;" if level == "error" else " color: #555;"))
            text.setAccessibleName(f"Why {column} could identify patients")
            leave = QPushButton(f"Leave {column} out")
            leave.setToolTip(f"Set the role of {column} to identifier: it is then not in the release.")
            leave.clicked.connect(lambda _c=False, n=column: self.session.set_role(n, Role.IDENTIFIER))
            check = QCheckBox("Publish as is")
            check.setChecked(level != "error")
            check.setToolTip(f"You confirm that {column} may be published unchanged. The custodian record keeps "
                             "your confirmation.")
            check.setAccessibleName(f"Publish {column} as is")
            check.toggled.connect(lambda on, n=column: self.session.set_publish_as_is(n, on))
            self.identifying_grid.addWidget(text, row, 0)
            self.identifying_grid.addWidget(leave, row, 1)
            self.identifying_grid.addWidget(check, row, 2)
            self.leave_out_buttons[column], self.as_is_checks[column] = leave, check
            who = person_by_name(column)
            if who and self.session.dataset is not None and self.session.dataset.person_column is None:
                # a patient number repeated over visits is better marked Person than only left out: then k counts
                # patients and ε is per patient (the Data step's role); its name alone says so
                person = QPushButton(f"{column} says whose row it is: mark it Person")
                person.setToolTip(f"Set the role of {column} to Person: it is left out of the release, and every "
                                  f"guarantee then counts each {who} once, however many rows they have.")
                person.clicked.connect(lambda _c=False, n=column: self.session.set_role(n, Role.PERSON))
                self.identifying_grid.addWidget(person, row, 3)
                self.person_buttons[column] = person
        self.identifying_grid.setColumnStretch(0, 1)

    def _show_linkable(self, plan) -> None:
        """One line per column someone else can know (diagnosis codes, specialty, payer, many values) that the
        release would publish unchanged (the plan's `linkable`, data/linkable.py), with the buttons to press: make
        it a quasi-identifier (it is then generalised) or leave it out. A warning: Run stays enabled."""
        found = tuple((f.column, f.reason) for f in getattr(plan, "linkable", ()) or ()) if plan is not None else ()
        if found == self._linkable_shown:
            return
        self._linkable_shown = found
        while self.linkable_grid.count():
            item = self.linkable_grid.takeAt(0)
            if item.widget() is not None:
                item.widget().deleteLater()
        self.make_qi_buttons, self.linkable_leave_buttons = {}, {}
        self.linkable_box.setVisible(bool(found))
        if not found:
            return
        intro = QLabel("An insurer, a neighbour or a colleague may know these values of a patient; published "
                       f"unchanged beside {escape(known_columns(self.session.dataset))} they can single the "
                       "patient out. Make each a quasi-identifier (it is then generalised; it may need a taxonomy) "
                       "or leave it out.")
        intro.setWordWrap(True)
        intro.setStyleSheet("font-weight: normal;")
        self.linkable_grid.addWidget(intro, 0, 0, 1, 3)
        for row, (column, reason) in enumerate(found, 1):
            text = QLabel(escape(reason.removesuffix(ADVICE)))  # the advice is said once, above the list
            text.setWordWrap(True)
            text.setStyleSheet("font-weight: normal; color: #555;")
            text.setAccessibleName(f"Why {column} could be linked to a patient")
            make = QPushButton(f"Make {column} a quasi-identifier")
            make.setToolTip(f"Set the role of {column} to quasi-identifier: the release then generalises it.")
            make.clicked.connect(lambda _c=False, n=column: self.session.set_role(n, Role.QUASI_IDENTIFIER))
            leave = QPushButton(f"Leave {column} out")
            leave.setToolTip(f"Set the role of {column} to identifier: it is then not in the release.")
            leave.clicked.connect(lambda _c=False, n=column: self.session.set_role(n, Role.IDENTIFIER))
            self.linkable_grid.addWidget(text, row, 0)
            self.linkable_grid.addWidget(make, row, 1)
            self.linkable_grid.addWidget(leave, row, 2)
            self.make_qi_buttons[column], self.linkable_leave_buttons[column] = make, leave
        self.linkable_grid.setColumnStretch(0, 1)

    def _show_trees(self) -> None:
        """One line per quasi-identifier without a tree that a builder fits (exact dates: Dates; a ZIP code:
        masking), with its button: without one each value is kept or replaced by '*' (two admission dates gave
        '*' in nearly every row). A suggestion: Run stays enabled."""
        from ppdp_gui.engine.data.tree_offers import tree_offers
        ds = self.session.dataset
        found = tuple(tree_offers(ds)) if ds is not None and self.session.mechanism_name else ()
        if found == self._trees_shown:
            return
        self._trees_shown = found
        while self.trees_grid.count():
            item = self.trees_grid.takeAt(0)
            if item.widget() is not None:
                item.widget().deleteLater()
        self.tree_buttons = {}
        self.trees_box.setVisible(bool(found))
        for row, offer in enumerate(found):
            text = QLabel(escape(offer.reason))
            text.setWordWrap(True)
            text.setStyleSheet("font-weight: normal; color: #555;")
            build = QPushButton(offer.button)
            label = builders.builder(offer.builder).label
            build.setToolTip(f"Build “{label}” for {offer.column}, as Taxonomies → Build a tree does; edit or "
                             "remove it in the Taxonomies step.")
            build.clicked.connect(lambda _c=False, o=offer: self.build_tree(o.column, o.builder))
            self.trees_grid.addWidget(text, row, 0)
            self.trees_grid.addWidget(build, row, 1)
            self.tree_buttons[offer.column] = build
        self.trees_grid.setColumnStretch(0, 1)

    def build_tree(self, column: str, builder: str) -> None:
        """`builder`'s tree for `column` with its defaults, by the engine's one builder call (from_spec), as the
        Taxonomies step and `ppdp run --build-taxonomy COLUMN=BUILDER` build it."""
        from ppdp_gui.engine.taxonomy.from_spec import build_taxonomy
        ds = self.session.dataset
        if ds is None:
            return
        try:
            tax = build_taxonomy(column, ds.frame[column], builder)
        except PpdpError as exc:
            show_error(self, exc, context=f"Could not build the {builders.builder(builder).label} tree for "
                                          f"{column}.")
            return
        self.session.set_taxonomy(column, tax)

    def _show_noise(self, plan) -> None:
        """The mechanism's estimate of how much of its table of counts will be noise (public quantities only;
        `Mechanism.noise_estimate`), for a table of the size the custodian states."""
        estimate = None
        if plan is not None and plan.mechanism is not None and plan.dataset is not None and plan.params:
            try:
                estimate = plan.mechanism.noise_estimate(plan.dataset, plan.params)
            except Exception:  # noqa: BLE001 - no estimate rather than no Run step; the plan shows the problem
                estimate = None
        self.noise_estimate = estimate
        ds = self.session.dataset
        table = None if ds is None else (ds.source.path, ds.source.sha256, ds.n_rows)
        if table != self._records_for and ds is not None:  # another table: its rows to begin with
            self._records_for = table
            self.records_spin.blockSignals(True)
            self.records_spin.setValue(max(1, ds.n_rows))
            self.records_spin.blockSignals(False)
        self.noise_box.setVisible(estimate is not None)
        self._show_noise_text()

    @property
    def stated_records(self) -> int:
        return int(self.records_spin.value())

    def _show_noise_text(self) -> None:
        estimate = self.noise_estimate
        if estimate is None:
            self.noise_text.setText("")
            self.noise_warning.setVisible(False)
            return
        records = self.stated_records
        self.noise_text.setText("<br>".join(escape(t) for t in estimate.sentences(records)))
        warning = estimate.warning(records)
        self.noise_warning.setText(f"<b>Mostly noise.</b> {escape(warning)}" if warning else "")
        self.noise_warning.setVisible(bool(warning))

    def start(self) -> None:
        s = self.session
        if self.running or s.dataset is None or not s.mechanism_name:
            return
        s.invalidate_preview()  # the plan again, now: a problem found before the run is listed here, not run into
        planned = s.preview()  # the plan shown is the plan run: the worker gets this one, never plans again
        if planned.errors:
            self.refresh()
            return
        refused = self._output_refused()
        self._refused_output = refused
        if refused:  # where the release will be written is checked before anything is charged (as `ppdp run`)
            self.message.setText(f"Not run: {refused}")
            self.log.addItem(f"Problem found before anything was released: {refused}")
            self.state_changed.emit()
            return
        name, params = s.mechanism_name, dict(planned.params)
        try:
            ledger = str(s.ledger.path)  # the worker process opens the same ledger file
        except (ImportError, OSError, PpdpError, AttributeError):
            ledger = None  # the engine's guard refuses a DP release without a ledger
        self._dp = planned.is_dp
        self._failed_text = ""
        self.log.clear()
        self.log.addItem(f"Started {name}: {params_text(params, registry.get(name).params)}")
        self.progress.setValue(0)
        self.message.setText("Starting…")
        self.run_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        from ppdp_gui.engine.pipeline.release import test_seed
        self._job = self.runner.start_process(release_job, (planned, ledger, test_seed(), s.preview_treated),
                                              on_done=self._done, on_error=self._failed,
                                              on_progress=self._progress, on_cancelled=self._cancelled)
        self.state_changed.emit()

    def _output_refused(self) -> str:
        """Why the file named for this release in the Export step (File) may not be written ('' when it may, or
        when none is named yet): the engine's one output guard (data/outputs.py), run before anything is charged —
        never the source, a hierarchy read, the ledger or its key."""
        s = self.session
        target = s.output_path
        if not target:
            return ""
        from pathlib import Path

        from ppdp_gui.engine.pipeline.export import check_outputs
        try:
            try:
                ledger = s.ledger
            except (PpdpError, OSError):  # the plan says so; the default ledger's files are refused all the same
                ledger = None
            check_outputs(Path(target).expanduser(), source=s.dataset.source, ledger=ledger,
                          inputs=list(s.recipe().taxonomy_files.values()), overwrite=True)
        except (PpdpError, OSError) as exc:
            return f"{exc} Choose another file in the Export step (File); nothing was charged."
        return ""

    def cancel(self) -> None:
        if self._job is not None:
            self._job.cancel()
            self.message.setText("Cancelling…")
            self.cancel_button.setEnabled(False)

    def _progress(self, fraction: float, message: str) -> None:
        before = self.progress.value() // 10
        self.progress.setValue(int(round(1000 * max(0.0, min(1.0, fraction)))))
        if self.progress.value() // 10 != before:
            self.state_changed.emit()  # "running… 40 %" in the step list, not a step behind
        if message:
            self.message.setText(message)
            if self.log.count() == 0 or self.log.item(self.log.count() - 1).text() != message:
                self.log.addItem(message)
                self.log.scrollToBottom()

    def _finish(self) -> None:
        self._job = None
        self.cancel_button.setEnabled(False)
        self.refresh_later()  # the plan (budget left) in a turn of its own

    def _done(self, published) -> None:
        self.session.add_release(published)
        self.progress.setValue(1000)
        rows = len(published.table)
        self.message.setText(f"Finished: {rows:,} rows released. See Results.")
        self.log.addItem(f"Finished: {rows:,} rows; {published.guarantee_line()}")
        if published.record_path:
            self.log.addItem(f"Custodian record (stays on this computer): {published.record_path}")
        for text in published.warnings:
            self.log.addItem("For you (not published): " + text)
        self._finish()
        soon(self, self.run_finished.emit)  # switching to Results in a later turn of the event loop

    def _failed(self, exc: BaseException, details: str) -> None:
        self._failed_text = str(exc)
        if isinstance(exc, (TaxonomyError, ParameterError, DataError)):
            # a problem with the table, its taxonomies or the settings, found before anything was released: it is
            # listed with the step's other problems, in the words of the step that fixes it
            self.message.setText(f"Not run: {exc}")
            self.log.addItem(f"Problem found before anything was released: {exc}")
            self._finish()
            return
        self.message.setText("The run failed: nothing was released.")
        self.log.addItem(f"Failed: {exc}")
        self._finish()
        show_error(self, exc, details, context="The run did not produce a release.")

    def _cancelled(self) -> None:
        spent = " The ε reserved for this run stays spent." if self._dp else ""
        self.message.setText("Cancelled: nothing was released." + spent)
        self.log.addItem("Cancelled by you." + spent)
        self.progress.setValue(0)
        self._finish()

    def state(self) -> tuple[str, str]:
        if self.running:
            return TODO, f"running… {self.progress.value() // 10} %"
        if self._failed_text:
            return BLOCKED, "last run failed"
        if self._refused_output:
            return BLOCKED, "not run: choose another file in the Export step"
        n = len(self.session.releases)
        if n:
            return DONE, f"{n} release{'s' if n != 1 else ''} made"
        if self.session.dataset is None:
            return TODO, "load a table first"
        if not self.run_button.isEnabled():
            return WARN, "fix the problems first"
        notes = []
        if self.noise_estimate is not None and self.noise_estimate.warns(self.stated_records):
            notes.append("mostly noise")
        if self._linkable_shown:
            n = len(self._linkable_shown)
            notes.append(f"{n} column{'s' if n != 1 else ''} someone could know")
        if self._trees_shown:  # dates or ZIP codes that would show '*' in nearly every row
            n = len(self._trees_shown)
            notes.append(f"{n} tree{'s' if n != 1 else ''} to build")
        return (WARN if notes else TODO), "ready to run" + (f" — {', '.join(notes)}" if notes else "")
