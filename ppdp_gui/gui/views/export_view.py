"""Export step: write the release with the engine's export (CSV / XLSX / Parquet, recounted on the written bytes,
atomic, never over the source or the ledger), its release note to publish with it, and its custodian record to
keep; and say in plain words what the budget ledger recorded for it.

The export runs in a worker process with its stages shown (writing, reading back and recounting, putting in
place) and can be cancelled at once until the files are put in place: a cancel and the worker's commit claim one
latch (workers/tasks.py), so either nothing is renamed, or everything is. A cancelled export leaves no file and no
temporary file behind.
"""

from __future__ import annotations

import dataclasses
import re
import shutil
import tempfile
import time
from datetime import datetime
from pathlib import Path
from types import SimpleNamespace

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import (QCheckBox, QComboBox, QFileDialog, QFormLayout, QHBoxLayout, QLabel, QLineEdit,
                               QPlainTextEdit, QProgressBar, QPushButton, QVBoxLayout, QWidget)

from ppdp_gui.engine.errors import PpdpError
from ppdp_gui.engine.mechanisms import registry
from ppdp_gui.engine.outputs import default_record_path
from ppdp_gui.engine.privacy.ledger_types import units_note
from ppdp_gui.engine.claims import epsilon_text
from ppdp_gui.gui.plan_words import params_text, short_cost
from ppdp_gui.gui.views.common import DONE, TODO, WARN, StepView, heading, note
from ppdp_gui.gui.widgets.messages import show_error
from ppdp_gui.gui.workers.tasks import CommitLatch, discard_temporaries, export_job, export_targets

FORMATS = {"CSV (.csv)": ".csv", "Excel (.xlsx)": ".xlsx", "Parquet (.parquet)": ".parquet", "TSV (.tsv)": ".tsv"}


def note_path(path: Path) -> Path:
    from ppdp_gui.engine.pipeline.export import default_note_path
    return default_note_path(path)


def when(iso: str | None) -> str:
    """'24 Nov 2026 at 14:03' in local time, from the ledger's ISO time stamp."""
    if not iso:
        return "an unknown time"
    try:
        stamp = datetime.fromisoformat(str(iso)).astimezone()
    except ValueError:
        return str(iso)
    return f"{stamp.day} {stamp:%b %Y} at {stamp:%H:%M}"


def short_hash(text: str | None) -> str:
    return "(none)" if not text else f"{text[:12]}…{text[-6:]}" if len(text) > 24 else text


def describe_entry(record, exported: bool = False) -> str:
    """What the budget ledger recorded for a release, in plain words (the exact fingerprints are kept in full
    where an auditor needs them: the release note and the custodian record). `exported`: a file of it was put in
    place, so the ledger now holds its fingerprint (the entry in memory is the one from before the export)."""
    entry, budget = record.ledger_entry, record.budget
    fingerprint = (f"The release's fingerprint is {short_hash(record.output_hash)} (the release note lists it in "
                   "full as “output sha256”, so this entry can be matched to the file that was published).")
    if entry is None:
        return ("Nothing was charged to the privacy budget: "
                + (f"{short_cost(record.cost)} does not use ε." if record.cost.k is not None else
                   "this release does not use ε.") + "\n\n" + fingerprint)
    lines = [f"Charged ε = {epsilon_text(entry.epsilon)}" + (f" (δ = {float(entry.delta):.3g})" if entry.delta else "")
             + f" on {when(entry.created)} to this table's privacy budget (ledger entry #{entry.id})."]
    units = units_note(budget) if budget is not None else ""  # empty unless a replace-one release is among them
    if budget is not None and getattr(budget, "cap", None) is not None:
        lines.append(f"Spent on this table so far: ε = {epsilon_text(budget.spent)}{units} of its cap of "
                     f"{epsilon_text(budget.cap)}"
                     + (f" ({epsilon_text(budget.remaining)} left)." if budget.remaining is not None else "."))
    elif budget is not None:
        lines.append(f"Spent on this table so far: ε = {epsilon_text(budget.spent)}{units} (no cap set).")
    ident = record.identity
    if ident is not None and getattr(ident, "near_copy_of", None):
        lines.append("This table is a near copy of one released before, so it shares that table's budget.")
    lines.append(f"The table is recognised by its rows (fingerprint {short_hash(entry.fingerprint)}), not by its "
                 "file name: a copy or an edited version is charged to the same budget.")
    lines.append(fingerprint if (entry.output_hash or exported) else
                 "No file of this release has been put in place yet, so the entry records no output (its "
                 "fingerprint is added when you export it); the ε stays spent.")
    params = dict(entry.params or {})
    caveats = params.pop("not ε-DP because", None)
    if params:
        try:
            specs = registry.get(record.mechanism).params
        except Exception:  # noqa: BLE001 - a mechanism no longer installed: its parameters by name
            specs = ()
        # an empty column parameter names the column whose role it took when the release was made ('Class column
        # = disposition (its role is Class)'), as the Run step said — not '(none)'
        roles = SimpleNamespace(schema=tuple(getattr(record, "columns", ()) or ()))
        lines.append(f"Recorded with it: {record.mechanism}, {params_text(params, specs, roles)}.")
    if caveats:
        lines.append("Recorded as NOT ε-differentially private: " + "; ".join(map(str, caveats)) + ".")
    return "\n\n".join(lines)


class ExportView(StepView):
    title = "Export"
    exported_files = Signal(list)
    task = staticmethod(export_job)  # the worker's generator (module-level: the worker process imports it)

    def __init__(self, session, runner, parent=None):
        super().__init__(session, runner, parent)
        self.release_combo = QComboBox()
        self.release_combo.setAccessibleName("Release to export")
        self.format_combo = QComboBox()
        self.format_combo.addItems(list(FORMATS))
        self.format_combo.setAccessibleName("File format")
        self.path_edit = QLineEdit()
        self.path_edit.setAccessibleName("Export file")
        self.path_edit.setToolTip("Where the released table is written. The source file is never overwritten.")
        self.browse_button = QPushButton("&Browse…")
        self.report_check = QCheckBox("Also write the release &note (JSON) next to it — publish it with the file")
        self.report_check.setChecked(True)
        self.report_check.setToolTip("The release note says what the file is and what its guarantee means. It holds "
                                     "nothing computed from your data except through the mechanism's noise.")
        self.record_check = QCheckBox("Also save a &copy of the custodian record (JSON) next to it — for you, do "
                                      "not publish it")
        self.record_check.setToolTip("The custodian record holds exact counts and figures measured on your data. "
                                     "A copy always stays in the ledger's folder; this saves one more beside the "
                                     "released file.")
        self.pdf_check = QCheckBox("Also write &PDF copies of the release note and the custodian record")
        self.pdf_check.setToolTip("The same documents as PDF, for reading and printing; written beside their JSON.")
        self.record_note = note(object_name="record_note")
        self.export_button = QPushButton("E&xport")
        self.export_button.setObjectName("export_button")
        self.cancel_button = QPushButton("Cancel e&xport")
        self.cancel_button.setObjectName("cancel_export")
        self.cancel_button.setToolTip("Stops the export at once while it writes and checks; nothing is left behind. "
                                      "Once the checked files are being put in place it finishes.")
        self.cancel_button.setEnabled(False)
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setAccessibleName("Export progress")
        self.progress.setFormat("%p %")
        self.progress.setVisible(False)
        self.stage = QLabel("")
        self.stage.setObjectName("export_stage")
        self.stage.setWordWrap(True)
        self.result = note(object_name="export_result")
        self.entry_text = QPlainTextEdit()
        self.entry_text.setReadOnly(True)
        self.entry_text.setAccessibleName("Ledger entry of this release")
        self.exported: list[Path] = []
        self._busy = False
        self._job = None
        self._latch: CommitLatch | None = None
        self._started = 0.0
        self._stage_text = ""
        self._targets: list = []
        self._folder: str | None = None
        self._path_record = None
        self._ticker = QTimer(self)
        self._ticker.setInterval(1000)
        self._ticker.timeout.connect(self._show_stage)
        self.entry_text.setMaximumHeight(self.fontMetrics().height() * 12)

        path_row = QHBoxLayout()
        path_row.addWidget(self.path_edit, 1)
        path_row.addWidget(self.browse_button)
        path_holder = QWidget()
        path_holder.setLayout(path_row)
        path_row.setContentsMargins(0, 0, 0, 0)
        form = QFormLayout()
        form.addRow("Re&lease:", self.release_combo)
        form.addRow("&Format:", self.format_combo)
        form.addRow("&File:", path_holder)
        form.addRow("", self.report_check)
        form.addRow("", self.record_check)
        form.addRow("", self.pdf_check)
        # every output of engine.pipeline.outputs (what `ppdp run` offers), with its control here
        self.output_controls = {"table": self.path_edit, "note": self.report_check, "record": self.record_check,
                                "pdf": self.pdf_check}
        for field in (self.release_combo, self.format_combo, path_holder):
            label = form.labelForField(field)
            if label is not None:
                label.setBuddy(self.path_edit if field is path_holder else field)
        buttons = QHBoxLayout()
        buttons.addWidget(self.export_button)
        buttons.addWidget(self.cancel_button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addWidget(heading("6. Export"))
        layout.addWidget(note("Exports are written to a temporary file, read back and checked, and only then "
                              "renamed, so a file is either complete or absent; cells that a spreadsheet would run "
                              "as formulas are neutralised."))
        layout.addLayout(form)
        layout.addWidget(self.record_note)
        layout.addLayout(buttons)
        layout.addWidget(self.progress)
        layout.addWidget(self.stage)
        layout.addWidget(self.result)
        layout.addWidget(note("<b>What the budget ledger recorded for this release:</b>"))
        layout.addWidget(self.entry_text)
        layout.addStretch(1)

        self.format_combo.currentTextChanged.connect(self._format_chosen)
        self.path_edit.textEdited.connect(self._path_named)
        self.browse_button.clicked.connect(self._browse)
        self.export_button.clicked.connect(self.export)
        self.cancel_button.clicked.connect(self.cancel)
        self.release_combo.currentIndexChanged.connect(self._release_chosen)
        session.releases_changed.connect(self._releases_changed)
        session.exports_changed.connect(self._release_chosen)
        self._releases_changed()

    # -- choices ---------------------------------------------------------------------------------------------------
    @property
    def record(self):
        i = self.release_combo.currentIndex()
        return self.session.releases[i] if 0 <= i < len(self.session.releases) else None

    def _releases_changed(self) -> None:
        self.release_combo.blockSignals(True)
        self.release_combo.clear()
        for i, r in enumerate(self.session.releases, 1):
            self.release_combo.addItem(f"{i}. {r.mechanism} — {short_cost(r.cost)}" + ("" if r.holds else
                                                                                         " — NOT ε-DP"))
        self.release_combo.setCurrentIndex(len(self.session.releases) - 1)
        self.release_combo.blockSignals(False)
        self._release_chosen()

    def suggested_path(self) -> Path | None:
        record, ds = self.record, self.session.dataset
        if record is None or ds is None:
            return None
        src = Path(ds.source.path) if ds.source.path else Path.home() / "table.csv"
        stem = src.name.split(".")[0]
        mech = re.sub(r"[^0-9A-Za-z]+", "_", record.mechanism).strip("_").lower()
        n = self.session.releases.index(record) + 1
        return src.with_name(f"{stem}_{mech}_release{n}{FORMATS[self.format_combo.currentText()]}")

    def _release_chosen(self, *_args) -> None:
        record = self.record
        has = record is not None
        for w in (self.export_button, self.format_combo, self.release_combo,
                  self.report_check, self.record_check, self.pdf_check):
            w.setEnabled(has and not self._busy)
        # the file can be named before the run: the Run step checks it before anything is charged
        for w in (self.path_edit, self.browse_button):
            w.setEnabled(self.session.dataset is not None and not self._busy)
        if has:
            if record is not self._path_record or not self.path_edit.text().strip():
                self._path_record = record
                self.path_edit.setText(self.session.output_path or str(self.suggested_path()))
            done = self.session.exported(record)
            self.entry_text.setPlainText(describe_entry(record, exported=bool(done)))
            self.result.setText("Exported to: " + ", ".join(done) if done else "")
            self.record_note.setText(
                "The <b>custodian record</b> (source file, exact row counts, figures measured against your data, "
                "warnings) stays on this computer"
                + (f": <tt>{record.record_path}</tt>" if record.record_path else "")
                + ". Do not publish it.")
        else:
            self._path_record = None
            if self.path_edit.text() != (self.session.output_path or ""):
                self.path_edit.setText(self.session.output_path or "")
            self.entry_text.setPlainText("")
            self.result.setText("Nothing to export yet: make a release in the Run step. You can name its file "
                                "now; the Run step checks it before anything is charged.")
        self.state_changed.emit()

    def _path_named(self, text: str) -> None:
        """The custodian named the file (typed or browsed): the next release is aimed at it (Session.output_path)."""
        self.session.output_path = text.strip() or None

    def _format_chosen(self, text: str) -> None:
        current = self.path_edit.text().strip()
        if current:
            self.path_edit.setText(str(Path(current).with_suffix(FORMATS[text])))
            if self.session.output_path:
                self._path_named(self.path_edit.text())

    def _browse(self) -> None:
        suffix = FORMATS[self.format_combo.currentText()]
        path, _ = QFileDialog.getSaveFileName(self, "Export the release", self.path_edit.text(),
                                              f"{self.format_combo.currentText()} (*{suffix})")
        if path:
            self.path_edit.setText(path if Path(path).suffix else path + suffix)
            self._path_named(self.path_edit.text())

    # -- export ----------------------------------------------------------------------------------------------------
    def export(self) -> None:
        record, ds = self.record, self.session.dataset
        text = self.path_edit.text().strip()
        if record is None or ds is None or not text or self._busy:
            return
        from ppdp_gui.gui.governance_menu import gate_for_export  # the release context's risk threshold
        gated = gate_for_export(self, record)
        if gated is None:
            return
        path = Path(text).expanduser()
        note_to = note_path(path) if self.report_check.isChecked() else None
        record_to = default_record_path(path) if self.record_check.isChecked() else None
        pdf = self.pdf_check.isChecked()  # the note's and the record's (the record: also the ledger folder's copy)
        try:  # the one output guard (data/outputs.py), here where the window knows its inputs
            from ppdp_gui.engine.pipeline.export import check_outputs
            check_outputs(path, note_path=note_to, record_path=record_to, source=ds.source,
                          ledger=self.session.ledger, inputs=list(self.session.recipe().taxonomy_files.values()),
                          overwrite=True, pdf=pdf)
        except (PpdpError, OSError) as exc:  # shown to the custodian, nothing is written
            show_error(self, exc, context="The release was not exported.")
            return
        ledger = None
        if record.ledger_path or record.cost.is_dp:
            try:
                ledger = str(self.session.ledger.path)
            except Exception:  # noqa: BLE001 - the engine refuses what it must without it; the error says why
                ledger = None
        folder = tempfile.mkdtemp(prefix="ppdp_export_")  # private: the latch lives here
        self._latch = CommitLatch(Path(folder) / "decision")
        self._targets = export_targets(record, path, note_to, record_to, pdf)
        self._busy = True
        self._started = time.time()
        self._release_chosen()
        self.result.setText("")
        self.progress.setValue(0)
        self.progress.setVisible(True)
        self.cancel_button.setEnabled(True)
        self._stage_text = f"Starting the export of {path.name}…"
        self._show_stage()
        self._ticker.start()
        # the release travels to the worker without the closure some mechanisms attach for their own figures
        travelling = dataclasses.replace(gated, release=dataclasses.replace(record.release, apply_to=None))
        self._job = self.runner.start_process(
            self.task, (travelling, path, note_to, ledger, str(self._latch.path), record_to, pdf),
            on_done=lambda exported: self._done(record, exported), on_error=self._failed,
            on_progress=self._progress, on_cancelled=self._cancelled)
        self._folder = folder
        self.state_changed.emit()

    @property
    def busy(self) -> bool:
        return self._busy

    def cancel(self) -> None:
        """Stop the export at once unless its files are already being put in place (then it finishes)."""
        if self._job is None or self._latch is None:
            return
        self.cancel_button.setEnabled(False)
        if self._latch.claim("cancel"):
            self._stage_text = "Cancelling…"
            self._job.cancel()
        else:
            self._stage_text = ("Too late to cancel: the checked files are already being put in place. The export "
                                "finishes in a moment.")
        self._show_stage()

    def _progress(self, fraction: float, message: str) -> None:
        self.progress.setValue(int(round(1000 * max(0.0, min(1.0, fraction)))))
        if message:
            self._stage_text = message
        self._show_stage()

    def _show_stage(self) -> None:
        seconds = int(time.time() - self._started) if self._busy else 0
        self.stage.setText(self._stage_text + (f" ({seconds} s)" if self._busy and seconds >= 2 else ""))

    def _end(self) -> None:
        self._busy = False
        self._job = None
        if self._folder:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None
        self._ticker.stop()
        self.cancel_button.setEnabled(False)
        self.progress.setVisible(False)
        self._release_chosen()

    def _done(self, record, exported) -> None:
        self._end()
        self.stage.setText("")
        written = list(exported.files) + ([exported.note] if exported.note else [])
        pdfs = [Path(p).with_suffix(".pdf") for p in (exported.note, exported.record) if p] if exported.pdf else []
        self.exported = [Path(p) for p in written]
        self.session.output_path = None  # the file named was for this release; the next gets its own name
        self.session.add_exports(record, written)
        self._release_chosen()
        ok = all(c.ok for c in exported.checks)
        lines = ["Written: " + ", ".join(str(p) for p in exported.files)]
        if exported.checks:
            n = len(exported.checks)
            lines.append(f"Checked on the written file: {'its one promise' if n == 1 else f'its {n} promises'} "
                         "(the guarantee the release note states) recounted — "
                         + (("it holds." if n == 1 else "all hold.") if ok else
                            ("it does NOT hold." if n == 1 else "NOT all hold.")))
        if exported.note:
            lines.append(f"Release note (publish it with the file): {exported.note}")
        for kept in getattr(exported, "kept_notes", ()):
            lines.append(f"A release note of an earlier release was already there. It was not overwritten: it is "
                         f"kept as {kept}, so each release keeps its own note.")
        if exported.record:
            lines.append(f"Custodian record (keep it here, do not publish): {exported.record}")
        if pdfs:
            lines.append("PDF copies: " + ", ".join(str(p) for p in pdfs))
        self.result.setText("<br>".join(lines))
        self.exported_files.emit([str(p) for p in written])

    def _cancelled(self) -> None:
        left = discard_temporaries(self._targets, self._started)  # what a terminated worker could not remove
        self._end()
        self.stage.setText("")
        self.result.setText("Export cancelled: nothing was written" + (f" (removed {len(left)} unfinished "
                                                                         "temporary file(s))." if left else "."))

    def _failed(self, exc: BaseException, details: str) -> None:
        discard_temporaries(self._targets, self._started)
        self._end()
        self.stage.setText("")
        self.result.setText(f"Not exported: {exc}")
        show_error(self, exc, details, context="The release was not exported.")

    def state(self) -> tuple[str, str]:
        if not self.session.releases:
            return TODO, "nothing to export yet"
        done = sum(1 for r in self.session.releases if self.session.exported(r))
        if done:
            return DONE, f"{done} release{'s' if done != 1 else ''} exported"
        return WARN, "release not exported yet"
