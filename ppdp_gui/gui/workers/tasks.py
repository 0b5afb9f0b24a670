"""The generators the window runs in its worker: loading a recipe, a charged release, a sweep, an export, the
self-check.

Plain Python (no Qt): they run in the worker process (workers/child.py) and can be tested and benchmarked
without a window. They only call the engine's publish path (load → plan → run_release), exactly as `ppdp` does;
nothing here knows a mechanism by name. `mechanism` is a registry name or a Mechanism class (the window passes
the class, so the child needs no registry look-up).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Iterator

from ppdp_gui.engine.data.schema import Dataset
from ppdp_gui.engine.mechanisms.base import Progress


def release_job(planned, ledger, seed: int | None = None, treated=None) -> Iterator[Any]:
    """The release of the plan the window showed (`Session.preview`, planned once): the engine's
    `charged_release` — its guards (errors, no ledger, over budget), then run_release, which reserves ε in the
    ledger before computing; yields Progress and finally the engine's Published. `ledger` is the path of the
    window's ledger (the worker process opens its own connection to the same file) or None when it could not be
    opened (a DP release is then refused by the guard). `treated`: what the project's keyed pseudonyms and date
    shifts did to the table the plan was made on (governance/treatments.prepare, by the session, as `ppdp run`
    prepares before its plan); `finish` states them on the release. `seed`: tests only (the window passes
    PPDP_TEST_SEED read in its own process, since a worker may have started before it was set)."""
    from ppdp_gui.engine.pipeline.release import charged_release
    from ppdp_gui.engine.pipeline.release import TEST_SEED_VARIABLE
    # the worker process keeps the environment it started with: a test seed set then (and unset since) must not
    # fix this release; the window's own reading decides
    if seed is None:
        os.environ.pop(TEST_SEED_VARIABLE, None)
    else:
        os.environ[TEST_SEED_VARIABLE] = str(seed)
    if isinstance(ledger, (str, os.PathLike)):
        from ppdp_gui.engine.privacy.ledger import Ledger
        ledger = Ledger(ledger)
    run = charged_release(planned, ledger=ledger, seed=seed)
    if treated is None or not treated.note:
        yield from run
        return
    from ppdp_gui.engine.governance.treatments import finish
    from ppdp_gui.engine.pipeline.published import Published
    for item in run:
        yield finish(item, treated) if isinstance(item, Published) else item


@dataclass
class Opened:
    """A table read for the window, with what its views show at once worked out here, off the GUI thread."""

    loaded: Any  # engine.pipeline.load.Loaded
    distinct: dict[str, int]  # column -> distinct values
    reasons: dict[str, tuple]  # column -> (guessed role, why in plain words)
    first_runnable: str | None  # the first mechanism (registry order) that can run on it with its defaults
    not_covered: dict[str, list[str]] = field(default_factory=dict)  # column -> values its taxonomy lacks
    ledger: Any = None  # the default budget ledger, opened here when the window asked for it
    date_columns: list[str] = field(default_factory=list)  # columns of dates a per-patient shift can move


def load_job(recipe, open_ledger: bool = False) -> Iterator[Any]:
    """Read a recipe's table (and attach its hierarchies, taxonomies and domains) with the engine's loader,
    then work out what the window shows at once: distinct values per column (the Data step, beside why each role
    was guessed, which the reader kept), the first mechanism that can run on it (the Mechanism step's first choice) and the values each
    attached taxonomy does not cover (the Taxonomies step); with `open_ledger`, the default budget ledger too (its
    first preview needs it). Yields Progress, then an `Opened`. Runs in a worker thread: the GUI thread then only
    shows these (checking every mechanism there took ~30 ms, opening a new ledger 50-120 ms). It also runs in the
    worker process (tests/gui/test_load_process.py), but measured no better there: the longest gaps while loading
    are the hand-over to the views, and the first load after start-up waited for the fork server (see
    benchmarks/bench_gui_heartbeat.py)."""
    from pathlib import Path

    from ppdp_gui.engine.pipeline.load import load
    yield Progress(0.0, f"Reading {Path(recipe.source).name}…")
    loaded = load(recipe)
    yield Progress(0.8, "Counting distinct values…")
    dataset = loaded.dataset
    frame = dataset.frame
    distinct = {c: int(frame[c].nunique(dropna=True)) for c in frame.columns}
    reasons = dataset.source.role_reasons  # worked out once by the reader
    yield Progress(0.9, "Checking the mechanisms and taxonomies…")
    from ppdp_gui.engine.mechanisms import registry
    from ppdp_gui.gui.coverage_cache import missing_values
    from ppdp_gui.engine.pipeline.plan import runnable
    # a synthetic generator without a formal guarantee (KRIMP) is never the first choice: the custodian picks it
    first = next((name for name in registry.names() if "no formal" not in registry.get(name).guarantee
                  and runnable(name, dataset)), None)
    not_covered = {}
    for spec in dataset.schema:
        if spec.taxonomy is not None:
            try:
                not_covered[spec.name] = missing_values(spec.taxonomy, frame[spec.name])
            except Exception:  # noqa: BLE001 - the Taxonomies step then checks it itself and shows why
                pass
    from ppdp_gui.engine.governance.treatments import date_columns
    dates = date_columns(dataset)
    yield Progress(1.0, "Loaded")
    opened = Opened(loaded, distinct, reasons, first, not_covered, date_columns=dates)
    yield with_default_ledger(opened) if open_ledger else opened


def with_default_ledger(opened: Opened) -> Opened:
    """`opened` with the default budget ledger opened (None if it cannot be: the window then opens it itself
    when needed, and shows why it cannot). A ledger is a connection of the process that opens it: a load run in
    the worker process gets it in the window's process (ProcessJob's `then`)."""
    from ppdp_gui.engine.errors import PpdpError
    from ppdp_gui.engine.privacy.ledger import Ledger
    try:
        opened.ledger = Ledger()
    except (PpdpError, OSError):
        opened.ledger = None
    return opened


def sweep_job(mechanism, data: Dataset, params: dict, grid: dict[str, list], repeats: int,
              seed: int | None = None, on: str | None = None, ledger=None, proxy_epsilon=None,
              public_recipe=None) -> Iterator[Any]:
    """The simulation behind the advice, on what `on` names (engine/pipeline/proxy.py): a DP copy charged to
    `ledger` (a path: the worker opens its own connection to the same file), a public table (`public_recipe`:
    the project's recipe with the public file as its source), or the custodian's own table. Its summary (mean and
    spread per grid point) is worked out here and travels with the result, so the window only draws it."""
    from ppdp_gui.engine.pipeline.plan import resolve_mechanism
    from ppdp_gui.engine.pipeline.proxy import OWN, PROXY_EPSILON
    from ppdp_gui.engine.pipeline.sweep import SweepResult, simulate
    if isinstance(ledger, (str, os.PathLike)):
        from ppdp_gui.engine.privacy.ledger import Ledger
        ledger = Ledger(ledger)
    public = None
    if public_recipe is not None:
        from ppdp_gui.engine.pipeline.load import load
        public = load(public_recipe).dataset
    for item in simulate(resolve_mechanism(mechanism), data, params, grid, on=on or OWN, ledger=ledger,
                         proxy_epsilon=PROXY_EPSILON if proxy_epsilon is None else proxy_epsilon, public=public,
                         repeats=repeats, seed=seed):
        if isinstance(item, SweepResult):
            item.summary()
        yield item


# -- export: staged in the worker, cancellable until the files are put in place --------------------------------------
class CommitLatch:
    """One decision per export, taken once by whoever comes first: the worker's "commit" (just before the first
    rename) or the window's "cancel". An O_EXCL file is atomic across processes, so a cancel can never land
    between two renames: once committed, the export finishes; once cancelled, nothing is renamed."""

    def __init__(self, path):
        from pathlib import Path
        self.path = Path(path)

    def claim(self, what: str) -> bool:
        try:
            fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        except FileExistsError:
            return False
        try:
            os.write(fd, what.encode())
        finally:
            os.close(fd)
        return True

    def decision(self) -> str | None:
        try:
            return self.path.read_text() or None
        except OSError:
            return None


def export_job(published, path, note_path, ledger_path, latch_path=None, record_path=None,
               pdf: bool = False) -> Iterator[Any]:
    """The engine's export (stage → read back and recount → rename; note; record), its stages as Progress, then
    the Exported. Before renaming it claims the latch; if the window cancelled first it stops with `Cancelled`
    and the engine removes every temporary file. The export runs in a thread of the worker process so that its
    stages can be reported while it writes; cancelling terminates the process (see `discard_temporaries`)."""
    import queue
    import threading

    from ppdp_gui.engine.errors import Cancelled
    from ppdp_gui.engine.pipeline.export import export
    messages: queue.Queue = queue.Queue()
    outcome: dict[str, Any] = {}

    def before_commit() -> None:
        if latch_path is not None and not CommitLatch(latch_path).claim("commit"):
            raise Cancelled("the export was cancelled before any file was put in place; nothing was written")

    def work() -> None:
        try:
            ledger = None
            if ledger_path:
                from ppdp_gui.engine.privacy.ledger import Ledger
                ledger = Ledger(ledger_path)
            outcome["result"] = export(published, path, note_path=note_path, ledger=ledger,
                                       record_path=record_path, pdf=pdf,
                                       progress=lambda f, m: messages.put(Progress(f, m)),
                                       before_commit=before_commit)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the generator, which reports it
            outcome["error"] = exc
        finally:
            messages.put(None)

    thread = threading.Thread(target=work, name="ppdp-export", daemon=True)
    thread.start()
    while (item := messages.get()) is not None:
        yield item
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    yield outcome["result"]


def export_targets(published, path, note_path=None, record_path=None, pdf: bool = False) -> list:
    """Every file an export of `published` to `path` may create (tables, note, record, their PDFs)."""
    from pathlib import Path

    from ppdp_gui.engine.pipeline.export import table_paths
    documents = [Path(p) for p in (note_path, record_path) if p]
    return (list(table_paths(published, path).values()) + documents
            + ([p.with_suffix(".pdf") for p in documents] if pdf else []))


def discard_temporaries(targets, since: float) -> list:
    """Remove the temporary files an export terminated mid-write left beside its targets: the writer's own
    recognisable names (engine.data.leftovers: '.<target name>.<16 hex>.ppdp-tmp'), made since `since` (epoch
    seconds), so that no other export's are touched; their in-flight registrations go with them (the engine's
    `clean_leftovers` removes those of every process that is gone). Returns what was removed."""
    import glob
    from pathlib import Path

    from ppdp_gui.engine.data.leftovers import SUFFIX, clean_leftovers, is_temporary
    removed = [Path(p) for p in clean_leftovers()]
    for target in targets:
        target = Path(target).expanduser()
        for tmp in target.parent.glob(f".{glob.escape(target.name)}.*{SUFFIX}"):
            try:
                if is_temporary(tmp) and tmp.stat().st_mtime >= since - 2:
                    tmp.unlink()
                    removed.append(tmp)
            except OSError:
                pass
    return removed


def verify_job(mechanism: str, size: str = "quick", seed: int = 0, pipeline: bool = False) -> Iterator[Any]:
    """The statistical self-check of a DP mechanism on its built-in audit tables (engine.verify), or with
    `pipeline` of its whole publish path on neighbouring files (a scratch ledger in a temporary folder): yields
    Progress, then the Verdict. Touches neither the custodian's data nor the custodian's ledger."""
    if pipeline:
        from ppdp_gui.engine.verify.pipeline_audit import verify_pipeline
        yield from verify_pipeline(mechanism, size=size, seed=seed)
        return
    from ppdp_gui.engine.verify import verify
    yield from verify(mechanism, size=size, seed=seed)
