"""Step 4 of the publish path: write a Published release, checked on the bytes actually written.

1. Every output path is checked first: none may be the source table, the ledger, its key or journal (by
   resolved path and inode), and no two outputs may be the same file.
2. Each table is written to a temporary file beside its target (formulas neutralised, injectively), read back
   with the reader as text, and every claim about it is recounted on what was read (`engine.checks`). If any
   recount fails, every temporary file is removed and nothing is published (CheckError).
3. Only then is the release note (which lists each staged file's sha256) written, atomically, and the files
   renamed into place after it: a kill between the two never leaves a table without its note (a failed rename
   takes the note back). Then the ledger entry of a DP release gets the release's hash (not before: an entry
   without one means "no output"). The custodian record (ledger folder, plus a copy where the custodian asks)
   follows.

A caller may follow the stages (`progress(fraction, message)`) and veto the renaming (`before_commit()`, called
once just before the first rename; raising there — e.g. `Cancelled` — removes every temporary file and writes
nothing). The window uses both for its progress bar and its Cancel button.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ppdp_gui.engine.checks.claims import ClaimCheck, check_claims, failures
from ppdp_gui.engine.data.outputs import OutputPlan, safe_release_id
from ppdp_gui.engine.data.reader import dataset_from_columns, dataset_from_frame, read_table
from ppdp_gui.engine.data.schema import NAPolicy
from ppdp_gui.engine.data.xlsx_sheet import plain_sheet
from ppdp_gui.engine.data.xlsx_stream import read_xlsx_text
from ppdp_gui.engine.data.writer import (Staged, commit, json_text, neutral_text, stage_table, stage_with,
                                         table_format, write_text_atomic)
from ppdp_gui.engine.errors import CheckError, DataError
from ppdp_gui.engine.pipeline.published import Published, custodian_record, release_note

NOTE_SUFFIX = ".release-note.json"


@dataclass
class Exported:
    """What an export wrote: the table files (main first), the note, the record and the recounts on the bytes."""

    files: list[Path]
    note: Path | None
    record: Path | None
    checks: list[ClaimCheck] = field(default_factory=list)
    note_doc: dict = field(default_factory=dict)
    pdf: bool = False  # a PDF was written beside each JSON document
    #: an earlier release's note found where this note was written, kept under its release id (see
    #: `check_note_target`); the window and `ppdp` should say so
    kept_notes: list[Path] = field(default_factory=list)


def table_paths(published: Published, path) -> dict[str, Path]:
    """Where each table goes: the main one to `path`, others beside it as '<stem>.<part><suffix>'."""
    out = Path(path).expanduser()
    paths = {}
    for name in published.release.tables():
        if name == "table":
            paths[name] = out
        else:
            slug = re.sub(r"[^0-9A-Za-z]+", "_", str(name)).strip("_") or "part"
            paths[name] = out.with_name(f"{out.stem}.{slug}{out.suffix}")
    return paths


def default_note_path(path) -> Path:
    """'release.csv' -> 'release.csv.release-note.json': one note per exported file, so exporting one release
    as CSV and as XLSX into one folder keeps both notes (each lists its own file's sha256)."""
    p = Path(path).expanduser()
    return p.with_name(p.name + NOTE_SUFFIX)


def check_note_target(note_path, release_id: str | None) -> Path | None:
    """Where an earlier release's note at `note_path` will be kept, or None; refuses to replace other files.

    A note names the release it describes. Writing a new release's note over another release's note would lose
    that release's description, so the earlier note is kept aside under its release id
    ('release.csv.release-note.<id>.json') and the expected name then holds the note of the file beside it.
    Refusing instead was rejected: a re-run of the same command (a monthly script) should still work, and a
    versioned name for the *new* note would leave the old note under the name a recipient looks for, beside a
    file it does not describe. A second export of the same release simply rewrites its own note. Any other
    existing file (not a release note) is refused, before anything is written. `release_id` None (before the run):
    only that last check."""
    if not note_path:
        return None
    p = Path(note_path).expanduser()
    if not p.is_file() or p.stat().st_size == 0:
        return None
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        doc = None
    if not isinstance(doc, dict) or doc.get("document") != "release note":
        raise DataError("already exists and is not a release note; the export will not replace it. Choose "
                        "another name for the release note", path=str(p))
    old = safe_release_id(doc.get("release_id"))  # read from a file: anything ('/', a NUL, 10,000 characters)
    if release_id is None or old == safe_release_id(release_id):
        return None
    stem = p.name[: -len(".json")] if p.name.endswith(".json") else p.name
    keep = p.with_name(f"{stem}.{old}.json")
    n = 2
    while keep.exists() and keep.read_bytes() != p.read_bytes():
        keep = p.with_name(f"{stem}.{old}.{n}.json")
        n += 1
    return keep


def _protected(source_path, ledger=None, ledger_path=None) -> list[Path]:
    out = [Path(source_path)] if source_path else []
    if ledger is not None and hasattr(ledger, "protected_paths"):
        out += list(ledger.protected_paths())
    elif ledger_path:
        db = Path(ledger_path)
        out += [db, db.with_name(db.name + ".key"), db.with_name(db.name + "-journal")]
    return out


def protected_paths(published: Published, ledger=None) -> list[Path]:
    return _protected(published.source.path, ledger, published.ledger_path)


def check_outputs(path, *, note_path=None, record_path=None, source=None, ledger=None, protected=(), inputs=(),
                  overwrite: bool = False, pdf: bool = False) -> OutputPlan:
    """Refuse, before anything is run or charged, outputs that would replace the source table, an input named on
    the command line or in the recipe (`inputs`: hierarchies, the project), the ledger (or its key or journal),
    an existing file (unless `overwrite`), or each other (data/outputs.py). The export repeats the source and
    ledger checks when it writes. Returns the plan, whose `guard` the writers get."""
    from ppdp_gui.engine.data.writer import _target
    plan = OutputPlan(source=source, inputs=inputs, ledger=ledger, overwrite=overwrite, protected=protected)
    table_format(path)
    plan.add(path, "the released table")
    plan.add(note_path, "the release note", replaceable=True)
    plan.add(record_path, "the custodian record")
    for doc, what in ((note_path, "the release note's PDF"), (record_path, "the custodian record's PDF")):
        if pdf and doc:
            plan.add(Path(doc).with_suffix(".pdf"), what, replaceable=doc is note_path)
    plan.check()
    for p, _what, _r in plan.outputs:
        _target(p, source, plan.guard)
    check_note_target(note_path, None)
    return plan


def read_back(staged: Staged, columns) -> pd.DataFrame:
    """The staged file as a reader sees it: every column as text, nothing treated as missing."""
    sep = "\t" if staged.fmt == "tsv" else ("," if staged.fmt == "csv" else None)
    names = [str(c) if staged.fmt == "parquet" else neutral_text(str(c)) for c in columns]
    policy = NAPolicy(tokens=(), action="category")
    kinds = {n: "categorical" for n in names}
    try:
        if staged.fmt == "xlsx":
            # the cells by whole arrays over the written bytes (data/xlsx_sheet.py: strict, shares no code with
            # the writer, about 10x faster than a per-cell parser), or — a sheet not in the writer's plain shape —
            # by a compiled XLSX parser (calamine); then the reader's own typing rules
            sheet = plain_sheet(staged.tmp)
            if sheet is None:
                data = dataset_from_frame(read_xlsx_text(staged.tmp), na_policy=policy, kinds=kinds)
            else:  # each distinct text once, a code per cell: typed without hashing every cell again
                data = dataset_from_columns(sheet.names, [sheet.column(j) for j in range(len(sheet.names))],
                                            sheet.codes.shape[1], na_policy=policy, kinds=kinds)
        else:
            data = read_table(staged.tmp, na_policy=policy, delimiter=sep, max_bytes=staged.tmp.stat().st_size + 1,
                              kinds=kinds, own_file=True)
    except DataError as exc:
        raise CheckError(f"{staged.target.name}: the written file could not be read back ({exc.reason})") from None
    return data.frame


def _distinct(paths: list[Path]) -> None:
    seen: dict[str, Path] = {}
    for p in paths:
        key = str(p.expanduser().resolve())
        if key in seen:
            raise DataError("two outputs of this export would be the same file; choose another name", path=str(p))
        seen[key] = p


def export(published: Published, path, *, note_path=None, record_path=None, ledger=None,
           protected=(), pdf: bool = False, progress=None, before_commit=None) -> Exported:
    """Write the release to `path` (its extra tables beside it), its note to `note_path` (None: no note file)
    and a copy of its custodian record to `record_path`; the record in the ledger folder is always updated.
    `pdf`: each JSON document also gets a PDF beside it (same name, .pdf), made from the same dictionary.
    `progress` and `before_commit`: see the module docstring."""
    say = progress or (lambda _f, _m: None)
    targets = table_paths(published, path)
    guard = protected_paths(published, ledger) + [Path(p) for p in protected]
    for p in targets.values():
        table_format(p)
    documents = [Path(p) for p in (note_path, record_path) if p]
    _distinct(list(targets.values()) + documents + ([p.with_suffix(".pdf") for p in documents] if pdf else []))
    keep_note = check_note_target(note_path, published.release_id)
    staged: dict[str, Staged] = {}
    checks: list[ClaimCheck] = []
    raw_checked: list[dict] = []
    try:
        tables = published.release.tables()
        big = published.release.records  # a large table's rows: written and recounted by DuckDB
        for i, (name, table) in enumerate(tables.items()):
            say(0.6 * i / len(tables), f"Writing {targets[name].name} ({_rows(published, name):,} rows)…")
            if big is not None and name == "table":
                staged[name] = stage_with(targets[name], big.copy_to, source=published.source, protected=guard)
            else:
                staged[name] = stage_table(table, targets[name], source=published.source, protected=guard)
        for i, (name, st) in enumerate(staged.items()):
            table = published.release.tables()[name]
            say(0.6 + 0.3 * i / len(staged), f"Reading {st.target.name} back and recounting every promise on it…")
            mine = [c for c in published.claims if getattr(c, "table", None) == name]
            neutral = None if st.fmt == "parquet" else neutral_text
            if big is not None and name == "table":
                from ppdp_gui.engine.bigdata.recount import file_relation, tally
                relation = file_relation(st.tmp, st.fmt)
                con = big.source.reader()  # DuckDB on the machine that wrote the file (either engine)
                read = tally(con, relation, mine, name=neutral)  # one pass: the rows and every claim's counts
                if read.total != _rows(published, name):
                    raise CheckError(f"{st.target.name}: {read.total:,} rows were read back, "
                                     f"{_rows(published, name):,} were written")
                checks += read.checks(mine)
                continue
            frame = read_back(st, table.columns) if len(table) else table.iloc[:0].astype(str)
            if len(frame) != len(table):
                raise CheckError(f"{st.target.name}: {len(frame):,} rows were read back, "
                                 f"{len(published.release.tables()[name]):,} were written")
            # the person column is never written: its ids come from the source, lined up with the rows written
            checks += check_claims({name: frame}, mine, neutralise=neutral, person=published.person_column,
                                   persons=published.person_ids)
            if published.raw_identifiers:  # keyed pseudonyms: no raw identifier value in the bytes written
                from ppdp_gui.engine.checks.raw_values import refuse_raw_values
                raw_checked += refuse_raw_values({name: frame}, published.raw_identifiers)
        from ppdp_gui.engine.checks.never_released import refuse_private_columns  # no identifier leaves
        declared = (published.release.note or {}).get("pseudonyms and date shifts") or {}  # governance/pseudonyms
        refuse_private_columns(published.release.tables(), published.columns, published.person_ids,
                               pseudonyms=[c for c in declared if str(c).endswith("_pseudonym")])
        bad = failures(checks)
        if bad:
            raise CheckError("the written file does not keep the release's promise, so nothing was published: "
                             + "; ".join(f"{c.claim.table}: {c.message}" for c in bad))
        if before_commit is not None:
            before_commit()
        # the note names each staged file's sha256, known before the rename: it is put in place first, so a kill
        # between the two leaves at worst a note without its table, never a table without its note
        files = [{"table": name, "file": st.target.name, "sha256": st.sha256, "rows": _rows(published, name),
                  "columns": [str(c) for c in published.release.tables()[name].columns]}
                 for name, st in staged.items()]
        note = release_note(published, files)
        note["checked on the written file"] = [{"claim": c.claim.to_json()["claim"], "table": c.claim.table,
                                                "ok": c.ok} for c in checks] + raw_checked
        note_written, kept = _put_note(note, note_path, keep_note, guard, pdf)
        say(0.9, "Putting the checked files in place…")
        try:
            written = [commit(staged[name], source=published.source, protected=guard) for name in staged]
        except BaseException:
            _take_note_back(note_written, kept, pdf)
            raise
    finally:
        for st in staged.values():
            st.discard()  # a no-op for committed files (their temporary name is gone)
    published = _output_recorded(published, ledger)  # the file exists now
    exports = [{"file": str(p), "sha256": f["sha256"]} for p, f in zip(written, files)]
    if note_written is not None:
        exports.append({"file": str(note_written), "release note": True})
    record = custodian_record(published, note=note, exports=exports, checks_on_file=checks)
    record_written = None
    if ledger is not None or published.record_path:
        record_written = _write_record_doc(published, record, ledger, guard)
    if record_path:
        record_written = write_text_atomic(json_text(record), record_path, protected=guard)
    if pdf and record_written is not None:
        from ppdp_gui.engine.persistence.pdf import record_pdf, write_pdf
        write_pdf(record_pdf(record), record_written.with_suffix(".pdf"), protected=guard)
    say(1.0, "Exported")
    return Exported(written, note_written, record_written, checks, note, pdf=pdf, kept_notes=kept)


def _output_recorded(published: Published, ledger) -> Published:
    """The ledger entry of a DP release gets the release's hash once its file exists (run_release leaves the
    entry without one: "no output" until then). Exporting the same release again records nothing new."""
    entry = published.ledger_entry
    if ledger is None or entry is None or getattr(entry, "output_hash", None) == published.output_hash:
        return published
    ledger.complete(entry.id, published.output_hash)
    fresh = ledger.entry(entry.id) if hasattr(ledger, "entry") else None
    return dataclasses.replace(published, ledger_entry=fresh if fresh is not None else entry)


def _put_note(note: dict, note_path, keep_note: Path | None, guard, pdf: bool) -> tuple[Path | None, list[Path]]:
    """Write the release note (and its PDF) atomically; an earlier release's note found there is kept under its
    release id first. Returns (note written or None, notes kept)."""
    if not note_path:
        return None, []
    kept: list[Path] = []
    if keep_note is not None:  # the earlier release's note stays, under its release id
        os.replace(Path(note_path).expanduser(), keep_note)
        kept.append(keep_note)
    written = write_text_atomic(json_text(note), note_path, protected=guard)
    if pdf:
        from ppdp_gui.engine.persistence.pdf import note_pdf, write_pdf
        write_pdf(note_pdf(note), Path(note_path).with_suffix(".pdf"), protected=guard)
    return written, kept


def _take_note_back(note: Path | None, kept: list[Path], pdf: bool) -> None:
    """The tables could not be put in place: remove the note just written and put back the one it replaced."""
    if note is None:
        return
    note.unlink(missing_ok=True)
    if pdf:
        note.with_suffix(".pdf").unlink(missing_ok=True)
    if kept:
        os.replace(kept[0], note)


def _rows(published: Published, name: str) -> int:
    """Rows of a released table (a large table's rows are counted by DuckDB, once)."""
    big = published.release.records
    if big is not None and name == "table":
        return int(big.n_rows)
    return int(len(published.release.tables()[name]))


def _records_folder(published: Published, ledger) -> Path | None:
    if getattr(ledger, "path", None) is not None:
        return Path(ledger.path).parent / "records"
    if published.ledger_path:
        return Path(published.ledger_path).parent / "records"
    return None


def _write_record_doc(published: Published, record: dict, ledger, guard) -> Path | None:
    folder = _records_folder(published, ledger)
    if folder is None:
        return None
    folder.mkdir(parents=True, exist_ok=True)
    name = f"{safe_release_id(published.release_id)}.json"
    return write_text_atomic(json_text(record), folder / name, protected=guard)


def write_record(published: Published, ledger) -> Published:
    """The custodian record of a release just made (before any export), in the ledger's folder."""
    path = _write_record_doc(published, custodian_record(published, note=release_note(published)), ledger,
                             protected_paths(published, ledger))
    return dataclasses.replace(published, record_path=None if path is None else str(path))
