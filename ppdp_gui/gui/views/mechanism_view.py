"""Mechanism step: choose a mechanism, set its parameters, and see problems, cost and budget before any run.

A problem about a column whose domain the release needs (the engine names it in `Problem.column`) opens the
public-domain dialog on double-click or from the "Set the domain of C…" button under the list: the engine's
refusal is answered where it is read.

Everything shown is the engine's plan of the choice (`Session.preview`: the mechanism's ParamSpecs, problems and
cost, and the ledger's budget); this view knows no mechanism by name.
"""

from __future__ import annotations

from fractions import Fraction

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (QCheckBox, QComboBox, QFormLayout, QHBoxLayout, QInputDialog, QLabel, QListWidget,
                               QListWidgetItem, QPushButton, QScrollArea, QVBoxLayout)

from ppdp_gui.engine.errors import PpdpError
from ppdp_gui.engine.mechanisms import registry
from ppdp_gui.gui.plan_words import cost_tooltip, cost_words, short_cost
from ppdp_gui.gui.views.common import BLOCKED, DONE, TODO, WARN, StepView, heading, note
from ppdp_gui.gui.widgets.domain_dialog import open_domain_dialog
from ppdp_gui.gui.widgets.messages import show_error
from ppdp_gui.gui.widgets.param_panel import ParamPanel


class MechanismView(StepView):
    title = "Mechanism"

    def __init__(self, session, runner, parent=None):
        super().__init__(session, runner, parent)
        self.combo = QComboBox()
        self.combo.setAccessibleName("Mechanism")
        self.combo.setToolTip("How the table will be protected.")
        self.about = note(object_name="mechanism_about")
        self.panel: ParamPanel | None = None
        self.scroll = QScrollArea()
        self.scroll.setWidgetResizable(True)
        self.scroll.setAccessibleName("Parameters")
        self.problems = QListWidget()
        self.problems.setAccessibleName("Problems found before running")
        self.problems.setWordWrap(True)  # long messages in full, no horizontal scrolling
        self.problems.setMaximumHeight(self.fontMetrics().height() * 9)
        self.problems.itemDoubleClicked.connect(self._problem_activated)
        self.problems.currentItemChanged.connect(lambda _c, _p: self._show_domain_button())
        self.domain_button = QPushButton()
        self.domain_button.setObjectName("domain_button")
        self.domain_button.setToolTip("State the values everyone may know for this column (a range, or a published "
                                      "list of values), so the release never reads them from the table.")
        self.domain_button.setVisible(False)
        self.domain_button.clicked.connect(lambda: self.edit_domain(self._selected_domain_column()))
        self.cost_label = QLabel()
        self.cost_label.setObjectName("cost_label")
        self.cost_label.setWordWrap(True)
        self.cost_label.setAccessibleName("Privacy cost")
        self.budget_label = note(object_name="budget_label")
        self.budget_label.setAccessibleName("Budget left for this table")
        self.cap_button = QPushButton("Set a budget &cap for this table…")
        self.cap_button.setToolTip("The ledger refuses any release that would take the total ε spent on this "
                                   "table above the cap.")
        self.target_button = QPushButton("Choose ε from the &error you accept…")
        self.target_button.setObjectName("target_button")
        self.target_button.setToolTip("The smallest ε whose counts are within the error you type, 95 % of the time, "
                                      "from the mechanism's public noise model: nothing is run or charged.")
        self.target_button.clicked.connect(self._ask_target_error)
        self.data_domains_check = QCheckBox("Take the missing domains from the data — the release will then "
                                            "NOT be ε-differentially private, and will say so")
        self.data_domains_check.setObjectName("data_domains_check")
        self.data_domains_check.setToolTip("Only for a release that does not need a formal guarantee. Every "
                                           "document of the release will say which domain came from the data.")
        self.data_domains_check.setVisible(False)
        self.separate_check = QCheckBox("This table is about other people than the one it resembles "
                                        "(give it its own budget; recorded in the ledger)")
        self.separate_check.setObjectName("separate_check")
        self.separate_check.setVisible(False)
        self._preview = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(120)
        self._timer.timeout.connect(self.refresh_preview)

        top = QFormLayout()
        top.addRow("&Mechanism:", self.combo)
        label = top.labelForField(self.combo)
        if label is not None:
            label.setBuddy(self.combo)
        cost_box = QHBoxLayout()
        cost_box.addWidget(self.cost_label, 1)
        cost_box.addWidget(self.target_button)
        cost_box.addWidget(self.cap_button)
        layout = QVBoxLayout(self)
        layout.addWidget(heading("3. Mechanism"))
        layout.addLayout(top)
        layout.addWidget(self.about)
        layout.addWidget(self.scroll, 1)
        layout.addWidget(QLabel("Problems found before running:"))
        layout.addWidget(self.problems)
        domain_row = QHBoxLayout()
        domain_row.addWidget(self.domain_button)
        domain_row.addStretch(1)
        layout.addLayout(domain_row)
        layout.addWidget(self.data_domains_check)
        layout.addLayout(cost_box)
        layout.addWidget(self.budget_label)
        layout.addWidget(self.separate_check)

        names = registry.names()
        self.combo.addItems(names)
        if not names:
            self.about.setText("No mechanism is installed in this build.")
        self.combo.currentTextChanged.connect(self._mechanism_chosen)
        self._user_chose = False  # set once the user picks a mechanism: then new tables keep that choice
        self._auto_frame = None
        self.combo.activated.connect(lambda _i: setattr(self, "_user_chose", True))
        self.cap_button.clicked.connect(self._ask_cap)
        self.data_domains_check.toggled.connect(lambda on: self.session.set_opt_ins(allow_data_domains=on))
        self.separate_check.toggled.connect(lambda on: self.session.set_opt_ins(separate_dataset=on))
        session.dataset_changed.connect(self._dataset_changed)
        session.mechanism_changed.connect(self._follow_session)
        session.mechanism_changed.connect(self._schedule)
        session.releases_changed.connect(self._schedule)  # the budget left has changed
        if names:
            self._mechanism_chosen(names[0])

    # -- mechanism and panel ------------------------------------------------------------------------------------
    def _mechanism_chosen(self, name: str) -> None:
        if not name:
            return
        if self.session.mechanism_name and self.panel is not None:
            self.session.table.param_memory[self.session.mechanism_name] = self.panel.values()
        try:
            cls = registry.get(name)
        except Exception as exc:  # noqa: BLE001 - a broken or half-installed mechanism must not break the window
            self.about.setText(f"{name} cannot be loaded in this build ({type(exc).__name__}: {exc}).")
            self.scroll.takeWidget()
            self.panel = None
            self.session.set_mechanism(None)
            return
        self.about.setText(f"<b>{cls.guarantee}</b>. {cls.summary}")
        self.panel = ParamPanel(cls.params, self.session.dataset)
        self.panel.set_values(self.session.table.param_memory.get(name, {}))  # typed for this table before
        self.panel.changed.connect(lambda: self.session.set_params(self.panel.values()))
        self.scroll.setWidget(self.panel)
        self.session.set_mechanism(name, self.panel.values())

    def _follow_session(self) -> None:
        """Show parameters set elsewhere in the session (advice applied from a simulation) in the form."""
        if self.panel is None or self.session.mechanism_name != self.combo.currentText():
            return
        if self.panel.values() != self.session.params:
            self.panel.blockSignals(True)
            self.panel.set_values(self.session.params)
            self.panel.blockSignals(False)

    def choose_runnable(self) -> str | None:
        """Select the first mechanism, in registry order, that can run on the table as it is (no error
        problem with its default parameters) and gives a formal guarantee — a synthetic generator without one
        (KRIMP) is never the default, the custodian chooses it; keep the current one if none can. The loader has
        usually found it already, in its worker (Session.suggested_mechanism, by the same rule)."""
        from ppdp_gui.engine.mechanisms import registry
        known, name = self.session.suggested_mechanism()
        if known:
            if name is not None and self.combo.findText(name) >= 0 and name != self.combo.currentText():
                self.combo.setCurrentText(name)
            if name is None:
                self._no_runnable_default()
            return name
        from ppdp_gui.engine.pipeline.plan import runnable
        for i in range(self.combo.count()):
            name = self.combo.itemText(i)
            if "no formal" in getattr(registry.get(name), "guarantee", ""):
                continue
            if runnable(name, self.session.dataset):
                if name != self.combo.currentText():
                    self.combo.setCurrentText(name)
                return name
        self._no_runnable_default()
        return None

    def _no_runnable_default(self) -> None:
        """None can run as the table is: show the first mechanism that spends no ε (k-anonymity), whose
        problems name what to change in the Data step — not the first of the list, a DP histogram that asks for
        columns to count and public domains (seen on an emergency table whose ZIP column had blanks)."""
        from ppdp_gui.engine.mechanisms import registry
        for i in range(self.combo.count()):
            guarantee = str(getattr(registry.get(self.combo.itemText(i)), "guarantee", ""))
            if "ε" not in guarantee and "no formal" not in guarantee:
                if self.combo.currentIndex() != i:
                    self.combo.setCurrentIndex(i)
                return

    def choose(self, name: str, params: dict | None = None) -> None:
        """Select `name` and show `params` (used when a project is opened)."""
        if self.combo.currentText() != name:
            self.combo.setCurrentText(name)
        if params is not None and self.panel is not None:
            self.panel.set_values(params)
            self.session.set_params(self.panel.values())

    def forget_table(self) -> None:
        """A new table: the parameters typed or applied from advice for the last one go back to their defaults
        (the session has forgotten them too; the same file read again keeps them, see Session.set_dataset)."""
        if self.panel is not None:
            self.panel.blockSignals(True)
            self.panel.set_values(self.session.params)
            self.panel.blockSignals(False)

    def _dataset_changed(self) -> None:
        ds = self.session.dataset
        if ds is not None and ds.frame is not self._auto_frame:  # a new table
            self._auto_frame = ds.frame
            if not self._user_chose:
                self.choose_runnable()
        if self.panel is not None:
            self.panel.blockSignals(True)
            self.panel.set_dataset(self.session.dataset)
            self.panel.blockSignals(False)
            self.session.set_params(self.panel.values())
        self._schedule()

    # -- preview ------------------------------------------------------------------------------------------------
    def _schedule(self) -> None:
        self._timer.start()

    def refresh_preview(self, fresh: bool = False):
        """Show problems, cost and budget; `fresh` re-reads the ledger (it may have changed outside)."""
        self._timer.stop()
        if fresh:
            self.session.invalidate_preview()
        p = self.session.preview()
        self._preview = p
        selected = self.problems.currentItem().text() if self.problems.currentItem() is not None else None
        self.problems.blockSignals(True)
        self.problems.clear()
        domain_columns = {n.column for n in p.needs}
        for problem in p.problems:
            item = QListWidgetItem(("Error: " if problem.level == "error" else "Warning: ") + problem.message)
            item.setForeground(Qt.red if problem.level == "error" else Qt.darkYellow)
            item.setToolTip(problem.message)
            if problem.column is not None and problem.column in domain_columns:
                # a problem about a column whose domain the release needs: the domain dialog answers it
                item.setData(Qt.UserRole, problem.column)
                item.setToolTip(f"{problem.message}\n\nDouble-click to set the domain of {problem.column}.")
            self.problems.addItem(item)
        for caveat in p.caveats:
            item = QListWidgetItem(f"Not ε-DP: {caveat} (you allowed this above).")
            item.setForeground(Qt.red)
            self.problems.addItem(item)
        if not p.problems and not p.caveats and self.session.dataset is not None:
            self.problems.addItem("None: the parameters and data are ready.")
        self._reselect(selected)
        self.problems.blockSignals(False)
        self._show_domain_button()
        person = getattr(p.dataset, "person_column", None)
        self.cost_label.setText(f"<b>Privacy:</b> {cost_words(p.cost, person)}")
        self.cost_label.setToolTip(cost_tooltip(p.cost))
        self.budget_label.setText(p.budget_text())
        self.budget_label.setStyleSheet("color: #a33a00;" if p.over_budget else "")
        self.cap_button.setEnabled(p.is_dp)
        self.target_button.setEnabled(p.is_dp and self.panel is not None and "epsilon" in self.panel.values())
        needs_opt_in = p.is_dp and bool(p.data_domain_columns or p.unconfirmed_columns)
        self.data_domains_check.setVisible(needs_opt_in or self.session.allow_data_domains)
        self._set_checked(self.data_domains_check, self.session.allow_data_domains)
        near = getattr(p.identity, "near_copy_of", None) if p.identity is not None else None
        self.separate_check.setVisible(bool(near) or self.session.separate_dataset)
        self._set_checked(self.separate_check, self.session.separate_dataset)
        self.state_changed.emit()
        return p

    # -- domain problems ----------------------------------------------------------------------------------------
    def _reselect(self, text: str | None) -> None:
        """Keep the selected problem across a refresh; else select the first domain problem, so its button shows."""
        items = [self.problems.item(i) for i in range(self.problems.count())]
        keep = [it for it in items if text is not None and it.text() == text]
        first = [it for it in items if it.data(Qt.UserRole)]
        if keep or first:
            self.problems.setCurrentItem((keep or first)[0])

    def _selected_domain_column(self) -> str | None:
        item = self.problems.currentItem()
        return item.data(Qt.UserRole) if item is not None else None

    def _show_domain_button(self) -> None:
        column = self._selected_domain_column()
        self.domain_button.setVisible(column is not None)
        if column is not None:
            self.domain_button.setText(f"Set the &domain of {column}…")
            self.domain_button.setAccessibleName(f"Set the domain of {column}")

    def _problem_activated(self, item) -> None:
        self.edit_domain(item.data(Qt.UserRole))

    def edit_domain(self, column: str | None):
        """Open the public-domain dialog for `column`; its OK changes the session, and the preview follows."""
        if not column:
            return None
        return open_domain_dialog(self, self.session, column)

    @staticmethod
    def _set_checked(box, on: bool) -> None:
        if box.isChecked() != on:
            box.blockSignals(True)
            box.setChecked(on)
            box.blockSignals(False)

    @property
    def current_preview(self):
        return self._preview if self._preview is not None else self.session.preview()

    def _ask_cap(self) -> None:
        p = self.current_preview
        if self.session.dataset is None or p.identity is None:
            return
        current = float(p.budget.cap) if p.budget is not None and p.budget.cap is not None else 1.0
        value, ok = QInputDialog.getDouble(self, "Budget cap", "Total ε that may ever be spent on this table:",
                                           current, 0.001, 1000.0, 3)
        reason = None
        if ok and p.budget is not None and not p.budget.default_cap_applied and value > current:
            # raising a cap is a deliberate act, recorded with a reason (privacy/ledger.py set_cap)
            reason, ok = QInputDialog.getText(self, "Raise the budget cap", "Raising the cap lets more be learned "
                                              "about the same people. Why (recorded with your name and the date):")
        if ok:
            try:
                self.session.ledger.set_cap(p.identity, Fraction(str(value)), reason=reason)
            except PpdpError as exc:
                show_error(self, exc)
            self.refresh_preview(fresh=True)

    def _ask_target_error(self) -> None:
        """ε from accuracy (engine/mechanisms/target_error.py): propose, and put the proposal into the ε field."""
        from PySide6.QtWidgets import QMessageBox
        from ppdp_gui.engine.mechanisms.target_error import propose_epsilon
        if self.session.dataset is None or self.panel is None or not self.session.mechanism_name:
            return
        target, ok = QInputDialog.getDouble(self, "Error you accept", "Largest error of a released count you "
                                            "accept, in records (95 % of the counts are at least this close):",
                                            10.0, 0.0, 1e9, 0)
        if not ok:
            return
        try:
            mech = registry.create(self.session.mechanism_name)
            proposal = propose_epsilon(mech, self.session.dataset, mech.resolve_params(**self.panel.values()), target)
        except PpdpError as exc:
            show_error(self, exc)
            return
        if proposal.epsilon is not None:
            self.panel.set_values({**self.panel.values(), "epsilon": float(proposal.epsilon)})
            self.session.set_params(self.panel.values())
        QMessageBox.information(self, "ε from the error you accept", proposal.words)

    def state(self) -> tuple[str, str]:
        if self.session.dataset is None:
            return TODO, "load a table first"
        if not self.session.mechanism_name:
            return BLOCKED, "no mechanism installed"
        p = self.current_preview
        if p.errors:
            n = len(p.errors)
            return BLOCKED, f"{self.session.mechanism_name}: {n} problem{'s' if n != 1 else ''}"
        if p.over_budget:
            return BLOCKED, "over the budget left"
        if p.cost is None:
            return WARN, f"{self.session.mechanism_name}: cost unknown until the parameters are valid"
        return (WARN if p.problems else DONE), f"{self.session.mechanism_name}, {short_cost(p.cost)}"
