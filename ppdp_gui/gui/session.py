"""The window's one piece of state: the loaded dataset, the chosen mechanism and parameters, the releases made.

Views read from and write to a `Session` and listen to its signals; they never talk to each other. Everything in
it is an engine object: a release is the engine's `Published`, the preview is the engine's `Plan`, and saving a
project is the engine's recipe (`recipe()`), so the window and `ppdp run --recipe` make the same release.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QObject, Signal

from ppdp_gui.engine.data.schema import Dataset, Role
from ppdp_gui.engine.mechanisms import registry


@dataclass
class TableState:
    """What the window knows that was made from, or decided for, the table that is open: its releases and
    exports, its simulations, the opt-ins and "publish as is" confirmations, and the parameters typed or applied
    (from advice) for each mechanism. `Session.set_dataset` gives every table a fresh one, in that one place, so
    nothing of a table opened before can be shown, offered or applied to the next; views keep what they derive
    from a table here, or forget it when `Session.table_opened` is emitted (`StepView.forget_table`)."""

    releases: list = field(default_factory=list)  # engine.pipeline.Published, in the order made
    exports: dict[str, list[str]] = field(default_factory=dict)  # release id -> files written
    sweeps: list[tuple[str, Any]] = field(default_factory=list)  # (label, SweepResult)
    allow_data_domains: bool = False  # the custodian's explicit opt-in (the release is then not ε-DP)
    separate_dataset: bool = False  # the custodian's confirmation that a near copy is about other people
    # nearly unique columns the custodian confirmed may be published as is (the plan's `publish_as_is`)
    publish_as_is: set[str] = field(default_factory=set)
    param_memory: dict[str, dict[str, Any]] = field(default_factory=dict)  # mechanism -> values set for this table
    # the file the custodian named for the next release (the Export step's File, typed before a run): the Run step
    # checks it with the engine's output guard before anything is charged, as `ppdp run -o` is checked
    output_path: str | None = None
    # the release context (recipient, threshold, overrides, project id: engine/persistence/release_context.py), asked for
    # this table's releases; a project restores its own once its table is open
    governance_context: dict = field(default_factory=dict)


def _table_field(name: str) -> property:
    """A Session attribute that belongs to the open table (kept in `Session.table`)."""
    return property(lambda self: getattr(self.table, name), lambda self, value: setattr(self.table, name, value),
                    doc=f"The open table's {name} (see TableState).")


class Session(QObject):
    table_opened = Signal()  # another table (or the same file read again): forget everything of the one before
    dataset_changed = Signal()  # new table, or roles / kinds / taxonomies changed
    mechanism_changed = Signal()  # mechanism or parameters changed
    releases_changed = Signal()
    exports_changed = Signal()  # a release was exported (the plan and the releases shown stay as they are)
    sweeps_changed = Signal()
    context_changed = Signal()  # the release context (and with it the keyed pseudonyms, date shifts) was replaced

    def __init__(self, ledger=None, parent=None):
        super().__init__(parent)
        self.dataset: Dataset | None = None
        self.mechanism_name: str | None = None
        self.params: dict[str, Any] = {}
        self.table = TableState()
        self.project_path: str | None = None
        # taxonomies attached when the table was opened: column -> (ARX file, Taxonomy), and files that failed
        self.auto_taxonomies: dict[str, tuple[str, Any]] = {}
        self.auto_notes: list[str] = []
        self._ledger = ledger
        self._preview = None
        self.preview_treated = None  # what the project's pseudonyms and date shifts did to the previewed table
        self._suggested: tuple = (None, None)  # (table frame, first runnable mechanism) from the loader
        # connected first, so the cache is stale before any view hears of a change
        for signal in (self.dataset_changed, self.mechanism_changed, self.releases_changed):
            signal.connect(self.invalidate_preview)

    releases = _table_field("releases")
    exports = _table_field("exports")
    sweeps = _table_field("sweeps")
    allow_data_domains = _table_field("allow_data_domains")
    separate_dataset = _table_field("separate_dataset")
    publish_as_is = _table_field("publish_as_is")
    output_path = _table_field("output_path")
    governance_context = _table_field("governance_context")

    # -- dataset ------------------------------------------------------------------------------------------
    def set_dataset(self, dataset: Dataset | None) -> None:
        """A new table (or the file read again with another policy): the one place where everything of the
        previous table is forgotten — a fresh TableState, the parameters back to their defaults (kept only when
        the very same file is read again), the taxonomy coverage worked out for other tables dropped — before any
        view hears of the new one (`table_opened` first, so views empty what they derived from the old table,
        then `dataset_changed`)."""
        from ppdp_gui.gui import coverage_cache
        same_file = same_source(self.dataset, dataset)
        memory = {**self.table.param_memory, **({self.mechanism_name: dict(self.params)} if self.mechanism_name
                                                 else {})}
        context = dict(self.table.governance_context)
        self.dataset = dataset
        self.table = TableState()
        if same_file:  # the same file read again (another missing-value policy, a kind changed): same parameters
            self.table.param_memory = memory
            self.table.governance_context = context  # and the same release context (pseudonyms, date shifts)
        else:
            self.params = {}
        coverage_cache.keep_only(None if dataset is None else dataset.frame)
        self.table_opened.emit()
        self.dataset_changed.emit()
        self.releases_changed.emit()
        self.sweeps_changed.emit()

    def suggest_mechanism(self, frame, name: str | None) -> None:
        """The first mechanism that can run on the table `frame` as it was opened, worked out by the loader in
        its worker (the Mechanism step's first choice; see `suggested_mechanism`)."""
        self._suggested = (frame, name)

    def suggested_mechanism(self) -> tuple[bool, str | None]:
        """(known, name): the loader's suggestion for the current table, if it made one for this very table."""
        frame, name = self._suggested
        known = self.dataset is not None and frame is not None and frame is self.dataset.frame
        return known, (name if known else None)

    def update_dataset(self, dataset: Dataset) -> None:
        """Same table, changed roles / kinds / taxonomies: keeps releases already made."""
        self.dataset = dataset
        self.dataset_changed.emit()

    def set_role(self, column: str, role: Role) -> None:
        if self.dataset is not None and self.dataset.spec(column).role != role:
            self.update_dataset(self.dataset.with_column(column, role=role))
            from ppdp_gui.engine.governance.treatments import applicable
            kept = applicable(self.dataset, self.treatments())  # e.g. no pseudonym for a quasi-identifier
            if kept != self.treatments():
                self.set_treatments(kept)

    def treatments(self):
        """The keyed pseudonyms and date shifts the project states (engine/governance/treatments.py)."""
        from ppdp_gui.engine.persistence import release_context as cx
        from ppdp_gui.engine.governance.treatments import of_context
        return of_context(cx.context_from_json(self.governance_context or None))

    def set_context(self, context: dict) -> None:
        """The open table's release context, replaced (a project opened, a new extract opened with it)."""
        self.governance_context = dict(context or {})
        self.context_changed.emit()
        self.mechanism_changed.emit()

    def set_treatments(self, treatments) -> None:
        """The Data step's "Released as" choices, kept in the release context (saved with the project, read by
        `ppdp run --recipe` alike); the run applies them (gui/workers/tasks.py → governance/treatments.py)."""
        from ppdp_gui.engine.persistence import release_context as cx
        from ppdp_gui.engine.governance.treatments import in_context
        self.governance_context = in_context(cx.context_from_json(self.governance_context or None),
                                             treatments).to_json()
        self.mechanism_changed.emit()  # what the release contains changed: the Run step says it again

    def confirm_roles(self) -> None:
        """The custodian's "Confirm roles and kinds": every role and kind shown is now theirs, not a guess read
        from the values (a differentially private plan refuses guesses; engine/pipeline/plan.py)."""
        if self.dataset is not None and self.dataset.guessed_columns:
            self.update_dataset(self.dataset.confirm_guesses())

    def set_taxonomy(self, column: str, taxonomy) -> None:
        if self.dataset is not None:
            self.update_dataset(self.dataset.with_column(column, taxonomy=taxonomy))

    def set_domain(self, column: str, domain) -> None:
        """A column's public domain (engine.data.domains.Domain), or None to remove it."""
        if self.dataset is not None:
            self.update_dataset(self.dataset.with_column(column, domain=domain))

    def set_opt_ins(self, *, allow_data_domains: bool | None = None, separate_dataset: bool | None = None) -> None:
        if allow_data_domains is not None:
            self.allow_data_domains = bool(allow_data_domains)
        if separate_dataset is not None:
            self.separate_dataset = bool(separate_dataset)
        self.mechanism_changed.emit()

    def set_publish_as_is(self, column: str, on: bool = True) -> None:
        """The custodian's "publish as is" for a column the plan finds unique or nearly unique per row (one name
        for it everywhere: the recipe's, the plan's, `ppdp run --publish-as-is`)."""
        before = set(self.publish_as_is)
        (self.publish_as_is.add if on else self.publish_as_is.discard)(column)
        if self.publish_as_is != before:
            self.mechanism_changed.emit()

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
    def add_release(self, published) -> None:
        self.releases.append(published)
        self.releases_changed.emit()

    @property
    def last_release(self):
        return self.releases[-1] if self.releases else None

    def exported(self, published) -> list[str]:
        return self.exports.get(published.release_id, [])

    def add_exports(self, published, paths) -> None:
        self.exports.setdefault(published.release_id, []).extend(str(p) for p in paths)
        # not releases_changed: that would price the plan again (ledger reads in the GUI thread) and show the
        # release again, for nothing an export changes
        self.exports_changed.emit()

    def add_sweep(self, label: str, result) -> None:
        self.sweeps.append((label, result))
        self.sweeps_changed.emit()

    # -- what a run would do ----------------------------------------------------------------------------------
    def preview(self):
        """The engine's Plan of the current choice (cached until something changes; nothing is spent). The Run
        step sends this very plan to the worker: what was shown is what runs."""
        if self._preview is None:
            self._preview = self._plan()
        return self._preview

    def _plan(self):
        """The engine's plan of the table, mechanism, parameters and opt-ins; a ledger that cannot be opened is a
        problem of a DP plan, in the words of the engine's guard that would refuse its run. The project's keyed
        pseudonyms and date shifts are applied first (governance/treatments.prepare, as `ppdp run` does before its
        plan), so the plan shown is the plan of the table released; what they did is `preview_treated`."""
        from ppdp_gui.engine.errors import ParameterError, PpdpError
        from ppdp_gui.engine.mechanisms.base import Problem
        from ppdp_gui.engine.pipeline.plan import Plan, plan
        from ppdp_gui.engine.pipeline.release import no_ledger_message
        self.preview_treated = None
        ds, mech = self.dataset, self.mechanism()
        if ds is None or mech is None:
            # no table yet: an empty plan without a dataset (making an empty one imported pandas in the GUI thread
            # right after the window appeared, ~1 s on a busy machine; benchmarks/bench_start.py)
            return Plan(mech, {}, ds)
        try:
            ledger, unreadable = self.ledger, None
        except (PpdpError, OSError) as exc:
            ledger, unreadable = None, exc
        data, confirmed, refused = ds, (), None
        wanted = self.treatments() if self.governance_context else None
        if wanted is not None and wanted.any:
            from ppdp_gui.engine.governance.treatments import prepare
            try:
                if ledger is None:
                    raise ParameterError("the project's pseudonym key is kept beside the budget ledger, which "
                                         "cannot be opened")
                # the context is kept as its checked JSON (set_treatments, a project read): its id names the key
                data, self.preview_treated = prepare(ds, wanted, ledger_path=ledger.path,
                                                     project_id=str(self.governance_context.get("project_id") or ""))
                confirmed = self.preview_treated.confirmed
            except PpdpError as exc:
                refused = Problem(str(exc))
        out = plan(data, mech, self.params, ledger=ledger, allow_data_domains=self.allow_data_domains,
                   separate_dataset=self.separate_dataset,
                   publish_as_is=tuple(dict.fromkeys([*sorted(self.publish_as_is), *confirmed])))
        if refused is not None:
            out.problems.insert(0, refused)
        if unreadable is not None and out.is_dp:
            out.problems.insert(0, Problem(no_ledger_message(unreadable)))
        return out

    def invalidate_preview(self) -> None:
        self._preview = None

    # -- ledger ----------------------------------------------------------------------------------------------
    @property
    def ledger(self):
        if self._ledger is None:
            from ppdp_gui.engine.privacy.ledger import Ledger
            self._ledger = Ledger()
        return self._ledger

    @property
    def ledger_open(self) -> bool:
        return self._ledger is not None

    def adopt_ledger(self, ledger) -> None:
        """The default ledger, opened by the table loader in its worker thread (opening it checks its schema and
        key with several SQLite transactions: 50-120 ms the first time, which the first preview would otherwise
        spend in the GUI thread). Ignored if the session has one already."""
        if self._ledger is None and ledger is not None:
            self._ledger = ledger

    # -- the recipe (a project file) -------------------------------------------------------------------------------
    def recipe(self, previous_releases: list[dict] | None = None):
        """The session as an engine Recipe: what `ppdp run --recipe` needs to make the same release."""
        from ppdp_gui.engine.persistence.project import Recipe
        ds = self.dataset
        if ds is None:
            from ppdp_gui.engine.errors import DataError
            raise DataError("there is no table to save a project for")
        return Recipe(
            source=ds.source.path or "", source_sha256=ds.source.sha256, na_policy=ds.source.na_policy,
            kinds={c.name: c.kind for c in ds.schema}, roles={c.name: c.role for c in ds.schema},
            guessed={c.name: tuple(sorted(c.guessed)) for c in ds.schema if c.guessed},
            taxonomies={c.name: c.taxonomy for c in ds.schema if c.taxonomy is not None},
            domains={c.name: c.domain for c in ds.schema if c.domain is not None},
            mechanism=self.mechanism_name, params=dict(self.params), allow_data_domains=self.allow_data_domains,
            separate_dataset=self.separate_dataset,
            publish_as_is=tuple(sorted(c for c in self.publish_as_is if c in ds.frame.columns)),
            releases=list(previous_releases or []) + [release_summary(p, self.exported(p)) for p in self.releases],
            context=dict(self.governance_context))  # set by gui/governance_menu.py


def same_source(before: Dataset | None, after: Dataset | None) -> bool:
    """Whether `after` is the file `before` was read from, unchanged (read again with other options)."""
    if before is None or after is None or not before.source.path:
        return False
    return (before.source.path == after.source.path and before.source.sha256 == after.source.sha256)


def release_summary(published, exported_to) -> dict:
    """What a project remembers of a release made (the release itself is the exported file)."""
    entry = published.ledger_entry
    return {"release_id": published.release_id, "created": published.created, "mechanism": published.mechanism,
            "guarantee": published.guarantee_line(),
            "epsilon": None if published.cost.epsilon is None else str(published.cost.epsilon),
            "rows": int(len(published.table)), "ledger_entry": getattr(entry, "id", None),
            "record": published.record_path, "exported_to": list(exported_to)}
