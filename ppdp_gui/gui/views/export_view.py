"""Export step: write the release with the engine's export (CSV / XLSX / Parquet, recounted on the written bytes,
atomic, never over the source or the ledger), its release note to publish with it, and its custodian record to
keep; and show the ledger entry that recorded it."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (QCheckBox, QComboBox, QFileDialog, QFormLayout, QHBoxLayout, QLineEdit,
                               QPlainTextEdit, QPushButton, QVBoxLayout, QWidget)

from ppdp_gui.engine.mechanisms.base import Progress
from ppdp_gui.gui.preview import short_cost
from ppdp_gui.gui.views.common import DONE, TODO, WARN, StepView, heading, note
from ppdp_gui.gui.widgets.messages import show_error

FORMATS = {"CSV (.csv)": ".csv", "Excel (.xlsx)": ".xlsx", "Parquet (.parquet)": ".parquet", "TSV (.tsv)": ".tsv"}


def note_path(path: Path) -> Path:
    from ppdp_gui.engine.pipeline.export import default_note_path
    return default_note_path(path)


def describe_entry(entry) -> str:
    """A ledger entry as 'field: value' lines, whatever its class looks like."""
    if entry is None:
        return "Nothing was charged to the ledger for this release (no ε spent: syntactic guarantee)."
    if hasattr(entry, "to_dict"):
        items = entry.to_dict().items()
    elif dataclasses.is_dataclass(entry):
        items = dataclasses.asdict(entry).items()
    elif hasattr(entry, "_asdict"):
        items = entry._asdict().items()
    elif hasattr(entry, "__dict__"):
        items = vars(entry).items()
    else:
        return str(entry)
    lines = []
    for key, value in items:
        if hasattr(value, "numerator") and hasattr(value, "denominator") and not isinstance(value, int):
            value = f"{value} (= {float(value):.6g})"
        lines.append(f"{key}: {value}")
    return "\n".join(lines)


def export_job(published, path: Path, with_note: bool, ledger):
    """Worker generator: the engine's export (tables staged, recounted on the bytes, renamed; note; record)."""
    from ppdp_gui.engine.pipeline.export import export
    yield Progress(0.1, f"Writing {path.name} and checking what was written…")
    exported = export(published, path, note_path=note_path(path) if with_note else None, ledger=ledger)
    yield Progress(1.0, "Exported")
    yield exported


class ExportView(StepView):
    title = "Export"
    exported_files = Signal(list)

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
        self.record_note = note(object_name="record_note")
        self.export_button = QPushButton("E&xport")
        self.export_button.setObjectName("export_button")
        self.result = note(object_name="export_result")
        self.entry_text = QPlainTextEdit()
        self.entry_text.setReadOnly(True)
        self.entry_text.setAccessibleName("Ledger entry of this release")
        self.exported: list[Path] = []
        self._busy = False
        self._path_record = None
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
        for field in (self.release_combo, self.format_combo, path_holder):
            label = form.labelForField(field)
            if label is not None:
                label.setBuddy(self.path_edit if field is path_holder else field)
        layout = QVBoxLayout(self)
        layout.addWidget(heading("6. Export"))
        layout.addWidget(note("Exports are written to a temporary file and then renamed, so a file is either "
                              "complete or absent; cells that a spreadsheet would run as formulas are "
                              "neutralised."))
        layout.addLayout(form)
        layout.addWidget(self.record_note)
        layout.addWidget(self.export_button)
        layout.addWidget(self.result)
        layout.addWidget(note("Ledger entry (what the budget ledger recorded for this release):"))
        layout.addWidget(self.entry_text)
        layout.addStretch(1)

        self.format_combo.currentTextChanged.connect(self._format_chosen)
        self.browse_button.clicked.connect(self._browse)
        self.export_button.clicked.connect(self.export)
        self.release_combo.currentIndexChanged.connect(self._release_chosen)
        session.releases_changed.connect(self._releases_changed)
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
        for w in (self.export_button, self.path_edit, self.browse_button, self.format_combo):
            w.setEnabled(has and not self._busy)
        if has:
            if record is not self._path_record or not self.path_edit.text().strip():
                self._path_record = record
                self.path_edit.setText(str(self.suggested_path()))
            self.entry_text.setPlainText(describe_entry(record.ledger_entry))
            done = self.session.exported(record)
            self.result.setText("Exported to: " + ", ".join(done) if done else "")
            self.record_note.setText(
                "The <b>custodian record</b> (source file, exact row counts, figures measured against your data, "
                "warnings) stays on this computer"
                + (f": <tt>{record.record_path}</tt>" if record.record_path else "")
                + ". Do not publish it.")
        else:
            self.entry_text.setPlainText("")
            self.result.setText("Nothing to export yet: make a release in the Run step.")
        self.state_changed.emit()

    def _format_chosen(self, text: str) -> None:
        current = self.path_edit.text().strip()
        if current:
            self.path_edit.setText(str(Path(current).with_suffix(FORMATS[text])))

    def _browse(self) -> None:
        suffix = FORMATS[self.format_combo.currentText()]
        path, _ = QFileDialog.getSaveFileName(self, "Export the release", self.path_edit.text(),
                                              f"{self.format_combo.currentText()} (*{suffix})")
        if path:
            self.path_edit.setText(path if Path(path).suffix else path + suffix)

    # -- export ----------------------------------------------------------------------------------------------------
    def export(self) -> None:
        record, ds = self.record, self.session.dataset
        text = self.path_edit.text().strip()
        if record is None or ds is None or not text or self._busy:
            return
        path = Path(text).expanduser()
        self._busy = True
        self._release_chosen()
        self.result.setText(f"Writing {path.name}…")
        ledger = self.session.ledger if record.ledger_path or record.cost.is_dp else None
        self.runner.start(lambda: export_job(record, path, self.report_check.isChecked(), ledger),
                          on_done=lambda exported: self._done(record, exported),
                          on_error=self._failed)

    def _done(self, record, exported) -> None:
        self._busy = False
        written = list(exported.files) + ([exported.note] if exported.note else [])
        self.exported = [Path(p) for p in written]
        self.session.add_exports(record, written)
        self._release_chosen()
        ok = all(c.ok for c in exported.checks)
        lines = ["Written: " + ", ".join(str(p) for p in exported.files)]
        if exported.checks:
            lines.append(f"Checked on the written file: {len(exported.checks)} promise(s) recounted, "
                         + ("all hold." if ok else "NOT all hold."))
        if exported.note:
            lines.append(f"Release note (publish it with the file): {exported.note}")
        if exported.record:
            lines.append(f"Custodian record (keep it here, do not publish): {exported.record}")
        self.result.setText("<br>".join(lines))
        self.exported_files.emit([str(p) for p in written])

    def _failed(self, exc: BaseException, details: str) -> None:
        self._busy = False
        self._release_chosen()
        self.result.setText(f"Not exported: {exc}")
        show_error(self, exc, details, context="The release was not exported.")

    def state(self) -> tuple[str, str]:
        if not self.session.releases:
            return TODO, "nothing to export yet"
        done = sum(1 for r in self.session.releases if self.session.exported(r))
        if done:
            return DONE, f"{done} release{'s' if done != 1 else ''} exported"
        return WARN, "release not exported yet"
