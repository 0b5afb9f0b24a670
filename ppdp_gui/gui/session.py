"""The window's one piece of state: the loaded dataset, the chosen mechanism and parameters, the releases made.

Views read from and write to a `Session` and listen to its signals; they never talk to each other. Everything in
it is an engine object, so saving a project (gui/project.py) is a plain translation to JSON.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QObject, Signal

from ppdp_gui.engine.data.schema import Dataset, Role
from ppdp_gui.engine.mechanisms import registry
from ppdp_gui.engine.mechanisms.base import Release


@dataclass
class ReleaseRecord:
    """One release made in this session, with what the ledger recorded for it (None when nothing was charged)."""

    release: Release
    ledger_entry: Any = None
    outcome: Any = None  # workers.tasks.RunOutcome: utility and risk figures
    exported_to: list[str] = field(default_factory=list)

    @property
    def measures(self) -> dict[str, float]:
        return dict(self.outcome.measures) if self.outcome is not None else {}

    @property
    def risk(self) -> dict[str, float]:
        return dict(self.outcome.risk) if self.outcome is not None else {}


class Session(QObject):
    dataset_changed = Signal()  # new table, or roles / kinds / taxonomies changed
    mechanism_changed = Signal()  # mechanism or parameters changed
    releases_changed = Signal()
    sweeps_changed = Signal()

    def __init__(self, ledger=None, parent=None):
        super().__init__(parent)
        self.dataset: Dataset | None = None
        self.mechanism_name: str | None = None
        self.params: dict[str, Any] = {}
        self.releases: list[ReleaseRecord] = []
        self.sweeps: list[tuple[str, Any]] = []  # (label, SweepResult)
        self.project_path: str | None = None
        # taxonomies attached when the table was opened: column -> (ARX file, Taxonomy), and files that failed
        self.auto_taxonomies: dict[str, tuple[str, Any]] = {}
        self.auto_notes: list[str] = []
        self._ledger = ledger
        self._fingerprint: tuple[object, str] | None = None
        self._preview = None
        # connected first, so the cache is stale before any view hears of a change
        for signal in (self.dataset_changed, self.mechanism_changed, self.releases_changed):
            signal.connect(self.invalidate_preview)

    # -- dataset ------------------------------------------------------------------------------------------
    def set_dataset(self, dataset: Dataset | None, fingerprint: str | None = None) -> None:
        """A new table; `fingerprint` is its ledger fingerprint if the loader already computed it."""
        self.dataset = dataset
        self._fingerprint = (dataset.frame, fingerprint) if dataset is not None and fingerprint else None
        self.releases.clear()
        self.sweeps.clear()
        self.dataset_changed.emit()
        self.releases_changed.emit()
        self.sweeps_changed.emit()

    def update_dataset(self, dataset: Dataset) -> None:
        """Same table, changed roles / kinds / taxonomies: keeps releases already made."""
        self.dataset = dataset
        self.dataset_changed.emit()

    def set_role(self, column: str, role: Role) -> None:
        if self.dataset is not None and self.dataset.spec(column).role != role:
            self.update_dataset(self.dataset.with_column(column, role=role))

    def set_taxonomy(self, column: str, taxonomy) -> None:
        if self.dataset is not None:
            self.update_dataset(self.dataset.with_column(column, taxonomy=taxonomy))

    def auto_attached(self, column: str) -> str | None:
        """The ARX file the column's taxonomy was attached from when the table opened (None once changed)."""
        file, tax = self.auto_taxonomies.get(column, (None, None))
        ds = self.dataset
        if file is None or ds is None or column not in ds.frame.columns or ds.spec(column).taxonomy is not tax:
            return None
        return file

    def qi_without_taxonomy(self) -> list[str]:
        if self.dataset is None:
            return []
        return [c.name for c in self.dataset.schema
                if c.role == Role.QUASI_IDENTIFIER and c.taxonomy is None and c.kind == "categorical"]

    # -- mechanism ----------------------------------------------------------------------------------------
    def set_mechanism(self, name: str | None, params: dict[str, Any] | None = None) -> None:
        self.mechanism_name = name
        self.params = dict(params or {})
        self.mechanism_changed.emit()

    def set_params(self, params: dict[str, Any]) -> None:
        self.params = dict(params)
        self.mechanism_changed.emit()

    def mechanism(self):
        """A fresh instance of the chosen mechanism (None if none is chosen)."""
        return registry.create(self.mechanism_name) if self.mechanism_name else None

    # -- releases ------------------------------------------------------------------------------------------
    def add_release(self, release: Release, ledger_entry=None, outcome=None) -> ReleaseRecord:
        record = ReleaseRecord(release, ledger_entry, outcome)
        self.releases.append(record)
        self.releases_changed.emit()
        return record

    @property
    def last_release(self) -> ReleaseRecord | None:
        return self.releases[-1] if self.releases else None

    def add_sweep(self, label: str, result) -> None:
        self.sweeps.append((label, result))
        self.sweeps_changed.emit()

    # -- what a run would do ----------------------------------------------------------------------------------
    def preview(self):
        """Problems, cost and budget of the current choice (cached until something changes)."""
        if self._preview is None:
            from ppdp_gui.gui.preview import preview
            self._preview = preview(self)
        return self._preview

    def invalidate_preview(self) -> None:
        self._preview = None

    # -- ledger ----------------------------------------------------------------------------------------------
    @property
    def ledger(self):
        if self._ledger is None:
            from ppdp_gui.engine.privacy.ledger import Ledger
            self._ledger = Ledger()
        return self._ledger

    def fingerprint_function(self):
        """ledger.fingerprint, for a worker to call; None when the ledger cannot be opened here."""
        try:
            return self.ledger.fingerprint
        except (ImportError, OSError):
            return None

    def fingerprint(self) -> str | None:
        """The ledger's fingerprint of the loaded table, computed once per table."""
        if self.dataset is None:
            return None
        frame = self.dataset.frame
        if self._fingerprint is None or self._fingerprint[0] is not frame:
            self._fingerprint = (frame, self.ledger.fingerprint(frame))
        return self._fingerprint[1]
