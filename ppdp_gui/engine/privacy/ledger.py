"""The persistent privacy-budget ledger: every ε ever spent on a dataset, checked against its cap before any work.

Storage is one SQLite file (stdlib sqlite3) in rollback-journal mode with ``synchronous=FULL``: a crash or a
kill at any moment leaves either the whole last transaction or none of it, and the rollback journal (unlike WAL)
also behaves on the network home folders hospitals often use. Every write is one ``BEGIN IMMEDIATE``
transaction, which takes the write lock *before* reading the total, so two processes can never both pass the
cap check with the same remaining budget.

Amounts are exact fractions stored as numerator/denominator TEXT (no float rounding ever accumulates). Entries
are never refunded or deleted: a reservation made for a release that then failed stays spent, because the
noise may already have been drawn. The dataset is identified by a keyed fingerprint (see fingerprint.py); the key
is a random secret in ``<ledger>.key`` beside the database, created with mode 0600 on first use.
"""

from __future__ import annotations

import json
import os
import secrets
import sqlite3
import time
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from fractions import Fraction
from pathlib import Path
from typing import Any, Iterator

import pandas as pd

from ppdp_gui.engine.errors import BudgetError, ParameterError, PpdpError
from ppdp_gui.engine.privacy.fingerprint import legacy_fingerprint_v1 as keyed_fingerprint

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS datasets (
    fingerprint TEXT PRIMARY KEY,
    label TEXT NOT NULL DEFAULT '',
    cap_num TEXT, cap_den TEXT,
    created TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS entries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    fingerprint TEXT NOT NULL REFERENCES datasets(fingerprint),
    mechanism TEXT NOT NULL,
    params TEXT NOT NULL,
    eps_num TEXT NOT NULL, eps_den TEXT NOT NULL,
    delta_num TEXT NOT NULL, delta_den TEXT NOT NULL,
    created TEXT NOT NULL,
    output_hash TEXT,
    completed TEXT,
    label TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS entries_by_dataset ON entries(fingerprint);
"""


def default_ledger_path() -> Path:
    """$PPDP_LEDGER, else ~/.local/share/ppdp_gui/ledger.sqlite (on Windows under %APPDATA%)."""
    override = os.environ.get("PPDP_LEDGER")
    if override:
        return Path(override).expanduser()
    if os.name == "nt" and os.environ.get("APPDATA"):
        return Path(os.environ["APPDATA"]) / "ppdp_gui" / "ledger.sqlite"
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "ppdp_gui" / "ledger.sqlite"


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def exact(value, name: str = "ε") -> Fraction:
    """A budget amount as an exact, finite, non-negative Fraction (a float is taken as the decimal it prints)."""
    try:
        if isinstance(value, Fraction):
            out = value
        elif isinstance(value, float):
            out = Fraction(str(value))
        else:
            out = Fraction(value)
    except (TypeError, ValueError, OverflowError):
        raise ParameterError(f"{name} must be a finite number, got {value!r}") from None
    if out < 0:
        raise ParameterError(f"{name} cannot be negative, got {value!r}")
    return out


def _fmt(value: Fraction) -> str:
    return f"{float(value):.6g}" if value.denominator != 1 else str(value.numerator)


@dataclass(frozen=True)
class LedgerEntry:
    """One release charged to a dataset (output_hash/completed are None until the release finished)."""

    id: int
    fingerprint: str
    mechanism: str
    params: dict
    epsilon: Fraction
    delta: Fraction
    created: str
    output_hash: str | None
    completed: str | None
    label: str

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "fingerprint": self.fingerprint, "mechanism": self.mechanism, "params": self.params,
                "epsilon": str(self.epsilon), "delta": str(self.delta), "created": self.created,
                "output_hash": self.output_hash, "completed": self.completed, "label": self.label}


@dataclass(frozen=True)
class DatasetSummary:
    fingerprint: str
    label: str
    cap: Fraction | None
    spent: Fraction
    spent_delta: Fraction
    releases: int
    created: str
    last_release: str | None

    @property
    def remaining(self) -> Fraction | None:
        return None if self.cap is None else max(self.cap - self.spent, Fraction(0))


class Ledger:
    """Budget ledger in one SQLite file; safe to use from several threads and processes at once.

    A connection is opened per call (cheap) so that a Ledger object can be shared with worker threads.
    """

    def __init__(self, path=None):
        self.path = Path(path).expanduser() if path is not None else default_ledger_path()
        self.key_path = self.path.with_name(self.path.name + ".key")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise PpdpError(f"cannot create the ledger folder {self.path.parent}: {exc.strerror or exc}") from None
        self._key: bytes | None = None
        with self._write() as db:
            for statement in _SCHEMA.strip().split(";"):
                if statement.strip():
                    db.execute(statement)
            db.execute("INSERT OR IGNORE INTO meta(key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
        with self._read() as db:
            version = int(db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0])
        if version > SCHEMA_VERSION:
            raise PpdpError(f"the ledger {self.path} was written by a newer version (schema {version}); "
                            "update ppdp_gui before using it")

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

    # ---- fingerprint ----------------------------------------------------------------------------------------
    def _secret(self) -> bytes:
        if self._key is None:
            try:
                fd = os.open(self.key_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                pass
            else:
                with os.fdopen(fd, "w") as handle:
                    handle.write(secrets.token_hex(32) + "\n")
                    handle.flush()
                    os.fsync(handle.fileno())
            text = ""
            for _ in range(50):  # another process may be writing it this instant
                text = self.key_path.read_text().strip()
                if len(text) == 64:
                    break
                time.sleep(0.01)
            try:
                self._key = bytes.fromhex(text)
            except ValueError:
                self._key = b""
            if len(self._key) != 32:
                raise PpdpError(f"the ledger key {self.key_path} is damaged; without it fingerprints change and "
                                "budgets could be reset, so restore it from a backup")
        return self._key

    def fingerprint(self, frame: pd.DataFrame) -> str:
        """Keyed hash of the table's canonical content (row and column order do not matter)."""
        return keyed_fingerprint(frame, self._secret())

    # ---- budget ---------------------------------------------------------------------------------------------
    @staticmethod
    def _ensure_dataset(db: sqlite3.Connection, fp: str, label: str) -> None:
        db.execute("INSERT OR IGNORE INTO datasets(fingerprint, label, created) VALUES (?, ?, ?)", (fp, label, _now()))
        if label:
            db.execute("UPDATE datasets SET label = ? WHERE fingerprint = ? AND label = ''", (label, fp))

    @staticmethod
    def _spent(db: sqlite3.Connection, fp: str) -> tuple[Fraction, Fraction]:
        eps, delta = Fraction(0), Fraction(0)
        for en, ed, dn, dd in db.execute(
                "SELECT eps_num, eps_den, delta_num, delta_den FROM entries WHERE fingerprint = ?", (fp,)):
            eps += Fraction(int(en), int(ed))
            delta += Fraction(int(dn), int(dd))
        return eps, delta

    @staticmethod
    def _cap(db: sqlite3.Connection, fp: str) -> Fraction | None:
        row = db.execute("SELECT cap_num, cap_den FROM datasets WHERE fingerprint = ?", (fp,)).fetchone()
        if row is None or row[0] is None:
            return None
        return Fraction(int(row[0]), int(row[1]))

    def set_cap(self, fingerprint: str, epsilon, label: str = "") -> None:
        """Total ε that may ever be spent on this dataset. A cap below what is already spent blocks new releases."""
        cap = exact(epsilon, "the ε cap")
        with self._write() as db:
            self._ensure_dataset(db, fingerprint, label)
            db.execute("UPDATE datasets SET cap_num = ?, cap_den = ? WHERE fingerprint = ?",
                       (str(cap.numerator), str(cap.denominator), fingerprint))

    def cap(self, fingerprint: str) -> Fraction | None:
        with self._read() as db:
            return self._cap(db, fingerprint)

    def spent(self, fingerprint: str) -> Fraction:
        with self._read() as db:
            return self._spent(db, fingerprint)[0]

    def spent_delta(self, fingerprint: str) -> Fraction:
        with self._read() as db:
            return self._spent(db, fingerprint)[1]

    def remaining(self, fingerprint: str) -> Fraction | None:
        """Cap minus spent (never below 0), or None when no cap is set."""
        with self._read() as db:
            cap = self._cap(db, fingerprint)
            return None if cap is None else max(cap - self._spent(db, fingerprint)[0], Fraction(0))

    def reserve(self, fingerprint: str, mechanism: str, params: dict, epsilon, delta=Fraction(0),
                label: str = "") -> int:
        """Charge ε (and δ) for a release about to run; returns the entry id. Raises BudgetError, writing
        nothing, if the cap would be exceeded. Call this BEFORE drawing any noise; it is never refunded."""
        eps = exact(epsilon, "ε")
        dlt = exact(delta, "δ")
        if dlt >= 1:
            raise ParameterError(f"δ must be below 1, got {delta!r}")
        try:
            params_text = json.dumps(params, sort_keys=True, default=str, ensure_ascii=False)
        except (TypeError, ValueError) as exc:
            raise ParameterError(f"the release parameters cannot be recorded: {exc}") from None
        with self._write() as db:
            self._ensure_dataset(db, fingerprint, label)
            cap = self._cap(db, fingerprint)
            spent = self._spent(db, fingerprint)[0]
            if cap is not None and spent + eps > cap:
                raise BudgetError(
                    f"privacy budget exceeded for this dataset: spent ε = {_fmt(spent)} of the cap {_fmt(cap)}, "
                    f"this release needs ε = {_fmt(eps)} but only {_fmt(max(cap - spent, Fraction(0)))} is left. "
                    "Nothing was run or charged; lower ε or raise the cap deliberately.")
            cur = db.execute(
                "INSERT INTO entries(fingerprint, mechanism, params, eps_num, eps_den, delta_num, delta_den, created,"
                " label) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (fingerprint, str(mechanism), params_text, str(eps.numerator), str(eps.denominator),
                 str(dlt.numerator), str(dlt.denominator), _now(), str(label)))
            return int(cur.lastrowid)

    def complete(self, entry_id: int, output_hash: str) -> None:
        """Record the released table's hash on its entry (once; an entry's hash is never rewritten)."""
        with self._write() as db:
            row = db.execute("SELECT output_hash FROM entries WHERE id = ?", (int(entry_id),)).fetchone()
            if row is None:
                raise ParameterError(f"the ledger has no entry {entry_id}")
            if row[0] is not None:
                if row[0] == output_hash:
                    return
                raise ParameterError(f"ledger entry {entry_id} already records another output")
            db.execute("UPDATE entries SET output_hash = ?, completed = ? WHERE id = ?",
                       (str(output_hash), _now(), int(entry_id)))

    # ---- listing --------------------------------------------------------------------------------------------
    def entries(self, fp: str | None = None) -> list[LedgerEntry]:
        """Entries in the order they were made (of one dataset, or all)."""
        query = ("SELECT id, fingerprint, mechanism, params, eps_num, eps_den, delta_num, delta_den, created, "
                 "output_hash, completed, label FROM entries")
        args: tuple = ()
        if fp is not None:
            query += " WHERE fingerprint = ?"
            args = (fp,)
        with self._read() as db:
            rows = db.execute(query + " ORDER BY id", args).fetchall()
        return [LedgerEntry(r[0], r[1], r[2], json.loads(r[3]), Fraction(int(r[4]), int(r[5])),
                            Fraction(int(r[6]), int(r[7])), r[8], r[9], r[10], r[11]) for r in rows]

    def entry(self, entry_id: int) -> LedgerEntry | None:
        found = [e for e in self.entries() if e.id == int(entry_id)]
        return found[0] if found else None

    def datasets(self) -> list[DatasetSummary]:
        with self._read() as db:
            rows = db.execute("SELECT fingerprint, label, created FROM datasets ORDER BY created").fetchall()
            out = []
            for fp, label, created in rows:
                eps, dlt = self._spent(db, fp)
                count, last = db.execute("SELECT COUNT(*), MAX(created) FROM entries WHERE fingerprint = ?",
                                         (fp,)).fetchone()
                out.append(DatasetSummary(fp, label, self._cap(db, fp), eps, dlt, int(count), created, last))
        return out

    def integrity_check(self) -> str:
        """SQLite's own consistency check ('ok' when the file is sound)."""
        with self._read() as db:
            return str(db.execute("PRAGMA integrity_check").fetchone()[0])
