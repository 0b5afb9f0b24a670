"""A budget ledger a custodian can defend (issue 27): routine edits of a file, caps, tampering, composition.

Each test here failed on main before issue 27: an edited file got a fresh budget, any run could raise a cap, rows
deleted from the ledger reset a budget unnoticed, and replace-one releases of near copies with different row
counts were summed.
"""

import sqlite3
import threading
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ppdp_gui.engine.data.reader import dataset_from_frame, read_table
from ppdp_gui.engine.data.schema import Role
from ppdp_gui.engine.errors import BudgetError, ParameterError
from ppdp_gui.engine.privacy import REPLACE, Ledger


def patients(n: int = 200, seed: int = 0) -> pd.DataFrame:
    """A small hospital extract as text: a name nobody releases, then what releases read."""
    rng = np.random.default_rng(seed)
    first = np.array(["Anna", "Ben", "Chloé", "Dmitri", "Eva", "Farid", "Greta", "Hugo", "Ines", "Jon"])
    return pd.DataFrame({
        "patient_name": [f"{first[i % 10]} {chr(65 + (i * 7) % 26)}{i}" for i in range(n)],
        "age": rng.integers(18, 95, n).astype(str),
        "sex": rng.choice(["Male", "Female"], n),
        "zip": rng.choice([f"{z:05d}" for z in range(10100, 10160)], n),
        "diagnosis": rng.choice([f"I{k:02d}.{k % 10}" for k in range(40)], n),
        "length of stay": rng.integers(1, 30, n).astype(str),
    })


def _spent(tmp_path, frame: pd.DataFrame) -> Ledger:
    """A ledger in which `frame`'s budget (cap 2) is spent."""
    ledger = Ledger(tmp_path / "ledger.sqlite")
    ledger.reserve(ledger.identify(frame), "Laplace histogram", {}, Fraction(2))
    return ledger


def _refused(ledger: Ledger, frame) -> None:
    identity = ledger.identify(frame)
    assert identity.is_near_copy or identity.known, identity
    with pytest.raises(BudgetError):
        ledger.reserve(identity, "DiffGen", {}, Fraction(1, 10))


# ---- finding 1: routine edits get the same budget ----------------------------------------------------------------
@pytest.mark.parametrize("edit", [
    lambda f: f.drop(columns=["patient_name"]),
    lambda f: f.rename(columns={"sex": "Sex"}),
    lambda f: f.rename(columns={"length of stay": "  Length  of Stay "}),
    lambda f: f.assign(sex=f["sex"].str.upper()),
    lambda f: f.assign(diagnosis=" " + f["diagnosis"] + "  "),
    lambda f: f.assign(age=f["age"] + ".0"),
    lambda f: f.assign(age="0" + f["age"]),
    lambda f: f.assign(patient_name=[f"P{i:04d}" for i in range(len(f))]),  # an unreleased column rewritten
    lambda f: f.assign(ward="B"),
    lambda f: f.drop(columns=["patient_name", "zip"]).rename(columns={"age": "AGE"}),
], ids=["drop-name", "rename-sex", "rename-spacing", "value-case", "value-spacing", "number-1.0", "number-01",
        "rewrite-unreleased", "add-column", "drop-two-and-rename"])
def test_a_routine_edit_of_a_spent_table_is_refused(tmp_path, edit):
    frame = patients()
    ledger = _spent(tmp_path, frame)
    _refused(ledger, edit(frame.copy()))


def test_an_added_column_whose_one_value_lies_among_a_renamed_columns_values_is_refused(tmp_path):
    """Found by the property test below: `added = "1"` (a value of "length of stay") took that column's place
    from its renamed copy, so three known columns looked dropped and the edit got a fresh budget."""
    frame = patients()
    ledger = _spent(tmp_path, frame)
    edited = (frame.drop(columns=["patient_name", "age"]).rename(columns={"length of stay": "length of stay_v2"})
              .assign(sex=lambda f: f["sex"].str.upper(), added="1"))
    _refused(ledger, edited)


def test_a_routine_edit_of_a_file_read_by_the_reader_is_refused(tmp_path):
    """The path the window and `ppdp run` take: files read by the reader, typed, with roles."""
    frame = patients()
    frame.to_csv(tmp_path / "a.csv", index=False)
    frame.drop(columns=["patient_name"]).rename(columns={"sex": "Sex"}).to_csv(tmp_path / "b.csv", index=False)
    ledger = _spent(tmp_path, read_table(tmp_path / "a.csv"))
    _refused(ledger, read_table(tmp_path / "b.csv"))


def test_other_patients_of_the_same_kind_get_their_own_budget(tmp_path):
    ledger = _spent(tmp_path, patients(seed=0))
    other = ledger.identify(patients(seed=1).assign(patient_name=lambda f: "x" + f["patient_name"]))
    assert not other.is_near_copy and not other.known


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_property_random_routine_edits_of_a_spent_table_are_refused(tmp_path_factory, data):
    frame = patients()
    ledger = _spent(tmp_path_factory.mktemp("ledger"), frame)
    edited = frame.copy()
    released = ["age", "sex", "zip", "diagnosis", "length of stay"]
    drops = data.draw(st.lists(st.sampled_from(["patient_name"] + released), max_size=2, unique=True))
    edited = edited.drop(columns=drops)
    for col in data.draw(st.lists(st.sampled_from(list(edited.columns)), max_size=3, unique=True)):
        kind = data.draw(st.sampled_from(["upper", "lower", "spaces", "rename"]))
        if kind == "rename":
            edited = edited.rename(columns={col: data.draw(st.sampled_from([col.upper(), f" {col.title()} ",
                                                                          col + "_v2"]))})
        elif kind == "spaces":
            edited[col] = "  " + edited[col].astype(str) + " "
        else:
            edited[col] = getattr(edited[col].astype(str).str, kind)()
    if "age" in edited.columns and data.draw(st.booleans()):
        edited["age"] = edited["age"].str.strip().map(lambda v: v + ".0" if v.isdigit() else v)
    if data.draw(st.booleans()):
        edited["added"] = data.draw(st.sampled_from(["yes", "1", "ward B"]))
    if data.draw(st.booleans()):
        edited = edited.sample(frac=1.0, random_state=data.draw(st.integers(0, 10)))
    if data.draw(st.booleans()):
        edited = edited[list(reversed(edited.columns))]
    _refused(ledger, edited.reset_index(drop=True))


def test_with_a_person_column_the_same_patients_share_one_budget_whatever_the_columns(tmp_path):
    rng = np.random.default_rng(3)
    ids = [f"P{i:05d}" for i in rng.permutation(5000)[:300]]
    visits = pd.DataFrame({"patient": np.repeat(ids, 2), "ward": rng.choice(list("ABC"), 600)})
    labs = pd.DataFrame({"patient": ids, "hba1c": rng.normal(6, 1, 300).round(1).astype(str)})
    ledger = Ledger(tmp_path / "ledger.sqlite")
    first = dataset_from_frame(visits, roles={"patient": Role.PERSON})
    ledger.reserve(ledger.identify(first), "Laplace histogram", {}, Fraction(2))
    second = ledger.identify(dataset_from_frame(labs, roles={"patient": Role.PERSON}))
    assert second.budget == ledger.identify(first).budget
    with pytest.raises(BudgetError):
        ledger.reserve(second, "Laplace histogram", {}, Fraction(1, 10))


# ---- finding 2: caps only the custodian raises ---------------------------------------------------------------------
def test_a_run_cannot_raise_a_spent_cap_and_the_custodian_raise_is_recorded(tmp_path):
    frame = patients()
    ledger = Ledger(tmp_path / "ledger.sqlite")
    identity = ledger.identify(frame)
    ledger.set_cap(identity, Fraction(1, 2))  # a new table: a run may set its cap
    ledger.reserve(identity, "Laplace histogram", {}, Fraction(1, 2))
    with pytest.raises(BudgetError, match="deliberate"):
        ledger.set_cap(identity, 10)
    ledger.set_cap(identity, Fraction(1, 4))  # lowering is allowed
    assert ledger.cap(identity) == Fraction(1, 4)
    with pytest.raises(BudgetError):
        ledger.reserve(identity, "DiffGen", {}, Fraction(1, 10))
    ledger.set_cap(identity, 1, reason="second study approved by the ethics board")
    changes = ledger.cap_changes(identity)
    assert [c.new for c in changes] == [2, Fraction(1, 2), Fraction(1, 4), 1]
    assert changes[-1].reason == "second study approved by the ethics board" and changes[-1].old == Fraction(1, 4)
    assert changes[-1].who is not None and changes[-1].at


def test_concurrent_runs_with_a_higher_cap_charge_nothing_beyond_the_cap(tmp_path):
    ledger = Ledger(tmp_path / "ledger.sqlite")
    identity = ledger.identify(patients())
    ledger.set_cap(identity, Fraction(1, 2))
    ledger.reserve(identity, "Laplace histogram", {}, Fraction(1, 2))
    charged = []

    def spender():
        own = Ledger(tmp_path / "ledger.sqlite")
        try:
            own.set_cap(identity, 10)
        except BudgetError:
            pass
        try:
            charged.append(own.reserve(identity, "x", {}, Fraction(1, 10)))
        except BudgetError:
            pass
    threads = [threading.Thread(target=spender) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert charged == [] and ledger.spent(identity) == Fraction(1, 2)


# ---- finding 3: tamper evidence ----------------------------------------------------------------------------------
def _three_releases(tmp_path):
    ledger = Ledger(tmp_path / "ledger.sqlite", default_cap=Fraction(3))
    identity = ledger.identify(patients())
    for eps in (Fraction(1, 2), Fraction(1), Fraction(1)):
        ledger.reserve(identity, "Laplace histogram", {}, eps)
    assert ledger.check().ok
    return ledger, identity


@pytest.mark.parametrize("tamper", [
    "DELETE FROM entries WHERE id = 2",
    "DELETE FROM entries WHERE id = 3",
    "UPDATE entries SET eps_num = '1', eps_den = '100' WHERE id = 2",
    "UPDATE entries SET id = 9 WHERE id = 1",
    "UPDATE datasets SET cap_num = '100', cap_den = '1'",
    "UPDATE datasets SET sketch = NULL, robust = NULL",
    "DELETE FROM cap_changes",
], ids=["delete-middle", "delete-last", "alter", "reorder", "cap-raised", "sketch-removed", "cap-log-deleted"])
def test_a_tampered_ledger_is_detected_and_refuses_until_acknowledged(tmp_path, tamper):
    ledger, identity = _three_releases(tmp_path)
    with sqlite3.connect(ledger.path) as db:
        db.execute(tamper)
    reopened = Ledger(ledger.path, default_cap=Fraction(3))
    assert not reopened.chain_report.ok and reopened.chain_report.problems
    with pytest.raises(BudgetError, match="changed outside"):
        reopened.reserve(reopened.identify(patients()), "DiffGen", {}, Fraction(1, 100))
    with pytest.raises(ParameterError):
        reopened.acknowledge("  ")
    ack = reopened.acknowledge("restored from the 3 May backup; checked by J. Smith")
    assert ack["found"] and "restored" in ack["reason"]
    assert reopened.check().ok and len(reopened.acknowledgements()) == 1
    reopened.reserve(reopened.identify(patients()), "DiffGen", {}, Fraction(1, 100))


def test_a_schema_3_ledger_is_sealed_on_first_open_and_then_checked(tmp_path):
    ledger, identity = _three_releases(tmp_path)
    with sqlite3.connect(ledger.path) as db:  # as schema 3 left it: no MACs
        db.execute("UPDATE entries SET mac = NULL, done_mac = NULL")
        db.execute("UPDATE datasets SET mac = NULL")
        db.execute("UPDATE cap_changes SET mac = NULL")
        db.execute("DELETE FROM meta WHERE key IN ('chain', 'chain_head')")
    assert Ledger(ledger.path).check().ok
    with sqlite3.connect(ledger.path) as db:
        db.execute("DELETE FROM entries WHERE id = 1")
    assert not Ledger(ledger.path).chain_report.ok


# ---- finding 6 (deliver 5): replace-one releases of near copies with different n --------------------------------
def test_replace_one_releases_of_near_copies_with_different_row_counts_are_refused(tmp_path):
    frame = patients()
    ledger = Ledger(tmp_path / "ledger.sqlite", default_cap=Fraction(10))
    ledger.reserve(ledger.identify(frame), "DP-PCA", {}, Fraction(1, 2), neighbouring=REPLACE)
    plus_one = pd.concat([frame, patients(1, seed=9)], ignore_index=True)
    identity = ledger.identify(plus_one)
    assert identity.is_near_copy
    with pytest.raises(BudgetError, match="row counts"):
        ledger.reserve(identity, "DP-PCA", {}, Fraction(1, 2), neighbouring=REPLACE)
    ledger.reserve(identity, "Laplace histogram", {}, Fraction(1, 2))  # add/remove: counted twice, allowed
    ledger.reserve(ledger.identify(frame), "DP-PCA", {}, Fraction(1, 2), neighbouring=REPLACE)  # same table: fine


def test_identifier_columns_dropped_or_rewritten_in_any_number_still_match(tmp_path):
    """Columns no release reads (identifiers, the person column) get a row sample of their own: dropping or
    rewriting three of them at once is still the same people."""
    frame = patients().assign(mrn=[f"M{i:06d}" for i in range(200)], phone=[f"555-{i:04d}" for i in range(200)])
    roles = {"patient_name": Role.IDENTIFIER, "mrn": Role.IDENTIFIER, "phone": Role.IDENTIFIER}
    ledger = _spent(tmp_path, dataset_from_frame(frame, roles=roles))
    edited = frame.drop(columns=["mrn", "phone"]).assign(patient_name="(removed)")
    _refused(ledger, dataset_from_frame(edited, roles={"patient_name": Role.IDENTIFIER}))
