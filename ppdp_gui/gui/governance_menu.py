"""Tools → Release context…, Write the de-identification dossier…, Safe Harbor in one step…, and the export
step's risk-threshold gate (issue 31). Thin: every decision is made by engine/governance; this module asks and
shows. The session keeps the context as `session.governance_context` (a dict, saved in the project)."""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtGui import QAction
from PySide6.QtWidgets import (QCheckBox, QDialog, QDialogButtonBox, QFileDialog, QInputDialog, QLabel, QLineEdit,
                               QMessageBox, QPlainTextEdit, QTextBrowser, QVBoxLayout)

from ppdp_gui.engine.errors import PpdpError
from ppdp_gui.engine.persistence import release_context as cx
from ppdp_gui.gui.widgets.messages import show_error


class _Holder:
    """What `store` / `gate_published` need of a recipe: a `context` dict."""

    def __init__(self, context: dict):
        self.context = dict(context or {})


def context_of(session) -> cx.ReleaseContext:
    return cx.context_from_json(getattr(session, "governance_context", None) or None)


def set_context(session, context: cx.ReleaseContext) -> None:
    session.governance_context = context.to_json()


def install(window, menu) -> None:
    """Add the governance actions to `menu` (the window's Tools menu), and File → Re-run on a new extract…."""
    file_menu = next((a.menu() for a in window.menuBar().actions() if a.text().replace("&", "") == "File"), None)
    if file_menu is not None:
        window.rerun_action = QAction("Re-run on a &new extract…", window)
        window.rerun_action.setStatusTip("The same project on next month's table: see what changed before releasing")
        window.rerun_action.triggered.connect(lambda: ask_rerun(window))
        file_menu.insertAction(next((a for a in file_menu.actions() if a.isSeparator()), None), window.rerun_action)
    menu.addSeparator()
    window.release_context_action = window._action(
        menu, "Release &context…", lambda: ask_context(window),
        tip="Who receives the release, the data-use agreement, the motivated-intruder test, the review date and the "
            "highest re-identification risk the export accepts")
    window.dossier_action = window._action(
        menu, "Write the de-identification &dossier…", lambda: ask_dossier(window),
        tip="The dossier your privacy office or an expert determination asks for (Markdown to edit, or PDF)")
    window.safe_harbor_action = window._action(
        menu, "Safe &Harbor in one step…", lambda: ask_safe_harbor(window),
        tip="HIPAA Safe Harbor: dates to the year, ages 90 or older, ZIP to 3 digits, identifiers out")


def ask_context(window):
    from ppdp_gui.gui.widgets.release_context_dialog import ReleaseContextDialog
    dialog = ReleaseContextDialog(context_of(window.session), window)
    dialog.accepted.connect(lambda: _context_saved(window, dialog))
    dialog.open()
    return dialog


def _context_saved(window, dialog) -> None:
    set_context(window.session, dialog.context())
    threshold, _ = dialog.context().risk_threshold()
    window.statusBar().showMessage(f"Release context set: highest risk accepted {threshold:.3g}. Save the project "
                                   "to keep it (File → Save project).", 10000)


# ---- the dossier ---------------------------------------------------------------------------------------------
def record_of(published) -> dict:
    """The custodian record of a release: the file in the ledger's folder (updated by the export), else made now."""
    path = getattr(published, "record_path", None)
    if path and Path(path).is_file():
        try:
            return json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            pass
    from ppdp_gui.engine.pipeline.published import custodian_record, release_note
    return custodian_record(published, note=release_note(published))


def ask_dossier(window, layout: str | None = None, path: str | None = None):
    session = window.session
    if not session.releases or session.dataset is None:
        window.statusBar().showMessage("Make a release first (Run step): the dossier describes a release.", 8000)
        return None
    if layout is None:
        names = ["EMA Policy 0070 / Health Canada anonymisation report", "HIPAA Expert Determination dossier"]
        chosen, ok = QInputDialog.getItem(window, "Write the de-identification dossier", "Layout", names, 0, False)
        if not ok:
            return None
        layout = "ema" if chosen == names[0] else "hipaa"
    if path is None:
        src = Path(session.dataset.source.path or "table")
        path, _ = QFileDialog.getSaveFileName(window, "Write the de-identification dossier",
                                              str(src.with_name(src.name.split(".")[0] + f"_dossier_{layout}.pdf")),
                                              "PDF (*.pdf);;Markdown, to edit (*.md)")
        if not path:
            return None
    chosen = getattr(getattr(window, "export_view", None), "record", None)  # the release chosen in the Export step
    published = chosen if chosen in session.releases else session.releases[-1]
    recipe = session.recipe(getattr(window, "previous_releases", []))
    recipe.context = dict(getattr(session, "governance_context", None) or {})
    protected = [session.dataset.source.path] + list(session.ledger.protected_paths())

    def work():
        from ppdp_gui.engine.governance.dossier import build_dossier
        from ppdp_gui.engine.governance.dossier_files import write_dossier
        yield write_dossier(build_dossier(record_of(published), recipe, layout=layout), path, protected=protected)

    return window.runner.start(work, on_done=lambda written: window.statusBar().showMessage(
        f"Dossier written to {written}. Sections marked “for governance only” must not be published.", 12000),
        on_error=lambda exc, details: show_error(window, exc, details, context="The dossier was not written."))


# ---- Safe Harbor -----------------------------------------------------------------------------------------------
class SafeHarborDialog(QDialog):
    """What Safe Harbor did, the attestation, and where to save the table."""

    def __init__(self, result, parent=None):
        super().__init__(parent)
        from ppdp_gui.engine.governance.safe_harbor_recipe import ATTESTATION
        self.setObjectName("safe_harbor_dialog")
        self.setWindowTitle("Safe Harbor in one step")
        self.result_ = result
        text = QPlainTextEdit()
        text.setReadOnly(True)
        lines = [f"{s.column}: {s.action} ({s.rows:,} rows)" for s in result.steps] or ["Nothing to change."]
        if result.remaining:
            lines += ["", "Still found (check these yourself):"] + [f.reason for f in result.remaining]
        text.setPlainText("\n".join(lines))
        self.attest = QCheckBox(ATTESTATION)
        self.attest.setStyleSheet("QCheckBox { }")
        self.by = QLineEdit()
        self.by.setPlaceholderText("your name (kept with the attestation in the project)")
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel(f"Safe Harbor changed {len(result.steps)} column(s) of your table:"))
        layout.addWidget(text)
        layout.addWidget(self.attest)
        layout.addWidget(self.by)
        buttons = QDialogButtonBox(QDialogButtonBox.Save | QDialogButtonBox.Cancel)
        buttons.button(QDialogButtonBox.Save).setText("Save the Safe Harbor table…")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.resize(640, 420)


def ask_safe_harbor(window):
    session = window.session
    ds = session.dataset
    if ds is None or not ds.source.path:
        window.statusBar().showMessage("Open a table first.", 8000)
        return None
    roles = {c.name: c.role for c in ds.schema}

    def work():
        from ppdp_gui.engine.governance.safe_harbor_recipe import read_for_safe_harbor
        yield read_for_safe_harbor(ds.source.path, roles)

    return window.runner.start(work, on_done=lambda done: _show_safe_harbor(window, *done),
                               on_error=lambda exc, details: show_error(window, exc, details,
                                                                        context="Safe Harbor could not be applied."))


def _show_safe_harbor(window, result, data):
    dialog = SafeHarborDialog(result, window)
    dialog.data_ = data
    window.safe_harbor_dialog = dialog
    dialog.accepted.connect(lambda: save_safe_harbor(window, dialog, data))
    dialog.open()
    return dialog


def save_safe_harbor(window, dialog, data, path: str | None = None):
    from ppdp_gui.engine.data.writer import export_table
    from ppdp_gui.engine.governance.safe_harbor_recipe import record_in_context
    if path is None:
        src = Path(data.source.path)
        path, _ = QFileDialog.getSaveFileName(window, "Save the Safe Harbor table",
                                              str(src.with_name(src.name.split(".")[0] + "_safe_harbor.csv")),
                                              "Tables (*.csv *.tsv *.xlsx *.parquet)")
        if not path:
            return None
    try:
        written = export_table(dialog.result_.frame, path, source=data.source,
                               protected=list(window.session.ledger.protected_paths()))
    except PpdpError as exc:
        show_error(window, exc, context="The Safe Harbor table was not saved.")
        return None
    by = dialog.by.text().strip() if dialog.attest.isChecked() else None
    set_context(window.session, record_in_context(context_of(window.session), dialog.result_, by))
    window.statusBar().showMessage(f"Safe Harbor table saved to {written}"
                                   + (" and your attestation kept (save the project)." if by is not None else "."),
                                   12000)
    return written


# ---- next month's extract -----------------------------------------------------------------------------------
class ChangesDialog(QDialog):
    """What changed in the new extract (engine/governance/rerun.py), and a button to open it with the project."""

    def __init__(self, report, parent=None):
        super().__init__(parent)
        self.setObjectName("extract_changes_dialog")
        self.setWindowTitle("What changed in the new extract")
        self.report = report
        text = QTextBrowser()
        text.setMarkdown(report.markdown())
        self.text = text
        self.looked = QCheckBox("I have looked at these changes and want to release the new extract anyway")
        self.looked.setVisible(bool(report.blocking))
        buttons = QDialogButtonBox(QDialogButtonBox.Open | QDialogButtonBox.Close)
        self.open_button = buttons.button(QDialogButtonBox.Open)
        self.open_button.setText("Open the new extract with this project's settings")
        self.open_button.setEnabled(not report.blocking)
        self.looked.toggled.connect(self.open_button.setEnabled)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(text)
        layout.addWidget(self.looked)
        layout.addWidget(buttons)
        self.resize(720, 520)


def ask_rerun(window, path: str | None = None):
    session = window.session
    if session.dataset is None:
        window.statusBar().showMessage("Open the project first (File → Open project…).", 8000)
        return None
    if path is None:
        path, _ = QFileDialog.getOpenFileName(window, "Next month's extract", str(Path(session.dataset.source.path
                                                                                      or "").parent),
                                              "Tables (*.csv *.tsv *.txt *.gz *.xlsx *.parquet)")
        if not path:
            return None
    recipe = session.recipe(getattr(window, "previous_releases", []))

    def work():
        from ppdp_gui.engine.governance.rerun import compare_extracts
        yield compare_extracts(recipe, path, ledger=session.ledger)

    def done(report):
        dialog = ChangesDialog(report, window)
        window.changes_dialog = dialog
        dialog.accepted.connect(lambda: open_new_extract(window, recipe, path))
        dialog.open()

    return window.runner.start(work, on_done=done, on_error=lambda exc, details: show_error(
        window, exc, details, context="The new extract could not be compared."))


def open_new_extract(window, recipe, path) -> None:
    """Load `path` with the project's settings (roles, taxonomies, domains, mechanism, context); the project
    stays the same file, so File → Save project records that it now reads the new extract."""
    project = window.session.project_path
    recipe.source, recipe.source_sha256 = str(path), None

    def apply(_dataset) -> None:
        session = window.session
        try:
            session.set_opt_ins(allow_data_domains=recipe.allow_data_domains,
                                separate_dataset=recipe.separate_dataset)
            for column in recipe.publish_as_is:
                session.set_publish_as_is(column)
            names = [window.mechanism_view.combo.itemText(i) for i in range(window.mechanism_view.combo.count())]
            if recipe.mechanism in names:
                window.mechanism_view.choose(recipe.mechanism, recipe.params)
        except PpdpError as exc:
            show_error(window, exc, context="The project's parameters could not all be restored.")
        session.set_context(recipe.context)
        session.project_path = project

    window.data_view.load(str(path), recipe=recipe, after=apply)


# ---- the export gate -------------------------------------------------------------------------------------------
def gate_for_export(view, published, ask=None):
    """The release to export, or None when the custodian did not override a release above the threshold. `ask`
    (tests) replaces the question: ask(message) -> reason or None."""
    from ppdp_gui.engine.governance.gate import check_release, gate_published
    session = view.session
    holder = _Holder(getattr(session, "governance_context", None) or {})
    result = check_release(published.figures, cx.of(holder), dp=published.dp is not None or published.cost.is_dp)
    if result.allowed:
        return published
    if ask is None:
        def ask(message):
            text, ok = QInputDialog.getMultiLineText(
                view, "Export above the threshold", message.split(" Make the release safer")[0]
                + "\n\nTo export anyway, write why (kept in the project and in the dossier):")
            return text if ok and text.strip() else None
    reason = ask(result.message)
    if not reason:
        box = QMessageBox(QMessageBox.Information, "Not exported", "Nothing was exported. Make the release safer (a "
                          "larger k, coarser taxonomies, more suppression) in the Mechanism step, or change the "
                          "release context (Tools → Release context…).", QMessageBox.Ok, view)
        box.open()  # not modal for the caller: the event loop keeps running
        return None
    gated = gate_published(published, holder, reason)
    session.governance_context = holder.context
    return gated
