"""The ledger's SQLite schema and its migrations, applied in the one transaction that opens a ledger.

Schema 1 (before budget groups) is migrated in place: its datasets become groups of their own (origin
'schema-1', no sketch) keeping their caps, uncapped ones stay uncapped, and every entry is charged to its own
dataset's group. Their fingerprints were of the typed, filtered table, so they are recognised only when that very
reading recurs, never as near copies (see `Ledger.identify`).

Schema 2 -> 3 records each entry's neighbouring relation ('add/remove' or 'replace'); entries written before
count as add/remove.

Schema 3 -> 4 (issue 27): per-dataset sketches that survive routine edits (`robust`, privacy/sketches.py) and of
the person ids (`persons`); the MAC columns of the tamper-evident chain (privacy/chain.py); the recorded cap changes
(who, when, why) and acknowledgements of a broken chain. The MACs of existing rows are computed by the first
version that opens the ledger with its key (`Ledger._seal_if_needed`), not here: the migration runs without it.
"""

from __future__ import annotations

import sqlite3

from ppdp_gui.engine.errors import PpdpError

SCHEMA_VERSION = 4

# schema 1 exactly as it was written; a new file gets it too and then goes through the same migration
SCHEMA_1 = """
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

# schema 1 -> 2: budget groups (the cap lives on the root's row), sketches, separate-dataset confirmations.
# origin: 'schema-1' (migrated), 'rows' (identified by its rows), 'name' (charged under a bare fingerprint)
MIGRATE_TO_2 = """
ALTER TABLE datasets ADD COLUMN budget TEXT NOT NULL DEFAULT '';
ALTER TABLE datasets ADD COLUMN origin TEXT NOT NULL DEFAULT 'schema-1';
ALTER TABLE datasets ADD COLUMN n_rows INTEGER;
ALTER TABLE datasets ADD COLUMN n_distinct INTEGER;
ALTER TABLE datasets ADD COLUMN sketch BLOB;
ALTER TABLE datasets ADD COLUMN near_copy_of TEXT;
ALTER TABLE datasets ADD COLUMN similarity REAL;
ALTER TABLE datasets ADD COLUMN separate_from TEXT;
ALTER TABLE datasets ADD COLUMN separate_similarity REAL;
ALTER TABLE datasets ADD COLUMN separate_by TEXT;
ALTER TABLE datasets ADD COLUMN separate_at TEXT;
UPDATE datasets SET budget = fingerprint WHERE budget = '';
ALTER TABLE entries ADD COLUMN budget TEXT NOT NULL DEFAULT '';
ALTER TABLE entries ADD COLUMN release_id TEXT NOT NULL DEFAULT '';
UPDATE entries SET budget = fingerprint WHERE budget = '';
CREATE INDEX IF NOT EXISTS datasets_by_budget ON datasets(budget);
CREATE INDEX IF NOT EXISTS entries_by_budget ON entries(budget);
UPDATE meta SET value = '2' WHERE key = 'schema_version';
"""

# schema 2 -> 3: the neighbouring relation each entry's ε is stated for (records.ADD_REMOVE or records.REPLACE)
MIGRATE_TO_3 = """
ALTER TABLE entries ADD COLUMN neighbouring TEXT NOT NULL DEFAULT 'add/remove';
UPDATE meta SET value = '3' WHERE key = 'schema_version';
"""


# schema 3 -> 4: robust and person sketches, MACs, cap changes, acknowledgements
MIGRATE_TO_4 = """
ALTER TABLE datasets ADD COLUMN robust BLOB;
ALTER TABLE datasets ADD COLUMN persons BLOB;
ALTER TABLE datasets ADD COLUMN mac TEXT;
ALTER TABLE entries ADD COLUMN mac TEXT;
ALTER TABLE entries ADD COLUMN done_mac TEXT;
CREATE TABLE IF NOT EXISTS cap_changes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    budget TEXT NOT NULL,
    old_num TEXT, old_den TEXT,
    new_num TEXT NOT NULL, new_den TEXT NOT NULL,
    who TEXT NOT NULL, at TEXT NOT NULL, reason TEXT NOT NULL,
    mac TEXT
);
CREATE TABLE IF NOT EXISTS acknowledgements (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    who TEXT NOT NULL, at TEXT NOT NULL, reason TEXT NOT NULL, found TEXT NOT NULL,
    mac TEXT
);
CREATE INDEX IF NOT EXISTS cap_changes_by_budget ON cap_changes(budget);
UPDATE meta SET value = '4' WHERE key = 'schema_version';
"""


def statements(script: str) -> list[str]:
    return [s.strip() for s in script.split(";") if s.strip()]


def create_or_migrate(db: sqlite3.Connection, where) -> None:
    """Inside an open write transaction: create a new ledger, or bring an older one to SCHEMA_VERSION (a new
    file is created as schema 1 and migrated like any other, so the migration runs on every new ledger)."""
    for statement in statements(SCHEMA_1):
        db.execute(statement)
    db.execute("INSERT OR IGNORE INTO meta(key, value) VALUES ('schema_version', '1')")
    version = int(db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0])
    if version > SCHEMA_VERSION:
        raise PpdpError(f"the ledger {where} was written by a newer version (schema {version}); "
                        "update ppdp_gui before using it")
    if version == 1:
        for statement in statements(MIGRATE_TO_2):
            db.execute(statement)
        version = 2
    if version == 2:
        for statement in statements(MIGRATE_TO_3):
            db.execute(statement)
        version = 3
    if version == 3:
        for statement in statements(MIGRATE_TO_4):
            db.execute(statement)
