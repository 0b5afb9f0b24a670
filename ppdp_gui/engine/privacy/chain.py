"""Tamper evidence for the ledger: keyed MACs chained over its entries, cap changes and acknowledgements.

Deleting rows from the ledger's SQLite tables used to reset a budget and nothing noticed (issue 27, finding 3).
Now, under the ledger key (HMAC-SHA256 with a key derived from it):

- each entry carries `mac` = MAC(previous entry's mac, its id and every field fixed at reservation) and, once its
  output is recorded, `done_mac` over that; each cap change and each acknowledgement is chained the same way in
  its own table; each dataset row carries a MAC of its budget group and sketches (a removed sketch would let a near
  copy start afresh);
- `meta.chain_head` is a MAC of the three chains' lengths and last MACs, so deleting the *last* entry is seen too.

`verify` (run on open, inside every reservation's write transaction, and by ``ppdp ledger --check``) reports a
deleted, altered, inserted or reordered row. A broken entry chain cannot say which budget a deleted entry was
charged to, so it affects every table; a damaged dataset row affects its own budget group. Until the custodian
acknowledges what was found (`Ledger.acknowledge`: who, when, why, and what was found, itself chained), DP
releases of the affected tables are refused. Acknowledging re-seals the ledger as it now is.

Trust boundary: the MACs prove that whoever changed a row did not hold the key. Someone who can read the key file
(the custodian's account, an administrator) can rewrite the ledger consistently, and a whole-file rollback to an
earlier copy of both the database and its head is not detected. Entries written before schema 4 carried no MAC:
they are sealed as found by the first version that opens the ledger with its key (anything done to them before
that is not detectable).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import sqlite3
from dataclasses import dataclass, field

ENTRY_FIELDS = ("id", "fingerprint", "mechanism", "params", "eps_num", "eps_den", "delta_num", "delta_den",
                "created", "label", "budget", "release_id", "neighbouring")
CAP_FIELDS = ("id", "budget", "old_num", "old_den", "new_num", "new_den", "who", "at", "reason")
ACK_FIELDS = ("id", "who", "at", "reason", "found")
DATASET_FIELDS = ("fingerprint", "budget", "origin", "created")
DATASET_BLOBS = ("sketch", "robust", "persons")
_GENESIS = "ppdp-ledger-chain-v1"


def chain_key(key: bytes) -> bytes:
    return hmac.new(key, b"ppdp-ledger-chain-key", hashlib.sha256).digest()


def _mac(key: bytes, *parts) -> str:
    text = json.dumps([str(p) if p is not None else None for p in parts], ensure_ascii=False)
    return hmac.new(key, text.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()


def entry_mac(key: bytes, prev: str, row) -> str:
    return _mac(key, "entry", prev, *row)


def done_mac(key: bytes, mac: str, output_hash, completed) -> str:
    return _mac(key, "done", mac, output_hash, completed)


def cap_mac(key: bytes, prev: str, row) -> str:
    return _mac(key, "cap", prev, *row)


def ack_mac(key: bytes, prev: str, row) -> str:
    return _mac(key, "ack", prev, *row)


def dataset_mac(key: bytes, row, blobs) -> str:
    digests = [None if b is None else hashlib.sha256(bytes(b)).hexdigest() for b in blobs]
    return _mac(key, "dataset", *row, *digests)


def _last(db: sqlite3.Connection, table: str) -> tuple[int, str]:
    n = int(db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])
    row = db.execute(f"SELECT mac FROM {table} ORDER BY id DESC LIMIT 1").fetchone()
    return n, (row[0] if row and row[0] else _GENESIS)


def head_mac(key: bytes, db: sqlite3.Connection) -> str:
    return _mac(key, "head", *_last(db, "entries"), *_last(db, "cap_changes"), *_last(db, "acknowledgements"))


def previous(db: sqlite3.Connection, table: str) -> str:
    return _last(db, table)[1]


def set_head(key: bytes, db: sqlite3.Connection) -> None:
    db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('chain_head', ?)", (head_mac(key, db),))


def seal(key: bytes, db: sqlite3.Connection) -> None:
    """Inside a write transaction: compute every MAC as the rows are now (first open of an older ledger with the
    key, or after an acknowledgement) and the head."""
    for table, fields, fn in (("entries", ENTRY_FIELDS, entry_mac), ("cap_changes", CAP_FIELDS, cap_mac),
                              ("acknowledgements", ACK_FIELDS, ack_mac)):
        prev = _GENESIS
        for row in db.execute(f"SELECT {', '.join(fields)} FROM {table} ORDER BY id").fetchall():
            mac = fn(key, prev, row)
            db.execute(f"UPDATE {table} SET mac = ? WHERE id = ?", (mac, row[0]))
            prev = mac
    for row in db.execute("SELECT id, mac, output_hash, completed FROM entries WHERE output_hash IS NOT NULL"
                          ).fetchall():
        db.execute("UPDATE entries SET done_mac = ? WHERE id = ?", (done_mac(key, row[1], row[2], row[3]), row[0]))
    for row in db.execute(f"SELECT {', '.join(DATASET_FIELDS + DATASET_BLOBS)} FROM datasets").fetchall():
        db.execute("UPDATE datasets SET mac = ? WHERE fingerprint = ?",
                   (dataset_mac(key, row[:4], row[4:]), row[0]))
    set_head(key, db)
    db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('chain', 'sealed')")


@dataclass
class ChainReport:
    """What `verify` found. `affected` is None when every table is affected (a broken entry chain)."""

    problems: list[str] = field(default_factory=list)
    affected: set[str] | None = field(default_factory=set)
    entries: int = 0
    cap_changes: int = 0
    acknowledgements: int = 0

    @property
    def ok(self) -> bool:
        return not self.problems

    def affects(self, budget: str) -> bool:
        return bool(self.problems) and (self.affected is None or budget in self.affected)

    def lines(self) -> list[str]:
        if self.ok:
            return [f"the ledger's chain is intact: {self.entries} release(s), {self.cap_changes} cap change(s) "
                    f"and {self.acknowledgements} acknowledgement(s), each sealed under the ledger key"]
        return ["the ledger was changed outside ppdp_gui:"] + [f"  - {p}" for p in self.problems]


def _check_chain(key, db, table, fields, fn, report: ChainReport, what: str) -> int:
    prev, n = _GENESIS, 0
    rows = db.execute(f"SELECT {', '.join(fields)}, mac FROM {table} ORDER BY id").fetchall()
    for row in rows:
        n += 1
        if not row[-1] or not hmac.compare_digest(str(row[-1]), fn(key, prev, row[:-1])):
            report.problems.append(f"{what} #{row[0]} does not follow the one before it: a {what} was deleted, "
                                   "altered, inserted or moved")
            report.affected = None
        prev = row[-1] or prev
    return n


def verify(key: bytes, db: sqlite3.Connection) -> ChainReport:
    """Check every MAC of the ledger in `db` (a read or write transaction)."""
    report = ChainReport()
    report.entries = _check_chain(key, db, "entries", ENTRY_FIELDS, entry_mac, report, "release")
    report.cap_changes = _check_chain(key, db, "cap_changes", CAP_FIELDS, cap_mac, report, "cap change")
    report.acknowledgements = _check_chain(key, db, "acknowledgements", ACK_FIELDS, ack_mac, report,
                                           "acknowledgement")
    for eid, mac, out, done, dmac in db.execute(
            "SELECT id, mac, output_hash, completed, done_mac FROM entries WHERE output_hash IS NOT NULL "
            "OR done_mac IS NOT NULL"):
        if not dmac or not hmac.compare_digest(str(dmac), done_mac(key, mac, out, done)):
            report.problems.append(f"release #{eid}: its recorded output was altered")
    for row in db.execute(f"SELECT {', '.join(DATASET_FIELDS + DATASET_BLOBS)}, mac FROM datasets"):
        if not row[-1] or not hmac.compare_digest(str(row[-1]), dataset_mac(key, row[:4], row[4:7])):
            report.problems.append(f"table {row[0][:12]}…: its budget group or its sketches were altered")
            if report.affected is not None:
                report.affected.add(row[1] or row[0])
    stored = db.execute("SELECT value FROM meta WHERE key = 'chain_head'").fetchone()
    if stored is None or not hmac.compare_digest(str(stored[0]), head_mac(key, db)):
        report.problems.append("the last release(s), cap change(s) or acknowledgement(s) were deleted")
        report.affected = None
    last_cap = {b: (n, d) for b, n, d in db.execute(
        "SELECT budget, new_num, new_den FROM cap_changes ORDER BY id")}  # the latest change of each group wins
    for fp, num, den in db.execute("SELECT fingerprint, cap_num, cap_den FROM datasets WHERE budget = fingerprint "
                                   "OR budget = ''"):
        if fp in last_cap and (num, den) != last_cap[fp]:
            report.problems.append(f"table {fp[:12]}…: its cap is not the one last recorded")
            if report.affected is not None:
                report.affected.add(fp)
    known = {r[0] for r in db.execute("SELECT fingerprint FROM datasets")}
    for eid, fp, budget in db.execute("SELECT id, fingerprint, budget FROM entries"):
        if fp not in known or (budget or fp) not in known:
            report.problems.append(f"release #{eid}: the table it was charged to was deleted")
            report.affected = None
    return report
