"""Export step: write the release (CSV / XLSX / Parquet, atomically, never over the source), its JSON report,
and show the ledger entry that recorded it."""

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


def report_path(path: Path) -> Path:
    return path.with_name(path.stem + ".report.json")


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


def export_job(record, data, path: Path, with_report: bool):
    """Worker generator: the table, then the report; returns the paths written."""
    from ppdp_gui.engine.data.writer import export_table, write_json_atomic
    yield Progress(0.1, f"Writing {path.name}…")
    written = [export_table(record.release.table, path, source=data.source)]
    for name, frame in (record.release.extra_tables or {}).items():
        safe = re.sub(r"[^0-9A-Za-z_-]+", "_", name).strip("_") or "part"
        written.append(export_table(frame, path.with_name(f"{path.stem}.{safe}{path.suffix}"), source=data.source))
    if with_report:
        from ppdp_gui.engine.persistence.report import release_report
        yield Progress(0.8, "Writing the report…")
        report = release_report(record.release, data, ledger_entry=record.ledger_entry, measures=record.measures,
                                output_path=written[0])
        written.append(write_json_atomic(report, report_path(path)))
    yield Progress(1.0, "Exported")
    yield written


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
        self.report_check = QCheckBox("Also write the release &report (JSON) next to it")
        self.report_check.setChecked(True)
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
            self.release_combo.addItem(f"{i}. {r.release.mechanism} — {short_cost(r.release.cost)}")
        self.release_combo.setCurrentIndex(len(self.session.releases) - 1)
        self.release_combo.blockSignals(False)
        self._release_chosen()

    def suggested_path(self) -> Path | None:
        record, ds = self.record, self.session.dataset
        if record is None or ds is None:
            return None
        src = Path(ds.source.path) if ds.source.path else Path.home() / "table.csv"
        stem = src.name.split(".")[0]
        mech = re.sub(r"[^0-9A-Za-z]+", "_", record.release.mechanism).strip("_").lower()
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
            self.result.setText("Exported to: " + ", ".join(record.exported_to) if record.exported_to else "")
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
        self.runner.start(lambda: export_job(record, ds, path, self.report_check.isChecked()),
                          on_done=lambda written: self._done(record, written),
                          on_error=self._failed)

    def _done(self, record, written) -> None:
        self._busy = False
        self.exported = [Path(p) for p in written]
        record.exported_to.extend(str(p) for p in written)
        self._release_chosen()
        self.result.setText("Written: " + ", ".join(str(p) for p in written))
        self.exported_files.emit([str(p) for p in written])

    def _failed(self, exc: BaseException, details: str) -> None:
        self._busy = False
        self._release_chosen()
        self.result.setText(f"Not exported: {exc}")
        show_error(self, exc, details, context="The release was not exported.")

    def state(self) -> tuple[str, str]:
        if not self.session.releases:
            return TODO, "nothing to export yet"
        done = sum(1 for r in self.session.releases if r.exported_to)
        if done:
            return DONE, f"{done} release{'s' if done != 1 else ''} exported"
        return WARN, "release not exported yet"
