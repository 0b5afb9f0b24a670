"""The budget binds people: re-readings, edits, samples and supersets of a table share its budget group.

Each of these failed before schema 2: the fingerprint was of the typed, filtered table, so any of them was a new
dataset with a fresh, uncapped budget.
"""

import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ppdp_gui.engine.data.reader import read_table
from ppdp_gui.engine.data.schema import NAPolicy
from ppdp_gui.engine.errors import BudgetError
from ppdp_gui.engine.privacy import DEFAULT_CAP, NEAR_COPY_CONTAINMENT, Ledger

REPO = Path(__file__).resolve().parents[2]
CATEGORY = NAPolicy(action="category")


@pytest.fixture(scope="module")
def adult_raw(shared_data) -> pd.DataFrame:
    """UCI Adult as raw text (48,842 rows, '?' kept), the way a custodian's extract would look."""
    return pd.read_csv(shared_data / "adult" / "adult_all.csv.gz", dtype=str, keep_default_na=False)


def _write(frame: pd.DataFrame, path: Path, **kw) -> Path:
    frame.to_csv(path, index=False, **kw)
    return path


def _spend_most(ledger: Ledger, data) -> str:
    """Charge ε = 1.5 of the default cap of 2 to `data`; returns its budget group."""
    identity = ledger.identify(data, label="original")
    assert not identity.known and identity.near_copy_of is None
    entry = ledger.reserve(identity, "Laplace histogram", {"epsilon": "3/2"}, Fraction(3, 2))
    assert entry.budget == identity.fingerprint == identity.budget
    return identity.budget


def _assert_shares(ledger: Ledger, data, budget: str, exact: bool = False) -> None:
    identity = ledger.identify(data)
    assert identity.budget == budget
    if exact:
        assert identity.known and identity.fingerprint == budget
    else:
        assert not identity.known and identity.fingerprint != budget and identity.near_copy_of == budget
        assert identity.similarity >= NEAR_COPY_CONTAINMENT
    b = ledger.budget(identity)
    assert (b.cap, b.spent, b.remaining, b.default_cap_applied) == (DEFAULT_CAP, Fraction(3, 2), Fraction(1, 2),
                                                                    False)
    with pytest.raises(BudgetError, match="only 0.5 is left"):
        ledger.reserve(identity, "DiffGen", {}, 1)
    if not exact:  # refused: not even the near copy was recorded
        assert identity.fingerprint not in {d.fingerprint for d in ledger.datasets()}


def test_another_missing_value_policy_is_the_same_dataset(tmp_path, adult_raw):
    """Audit 1: `--na category` keeps 3,620 rows the default drops; it used to be a new, uncapped dataset."""
    path = _write(adult_raw, tmp_path / "adult.csv")
    ledger = Ledger(tmp_path / "ledger.sqlite")
    budget = _spend_most(ledger, read_table(path))
    _assert_shares(ledger, read_table(path, na_policy=CATEGORY), budget, exact=True)
    _assert_shares(ledger, read_table(path, na_policy=NAPolicy(tokens=("?",), action="drop")), budget, exact=True)
    # roles and column kinds are choices made after reading: same dataset
    _assert_shares(ledger, read_table(path, kinds={"age": "categorical"}, roles={"sex": "sensitive"}), budget,
                   exact=True)


def test_reordered_rows_and_columns_resaved_are_the_same_dataset(tmp_path, adult_raw):
    ledger = Ledger(tmp_path / "ledger.sqlite")
    budget = _spend_most(ledger, read_table(_write(adult_raw, tmp_path / "a.csv")))
    shuffled = adult_raw.sample(frac=1.0, random_state=7)[list(reversed(adult_raw.columns))]
    _assert_shares(ledger, read_table(_write(shuffled, tmp_path / "b.tsv", sep="\t")), budget, exact=True)


def test_one_edited_cell_is_a_near_copy(tmp_path, adult_raw):
    """Audit 3: editing one cell used to give a fresh budget."""
    ledger = Ledger(tmp_path / "ledger.sqlite")
    budget = _spend_most(ledger, read_table(_write(adult_raw, tmp_path / "a.csv"), na_policy=CATEGORY))
    edited = adult_raw.copy()
    edited.loc[100, "age"] = "99"
    _assert_shares(ledger, read_table(_write(edited, tmp_path / "b.csv")), budget)


def test_dropped_or_added_rows_a_sample_and_a_superset_are_near_copies(tmp_path, adult_raw):
    ledger = Ledger(tmp_path / "ledger.sqlite")
    budget = _spend_most(ledger, read_table(_write(adult_raw, tmp_path / "a.csv")))
    rng = np.random.default_rng(1)
    dropped = adult_raw.drop(index=rng.choice(len(adult_raw), 12, replace=False))
    _assert_shares(ledger, read_table(_write(dropped, tmp_path / "dropped.csv")), budget)
    added = pd.concat([adult_raw, adult_raw.sample(8, random_state=2).assign(age="17")])
    _assert_shares(ledger, read_table(_write(added, tmp_path / "added.csv")), budget)
    sample = adult_raw.sample(frac=0.1, random_state=3)
    _assert_shares(ledger, read_table(_write(sample, tmp_path / "sample.csv")), budget)
    other_people = adult_raw.sample(20_000, random_state=4).assign(fnlwgt=lambda f: f["fnlwgt"] + "1")
    superset = pd.concat([adult_raw, other_people])
    _assert_shares(ledger, read_table(_write(superset, tmp_path / "superset.csv")), budget)
    # in-memory tables (no reader row hashes) are identified from their frame: a sample of the typed table too
    typed = read_table(tmp_path / "a.csv", na_policy=CATEGORY)
    _assert_shares(ledger, typed.frame.sample(frac=0.5, random_state=5), budget)


def test_unrelated_tables_keep_their_own_budgets(tmp_path, shared_data):
    ledger = Ledger(tmp_path / "ledger.sqlite")
    adult = read_table(shared_data / "adult" / "hierarchies" / "arx" / "adult.csv.gz")
    iris = read_table(shared_data / "iris" / "iris.csv")
    budget = _spend_most(ledger, adult)
    other = ledger.identify(iris)
    assert (other.known, other.near_copy_of, other.budget) == (False, None, other.fingerprint)
    assert ledger.budget(other).default_cap_applied and ledger.budget(other).spent == 0
    ledger.reserve(other, "Laplace histogram", {}, 2)
    assert ledger.budget(other).remaining == 0 and ledger.budget(ledger.identify(adult)).remaining == Fraction(1, 2)
    assert {d.budget for d in ledger.datasets()} == {budget, other.fingerprint}
    # two more real tables: no overlap with either
    for path in ("nursery/nursery.csv.gz", "pima/pima-indians-diabetes.csv"):
        assert ledger.identify(read_table(shared_data / path)).near_copy_of is None


def test_a_near_copy_declared_separate_gets_its_own_budget_and_the_confirmation_is_recorded(tmp_path, adult_raw):
    ledger = Ledger(tmp_path / "ledger.sqlite")
    budget = _spend_most(ledger, read_table(_write(adult_raw, tmp_path / "a.csv")))
    sample = read_table(_write(adult_raw.sample(frac=0.6, random_state=9), tmp_path / "s.csv"))
    identity = ledger.identify(sample, separate=True, label="cohort B")
    assert identity.separate and identity.budget == identity.fingerprint and identity.near_copy_of == budget
    assert identity.similarity > 0.9
    b = ledger.budget(identity)
    assert b.default_cap_applied and b.remaining == DEFAULT_CAP
    ledger.reserve(identity, "Laplace histogram", {}, 2)
    [original, separate] = ledger.datasets()
    assert original.fingerprint == budget and original.separate_from is None
    assert (separate.fingerprint, separate.budget, separate.label) == (identity.fingerprint, identity.fingerprint,
                                                                       "cohort B")
    assert separate.separate_from == budget and separate.separate_similarity == pytest.approx(identity.similarity)
    assert separate.separate_at and separate.separate_by is not None and separate.spent == 2
    assert original.spent == Fraction(3, 2)
    # once recorded it stays what it was: identified again it is the known, separate dataset
    again = ledger.identify(sample)
    assert again.known and again.budget == identity.fingerprint and again.near_copy_of == budget
    # declaring a known dataset separate afterwards changes nothing (no moving charges out of a group)
    assert ledger.identify(read_table(tmp_path / "a.csv"), separate=True).budget == budget


def test_a_near_copy_of_a_near_copy_joins_the_root_group(tmp_path):
    rng = np.random.default_rng(0)
    base = pd.DataFrame({"id": np.arange(1000).astype(str), "v": rng.integers(0, 9, 1000).astype(str)})
    ledger = Ledger(tmp_path / "l.sqlite")
    root = ledger.identify(base)
    ledger.reserve(root, "m", {}, Fraction(1, 2))
    first = ledger.identify(base.iloc[:700])
    ledger.reserve(first, "m", {}, Fraction(1, 2))
    second = ledger.identify(pd.concat([base.iloc[300:700], base.iloc[:100]]))
    assert second.budget == root.fingerprint and second.near_copy_of in {root.fingerprint, first.fingerprint}
    entry = ledger.reserve(second, "m", {}, Fraction(1, 2), release_id="r-3", label="third")
    assert (entry.budget, entry.release_id, entry.label) == (root.fingerprint, "r-3", "third")
    assert ledger.budget(root).spent == Fraction(3, 2) and ledger.budget(root).releases == 3
    assert [e.id for e in ledger.entries(budget=root.fingerprint)] == [1, 2, 3]
    assert [e.id for e in ledger.entries(second)] == [3]
    summaries = {d.fingerprint: d for d in ledger.datasets()}
    assert summaries[second.fingerprint].spent == Fraction(3, 2)  # the group's, which is what binds
    assert summaries[second.fingerprint].own_spent == Fraction(1, 2)
    assert summaries[root.fingerprint].budget in (None, "", root.fingerprint)  # the root of its own group
    assert summaries[first.fingerprint].budget == root.fingerprint  # a near copy: charged to the root's group
    assert summaries[first.fingerprint].cap == DEFAULT_CAP  # the group's cap


_RACER = """
import sys, time
from pathlib import Path
from ppdp_gui.engine.data.reader import read_table
from ppdp_gui.engine.errors import BudgetError
from ppdp_gui.engine.privacy import Ledger

def wait_for(path):
    while not path.exists():
        time.sleep(0.005)

ledger, data, me, other = Ledger(sys.argv[1]), read_table(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4])
identity = ledger.identify(data)
assert not identity.known and identity.near_copy_of is None, identity  # neither is recorded yet
Path(str(me) + ".ready").touch()
wait_for(Path(str(me.parent / "go")))
ledger.reserve(identity, "race", {}, "1/200")  # both register at once: the later one must join the group
Path(str(me) + ".first").touch()
wait_for(Path(str(other) + ".first"))  # then both spend as fast as they can
n = 1
try:
    while True:
        ledger.reserve(identity, "race", {}, "1/200")
        n += 1
except BudgetError:
    print(n)
"""


def test_a_near_copy_and_its_original_racing_cannot_overspend_the_group(tmp_path):
    rng = np.random.default_rng(5)
    base = pd.DataFrame({"id": np.arange(3000).astype(str), "age": rng.integers(17, 90, 3000).astype(str),
                         "dx": rng.choice(["C10", "C20", "I21", "J45"], 3000)})
    copy = base.copy()
    copy.loc[17, "dx"] = "E11"
    paths = [_write(base, tmp_path / "original.csv"), _write(copy, tmp_path / "copy.csv")]
    ledger_path, go = tmp_path / "ledger.sqlite", tmp_path / "go"
    Ledger(ledger_path)  # creates the key
    flags = [tmp_path / "p0", tmp_path / "p1"]
    procs = [subprocess.Popen([sys.executable, "-c", _RACER, str(ledger_path), str(p), str(flags[i]),
                               str(flags[1 - i])], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              cwd=REPO) for i, p in enumerate(paths)]
    deadline = time.monotonic() + 120
    while not all(Path(f"{f}.ready").exists() for f in flags):
        assert time.monotonic() < deadline and all(p.poll() is None for p in procs), \
            [p.communicate()[1] for p in procs]
        time.sleep(0.01)
    go.touch()
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1] for o in outs]
    counts = [int(o[0]) for o in outs]
    ledger = Ledger(ledger_path)
    [group] = {d.budget for d in ledger.datasets()}
    assert sum(counts) == 400 and ledger.budget(group).spent == DEFAULT_CAP
    assert min(counts) > 0 and len(ledger.datasets()) == 2  # both charged and recorded, in one group


def test_the_older_calling_style_shares_the_budget_too(tmp_path, adult_raw):
    """Audits 1 and 3 through the calls the pipeline, CLI and GUI made before (fingerprint of the typed table,
    then set_cap/reserve/remaining with that bare fingerprint): another missing-value policy or one edited cell
    used to be a new dataset with a budget of its own."""
    path = _write(adult_raw, tmp_path / "adult.csv")
    edited = adult_raw.copy()
    edited.loc[5, "sex"] = "Female" if edited.loc[5, "sex"] == "Male" else "Male"
    ledger = Ledger(tmp_path / "ledger.sqlite")
    fp = ledger.fingerprint(read_table(path, na_policy=NAPolicy(action="drop")).frame)
    ledger.set_cap(fp, 2, label=str(path))
    ledger.reserve(fp, "Laplace histogram", {}, Fraction(3, 2), label=str(path))
    for data in (read_table(path, na_policy=CATEGORY), read_table(_write(edited, tmp_path / "edited.csv"))):
        other = ledger.fingerprint(data.frame)
        assert other != fp
        assert ledger.remaining(other) == Fraction(1, 2)
        with pytest.raises(BudgetError):
            ledger.reserve(other, "Laplace histogram", {}, 1, label=data.source.path)
    # a new Ledger object on the same file (as in the release worker process) recognises them too
    fresh = Ledger(ledger.path)
    with pytest.raises(BudgetError):
        fresh.reserve(fresh.fingerprint(read_table(path, na_policy=CATEGORY).frame), "x", {}, 1)
