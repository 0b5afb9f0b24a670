"""The main window: six steps in the order the work flows, each showing its state in the step list.

Data → Taxonomies → Mechanism → Run → Results → Export. Files open by menu, recent list, command line or
drag-and-drop; projects save and restore the whole session. Long work runs in the shared JobRunner.
Tools → Self-check runs the statistical privacy audit of the chosen DP mechanism (engine.verify) in the worker;
Tools → Self-check of the whole path runs it on practice files through the whole publish path (--pipeline).

Start-up: the charts (pyqtgraph) are not imported with the window, nor is pandas when the window is started by
`ppdp-gui` (gui/lazy_pandas.py); once it is on screen a background thread imports them, so neither the first paint
nor the first table or release shown waits for them (benchmarks/bench_start.py).
At that moment the objects made so far (modules, classes, the window) are also moved out of the garbage
collector's sight with `gc.freeze()`: the full collection the JobRunner runs in the GUI thread after each job then
scans only what came later (~70 ms less per job, benchmarks/bench_gui_heartbeat.py).
"""

from __future__ import annotations

import gc
import threading
from pathlib import Path

from PySide6.QtCore import QSettings, QSize, Qt, QTimer
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (QApplication, QFileDialog, QHBoxLayout, QLabel, QListWidget, QListWidgetItem,
                               QMainWindow, QMessageBox, QProgressBar, QStackedWidget, QStyle, QWidget)

from ppdp_gui.engine.errors import PpdpError
from ppdp_gui.engine.persistence import project as projects
from ppdp_gui.gui.session import Session
from ppdp_gui.gui.views.common import BLOCKED, DONE, TODO, WARN, soon
from ppdp_gui.gui.views.data_view import DataView
from ppdp_gui.gui.views.export_view import ExportView
from ppdp_gui.gui.views.mechanism_view import MechanismView
from ppdp_gui.gui.views.results_view import ResultsView
from ppdp_gui.gui.views.run_view import RunView
from ppdp_gui.gui.views.taxonomy_view import TaxonomyView
from ppdp_gui.gui.widgets.messages import show_error
from ppdp_gui.gui.workers import JobRunner
from ppdp_gui.gui.workers.tasks import verify_job

TABLE_FILTER = "Tables (*.csv *.tsv *.txt *.gz *.xlsx *.xlsm *.parquet *.pq);;All files (*)"
PROJECT_FILTER = f"ppdp projects (*{projects.SUFFIX} *.json)"
MAX_RECENT = 8
_STATE_ICONS = {DONE: QStyle.SP_DialogApplyButton, WARN: QStyle.SP_MessageBoxWarning,
                BLOCKED: QStyle.SP_MessageBoxCritical, TODO: QStyle.SP_ArrowRight}
_STATE_WORDS = {DONE: "done", WARN: "needs attention", BLOCKED: "blocked", TODO: "to do"}


_STARTED = False


def after_start() -> None:
    """Once per process, in the GUI thread when the first window is up: freeze what exists (it lives as long as
    the process; no data table is loaded yet, so nothing big can be kept alive by mistake), then import the chart
    modules in a daemon thread. Importing is mostly Python bytecode, so the GUI thread still gets the interpreter
    every few milliseconds; a chart built later finds the modules loaded. The worker processes' fork server starts
    too (its own process imports the engine), so that the first release does not wait for it."""
    global _STARTED
    if _STARTED:
        return
    _STARTED = True
    gc.freeze()

    def work() -> None:
        try:
            from ppdp_gui.gui import lazy_pandas
            lazy_pandas.load()
            import ppdp_gui.gui.charts  # noqa: F401
            import ppdp_gui.gui.charts.lattice_chart  # noqa: F401
        except Exception:  # noqa: BLE001 - the chart is then imported (and any error shown) where it is built
            pass
    threading.Thread(target=work, name="ppdp-import-charts", daemon=True).start()
    from ppdp_gui.gui.workers.process import warm_up
    warm_up()  # the worker processes' fork server: the first release then starts its worker in milliseconds


class MainWindow(QMainWindow):
    def __init__(self, *, ledger=None, settings: QSettings | None = None, parent=None):
        super().__init__(parent)
        self.setWindowTitle("ppdp — privacy-preserving data publishing")
        self.setAcceptDrops(True)
        self.settings = settings if settings is not None else QSettings()
        self.runner = JobRunner(self)
        self.session = Session(ledger=ledger, parent=self)
        self.previous_releases: list[dict] = []
        self._close_when_exported = False
        self.self_check_size = "quick"  # tests use "smoke"
        self.self_check_box: QMessageBox | None = None
        self._self_check_job = None

        self.data_view = DataView(self.session, self.runner)
        self.taxonomy_view = TaxonomyView(self.session, self.runner)
        self.mechanism_view = MechanismView(self.session, self.runner)
        self.run_view = RunView(self.session, self.runner)
        self.results_view = ResultsView(self.session, self.runner)
        self.export_view = ExportView(self.session, self.runner)
        self.views = [self.data_view, self.taxonomy_view, self.mechanism_view, self.run_view,
                      self.results_view, self.export_view]

        self.steps = QListWidget()
        self.steps.setAccessibleName("Steps")
        self.steps.setToolTip("The steps of a release, in order. Alt+1 … Alt+6 jump to a step.")
        self.steps.setIconSize(QSize(20, 20))
        self.steps.setSpacing(3)
        self.stack = QStackedWidget()
        for i, view in enumerate(self.views, 1):
            self.steps.addItem(QListWidgetItem(f"{i}. {view.title}"))
            self.stack.addWidget(view)
            view.state_changed.connect(self._steps_changed)
        self.steps.setMinimumWidth(self.fontMetrics().horizontalAdvance("0" * 26))
        self.steps.setMaximumWidth(self.fontMetrics().horizontalAdvance("0" * 40))
        self.steps.setWordWrap(True)
        self.steps.currentRowChanged.connect(self._step_chosen)

        central = QWidget()
        layout = QHBoxLayout(central)
        layout.addWidget(self.steps)
        layout.addWidget(self.stack, 1)
        self.setCentralWidget(central)

        self.busy = QProgressBar()
        self.busy.setRange(0, 0)
        self.busy.setMaximumWidth(120)
        self.busy.setVisible(False)
        self.busy.setAccessibleName("Working")
        self.statusBar().addPermanentWidget(self.busy)
        self.status_label = QLabel("")
        self.statusBar().addPermanentWidget(self.status_label)
        self.runner.busy_changed.connect(self.busy.setVisible)

        self._build_menus()
        self.data_view.open_button.clicked.connect(self.ask_open_table)
        self.data_view.loaded.connect(self._table_loaded)
        self.data_view.load_failed.connect(lambda msg: self.statusBar().showMessage("Could not load: " + msg, 15000))
        self.run_view.run_finished.connect(lambda: self.go_to(self.results_view))
        self.export_view.state_changed.connect(self._close_if_exported)
        self.export_view.exported_files.connect(
            lambda paths: self.statusBar().showMessage("Exported " + ", ".join(Path(p).name for p in paths), 15000))
        self.session.dataset_changed.connect(self._update_status)
        self.steps.setCurrentRow(0)
        self._steps_pending = False
        self.refresh_steps()
        self.resize(1280, 820)
        QTimer.singleShot(0, after_start)  # runs at the first turn of the event loop, the window on screen

    # -- menus ------------------------------------------------------------------------------------------------------
    def _action(self, menu, text: str, slot, shortcut=None, tip: str = "") -> QAction:
        act = QAction(text, self)
        if shortcut is not None:
            act.setShortcut(QKeySequence(shortcut))
        act.setStatusTip(tip)
        act.setToolTip(tip)
        act.triggered.connect(slot)
        menu.addAction(act)
        return act

    def _build_menus(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        self._action(file_menu, "&Open table…", self.ask_open_table, QKeySequence.Open,
                     "Open a CSV, TSV, Excel or Parquet table")
        self.recent_menu = file_menu.addMenu("Open &recent")
        self.recent_menu.aboutToShow.connect(self._fill_recent)
        self._fill_recent()
        file_menu.addSeparator()
        self._action(file_menu, "Open &project…", self.ask_open_project, "Ctrl+Shift+O",
                     "Open a saved session: table, roles, taxonomies, mechanism and parameters")
        self.save_action = self._action(file_menu, "&Save project", self.save_project, QKeySequence.Save,
                                        "Save the session as a project file")
        self._action(file_menu, "Save project &as…", lambda: self.save_project(ask=True), QKeySequence.SaveAs)
        file_menu.addSeparator()
        self._action(file_menu, "Privacy budget &ledger…", self.show_ledger, "Ctrl+L",
                     "Every ε spent, per table, against its cap")
        file_menu.addSeparator()
        self._action(file_menu, "&Quit", self.close, QKeySequence.Quit)
        go = self.menuBar().addMenu("&Go")
        for i, view in enumerate(self.views, 1):
            self._action(go, f"&{i}. {view.title}", lambda _c=False, v=view: self.go_to(v), f"Alt+{i}")
        go.addSeparator()
        self._action(go, "&Next step", lambda: self.steps.setCurrentRow(min(5, self.steps.currentRow() + 1)),
                     "Ctrl+PgDown")
        self._action(go, "&Previous step", lambda: self.steps.setCurrentRow(max(0, self.steps.currentRow() - 1)),
                     "Ctrl+PgUp")
        tools = self.menuBar().addMenu("&Tools")
        self.self_check_action = self._action(
            tools, "&Self-check…", lambda: self.self_check(),
            tip="Test the chosen differentially private mechanism: release two small tables that differ in one "
            "patient thousands of times and check the results cannot be told apart more than ε allows (about half "
            "a minute; your data is not used)")
        self.self_check_pipeline_action = self._action(
            tools, "Self-check of the &whole path…", lambda: self.self_check(pipeline=True),
            tip="Test the chosen mechanism the way your files go: small practice files that differ in one patient "
            "are read, planned, charged to a practice budget ledger, released and exported, and the written files "
            "and release notes are compared; for k-anonymity, the patients in every group of the written file are "
            "counted (under a minute; your data and your ledger are not used)")
        from ppdp_gui.gui.governance_menu import install  # release context, dossier, Safe Harbor (issue 31)
        install(self, tools)
        help_menu = self.menuBar().addMenu("&Help")
        self.guide_action = self._action(help_menu, "&User guide", self.open_guide, QKeySequence.HelpContents,
                                         "The six steps, what the guarantees mean, the release note, the ledger")
        self._action(help_menu, "&About", self._about)

    def show_ledger(self):
        from ppdp_gui.gui.ledger_view import LedgerDialog
        try:
            dialog = LedgerDialog(self.session.ledger, self)
        except (PpdpError, OSError) as exc:
            show_error(self, exc, context="The privacy budget ledger could not be shown.")
            return None
        dialog.show()
        return dialog

    def open_guide(self):
        """The user guide, at the section of the step shown."""
        from ppdp_gui.gui.help import open_guide
        return open_guide(self, f"step-{self.steps.currentRow() + 1}" if self.steps.currentRow() >= 0 else "")

    # -- self-check ----------------------------------------------------------------------------------------------
    def self_check(self, pipeline: bool = False) -> None:
        """The quick statistical audit of the mechanism chosen in the Mechanism step, in the worker process;
        `pipeline`: of its whole publish path on practice files (engine/verify/pipeline_audit.py)."""
        if self._self_check_job is not None:
            self.statusBar().showMessage("The self-check is already running.", 5000)
            return
        from ppdp_gui.engine.mechanisms import registry
        name = self.mechanism_view.combo.currentText()
        try:
            cls = registry.get(name)
            cost = cls().cost(cls.resolve_params())
        except PpdpError as exc:
            show_error(self, exc, context="The self-check could not start.")
            return
        if not cost.is_dp and not (pipeline and cost.k is not None):
            self._show_self_check(QMessageBox.Information, "Self-check",
                                  f"The self-check tests differentially private mechanisms (those with an ε). "
                                  f"{name} gives {cost.describe(with_note=False)} instead: choose the Laplace "
                                  "histogram or DiffGen in the Mechanism step to test it.")
            return
        self.self_check_action.setEnabled(False)
        self.self_check_pipeline_action.setEnabled(False)
        self.statusBar().showMessage(f"Self-check of {name}{' (whole path)' if pipeline else ''} started…")
        self._self_check_job = self.runner.start_process(
            verify_job, (name, self.self_check_size, 0, pipeline), on_done=self._self_check_done,
            on_error=self._self_check_failed,
            on_progress=lambda f, msg: self.statusBar().showMessage(f"Self-check: {msg} ({f:.0%})"),
            on_cancelled=self._self_check_ended)

    def _self_check_ended(self) -> None:
        self._self_check_job = None
        self.self_check_action.setEnabled(True)
        self.self_check_pipeline_action.setEnabled(True)

    def _self_check_done(self, verdict) -> None:
        self._self_check_ended()
        self.statusBar().showMessage("Self-check " + ("passed" if verdict.passed else "FAILED"), 15000)
        self._show_self_check(QMessageBox.Information if verdict.passed else QMessageBox.Warning,
                              "Self-check passed" if verdict.passed else "Self-check failed",
                              verdict.plain_words(), "\n".join(verdict.lines()))

    def _self_check_failed(self, exc, details: str) -> None:
        self._self_check_ended()
        show_error(self, exc, details, context="The self-check could not finish.")

    def _show_self_check(self, icon, title: str, text: str, details: str = "") -> None:
        box = QMessageBox(icon, title, text, QMessageBox.Ok, self)
        box.setObjectName("self_check_dialog")
        box.setAccessibleName(title)
        if details:
            box.setDetailedText(details)
        box.setAttribute(Qt.WA_DeleteOnClose)
        box.open()  # window-modal but not blocking: the event loop (and tests) keep running
        self.self_check_box = box

    def _about(self) -> None:
        QMessageBox.about(self, "About ppdp", "ppdp_gui: publish privacy-preserving versions of sensitive tables. "
                          "Your data never leaves this computer; every ε spent is kept in the budget ledger.")

    # -- steps -------------------------------------------------------------------------------------------------
    def go_to(self, view) -> None:
        self.steps.setCurrentRow(self.views.index(view))

    def _step_chosen(self, row: int) -> None:
        if row >= 0:
            self.stack.setCurrentIndex(row)
            view = self.views[row]
            if view is self.mechanism_view or view is self.run_view:
                self.mechanism_view.refresh_preview(fresh=True)  # the ledger may have changed meanwhile
                self.run_view.refresh()

    def _steps_changed(self) -> None:
        """A view's state changed: redraw the step list once, in a later turn of the event loop (views.common.soon).
        Opening a table changes every view's state several times in one slot (new table, releases and simulations
        cleared, taxonomies attached), and drawing the list each time blocked the event loop for tens of
        milliseconds."""
        if not self._steps_pending:
            self._steps_pending = True
            soon(self, self._refresh_pending_steps)

    def _refresh_pending_steps(self) -> None:
        if self._steps_pending:
            self.refresh_steps()

    def refresh_steps(self) -> None:
        self._steps_pending = False
        for i, view in enumerate(self.views):
            kind, text = view.state()
            item = self.steps.item(i)
            item.setText(f"{i + 1}. {view.title}" + (f"\n{text}" if text else ""))
            item.setIcon(self.style().standardIcon(_STATE_ICONS[kind]))
            item.setToolTip(f"{view.title}: {_STATE_WORDS[kind]}" + (f" — {text}" if text else ""))
            item.setData(Qt.AccessibleTextRole, item.toolTip())
            item.setData(Qt.UserRole, kind)

    def step_texts(self) -> list[str]:
        if self._steps_pending:
            self.refresh_steps()
        return [self.steps.item(i).text() for i in range(self.steps.count())]

    def _update_status(self) -> None:
        ds = self.session.dataset
        self.status_label.setText(f"{Path(ds.source.path).name if ds.source.path else 'table'} · "
                                  f"{ds.n_rows:,} rows" if ds is not None else "")

    # -- opening files -----------------------------------------------------------------------------------------------
    def ask_open_table(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open a table", self._last_dir(), TABLE_FILTER)
        if path:
            self.open_path(path)

    def ask_open_project(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open a project", self._last_dir(), PROJECT_FILTER)
        if path:
            self.open_project(path)

    def open_path(self, path: str) -> None:
        """Open a table, or a project if the file is one."""
        if str(path).endswith(projects.SUFFIX):
            self.open_project(path)
            return
        if not self._may_open_another(path):
            return
        self.previous_releases = []
        self.session.project_path = None
        self.go_to(self.data_view)
        self.statusBar().showMessage(f"Reading {Path(path).name}…")
        self.data_view.load(str(path))

    def _may_open_another(self, path) -> bool:
        """A release or an export of the open table must end before another table replaces it (its result would
        otherwise land in the next table's lists, or be lost); a simulation is cancelled (nothing is charged)."""
        busy = ("a release is running (Run step)" if self.run_view.running
                else "an export is being written (Export step)" if self.export_view.busy else "")
        if busy:
            box = QMessageBox(QMessageBox.Information, "Another table", f"{Path(str(path)).name} was not opened: "
                              f"{busy}. Wait for it to finish, or press Cancel there, then open the table again.",
                              QMessageBox.Ok, self)
            box.setAttribute(Qt.WA_DeleteOnClose)
            box.open()  # window-modal, not blocking
            self.statusBar().showMessage(box.text(), 15000)
            return False
        if self.results_view.sweep.running:
            self.results_view.sweep.cancel()
            self.statusBar().showMessage("The simulation of the table before was cancelled (nothing was charged).",
                                         8000)
        return True

    def _table_loaded(self, path: str) -> None:
        soon(self, lambda: self.add_recent(path))  # QSettings then writes its file (~10 ms) in a later turn
        self.statusBar().showMessage(f"Loaded {Path(path).name}", 8000)
        self._update_status()

    def open_project(self, path: str) -> None:
        """Open a project (a recipe): the engine's loader applies its table, roles, taxonomies and domains."""
        try:
            recipe = projects.read_recipe(path)
        except (PpdpError, OSError) as exc:
            show_error(self, exc, context=f"Could not open the project {Path(path).name}.")
            return
        if not self._may_open_another(path):
            return
        self.go_to(self.data_view)

        def apply(_dataset) -> None:
            try:
                self.session.set_opt_ins(allow_data_domains=recipe.allow_data_domains,
                                         separate_dataset=recipe.separate_dataset)
                for column in recipe.publish_as_is:
                    self.session.set_publish_as_is(column)
                if recipe.mechanism in [self.mechanism_view.combo.itemText(i)
                                        for i in range(self.mechanism_view.combo.count())]:
                    from ppdp_gui.engine.mechanisms import registry
                    # each value checked by its ParamSpec first: '5; rm -rf /' for k is a clear ParameterError
                    # naming k, not a ValueError inside the parameter panel
                    specs = {spec.name: spec for spec in registry.get(recipe.mechanism).params}
                    params = {k: specs[k].coerce(v) if k in specs else v for k, v in recipe.params.items()}
                    self.mechanism_view.choose(recipe.mechanism, params)
            except PpdpError as exc:
                show_error(self, exc, context="The project's parameters could not all be restored: the others are set; "
                                             "set this one in the Mechanism step.")
            self.previous_releases = list(recipe.releases)
            self.session.set_context(recipe.context)  # the release context (engine/governance)
            self.session.project_path = str(path)
            self.setWindowTitle(f"{Path(path).name} — ppdp")
            self.add_recent(str(path))
            changed = [n for n in self.session.auto_notes if "has changed" in n]
            if changed:
                show_error(self, PpdpError(changed[0]), context=recipe.source)
        self.data_view.load(recipe.source, recipe=recipe, after=apply)

    def save_project(self, ask: bool = False) -> Path | None:
        if self.session.dataset is None:
            self.statusBar().showMessage("Nothing to save: open a table first.", 8000)
            return None
        path = self.session.project_path
        if ask or not path:
            src = Path(self.session.dataset.source.path or "table")
            suggestion = str(src.with_name(src.name.split(".")[0] + projects.SUFFIX))
            path, _ = QFileDialog.getSaveFileName(self, "Save project", suggestion, PROJECT_FILTER)
            if not path:
                return None
            if not path.endswith(".json"):
                path += projects.SUFFIX
        try:
            from ppdp_gui.engine.data.outputs import OutputPlan
            recipe = self.session.recipe(self.previous_releases)
            outputs = OutputPlan(source=self.session.dataset.source, inputs=list(recipe.taxonomy_files.values()),
                                 ledger=self.session.ledger, overwrite=True)  # the save dialog asked
            outputs.add(path, "the project")
            outputs.check()
            written = projects.write_recipe(recipe, path, protected=outputs.guard)
        except (PpdpError, OSError) as exc:
            show_error(self, exc, context="The project was not saved.")
            return None
        self.session.project_path = str(written)
        self.setWindowTitle(f"{written.name} — ppdp")
        self.add_recent(str(written))
        self.statusBar().showMessage(f"Saved {written}", 8000)
        return written

    # -- recent files ------------------------------------------------------------------------------------------------
    def recent_files(self) -> list[str]:
        value = self.settings.value("recent_files", [])
        if isinstance(value, str):
            value = [value]
        return [str(v) for v in (value or [])]

    def add_recent(self, path: str) -> None:
        path = str(Path(path).resolve())
        files = [path] + [p for p in self.recent_files() if p != path]
        self.settings.setValue("recent_files", files[:MAX_RECENT])
        self.settings.setValue("last_dir", str(Path(path).parent))
        self._fill_recent()

    def _last_dir(self) -> str:
        return str(self.settings.value("last_dir", str(Path.home())))

    def _fill_recent(self) -> None:
        self.recent_menu.clear()
        files = self.recent_files()
        for i, path in enumerate(files, 1):
            act = QAction(f"&{i} {Path(path).name}", self)
            act.setToolTip(path)
            act.setStatusTip(path)
            act.triggered.connect(lambda _c=False, p=path: self.open_path(p))
            self.recent_menu.addAction(act)
        self.recent_menu.setEnabled(bool(files))

    # -- drag and drop ------------------------------------------------------------------------------------------------
    def dragEnterEvent(self, event) -> None:
        urls = event.mimeData().urls() if event.mimeData().hasUrls() else []
        if urls and urls[0].isLocalFile():
            event.acceptProposedAction()
        else:
            event.ignore()

    def dropEvent(self, event) -> None:
        urls = event.mimeData().urls()
        if urls and urls[0].isLocalFile():
            event.acceptProposedAction()
            self.open_path(urls[0].toLocalFile())

    # -- closing --------------------------------------------------------------------------------------------------------
    def ask_export_close(self) -> str:
        """Closing while an export is written: 'wait' (close once it is written) or 'cancel' (stop it, leaving no
        file, and close). Tests replace it."""
        box = QMessageBox(QMessageBox.Question, "An export is still being written",
                          "An export is still being written. Closing now would stop it and nothing would be "
                          "written.", parent=self)
        wait = box.addButton("&Wait, then close", QMessageBox.AcceptRole)
        box.addButton("&Cancel the export and close", QMessageBox.DestructiveRole)
        box.setDefaultButton(wait)
        box.exec()
        return "wait" if box.clickedButton() is wait else "cancel"

    def _close_if_exported(self) -> None:
        if self._close_when_exported and not self.export_view.busy:
            self._close_when_exported = False
            QTimer.singleShot(0, self.close)  # not from inside a slot the closing itself may be running in

    def closeEvent(self, event) -> None:
        if self.export_view.busy:
            choice = self.ask_export_close()
            if choice == "cancel":
                self.export_view.cancel()  # stops it at once, unless its checked files are being put in place
            if choice == "wait" or self.export_view.busy:
                event.ignore()
                self._close_when_exported = True  # the export view's next state change closes the window
                self.statusBar().showMessage("The export is being cancelled; the window closes then." if choice ==
                                             "cancel" else "The export is being written; the window closes when "
                                             "it is done.")
                return
        if self.runner.busy:
            self.statusBar().showMessage("Stopping the running job…")
            self.runner.cancel_all()
            if not self.runner.wait_all(15000):
                event.ignore()
                self.statusBar().showMessage("A job is still finishing; try again in a moment.", 8000)
                return
            QApplication.processEvents()
        event.accept()
