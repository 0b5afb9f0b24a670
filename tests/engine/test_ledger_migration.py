"""A schema-1 ledger (as written before budget groups) opens and is migrated in place, keeping every budget."""

import secrets
import sqlite3
from fractions import Fraction

import pandas as pd
import pytest

from ppdp_gui.engine.errors import BudgetError, PpdpError
from ppdp_gui.engine.privacy import DEFAULT_CAP, Ledger
from ppdp_gui.engine.privacy.fingerprint import legacy_fingerprint_v1
from ppdp_gui.engine.privacy.ledger_schema import SCHEMA_VERSION

# schema 1 exactly as the code before it wrote it
SCHEMA_1 = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE datasets (fingerprint TEXT PRIMARY KEY, label TEXT NOT NULL DEFAULT '', cap_num TEXT, cap_den TEXT,
    created TEXT NOT NULL);
CREATE TABLE entries (id INTEGER PRIMARY KEY AUTOINCREMENT,
    fingerprint TEXT NOT NULL REFERENCES datasets(fingerprint), mechanism TEXT NOT NULL, params TEXT NOT NULL,
    eps_num TEXT NOT NULL, eps_den TEXT NOT NULL, delta_num TEXT NOT NULL, delta_den TEXT NOT NULL,
    created TEXT NOT NULL, output_hash TEXT, completed TEXT, label TEXT NOT NULL DEFAULT '');
CREATE INDEX entries_by_dataset ON entries(fingerprint);
INSERT INTO meta VALUES ('schema_version', '1');
"""
TYPED = pd.DataFrame({"age": [39.0, 50.0, 38.0], "sex": ["Male", "Female", "(missing)"]})


def _schema_1_ledger(tmp_path):
    path = tmp_path / "ledger.sqlite"
    key = secrets.token_bytes(32)
    (tmp_path / "ledger.sqlite.key").write_text(key.hex() + "\n")
    old_fp = legacy_fingerprint_v1(TYPED, key)  # what the old code recorded for this typed table
    db = sqlite3.connect(path)
    db.executescript(SCHEMA_1)
    db.executemany("INSERT INTO datasets VALUES (?, ?, ?, ?, ?)",
                   [(old_fp, "adult.csv", "1", "1", "2024-01-01T00:00:00+00:00"),
                    ("f" * 64, "", None, None, "2024-01-02T00:00:00+00:00")])
    db.executemany("INSERT INTO entries(fingerprint, mechanism, params, eps_num, eps_den, delta_num, delta_den, "
                   "created, output_hash, completed, label) VALUES (?, ?, ?, ?, ?, '0', '1', ?, ?, ?, '')",
                   [(old_fp, "Laplace histogram", '{"epsilon": "0.3"}', "3", "10", "2024-01-01T01:00:00+00:00",
                     "a" * 64, "2024-01-01T01:00:01+00:00"),
                    ("f" * 64, "DiffGen", "{}", "5", "1", "2024-01-02T01:00:00+00:00", None, None)])
    db.commit()
    db.close()
    return path, old_fp


def test_schema_1_is_migrated_in_place_and_keeps_its_budgets(tmp_path):
    path, old_fp = _schema_1_ledger(tmp_path)
    ledger = Ledger(path)
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (str(SCHEMA_VERSION),)
        assert db.execute("SELECT value FROM meta WHERE key = 'key_check'").fetchone() is not None
    assert ledger.integrity_check() == "ok"
    by_fp = {d.fingerprint: d for d in ledger.datasets()}
    old, uncapped = by_fp[old_fp], by_fp["f" * 64]
    assert (old.budget, old.origin, old.cap, old.spent, old.releases) == (old_fp, "schema-1", 1, Fraction(3, 10), 1)
    assert (uncapped.budget, uncapped.cap, uncapped.spent) == ("f" * 64, None, 5)  # no cap was set: still none
    [e1, e2] = ledger.entries()
    assert (e1.budget, e1.release_id, e1.output_hash, e1.params) == (old_fp, "", "a" * 64, {"epsilon": "0.3"})
    assert ledger.entry(2) == e2 and e2.budget == "f" * 64
    # the old calling style still finds the old budget
    assert ledger.remaining(old_fp) == Fraction(7, 10) and ledger.remaining("f" * 64) is None
    Ledger(path)  # opening again does nothing more
    assert len(Ledger(path).datasets()) == 2


def test_the_same_typed_table_finds_its_schema_1_budget_and_brings_its_near_copies(tmp_path):
    """Schema-1 fingerprints were of the typed table: that exact reading is still recognised (and from then on
    its near copies too, through the new dataset recorded in the old group); other readings are not."""
    path, old_fp = _schema_1_ledger(tmp_path)
    ledger = Ledger(path)
    identity = ledger.identify(TYPED)
    assert (identity.known, identity.budget, identity.near_copy_of) == (False, old_fp, old_fp)
    assert ledger.budget(identity).remaining == Fraction(7, 10)
    with pytest.raises(BudgetError):
        ledger.reserve(identity, "x", {}, 1)
    ledger.reserve(identity, "x", {}, Fraction(1, 2))
    edited = TYPED.copy()
    edited.loc[3] = [17.0, "Female"]
    assert ledger.identify(edited).budget == old_fp  # a near copy of the newly recorded member of the old group
    unrelated = ledger.identify(pd.DataFrame({"x": ["1", "2"]}))
    assert unrelated.budget == unrelated.fingerprint and ledger.budget(unrelated).cap == DEFAULT_CAP


def test_a_newer_schema_is_refused(tmp_path):
    path = tmp_path / "ledger.sqlite"
    Ledger(path)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION + 1),))
    with pytest.raises(PpdpError, match="newer version"):
        Ledger(path)


def test_a_failed_migration_leaves_schema_1_untouched(tmp_path, monkeypatch):
    path, _ = _schema_1_ledger(tmp_path)
    import ppdp_gui.engine.privacy.ledger_schema as module
    monkeypatch.setattr(module, "MIGRATE_TO_2", module.MIGRATE_TO_2 + ";\nSELECT no_such_function()")
    with pytest.raises(PpdpError):
        Ledger(path)
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == ("1",)
        columns = [r[1] for r in db.execute("PRAGMA table_info(datasets)")]
    assert columns == ["fingerprint", "label", "cap_num", "cap_den", "created"]
