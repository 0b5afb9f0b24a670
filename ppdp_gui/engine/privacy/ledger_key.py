"""The ledger's key: created once, race-safe and private (mode 0600), read back checked against the value the
ledger recorded with it, and refused when missing, damaged or replaced — without it no table is recognised and every
budget would silently start again. A mixin of `Ledger` (it needs `_read`, `_write`, `key_path` and `_key`), kept
apart because the key's life (creation, check, loss) is its own concern, beside identity and budgets."""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import sqlite3
import time
from pathlib import Path

from ppdp_gui.engine.errors import PpdpError

_KEY_CHECK = b"ppdp-key-check"


class LedgerKey:
    """Creating, reading and checking the ledger's key (see the module docstring)."""

    @staticmethod
    def _check_value(key: bytes) -> str:
        return hmac.new(key, _KEY_CHECK, hashlib.sha256).hexdigest()

    @staticmethod
    def _n_datasets(db: sqlite3.Connection) -> int:
        return int(db.execute("SELECT COUNT(*) FROM datasets").fetchone()[0])

    def _prepare_key(self) -> None:
        """Create the key of an empty ledger (race-safe, mode 0600) and record its check value; for a ledger that
        already has a key but no check value (schema 1) record the check value of that key. A missing key of a
        ledger that records datasets is left missing: listing still works, anything needing the key refuses."""
        if not self.key_path.exists():
            with self._read() as db:
                if self._n_datasets(db):
                    return
            self._create_key_file()
            check = self._check_value(self._read_key())
            with self._write() as db:
                if self._n_datasets(db):  # registered meanwhile by a process using this same new key
                    db.execute("INSERT OR IGNORE INTO meta(key, value) VALUES ('key_check', ?)", (check,))
                else:
                    db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('key_check', ?)", (check,))
            return
        try:
            check = self._check_value(self._read_key())
        except PpdpError:
            return  # damaged: refused when the key is needed
        with self._read() as db:
            stored = db.execute("SELECT value FROM meta WHERE key = 'key_check'").fetchone()
        if stored is None:
            with self._write() as db:
                db.execute("INSERT OR IGNORE INTO meta(key, value) VALUES ('key_check', ?)", (check,))

    def _create_key_file(self) -> None:
        """Write a new key to a private temporary file, fsync it, then link it to the key's name: the key file
        appears complete or not at all (a kill can never leave an empty key), and of two processes creating it
        at once the first link wins and both use that key."""
        import tempfile
        try:
            fd, tmp = tempfile.mkstemp(prefix=f".{self.key_path.name}.", suffix=".new", dir=self.key_path.parent)
        except OSError as exc:
            raise PpdpError(f"cannot create the ledger key {self.key_path}: {exc.strerror or exc}") from None
        try:
            os.chmod(tmp, 0o600)
            with os.fdopen(fd, "w") as handle:
                handle.write(secrets.token_hex(32) + "\n")
                handle.flush()
                os.fsync(handle.fileno())
            try:
                os.link(tmp, self.key_path)
            except FileExistsError:
                pass  # another process created it this instant: use theirs
            except OSError as exc:
                raise PpdpError(f"cannot create the ledger key {self.key_path}: {exc.strerror or exc}") from None
        finally:
            Path(tmp).unlink(missing_ok=True)

    def _read_key(self) -> bytes:
        text = ""
        for _ in range(50):  # another process may be writing it this instant
            try:
                text = self.key_path.read_text().strip()
            except FileNotFoundError:
                text = ""
            except OSError as exc:
                raise PpdpError(f"the ledger key {self.key_path} cannot be read ({exc.strerror or exc}); without it "
                                "no dataset can be recognised and budgets could be reset, so restore it from a "
                                "backup or fix its permissions") from None
            if len(text) == 64:
                break
            time.sleep(0.01)
        try:
            key = bytes.fromhex(text)
        except ValueError:
            key = b""
        if len(key) != 32:
            raise PpdpError(f"the ledger key {self.key_path} is damaged; without it fingerprints change and "
                            "budgets could be reset, so restore it from a backup")
        return key

    def _secret(self) -> bytes:
        """The key, checked against the ledger's check value; refuses a missing, damaged or replaced key."""
        if self._key is None:
            if not self.key_path.exists():
                with self._read() as db:
                    n = self._n_datasets(db)
                if n:
                    raise PpdpError(
                        f"the ledger key {self.key_path} is missing, but the ledger {self.path} already records "
                        f"{n} dataset(s). Without that key no table can be recognised, so every privacy budget "
                        f"would silently start again. Restore {self.key_path.name} from a backup into "
                        f"{self.key_path.parent}; nothing was run or charged.")
                self._prepare_key()  # an empty ledger whose key went: a new key is harmless
            key = self._read_key()
            with self._read() as db:
                stored = db.execute("SELECT value FROM meta WHERE key = 'key_check'").fetchone()
            if stored is not None and not hmac.compare_digest(stored[0], self._check_value(key)):
                raise PpdpError(
                    f"the ledger key {self.key_path} is not the key the ledger {self.path} was created with (it was "
                    "replaced). With another key no table is recognised and every budget would silently start "
                    "again; restore the original key from a backup. Nothing was run or charged.")
            self._key = key
        return self._key
