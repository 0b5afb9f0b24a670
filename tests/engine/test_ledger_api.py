"""The ledger API the pipeline calls: identify (read-only), budget, reserve -> LedgerEntry, entry, set_cap, paths."""

import hashlib
from fractions import Fraction

import pandas as pd
import pytest

from ppdp_gui.engine.data.reader import dataset_from_frame, read_table
from ppdp_gui.engine.data.schema import NAPolicy
from ppdp_gui.engine.errors import BudgetError, ParameterError
from ppdp_gui.engine.privacy import DEFAULT_CAP, Budget, DatasetIdentity, Ledger, LedgerEntry

FRAME = pd.DataFrame({"age": ["39", "50", "38", "?"], "sex": ["Male", "Female", "Male", "Female"]})


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_identify_writes_nothing(tmp_path):
    ledger = Ledger(tmp_path / "ledger.sqlite")
    ledger.reserve(ledger.identify(FRAME), "x", {}, Fraction(1, 10))
    before = (_digest(ledger.path), ledger.path.stat().st_mtime_ns, _digest(ledger.key_path))
    new = pd.DataFrame({"a": ["1", "2"]})
    for frame in (FRAME, FRAME.iloc[:3], new):
        identity = ledger.identify(frame)
        ledger.budget(identity)
        ledger.budget(identity.fingerprint)
    assert (_digest(ledger.path), ledger.path.stat().st_mtime_ns, _digest(ledger.key_path)) == before
    assert not ledger.identify(new).known and len(ledger.datasets()) == 1


def test_identity_budget_and_reserve(tmp_path):
    path = tmp_path / "t.csv"
    FRAME.to_csv(path, index=False)
    data = read_table(path, na_policy=NAPolicy(action="drop"))
    assert data.n_rows == 3  # '?' dropped, but the identity is of all 4 raw rows
    ledger = Ledger(tmp_path / "ledger.sqlite")
    identity = ledger.identify(data, label="t.csv")
    assert isinstance(identity, DatasetIdentity) and identity.n_rows == 4
    assert (identity.known, identity.budget, identity.near_copy_of, identity.similarity, identity.label) == \
        (False, identity.fingerprint, None, None, "t.csv")
    assert identity.fingerprint == ledger.fingerprint(data) == ledger.fingerprint(FRAME)
    assert ledger.fingerprint(data.frame) != identity.fingerprint  # the typed, filtered table is not the source
    assert "sketch" not in repr(identity)
    assert ledger.budget(identity) == Budget(DEFAULT_CAP, Fraction(0), Fraction(0), DEFAULT_CAP, 0, True)
    entry = ledger.reserve(identity, "DiffGen", {"h": 3}, "1/3", Fraction(1, 10**9), release_id="rel-1",
                           label="first")
    assert isinstance(entry, LedgerEntry)
    assert (entry.fingerprint, entry.budget, entry.mechanism, entry.params, entry.epsilon, entry.delta,
            entry.release_id, entry.label, entry.output_hash) == \
        (identity.fingerprint, identity.fingerprint, "DiffGen", {"h": 3}, Fraction(1, 3), Fraction(1, 10**9),
         "rel-1", "first", None)
    assert ledger.entry(entry.id) == entry and ledger.entry(999) is None
    ledger.complete(entry, "b" * 64)
    assert ledger.entry(entry.id).output_hash == "b" * 64 and ledger.entry(entry.id).completed
    assert ledger.budget(identity) == Budget(DEFAULT_CAP, Fraction(1, 3), Fraction(1, 10**9), Fraction(5, 3), 1,
                                             False)
    [summary] = ledger.datasets()
    assert (summary.label, summary.n_rows, summary.origin, summary.cap) == ("t.csv", 4, "rows", DEFAULT_CAP)
    again = ledger.identify(dataset_from_frame(FRAME, na_policy=NAPolicy(tokens=())))  # built in memory
    assert again.known and again.fingerprint == identity.fingerprint and again.label == "t.csv"
    # '?' row dropped, no reader row hashes: a near copy
    typed = ledger.identify(dataset_from_frame(FRAME, na_policy=NAPolicy(action="drop")))
    assert (typed.known, typed.budget, typed.near_copy_of, typed.similarity) == \
        (False, identity.fingerprint, identity.fingerprint, 1.0)
    assert entry.to_dict()["budget"] == identity.fingerprint and entry.to_dict()["release_id"] == "rel-1"


def test_caps_per_group(tmp_path):
    ledger = Ledger(tmp_path / "ledger.sqlite", default_cap=Fraction(1, 2))
    identity = ledger.identify(FRAME)
    assert ledger.budget(identity).cap == Fraction(1, 2)
    ledger.set_cap(identity, 3)  # registers the dataset, sets its group's cap
    assert ledger.identify(FRAME).known and ledger.budget(identity).cap == 3
    assert not ledger.budget(identity).default_cap_applied
    near = ledger.identify(FRAME.iloc[:3])
    ledger.reserve(near, "x", {}, Fraction(5, 2))
    assert ledger.budget(identity).remaining == Fraction(1, 2)
    ledger.set_cap(near, 2)  # the near copy's cap is its group's cap: below what is spent, nothing more runs
    assert ledger.budget(identity).cap == 2 and ledger.budget(identity).remaining == 0
    with pytest.raises(BudgetError):
        ledger.reserve(identity, "x", {}, Fraction(1, 100))
    ledger.set_cap(identity.fingerprint, 10, reason="new study approved")  # by fingerprint too
    assert ledger.reserve(identity, "x", {}, 1).budget == identity.fingerprint
    with pytest.raises(ParameterError):
        ledger.set_cap(identity, -1)
    with pytest.raises(ParameterError):
        ledger.reserve(12, "x", {}, 1)
    with pytest.raises(ParameterError):
        Ledger(tmp_path / "other.sqlite", default_cap="lots")


def test_bare_fingerprints_still_work(tmp_path):
    """The older calling style (fingerprint string in, entry id out) charges the fingerprint's group."""
    ledger = Ledger(tmp_path / "ledger.sqlite")
    identity = ledger.identify(FRAME)
    ledger.reserve(identity, "x", {}, Fraction(1, 2))
    near = ledger.identify(FRAME.iloc[:3])
    ledger.reserve(near, "x", {}, Fraction(1, 2))
    entry_id = ledger.reserve(near.fingerprint, "y", {}, Fraction(1, 2), label="old style")
    assert isinstance(entry_id, int) and ledger.entry(entry_id).budget == identity.fingerprint
    assert ledger.spent(near.fingerprint) == ledger.spent(identity.fingerprint) == Fraction(3, 2)
    assert ledger.remaining(near.fingerprint) == Fraction(1, 2)
    fresh = ledger.reserve("name-only", "z", {}, Fraction(1, 4))
    assert ledger.entry(fresh).budget == "name-only" and ledger.cap("name-only") == DEFAULT_CAP
    assert {d.origin for d in ledger.datasets()} == {"rows", "name"}


def test_protected_paths(tmp_path):
    ledger = Ledger(tmp_path / "ledger.sqlite")
    paths = ledger.protected_paths()
    assert paths == [(tmp_path / "ledger.sqlite").resolve(), (tmp_path / "ledger.sqlite.key").resolve(),
                     (tmp_path / "ledger.sqlite-journal").resolve()]
