"""The custodian's side of the ledger: tamper evidence (privacy/chain.py) and the record of every cap change.

A mixin of `Ledger` (ledger.py), kept apart so that the storage and identity code stays readable: everything here
writes inside the same IMMEDIATE transactions as reservations, so a cap change or an acknowledgement never races
a reservation, and a reservation checks the chain under its write lock.
"""

from __future__ import annotations

import getpass
from datetime import datetime, timezone
from fractions import Fraction

from ppdp_gui.engine.errors import BudgetError, ParameterError
from ppdp_gui.engine.privacy import chain
from ppdp_gui.engine.privacy.ledger_types import CapChange


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def _user() -> str:
    try:
        return getpass.getuser()
    except (OSError, KeyError, ImportError):  # no user name in this environment
        return ""


def _frac(num, den) -> Fraction:
    return Fraction(int(num), int(den))


class LedgerAudit:
    """Tamper check, acknowledgements and cap changes; needs the `Ledger` methods `_read`, `_write`, `_secret`,
    `_group_of`."""

    # ---- tamper evidence (chain.py) -----------------------------------------------------------------------
    def _seal_if_needed(self) -> None:
        """Seal (compute the MACs of) a ledger written before schema 4, once, by the first opening with the key.
        A brand-new ledger is sealed empty. Nothing is sealed without the key (it stays unsealed and unchecked)."""
        with self._read() as db:
            sealed = db.execute("SELECT value FROM meta WHERE key = 'chain'").fetchone()
        if sealed is not None:
            return
        key = chain.chain_key(self._secret())
        with self._write() as db:
            if db.execute("SELECT value FROM meta WHERE key = 'chain'").fetchone() is None:
                chain.seal(key, db)

    def _chain_key(self) -> bytes:
        return chain.chain_key(self._secret())

    def check(self) -> chain.ChainReport:
        """Every MAC of the ledger checked: deleted, altered, inserted or reordered rows (`ppdp ledger --check`)."""
        key = self._chain_key()
        with self._read() as db:
            report = chain.verify(key, db)
        self.chain_report = report
        return report

    def acknowledge(self, reason: str) -> dict:
        """The custodian has looked at what the tamper check found and accepts the ledger as it now is: recorded
        (who, when, why, what was found, chained like everything else), then every MAC is computed again. Until
        then DP releases of the affected tables are refused. Returns the acknowledgement as recorded."""
        reason = " ".join(str(reason or "").split())
        if not reason:
            raise ParameterError("say why the ledger's changes are accepted (--reason \"…\", or the reason box in "
                                 "the window)")
        key = self._chain_key()
        with self._write() as db:
            report = chain.verify(key, db)
            found = "; ".join(report.problems) or "nothing (the chain was intact)"
            record = {"who": _user(), "at": _now(), "reason": reason, "found": found}
            last = {b: (n, d) for b, n, d in db.execute("SELECT budget, new_num, new_den FROM cap_changes "
                                                        "ORDER BY id")}
            for fp, num, den in db.execute("SELECT fingerprint, cap_num, cap_den FROM datasets WHERE budget = "
                                           "fingerprint OR budget = ''").fetchall():
                if fp in last and (num, den) != last[fp] and num is not None:  # a cap found changed: recorded
                    db.execute("INSERT INTO cap_changes(budget, old_num, old_den, new_num, new_den, who, at, reason)"
                               " VALUES (?, ?, ?, ?, ?, ?, ?, ?)", (fp, *last[fp], num, den, record["who"],
                                                                    record["at"], "found changed outside ppdp_gui; "
                                                                    "accepted with the acknowledgement: " + reason))
            chain.seal(key, db)  # accept the rows as they are now …
            cur = db.execute("INSERT INTO acknowledgements(who, at, reason, found) VALUES (?, ?, ?, ?)",
                             (record["who"], record["at"], reason, found))
            ack_id = int(cur.lastrowid)
            row = db.execute(f"SELECT {', '.join(chain.ACK_FIELDS)} FROM acknowledgements WHERE id = ?",
                             (ack_id,)).fetchone()
            prev = db.execute("SELECT mac FROM acknowledgements WHERE id < ? ORDER BY id DESC LIMIT 1",
                              (ack_id,)).fetchone()
            db.execute("UPDATE acknowledgements SET mac = ? WHERE id = ?",
                       (chain.ack_mac(key, prev[0] if prev else chain._GENESIS, row), ack_id))
            chain.set_head(key, db)  # … and this acknowledgement after them
        self.chain_report = self.check()
        return {"id": ack_id, **record}

    def acknowledgements(self) -> list[dict]:
        with self._read() as db:
            return [dict(zip(("id", "who", "at", "reason", "found"), r)) for r in
                    db.execute("SELECT id, who, at, reason, found FROM acknowledgements ORDER BY id")]

    def _refuse_if_tampered(self, db, key: bytes, group: str) -> None:
        report = chain.verify(key, db)
        self.chain_report = report
        if report.affects(group):
            raise BudgetError(
                "the privacy ledger was changed outside ppdp_gui (" + "; ".join(report.problems[:3])
                + (" …" if len(report.problems) > 3 else "") + "), so what was spent on this table can no longer "
                "be trusted. Nothing was run or charged. The custodian must look at it and acknowledge it: in the "
                "window, File → Privacy budget ledger → Acknowledge changes…; or ppdp ledger acknowledge --reason "
                "\"…\" (see ppdp ledger --check).")

    def _seal_dataset(self, db, fp: str) -> None:
        key = self._chain_key()
        row = db.execute(f"SELECT {', '.join(chain.DATASET_FIELDS + chain.DATASET_BLOBS)} FROM datasets "
                         "WHERE fingerprint = ?", (fp,)).fetchone()
        db.execute("UPDATE datasets SET mac = ? WHERE fingerprint = ?",
                   (chain.dataset_mac(key, row[:4], row[4:]), fp))

    def _append(self, db, table: str, fields, fn, row_id: int) -> None:
        key = self._chain_key()
        prev = db.execute(f"SELECT mac FROM {table} WHERE id < ? ORDER BY id DESC LIMIT 1", (row_id,)).fetchone()
        row = db.execute(f"SELECT {', '.join(fields)} FROM {table} WHERE id = ?", (row_id,)).fetchone()
        db.execute(f"UPDATE {table} SET mac = ? WHERE id = ?", (fn(key, prev[0] if prev else chain._GENESIS, row),
                                                                 row_id))
        chain.set_head(key, db)

    def _record_cap(self, db, budget: str, old: Fraction | None, new: Fraction, reason: str) -> None:
        cur = db.execute("INSERT INTO cap_changes(budget, old_num, old_den, new_num, new_den, who, at, reason) "
                         "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                         (budget, None if old is None else str(old.numerator),
                          None if old is None else str(old.denominator), str(new.numerator), str(new.denominator),
                          _user(), _now(), reason))
        self._append(db, "cap_changes", chain.CAP_FIELDS, chain.cap_mac, int(cur.lastrowid))

    def cap_changes(self, target=None) -> list[CapChange]:
        """Every cap set or changed (who, when, why), of one budget group (identity or fingerprint) or all."""
        with self._read() as db:
            query, args = "SELECT budget, old_num, old_den, new_num, new_den, who, at, reason FROM cap_changes", []
            if target is not None:
                query += " WHERE budget = ?"
                args.append(self._group_of(db, target)[0])
            rows = db.execute(query + " ORDER BY id", args).fetchall()
        return [CapChange(b, None if on is None else _frac(on, od), _frac(nn, nd), who, at, why)
                for b, on, od, nn, nd, who, at, why in rows]
