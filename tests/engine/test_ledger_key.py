"""The ledger key: created only for an empty ledger; a missing, damaged or replaced key is refused.

Before schema 2 a removed key silently started a new key, hence new fingerprints, hence fresh budgets for every
known dataset (audit 2).
"""

import os
import stat
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pandas as pd
import pytest

from ppdp_gui.engine.errors import PpdpError
from ppdp_gui.engine.privacy import Ledger

REPO = Path(__file__).resolve().parents[2]
FRAME = pd.DataFrame({"age": ["39", "50", "38"], "sex": ["Male", "Female", "Male"]})


def _charged(tmp_path) -> Ledger:
    ledger = Ledger(tmp_path / "ledger.sqlite")
    ledger.reserve(ledger.identify(FRAME), "Laplace histogram", {}, Fraction(1, 2))
    return ledger


def test_a_new_ledger_gets_a_private_key_and_its_check_value(tmp_path):
    ledger = Ledger(tmp_path / "ledger.sqlite")
    assert ledger.key_path.exists() and stat.S_IMODE(os.stat(ledger.key_path).st_mode) == 0o600
    import sqlite3
    with sqlite3.connect(ledger.path) as db:
        [(check,)] = db.execute("SELECT value FROM meta WHERE key = 'key_check'").fetchall()
    assert len(check) == 64 and check not in ledger.key_path.read_text()


def test_a_removed_key_is_refused_not_silently_replaced(tmp_path):
    ledger = _charged(tmp_path)
    ledger.key_path.unlink()
    reopened = Ledger(ledger.path)  # opening works (the ledger can still be listed)...
    assert not reopened.key_path.exists()  # ...and does not create a new key
    assert len(reopened.datasets()) == 1 and reopened.datasets()[0].spent == Fraction(1, 2)
    with pytest.raises(PpdpError, match="is missing.*Restore ledger.sqlite.key from a backup") as info:
        reopened.identify(FRAME)
    assert "1 dataset" in str(info.value)
    with pytest.raises(PpdpError, match="missing"):
        reopened.fingerprint(FRAME)
    assert not reopened.key_path.exists()


def test_a_replaced_key_is_refused(tmp_path):
    ledger = _charged(tmp_path)
    ledger.key_path.write_text("ab" * 32 + "\n")
    with pytest.raises(PpdpError, match="replaced.*restore the original key from a backup"):
        Ledger(ledger.path).identify(FRAME)


def test_a_damaged_or_unreadable_key_is_refused(tmp_path):
    ledger = _charged(tmp_path)
    original = ledger.key_path.read_text()
    ledger.key_path.write_text("not a key\n")
    with pytest.raises(PpdpError, match="damaged.*backup"):
        Ledger(ledger.path).identify(FRAME)
    ledger.key_path.write_text(original)
    identity = Ledger(ledger.path).identify(FRAME)  # restored from the backup: recognised again
    assert identity.known and Ledger(ledger.path).budget(identity).spent == Fraction(1, 2)
    if os.geteuid() != 0:  # root reads any file
        ledger.key_path.chmod(0)
        with pytest.raises(PpdpError, match="cannot be read"):
            Ledger(ledger.path).identify(FRAME)


def test_an_identity_made_under_another_key_is_refused(tmp_path):
    ledger = _charged(tmp_path)
    foreign = Ledger(tmp_path / "other.sqlite").identify(FRAME)
    with pytest.raises(PpdpError, match="another ledger key"):
        ledger.reserve(foreign, "x", {}, Fraction(1, 10))
    assert len(ledger.entries()) == 1


def test_an_empty_ledger_may_get_a_new_key(tmp_path):
    ledger = Ledger(tmp_path / "ledger.sqlite")
    first = ledger.key_path.read_text()
    ledger.key_path.unlink()
    again = Ledger(ledger.path)  # nothing recorded, so nothing can be reset: a fresh key is harmless
    assert again.key_path.read_text() != first
    again.reserve(again.identify(FRAME), "x", {}, Fraction(1, 10))
    assert Ledger(ledger.path).identify(FRAME).known


_OPEN = """
import sys
from ppdp_gui.engine.privacy import Ledger
import pandas as pd
print(Ledger(sys.argv[1]).fingerprint(pd.DataFrame({"a": ["1"]})))
"""


def test_processes_creating_the_first_key_at_once_agree(tmp_path):
    path = tmp_path / "new" / "ledger.sqlite"
    procs = [subprocess.Popen([sys.executable, "-c", _OPEN, str(path)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, cwd=REPO) for _ in range(4)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1] for o in outs]
    assert len({o[0] for o in outs}) == 1  # one key, one fingerprint
    assert Ledger(path).fingerprint(pd.DataFrame({"a": ["1"]})) == outs[0][0].strip()


def test_a_removed_key_is_refused_in_the_older_calling_style(tmp_path):
    """The same finding through the calls that existed before (fingerprint + bare-fingerprint reserve)."""
    ledger = Ledger(tmp_path / "ledger.sqlite")
    fp = ledger.fingerprint(FRAME)
    ledger.reserve(fp, "x", {}, Fraction(1, 2))
    ledger.key_path.unlink()
    with pytest.raises(PpdpError, match="(?i)restore"):
        Ledger(ledger.path).fingerprint(FRAME)
