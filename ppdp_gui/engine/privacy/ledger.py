"""The persistent privacy-budget ledger: every ε ever spent on the people of a table, checked against a cap first.

Storage is one SQLite file (stdlib sqlite3) in rollback-journal mode with ``synchronous=FULL``: a crash or a
kill at any moment leaves either the whole last transaction or none of it, and the rollback journal (unlike WAL)
also behaves on the network home folders hospitals often use. Every write is one ``BEGIN IMMEDIATE``
transaction, which takes the write lock *before* reading the total, so two processes can never both pass the
cap check with the same remaining budget.

Amounts are exact fractions stored as numerator/denominator TEXT (no float rounding ever accumulates). Entries
are never refunded or deleted: a reservation made for a release that then failed stays spent, because the
noise may already have been drawn.

The budget binds people, not readings of a file (see fingerprint.py):

- a dataset is identified by its source rows before any missing-value policy, typing, role or column choice;
- a table that shares most of its rows with a known one (an edited cell, rows added or dropped, a sample, a
  superset) is a *near copy* and is charged to the known one's **budget group**: each dataset row points at
  the root fingerprint of its group, and the cap and the spending are per group. A user may declare a near
  copy a separate dataset; that confirmation is recorded (who, when, what it resembled, how closely);
- the fingerprints are keyed by a random secret in ``<ledger>.key`` beside the database (mode 0600). Without
  it no table can be recognised, so every budget would silently restart: a missing, damaged or replaced key is
  refused as soon as the ledger records any dataset (a key check value in ``meta`` detects replacement).

Schema 1 (before budget groups) is migrated in place, in one transaction, on first open (ledger_schema.py). Its
datasets become groups of their own with no sketch: they keep their caps and what was spent, but as their
fingerprints were of the *typed, filtered* table they are recognised only when the very same reading recurs
(exact schema-1 fingerprint of the typed table), never as near copies.

Each entry records the neighbouring relation its ε is stated for (schema 3; older entries are add/remove). Most
mechanisms are ε-DP for one record added or removed; DP-PCA and the record baselines for one record replaced
(they publish the row count, so they are not add/remove DP at all). A group's total is the plain sum while all
its releases are add/remove; once one is replace-one, the only sound total is in replace-one units,
Σ replace ε + 2·Σ add/remove ε (ledger_types.combined_total), and the cap is checked against that. Replace-one
releases of near copies with different row counts do not compose and are refused (`_refuse_mixed_n`).

Schema 4 (issue 27): a table is also recognised after routine edits (columns dropped, added, renamed or rewritten,
case, spacing, number spelling; sketches.py) and, with a person column, by its person ids; a cap is raised only
with a recorded reason; every entry, cap change and acknowledgement is sealed in a MAC chain (chain.py,
ledger_audit.py) checked on open and by every reservation.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sqlite3
import threading
from contextlib import contextmanager
from fractions import Fraction
from pathlib import Path
from typing import Iterator, overload

import numpy as np
import pandas as pd

from ppdp_gui.engine.errors import BudgetError, ParameterError, PpdpError
from ppdp_gui.engine.privacy import chain, sketches
from ppdp_gui.engine.privacy.fingerprint import (bottom_k, canonical_row_hashes, containment, dataset_fingerprint,
                                                 keyed_row_hashes, legacy_fingerprint_v1)
from ppdp_gui.engine.privacy.ledger_audit import LedgerAudit, _frac, _now, _user
from ppdp_gui.engine.privacy.ledger_key import LedgerKey
from ppdp_gui.engine.privacy.ledger_schema import SCHEMA_VERSION, create_or_migrate
from ppdp_gui.engine.privacy.ledger_types import (ADD_REMOVE, DEFAULT_CAP, NEAR_COPY_CONTAINMENT, REPLACE, Budget,
                                                  DatasetIdentity, DatasetSummary, LedgerEntry, Totals,
                                                  combined_total, exact, fmt, neighbouring_kind, over_cap_message)

__all__ = ["ADD_REMOVE", "DEFAULT_CAP", "NEAR_COPY_CONTAINMENT", "REPLACE", "SCHEMA_VERSION", "Budget",
           "DatasetIdentity", "DatasetSummary", "Ledger", "LedgerEntry", "default_ledger_path", "exact"]

_ENTRY_COLUMNS = ("id, fingerprint, mechanism, params, eps_num, eps_den, delta_num, delta_den, created, output_hash, "
                  "completed, label, release_id, budget, neighbouring")
_REMEMBERED = 4  # identities `fingerprint` keeps for bare-fingerprint callers (8 bytes per distinct row)


def default_ledger_path() -> Path:
    """$PPDP_LEDGER, else ~/.local/share/ppdp_gui/ledger.sqlite (on Windows under %APPDATA%)."""
    override = os.environ.get("PPDP_LEDGER")
    if override:
        return Path(override).expanduser()
    if os.name == "nt" and os.environ.get("APPDATA"):
        return Path(os.environ["APPDATA"]) / "ppdp_gui" / "ledger.sqlite"
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "ppdp_gui" / "ledger.sqlite"


def _entry(row) -> LedgerEntry:
    return LedgerEntry(row[0], row[1], row[2], json.loads(row[3]), _frac(row[4], row[5]), _frac(row[6], row[7]),
                       row[8], row[9], row[10], row[11], row[12] or "", row[13] or row[1],
                       neighbouring_kind(row[14]))


class Ledger(LedgerAudit, LedgerKey):
    """Budget ledger in one SQLite file; safe to use from several threads and processes at once.

    A connection is opened per call (cheap) so that a Ledger object can be shared with worker threads.
    New budget groups get `default_cap` (ε, `DEFAULT_CAP` unless given); change a group's cap with `set_cap`.
    """

    def __init__(self, path=None, *, default_cap=DEFAULT_CAP):
        self.path = Path(path).expanduser() if path is not None else default_ledger_path()
        self.key_path = self.path.with_name(self.path.name + ".key")
        self.default_cap = exact(default_cap, "the default ε cap")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise PpdpError(f"cannot create the ledger folder {self.path.parent}: {exc.strerror or exc}") from None
        self._key: bytes | None = None
        self._identities: dict[str, DatasetIdentity] = {}  # see `fingerprint`
        self._last_keyed: tuple | None = None  # (the row hashes read last, weakly; the key; their fingerprint, keyed)
        self._lock = threading.Lock()
        with self._write() as db:
            create_or_migrate(db, self.path)
        self._prepare_key()
        #: what the tamper check found on open (None when the key is missing: nothing can be checked)
        self.chain_report: chain.ChainReport | None = None
        try:
            self._seal_if_needed()
            self.chain_report = self.check()
        except PpdpError:
            pass  # no usable key: listing still works, anything that needs the key refuses

    # ---- connections ----------------------------------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        try:
            db = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
            db.execute("PRAGMA journal_mode = DELETE")
            db.execute("PRAGMA synchronous = FULL")
            db.execute("PRAGMA foreign_keys = ON")
        except sqlite3.Error as exc:
            raise PpdpError(f"cannot open the privacy ledger {self.path}: {exc}") from None
        return db

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One IMMEDIATE transaction: the write lock is held from the first read to the commit."""
        db = self._connect()
        try:
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
        except sqlite3.Error as exc:
            raise PpdpError(f"the privacy ledger {self.path} could not be updated: {exc}") from None
        finally:
            db.close()

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        db = self._connect()
        try:
            yield db
        except sqlite3.Error as exc:
            raise PpdpError(f"the privacy ledger {self.path} could not be read: {exc}") from None
        finally:
            db.close()

    def protected_paths(self) -> list[Path]:
        """The database, its key and its rollback journal: no export may ever be written over one of them."""
        base = self.path.resolve()
        return [base, self.key_path.resolve(), base.with_name(base.name + "-journal")]

    # ---- identity -------------------------------------------------------------------------------------------
    def _fingerprint_and_keyed(self, hashes, columns, key: bytes):
        """`dataset_fingerprint` and `keyed_row_hashes` of the row hashes, remembered for the same array (a plan
        and its run identify one table twice: at 10⁷ rows each pair costs about a second and 500 MB)."""
        import weakref
        names = tuple(str(c) for c in columns)
        got = self._last_keyed
        if got is not None and got[0]() is hashes and got[1] == (key, names):
            return got[2], got[3]
        fp, keyed = dataset_fingerprint(hashes, columns, key), keyed_row_hashes(hashes, key)
        try:
            self._last_keyed = (weakref.ref(hashes), (key, names), fp, keyed)
        except TypeError:  # not an array that can be referred to weakly: computed each time
            self._last_keyed = None
        return fp, keyed

    def identify(self, dataset, *, label: str = "", separate: bool = False) -> DatasetIdentity:
        """Which dataset this is and which budget it is charged to. Reads only: a plan or preview costs nothing.

        `dataset` is a Dataset (its `source.row_hashes` from the reader are used; without them, as for tables
        built in memory, the rows of `dataset.frame`) or a DataFrame. `separate=True` declares a near copy a
        separate dataset with its own budget; the confirmation is recorded by `reserve`/`set_cap`.

        Besides the exact rows, a table is matched to a known one by its canonical cells on the columns both
        share (sketches.py: renamed, dropped, added or rewritten columns, case, spacing and number spelling) and,
        when it has a person column, by its person ids (the same patients share one budget whatever the
        columns)."""
        key = self._secret()
        frame = dataset if isinstance(dataset, pd.DataFrame) else dataset.frame
        source = getattr(dataset, "source", None)
        hashes = getattr(source, "row_hashes", None)
        if hashes is None:
            hashes = canonical_row_hashes(frame)
        fp, keyed = self._fingerprint_and_keyed(hashes, frame.columns, key)
        is_frame = isinstance(dataset, pd.DataFrame)  # (a frame's attributes are its columns: never ask it)
        schema = () if is_frame else (getattr(dataset, "schema", ()) or ())
        cells = sketches.cell_hashes(frame, [c.name for c in schema if c.role.never_released])
        person = None if is_frame else getattr(dataset, "person_column", None)
        persons = sketches.person_hashes(frame, person, key) if person and person in frame.columns else None
        with self._read() as db:
            known = db.execute("SELECT 1 FROM datasets WHERE fingerprint = ?", (fp,)).fetchall()
            legacy = db.execute("SELECT 1 FROM datasets WHERE origin = 'schema-1' LIMIT 1").fetchall()
        # only while schema-1 budgets exist: is this the typed table one of them was recorded for?
        legacy = legacy_fingerprint_v1(frame, key) if legacy and not known else None
        identity = DatasetIdentity(fingerprint=fp, budget=fp, known=False, near_copy_of=None, similarity=None,
                                   label=label, separate=separate, n_rows=len(hashes), n_distinct=len(keyed),
                                   keyed=keyed, legacy_fingerprint=legacy, key_check=self._check_value(key),
                                   cells=cells, persons=persons)
        with self._read() as db:
            budget, known, near, similarity, separate = self._resolve(db, identity)
            if known:
                label = db.execute("SELECT label FROM datasets WHERE fingerprint = ?", (fp,)).fetchone()[0] or label
        return dataclasses.replace(identity, budget=budget, known=known, near_copy_of=near, similarity=similarity,
                                   label=label, separate=separate)

    def fingerprint(self, data) -> str:
        """The exact identity of a Dataset or DataFrame: `identify(data).fingerprint`.

        For callers that still pass a bare fingerprint to `reserve`, `set_cap`, `budget`, `cap`, `spent` or
        `remaining`: this Ledger object remembers the identities it computed here (the last few), so such a
        fingerprint is charged exactly as its identity would be (near copies to their group). New code should
        call `identify` and pass the identity. Note that for a Dataset read from a file `fingerprint(data)`
        identifies its raw rows, `fingerprint(data.frame)` the typed, filtered table (a near copy of them)."""
        identity = self.identify(data)
        with self._lock:
            self._identities.pop(identity.fingerprint, None)
            self._identities[identity.fingerprint] = identity
            while len(self._identities) > _REMEMBERED:
                self._identities.pop(next(iter(self._identities)))
        return identity.fingerprint

    def _best_match(self, db: sqlite3.Connection, identity: DatasetIdentity):
        """(fingerprint, budget, similarity) of the known dataset this one overlaps most, if the larger containment
        reaches NEAR_COPY_CONTAINMENT: by whole rows, by person ids, or by canonical cells on the shared columns.
        A loop over known datasets (a few per study), each O(k log n) or O(columns · n) in numpy."""
        best = None
        keyed = self._keyed(identity)
        key = self._secret()
        values = None
        rows = db.execute("SELECT fingerprint, budget, sketch, robust, persons FROM datasets WHERE sketch IS NOT "
                          "NULL OR robust IS NOT NULL OR persons IS NOT NULL ORDER BY created, fingerprint")
        for fp, budget, blob, robust, persons in rows:
            found = [0.0]
            if blob is not None:
                found.append(max(containment(keyed, np.frombuffer(blob, dtype="<u8"))))
            if persons is not None and identity.persons is not None:
                found.append(max(containment(identity.persons, np.frombuffer(persons, dtype="<u8"))))
            if robust is not None and identity.cells is not None and identity.cells.available and max(found) < 1.0:
                if values is None:
                    values = sketches.column_values(identity.cells, key)
                found.append(sketches.match(sketches.RobustSketch.from_bytes(robust), identity.cells, values, key))
            similarity = max(found)
            if similarity >= NEAR_COPY_CONTAINMENT and (best is None or similarity > best[2]):
                best = (fp, budget, similarity)
        return best

    def _resolve(self, db, identity: DatasetIdentity):
        """(budget, known, near_copy_of, similarity, separate) from the ledger as it is now in `db`."""
        fp, legacy, separate = identity.fingerprint, identity.legacy_fingerprint, identity.separate
        row = db.execute("SELECT budget, near_copy_of, similarity FROM datasets WHERE fingerprint = ?",
                         (fp,)).fetchone()
        if row is not None:
            return row[0] or fp, True, row[1], row[2], False
        if legacy is not None:  # the same typed table a schema-1 ledger recorded: its budget, never separate
            row = db.execute("SELECT budget FROM datasets WHERE fingerprint = ? AND origin = 'schema-1'",
                             (legacy,)).fetchone()
            if row is not None:
                return row[0] or legacy, False, legacy, 1.0, False
        match = self._best_match(db, identity)
        if match is None:
            return fp, False, None, None, False
        near, budget, similarity = match
        return (fp if separate else budget), False, near, similarity, bool(separate)

    @staticmethod
    def _keyed(identity: DatasetIdentity) -> np.ndarray:
        if identity.keyed is None:
            raise ParameterError("this DatasetIdentity carries no row hashes; get identities from Ledger.identify")
        return identity.keyed

    def _register(self, db, identity: DatasetIdentity, label: str) -> tuple[str, bool]:
        """Inside a write transaction: the (budget, newly registered) of `identity`, recording it if new."""
        if identity.key_check:
            stored = db.execute("SELECT value FROM meta WHERE key = 'key_check'").fetchone()
            if stored is not None and stored[0] != identity.key_check:
                raise PpdpError("this table was identified under another ledger key; identify it again with "
                                f"the ledger {self.path}")
        budget, known, near, similarity, separate = self._resolve(db, identity)
        if known:
            return budget, False
        key = self._secret()
        sketch = bottom_k(self._keyed(identity))
        cells = identity.cells if identity.cells is not None and identity.cells.available else None
        robust = None if cells is None else sketches.build(cells, key).to_bytes()
        persons = None if identity.persons is None else bottom_k(identity.persons).astype("<u8").tobytes()
        root = budget == identity.fingerprint
        cap = self.default_cap if root else None
        stamp = _now()
        db.execute(
            "INSERT INTO datasets(fingerprint, label, cap_num, cap_den, created, budget, origin, n_rows, n_distinct,"
            " sketch, near_copy_of, similarity, separate_from, separate_similarity, separate_by, separate_at,"
            " robust, persons) VALUES (?, ?, ?, ?, ?, ?, 'rows', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (identity.fingerprint, identity.label or label, None if cap is None else str(cap.numerator),
             None if cap is None else str(cap.denominator), stamp, budget, int(identity.n_rows),
             int(identity.n_distinct), sketch.astype("<u8").tobytes() if len(sketch) else None, near, similarity,
             near if separate else None, similarity if separate else None, _user() if separate else None,
             stamp if separate else None, robust, persons))
        self._seal_dataset(db, identity.fingerprint)
        if root:
            self._record_cap(db, budget, None, cap, "the default cap of a new table")
        return budget, True

    def _register_name(self, db, fp: str, label: str) -> str:
        """Inside a write transaction: the budget of a bare fingerprint, recording it (own group) if new."""
        row = db.execute("SELECT budget FROM datasets WHERE fingerprint = ?", (fp,)).fetchone()
        if row is not None:
            if label:
                db.execute("UPDATE datasets SET label = ? WHERE fingerprint = ? AND label = ''", (label, fp))
            return row[0] or fp
        cap = self.default_cap
        db.execute("INSERT INTO datasets(fingerprint, label, cap_num, cap_den, created, budget, origin) "
                   "VALUES (?, ?, ?, ?, ?, ?, 'name')",
                   (fp, label, str(cap.numerator), str(cap.denominator), _now(), fp))
        self._seal_dataset(db, fp)
        self._record_cap(db, fp, None, cap, "the default cap of a new table")
        return fp

    def _remembered(self, target):
        """The identity `fingerprint` computed for a bare fingerprint, if this object computed one."""
        if isinstance(target, str):
            with self._lock:
                return self._identities.get(target, target)
        return target

    def _target(self, db, target, label: str) -> tuple[str, str]:
        """(fingerprint, budget) of an identity or bare fingerprint, registering it if new."""
        target = self._remembered(target)
        if isinstance(target, DatasetIdentity):
            return target.fingerprint, self._register(db, target, label)[0]
        if not isinstance(target, str) or not target:
            raise ParameterError(f"expected a DatasetIdentity or a fingerprint, got {target!r}")
        return target, self._register_name(db, target, label)

    def _group_of(self, db, target) -> tuple[str, bool]:
        """(budget root, exists) of an identity or fingerprint, without writing."""
        target = self._remembered(target)
        if isinstance(target, DatasetIdentity):
            budget, *_ = self._resolve(db, target)
        elif isinstance(target, str):
            row = db.execute("SELECT budget FROM datasets WHERE fingerprint = ?", (target,)).fetchone()
            budget = (row[0] or target) if row is not None else target
        else:
            raise ParameterError(f"expected a DatasetIdentity or a fingerprint, got {target!r}")
        return budget, db.execute("SELECT 1 FROM datasets WHERE fingerprint = ?", (budget,)).fetchone() is not None

    # ---- budget ---------------------------------------------------------------------------------------------
    @staticmethod
    def _spent(db: sqlite3.Connection, budget: str) -> Totals:
        """What the group's releases spent (its sound total, split by neighbouring)."""
        totals = Totals()
        for en, ed, dn, dd, kind in db.execute(
                "SELECT eps_num, eps_den, delta_num, delta_den, neighbouring FROM entries WHERE budget = ?",
                (budget,)):
            totals.add(_frac(en, ed), _frac(dn, dd), kind)
        return totals

    @staticmethod
    def _cap(db: sqlite3.Connection, budget: str) -> Fraction | None:
        row = db.execute("SELECT cap_num, cap_den FROM datasets WHERE fingerprint = ?", (budget,)).fetchone()
        if row is None or row[0] is None:
            return None
        return _frac(row[0], row[1])

    def budget(self, target) -> Budget:
        """The budget of the group `target` (an identity, or a fingerprint) is, or would be, charged to."""
        with self._read() as db:
            group, exists = self._group_of(db, target)
            if not exists:
                cap = self.default_cap
                return Budget(cap, Fraction(0), Fraction(0), cap, 0, True)
            cap = self._cap(db, group)
            t = self._spent(db, group)
        return Budget(cap, t.total, t.delta, None if cap is None else max(cap - t.total, Fraction(0)), t.n, False,
                      t.add_remove, t.replace, t.n_replace, tuple(self.cap_changes(group)))

    def set_cap(self, target, epsilon, label: str = "", *, reason: str | None = None) -> None:
        """Total ε that may ever be spent on the group of `target` (identity or fingerprint; registered if new).
        A cap below what is already spent blocks new releases.

        Raising a cap is the custodian's deliberate act: it needs a `reason` (``ppdp ledger cap DATASET VALUE
        --reason "…"``, or the ledger window's Change cap…). Without one, a cap may only be set where none exists
        or lowered (a run's ``--cap``). Every change is recorded with who, when and why, in the same write
        transaction as the cap itself, so it never races a reservation."""
        cap = exact(epsilon, "the ε cap")
        why = " ".join(str(reason or "").split())
        self._secret()
        with self._write() as db:
            existed = self._group_of(db, target)[1]
            _, group = self._target(db, target, label)
            old = self._cap(db, group)
            if existed and (old is None or cap > old) and not why:
                raise BudgetError(
                    f"this table already has an ε cap of {fmt(old) if old is not None else 'none'}; a run may only "
                    f"lower it. Raising it to {fmt(cap)} is the custodian's deliberate decision, recorded with a "
                    "reason: in the window, File → Privacy budget ledger → Change cap…; or ppdp ledger cap "
                    f"{group[:12]} {fmt(cap)} --reason \"…\". Nothing was run or charged.")
            if old == cap:
                self._forget_cells(target)
                return
            db.execute("UPDATE datasets SET cap_num = ?, cap_den = ? WHERE fingerprint = ?",
                       (str(cap.numerator), str(cap.denominator), group))
            self._record_cap(db, group, old, cap, why or ("lowered by a run" if old is not None and existed
                                                           else "set by a run before its first release"))
        self._forget_cells(target)

    def _forget_cells(self, target) -> None:
        """The canonical cells of a registered table are not needed again (its exact fingerprint is known now)."""
        target = self._remembered(target)
        if isinstance(target, DatasetIdentity) and target.cells is not None:
            target.cells.release()

    def find(self, prefix: str) -> str:
        """The budget group of a dataset named by a fingerprint prefix (at least 6 characters) or its label."""
        text = str(prefix or "").strip()
        with self._read() as db:
            rows = db.execute("SELECT fingerprint, budget, label FROM datasets").fetchall()
        hits = {(b or f) for f, b, lab in rows
                if (len(text) >= 6 and f.startswith(text.lower())) or (text and lab and (lab == text or
                                                                                         Path(lab).name == text))}
        if len(hits) != 1:
            raise ParameterError(f"{text!r} names {'no' if not hits else 'more than one'} table of the ledger; give "
                                 "more of the fingerprint shown by ppdp ledger")
        return hits.pop()

    def cap(self, target) -> Fraction | None:
        """The group's cap (the default cap for a dataset not yet charged; None for an uncapped schema-1 one)."""
        return self.budget(target).cap

    def spent(self, target) -> Fraction:
        return self.budget(target).spent

    def spent_delta(self, target) -> Fraction:
        return self.budget(target).spent_delta

    def remaining(self, target) -> Fraction | None:
        """Cap minus spent (never below 0), or None for an uncapped group."""
        return self.budget(target).remaining

    @overload
    def reserve(self, target: DatasetIdentity, mechanism: str, params: dict, epsilon, delta=..., *,
                release_id: str = ..., label: str = ..., neighbouring: str = ...) -> LedgerEntry: ...

    @overload
    def reserve(self, target: str, mechanism: str, params: dict, epsilon, delta=..., *,
                release_id: str = ..., label: str = ..., neighbouring: str = ...) -> int: ...

    def reserve(self, target, mechanism, params, epsilon, delta=Fraction(0), *, release_id="", label="",
                neighbouring=ADD_REMOVE):
        """Charge ε (and δ) to the budget group of `target` for a release about to run, in ONE transaction that
        also records the dataset if it is new (fingerprint, sketch, row count, group, default cap, a `separate`
        confirmation). Raises BudgetError, writing nothing, if the group's cap would be exceeded. Call this
        BEFORE drawing any noise; it is never refunded.

        Returns the LedgerEntry for an identity. A bare fingerprint (the older calling style) is charged to the
        group it belongs to, or becomes a group of its own, and returns the entry id.

        `neighbouring` is the relation the release's ε is stated for (a claim's words or ADD_REMOVE / REPLACE);
        the cap is checked against the group's sound total with this release (see ledger_types.combined_total)."""
        kind = neighbouring_kind(neighbouring)
        eps = exact(epsilon, "ε")
        dlt = exact(delta, "δ")
        if dlt >= 1:
            raise ParameterError(f"δ must be below 1, got {delta!r}")
        try:
            params_text = json.dumps(params, sort_keys=True, default=str, ensure_ascii=False)
        except (TypeError, ValueError) as exc:
            raise ParameterError(f"the release parameters cannot be recorded: {exc}") from None
        ckey = self._chain_key()
        with self._write() as db:
            fp, group = self._target(db, target, label)
            self._refuse_if_tampered(db, ckey, group)
            if kind == REPLACE:
                self._refuse_mixed_n(db, fp, group)
            cap = self._cap(db, group)
            before = self._spent(db, group)
            after = combined_total(before.total, before.n_replace, eps, kind)
            if cap is not None and after > cap:
                shared = "" if group == fp else (f" It shares the budget of dataset {group[:12]}… because it is a "
                                                 "near copy of a table already released from.")
                raise BudgetError(over_cap_message(before, eps, kind, cap, after) + shared
                                  + " Nothing was run or charged; lower ε or raise the cap deliberately.")
            created = _now()
            cur = db.execute(
                "INSERT INTO entries(fingerprint, mechanism, params, eps_num, eps_den, delta_num, delta_den, created,"
                " label, budget, release_id, neighbouring) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (fp, str(mechanism), params_text, str(eps.numerator), str(eps.denominator), str(dlt.numerator),
                 str(dlt.denominator), created, str(label), group, str(release_id), kind))
            entry_id = int(cur.lastrowid)
            self._append(db, "entries", chain.ENTRY_FIELDS, chain.entry_mac, entry_id)
        self._forget_cells(target)
        if not isinstance(target, DatasetIdentity):
            return entry_id
        return LedgerEntry(entry_id, fp, str(mechanism), json.loads(params_text), eps, dlt, created, None, None,
                           str(label), str(release_id), group, kind)

    @staticmethod
    def _refuse_mixed_n(db, fp: str, group: str) -> None:
        """A replace-one guarantee on D and one on D + {x} do not compose into a replace-one guarantee (the two row
        counts reveal x), and a replace-one release is not add/remove DP at all, so it cannot be counted in
        add/remove units either. Replace-one releases of one budget group must therefore come from tables of
        one row count; another one is refused (docs/trust.md)."""
        n = db.execute("SELECT n_rows FROM datasets WHERE fingerprint = ?", (fp,)).fetchone()
        others = db.execute(
            "SELECT DISTINCT d.n_rows FROM entries e JOIN datasets d ON d.fingerprint = e.fingerprint "
            "WHERE e.budget = ? AND e.neighbouring = ? AND e.fingerprint != ?", (group, REPLACE, fp)).fetchall()
        mine = None if n is None else n[0]
        if any(o[0] != mine for o in others):
            raise BudgetError(
                "a release stated for one record replaced was already made from a near copy of this table with "
                "another number of rows; two such releases do not add up to a guarantee for one record replaced "
                "(the two row counts reveal who was added), so this one is refused. Nothing was run or charged. "
                "Release from the same table as before, or use a mechanism stated for one record added or removed.")

    def complete(self, entry_id, output_hash: str) -> None:
        """Record the released table's hash on its entry (once; an entry's hash is never rewritten)."""
        entry_id = int(entry_id.id if isinstance(entry_id, LedgerEntry) else entry_id)
        with self._write() as db:
            row = db.execute("SELECT output_hash FROM entries WHERE id = ?", (entry_id,)).fetchone()
            if row is None:
                raise ParameterError(f"the ledger has no entry {entry_id}")
            if row[0] is not None:
                if row[0] == output_hash:
                    return
                raise ParameterError(f"ledger entry {entry_id} already records another output")
            done = _now()
            mac = db.execute("SELECT mac FROM entries WHERE id = ?", (entry_id,)).fetchone()[0]
            db.execute("UPDATE entries SET output_hash = ?, completed = ?, done_mac = ? WHERE id = ?",
                       (str(output_hash), done, chain.done_mac(self._chain_key(), mac, str(output_hash), done),
                        entry_id))

    # ---- listing --------------------------------------------------------------------------------------------
    def entries(self, fingerprint=None, *, budget=None) -> list[LedgerEntry]:
        """Entries in the order they were made: of one exact dataset, of one budget group, or all."""
        query, clauses, args = f"SELECT {_ENTRY_COLUMNS} FROM entries", [], []
        for column, value in (("fingerprint", fingerprint), ("budget", budget)):
            if value is not None:
                clauses.append(f"{column} = ?")
                args.append(value.budget if column == "budget" and isinstance(value, DatasetIdentity) else
                            value.fingerprint if isinstance(value, DatasetIdentity) else str(value))
        if clauses:
            query += " WHERE " + " AND ".join(clauses)
        with self._read() as db:
            return [_entry(r) for r in db.execute(query + " ORDER BY id", args).fetchall()]

    def entry(self, entry_id) -> LedgerEntry | None:
        with self._read() as db:
            row = db.execute(f"SELECT {_ENTRY_COLUMNS} FROM entries WHERE id = ?", (int(entry_id),)).fetchone()
        return None if row is None else _entry(row)

    def datasets(self) -> list[DatasetSummary]:
        """Every known dataset with its budget group's cap and spending, near-copy and separate-dataset records."""
        with self._read() as db:
            rows = db.execute(
                "SELECT fingerprint, label, created, budget, origin, n_rows, near_copy_of, similarity, separate_from,"
                " separate_similarity, separate_by, separate_at FROM datasets ORDER BY created, fingerprint"
            ).fetchall()
            charges = db.execute("SELECT fingerprint, budget, eps_num, eps_den, delta_num, delta_den, created, "
                                 "neighbouring FROM entries ORDER BY id").fetchall()
            caps = {r[0]: self._cap(db, r[3] or r[0]) for r in rows}
        group: dict[str, Totals] = {}
        own: dict[str, Totals] = {}
        for fp, budget, en, ed, dn, dd, created, kind in charges:  # a loop over releases, not over data
            for table, name in ((group, budget or fp), (own, fp)):
                table.setdefault(name, Totals()).add(_frac(en, ed), _frac(dn, dd), kind, created)
        out = []
        for fp, label, created, budget, origin, n_rows, near, sim, sep, sep_sim, sep_by, sep_at in rows:
            g = group.get(budget or fp, Totals())
            o = own.get(fp, Totals())
            own_spent = o.in_units(g.n_replace > 0)  # this table's share, in its group's units
            out.append(DatasetSummary(fp, label, caps[fp], g.total, g.delta, g.n, created, o.last, budget or fp,
                                      origin, n_rows, near, sim, sep, sep_sim, sep_by, sep_at, own_spent, o.n,
                                      g.add_remove, g.replace, g.n_replace))
        return out

    def integrity_check(self) -> str:
        """SQLite's own consistency check ('ok' when the file is sound)."""
        with self._read() as db:
            return str(db.execute("PRAGMA integrity_check").fetchone()[0])
