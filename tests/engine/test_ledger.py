"""The privacy-budget ledger: exact sums, caps checked before work, crash safety, two processes, fingerprints."""

import os
import signal
import sqlite3
import stat
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ppdp_gui.engine.errors import BudgetError, ParameterError
from ppdp_gui.engine.privacy import DEFAULT_CAP, Ledger, content_hash, default_ledger_path

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def frame():
    return pd.DataFrame({"age": [39, 50, 38, np.nan], "sex": ["Male", "Female", "Male", None]})


def test_exact_sums_caps_and_message(tmp_path, frame):
    ledger = Ledger(tmp_path / "ledger.sqlite")
    fp = ledger.fingerprint(frame)
    # a dataset not charged yet shows the default cap it will get
    assert ledger.cap(fp) == DEFAULT_CAP == ledger.remaining(fp) and ledger.spent(fp) == 0
    ledger.set_cap(fp, Fraction(1), label="adult.csv")
    for _ in range(10):
        ledger.reserve(fp, "Laplace histogram", {"epsilon": 0.1}, 0.1)  # float 0.1 is taken as 1/10 exactly
    assert ledger.spent(fp) == Fraction(1) and ledger.remaining(fp) == 0
    with pytest.raises(BudgetError) as info:
        ledger.reserve(fp, "DiffGen", {}, Fraction(1, 1000))
    message = str(info.value)
    assert "spent ε = 1" in message and "cap 1" in message and "needs ε = 0.001" in message
    assert len(ledger.entries(fp)) == 10  # nothing written by the refused reservation
    with pytest.raises(BudgetError, match="deliberate"):  # a run may only lower a cap (issue 27)
        ledger.set_cap(fp, 2)
    ledger.set_cap(fp, 2, reason="approved by the data protection officer")
    entry = ledger.reserve(fp, "DiffGen", {"h": 10}, Fraction(1, 3), Fraction(1, 10**9), label="run")
    assert ledger.spent(fp) == Fraction(4, 3) and ledger.spent_delta(fp) == Fraction(1, 10**9)
    assert ledger.remaining(fp) == Fraction(2, 3)
    digest = content_hash(frame)
    ledger.complete(entry, digest)
    ledger.complete(entry, digest)  # idempotent
    with pytest.raises(ParameterError, match="another output"):
        ledger.complete(entry, "0" * 64)
    with pytest.raises(ParameterError, match="no entry"):
        ledger.complete(9999, digest)
    last = ledger.entries(fp)[-1]
    assert (last.mechanism, last.params, last.epsilon, last.output_hash) == ("DiffGen", {"h": 10}, Fraction(1, 3),
                                                                             digest)
    assert last.created.endswith("+00:00") and last.completed is not None
    [summary] = ledger.datasets()
    assert (summary.label, summary.cap, summary.spent, summary.releases) == ("adult.csv", 2, Fraction(4, 3), 11)
    # stored as exact text, not floats
    with sqlite3.connect(ledger.path) as db:
        assert db.execute("SELECT eps_num, eps_den FROM entries WHERE id = ?", (entry,)).fetchone() == ("1", "3")
    for bad in (-1, float("nan"), float("inf"), "x"):
        with pytest.raises(ParameterError):
            ledger.reserve(fp, "x", {}, bad)
    # a fresh object on the same file sees the same state
    assert Ledger(ledger.path).spent(fp) == Fraction(4, 3)


def test_fingerprint_ignores_order_and_typing_but_not_content(tmp_path, frame):
    ledger = Ledger(tmp_path / "l.sqlite")
    fp = ledger.fingerprint(frame)
    assert len(fp) == 64
    shuffled = frame.iloc[[2, 0, 3, 1], ::-1]
    assert ledger.fingerprint(shuffled) == fp
    as_text = pd.DataFrame({"sex": [" Male", "Female", "Male", None], "age": ["39", "50.0", "38", None]})
    assert ledger.fingerprint(as_text) == fp
    changed = frame.copy()
    changed.loc[0, "age"] = 40
    assert ledger.fingerprint(changed) != fp
    assert ledger.fingerprint(frame.iloc[:3]) != fp
    assert ledger.fingerprint(frame.rename(columns={"sex": "gender"})) != fp
    empty_vs_na = pd.DataFrame({"x": [""]}), pd.DataFrame({"x": [None]})
    assert ledger.fingerprint(empty_vs_na[0]) != ledger.fingerprint(empty_vs_na[1])
    # cell boundaries cannot be forged by a separator inside a cell
    assert ledger.fingerprint(pd.DataFrame({"a": ["x\x1fy"], "b": ["z"]})) != \
        ledger.fingerprint(pd.DataFrame({"a": ["x"], "b": ["y\x1fz"]}))
    # keyed: another ledger (another key) gives another fingerprint; the key file is private
    assert Ledger(tmp_path / "other.sqlite").fingerprint(frame) != fp
    assert stat.S_IMODE(os.stat(ledger.key_path).st_mode) == 0o600


def test_fingerprint_of_adult(shared_data, tmp_path):
    adult = pd.read_csv(shared_data / "adult" / "adult_all.csv.gz")
    ledger = Ledger(tmp_path / "l.sqlite")
    fp = ledger.fingerprint(adult)
    assert ledger.fingerprint(adult.sample(frac=1.0, random_state=1)) == fp
    assert ledger.fingerprint(adult.drop(index=123)) != fp


def test_content_hash_is_order_sensitive_and_stable(frame):
    assert content_hash(frame) == content_hash(frame.copy())
    assert content_hash(frame) != content_hash(frame.iloc[::-1])
    import hashlib
    assert content_hash(pd.DataFrame({"a": [1]})) == hashlib.sha256(b"a\n1\n").hexdigest()


def test_default_path(monkeypatch, tmp_path):
    monkeypatch.setenv("PPDP_LEDGER", str(tmp_path / "x.sqlite"))
    assert default_ledger_path() == tmp_path / "x.sqlite"
    monkeypatch.delenv("PPDP_LEDGER")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert default_ledger_path() == tmp_path / "ppdp_gui" / "ledger.sqlite"


_WRITER = """
import sys
from fractions import Fraction
from ppdp_gui.engine.privacy import Ledger
ledger = Ledger(sys.argv[1])
i = 0
while True:
    i += 1
    entry = ledger.reserve("fp", "loop", {"i": i, "pad": "x" * 2000}, Fraction(1, 997))
    print(entry, flush=True)
"""


def _run_and_kill(path: Path, lines: int) -> list[int]:
    proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(path)], stdout=subprocess.PIPE, text=True,
                            cwd=REPO)
    committed = []
    try:
        deadline = time.monotonic() + 60
        while len(committed) < lines and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            committed.append(int(line))
    finally:
        proc.send_signal(signal.SIGKILL)  # most of the writer's time is inside a transaction (fsync)
        proc.wait(timeout=30)
    assert len(committed) == lines, "the writer did not get going"
    return committed


def test_kill_mid_write_never_corrupts(tmp_path):
    path = tmp_path / "ledger.sqlite"
    Ledger(path).set_cap("fp", 1000)
    committed: list[int] = []
    for lines in (25, 40, 15):
        committed += _run_and_kill(path, lines)
        ledger = Ledger(path)  # opening rolls back a hot journal left by the kill
        assert ledger.integrity_check() == "ok"
        entries = ledger.entries("fp")
        ids = [e.id for e in entries]
        assert set(committed) <= set(ids)  # every reservation reported as made is there
        assert ids == list(range(1, len(ids) + 1))  # and nothing half-written in between
        assert all(e.params["pad"] == "x" * 2000 for e in entries)
        assert ledger.spent("fp") == sum((e.epsilon for e in entries), Fraction(0)) == Fraction(len(ids), 997)
    ledger.reserve("fp", "after", {}, Fraction(1, 997))  # still writable
    assert ledger.spent("fp") == Fraction(len(ids) + 1, 997)


_GREEDY = """
import sys
from ppdp_gui.engine.errors import BudgetError
from ppdp_gui.engine.privacy import Ledger
ledger = Ledger(sys.argv[1])
n = 0
try:
    while True:
        ledger.reserve("fp", sys.argv[2], {}, "1/50")
        n += 1
except BudgetError:
    print(n)
"""


def test_two_processes_cannot_overspend(tmp_path):
    path = tmp_path / "ledger.sqlite"
    Ledger(path).set_cap("fp", 1)
    procs = [subprocess.Popen([sys.executable, "-c", _GREEDY, str(path), f"p{i}"], stdout=subprocess.PIPE, text=True,
                              cwd=REPO) for i in range(2)]
    counts = [int(p.communicate(timeout=120)[0]) for p in procs]
    ledger = Ledger(path)
    assert sum(counts) == 50 and ledger.spent("fp") == 1
    assert {e.mechanism for e in ledger.entries("fp")} <= {"p0", "p1"}
