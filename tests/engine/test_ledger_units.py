"""The ledger adds up releases of the two neighbouring relations soundly.

Add/remove ε-DP releases add up as before. A replace-one release (DP-PCA, the record baselines) is not add/remove DP
at all, but an add/remove ε release is 2ε-DP for one record replaced, so once a group holds a replace-one release
its total is Σ replace ε + 2·Σ add/remove ε, for one record replaced, and the cap is checked against that.
"""

import sqlite3
from fractions import Fraction as F

import numpy as np
import pandas as pd
import pytest

from ppdp_gui.cli import _budget_line
from ppdp_gui.engine.data.domains import Domain
from ppdp_gui.engine.data.schema import ColumnSpec, Dataset, Role
from ppdp_gui.engine.errors import BudgetError, PpdpError
from ppdp_gui.engine.mechanisms import registry
from ppdp_gui.engine.mechanisms.base import PrivacyCost
from ppdp_gui.engine.mechanisms.dp_pca.mechanisms import ADDED_OR_REMOVED, REPLACED
from ppdp_gui.engine.noise import NoiseSource
from ppdp_gui.engine.pipeline import plan, run_release
from ppdp_gui.engine.pipeline.plan import Plan
from ppdp_gui.engine.privacy import ADD_REMOVE, REPLACE, Ledger, ledger_schema
from ppdp_gui.engine.privacy.overview import dataset_table, entry_table, group_table
from ppdp_gui.engine.privacy.ledger_types import combined_total, neighbouring_kind

FRAME = pd.DataFrame({"age": ["39", "50", "38", "41"], "sex": ["Male", "Female", "Male", "Female"]})


def test_combined_total_golden_values():
    # pure add/remove: the plain sum, as always
    assert combined_total(F(1), 0, F(1, 2), ADD_REMOVE) == F(3, 2)
    # a first replace-one release: what was spent counts twice
    assert combined_total(F(1), 0, F(1, 2), REPLACE) == F(5, 2)
    # already in replace-one units: a replace release adds ε, an add/remove one 2ε
    assert combined_total(F(5, 2), 1, F(1, 4), REPLACE) == F(11, 4)
    assert combined_total(F(5, 2), 1, F(1, 4), ADD_REMOVE) == F(3)
    assert neighbouring_kind(REPLACED) == REPLACE and neighbouring_kind(ADDED_OR_REMOVED) == ADD_REMOVE
    assert neighbouring_kind("") == ADD_REMOVE and neighbouring_kind(None) == ADD_REMOVE


def test_a_pure_add_remove_group_is_exactly_as_before(tmp_path):
    ledger = Ledger(tmp_path / "ledger.sqlite", default_cap=F(2))
    identity = ledger.identify(FRAME)
    ledger.reserve(identity, "Laplace histogram", {}, F(1, 2))
    ledger.reserve(identity, "DiffGen", {}, F(1))
    b = ledger.budget(identity)
    assert (b.spent, b.remaining, b.releases, b.replace_releases, b.units) == (F(3, 2), F(1, 2), 2, 0, ADD_REMOVE)
    with pytest.raises(BudgetError, match=r"spent ε = 1.5 of the cap 2, this release needs ε = 1 but only 0.5 "
                                          r"is left\. Nothing was run"):
        ledger.reserve(identity, "DiffGen", {}, F(1))
    [ds] = ledger.datasets()
    assert (ds.spent, ds.own_spent, ds.units, ds.spent_add_remove) == (F(3, 2), F(3, 2), ADD_REMOVE, F(3, 2))
    assert _budget_line(b) == "ε spent on this table so far: 1.5 (3/2); cap 2, remaining 0.5"
    assert [e.neighbouring for e in ledger.entries()] == [ADD_REMOVE, ADD_REMOVE]


def test_mixed_releases_give_the_sound_total_and_the_cap_refuses_what_the_naive_sum_allows(tmp_path):
    ledger = Ledger(tmp_path / "ledger.sqlite", default_cap=F(3))
    identity = ledger.identify(FRAME)
    ledger.reserve(identity, "Laplace histogram", {}, F(1))
    entry = ledger.reserve(identity, "Laplace on records", {}, F(1, 2), neighbouring=REPLACED)
    assert entry.neighbouring == REPLACE and ledger.entry(entry.id).neighbouring == REPLACE
    b = ledger.budget(identity)
    assert (b.spent, b.spent_add_remove, b.spent_replace, b.replace_releases, b.units) == \
        (F(5, 2), F(1), F(1, 2), 1, REPLACE)
    assert b.remaining == F(1, 2)
    # naive sum 1.5 + 0.75 = 2.25 ≤ 3, sound 2.5 + 0.75 = 3.25 > 3: refused, nothing written
    with pytest.raises(BudgetError, match=r"these releases together would be ε = 3\.25 for one record replaced "
                                          r"\(add/remove releases count twice"):
        ledger.reserve(identity, "DP-PCA", {}, F(3, 4), neighbouring=REPLACE)
    # an add/remove release of 0.5 counts 1 here: naive 2, sound 3.5 > 3
    with pytest.raises(BudgetError, match=r"ε = 3\.5 for one record replaced"):
        ledger.reserve(identity, "DiffGen", {}, F(1, 2))
    assert len(ledger.entries()) == 2
    ledger.reserve(identity, "DiffGen", {}, F(1, 4))  # 2.5 + 2·0.25 = 3: exactly the cap
    b = ledger.budget(identity)
    assert (b.spent, b.remaining, b.releases) == (F(3), F(0), 3)
    [ds] = ledger.datasets()
    assert (ds.spent, ds.own_spent, ds.units, ds.spent_add_remove, ds.spent_replace, ds.replace_releases) == \
        (F(3), F(3), REPLACE, F(5, 4), F(1, 2), 1)
    line = _budget_line(b)
    assert line.startswith("ε spent on this table so far: 3 for one record replaced (add/remove releases "
                           "count twice: 1.25 for one record added or removed, 0.5 for one record replaced)")
    groups, tables, entries = group_table(ledger), dataset_table(ledger), entry_table(ledger)
    assert groups["ε counted for"].tolist() == ["one record replaced (add/remove releases count twice)"]
    assert groups["ε spent"].tolist() == [3.0] and tables["ε spent (group)"].tolist() == [3.0]
    assert entries["ε stated for"].tolist() == ["one record added or removed", "one record replaced",
                                                "one record added or removed"]


def test_a_first_replace_one_release_doubles_what_was_spent(tmp_path):
    """Cap 2, an add/remove release of 1: a replace-one release of 0.5 fits the naive sum (1.5) but not the
    sound one (0.5 + 2·1 = 2.5)."""
    ledger = Ledger(tmp_path / "ledger.sqlite")
    identity = ledger.identify(FRAME)
    ledger.reserve(identity, "Laplace histogram", {}, F(1))
    with pytest.raises(BudgetError, match=r"ε = 2\.5 for one record replaced.*above the cap 2"):
        ledger.reserve(identity, "Laplace on records", {}, F(1, 2), neighbouring=REPLACED)
    assert ledger.budget(identity).spent == 1 and ledger.budget(identity).units == ADD_REMOVE


def test_plan_preview_states_the_combined_guarantee(tmp_path):
    ledger = Ledger(tmp_path / "ledger.sqlite")
    identity = ledger.identify(FRAME)
    ledger.reserve(identity, "Laplace histogram", {}, F(1, 2))
    budget = ledger.budget(identity)
    mech = registry.create("Laplace on records")
    replace = Plan(mech, {}, None, cost=PrivacyCost(epsilon=F(1, 2), neighbouring=REPLACED), identity=identity,
                   budget=budget)
    assert replace.replace_one_total == F(3, 2) and not replace.over_budget
    text = replace.budget_text()
    assert "These releases together: ε = 1.5 for one record replaced (add/remove releases count twice" in text
    assert "spent so far ε = 0.5 for one record added or removed" in text
    big = Plan(mech, {}, None, cost=PrivacyCost(epsilon=F(5, 4), neighbouring=REPLACED), identity=identity,
               budget=budget)
    assert big.replace_one_total == F(9, 4) and big.over_budget  # naive 1.75 ≤ 2, sound 2.25 > 2
    assert "more than this table's privacy budget allows" in big.budget_text()
    same = Plan(mech, {}, None, cost=PrivacyCost(epsilon=F(5, 4)), identity=identity, budget=budget)
    assert same.replace_one_total is None and not same.over_budget
    assert same.budget_text() == ("This run will spend ε = 1.25 of the 1.5 left for this table (cap 2, spent so "
                                  "far 0.5).")


def test_every_dp_mechanism_charges_under_the_relation_its_claim_states():
    for name in registry.names():
        mech = registry.create(name)
        cost = mech.privacy_cost()
        if not cost.is_dp:
            continue
        stated = getattr(mech, "neighbouring", ADDED_OR_REMOVED)
        assert neighbouring_kind(cost.neighbouring) == neighbouring_kind(stated), name
    for name in ("DP-PCA", "Laplace on records", "Exponential on records"):
        assert neighbouring_kind(registry.create(name).privacy_cost().neighbouring) == REPLACE
    for name in ("DP-LDA", "Laplace histogram", "DiffGen"):
        assert neighbouring_kind(registry.create(name).privacy_cost().neighbouring) == ADD_REMOVE


def _wards(n=300) -> Dataset:
    r = np.random.default_rng(3)
    age = r.integers(20, 90, n)
    frame = pd.DataFrame({"age": age, "ward": np.where(age > 60, "north", r.choice(["south", "east"], n)),
                          "outcome": r.choice(["home", "readmitted"], n)})
    schema = (ColumnSpec("age", "numeric", Role.QUASI_IDENTIFIER, domain=Domain(low=0, high=120, integer=True)),
              ColumnSpec("ward", "categorical", Role.QUASI_IDENTIFIER,
                         domain=Domain(categories=("north", "south", "east"))),
              ColumnSpec("outcome", "categorical", Role.CLASS, domain=Domain(categories=("home", "readmitted"))))
    return Dataset(frame, schema)


def _release(data, name, eps, ledger):
    planned = plan(data, name, {"epsilon": eps}, ledger=ledger)
    assert not planned.errors, [p.message for p in planned.errors]
    return planned, list(run_release(planned, ledger=ledger, rng=NoiseSource.for_tests(1), write_record=False))[-1]


def test_the_publish_path_records_the_relation_and_refuses_on_the_sound_total(tmp_path):
    ledger = Ledger(tmp_path / "ledger.sqlite", default_cap=F(3))
    data = _wards()
    _release(data, "DP-LDA", 1, ledger)  # add/remove: 1
    planned, published = _release(data, "Laplace on records", 1, ledger)  # replace-one: 1 + 2·1 = 3 ≤ 3
    assert planned.replace_one_total == 3 and published.ledger_entry.neighbouring == REPLACE
    assert (published.budget.spent, published.budget.units) == (F(3), REPLACE)
    again = plan(data, "DP-LDA", {"epsilon": 0.25}, ledger=ledger)  # naive 2.25 ≤ 3, sound 3.5 > 3
    assert again.over_budget and again.replace_one_total == F(7, 2)
    assert "These releases together: ε = 3.5 for one record replaced" in again.budget_text()
    with pytest.raises(BudgetError):
        list(run_release(again, ledger=ledger, rng=NoiseSource.for_tests(1), write_record=False))
    assert [e.neighbouring for e in ledger.entries()] == [ADD_REMOVE, REPLACE]


def _schema_2_ledger(tmp_path):
    """A ledger file exactly as schema 2 left it, with two add/remove entries."""
    path = tmp_path / "ledger.sqlite"
    ledger = Ledger(path)
    identity = ledger.identify(FRAME)
    ledger.reserve(identity, "Laplace histogram", {}, F(3, 10))
    ledger.reserve(identity, "DiffGen", {}, F(1, 2))
    with sqlite3.connect(path) as db:
        db.execute("DROP INDEX cap_changes_by_budget")
        for statement in ("ALTER TABLE entries DROP COLUMN neighbouring", "ALTER TABLE entries DROP COLUMN mac",
                          "ALTER TABLE entries DROP COLUMN done_mac", "ALTER TABLE datasets DROP COLUMN robust",
                          "ALTER TABLE datasets DROP COLUMN persons", "ALTER TABLE datasets DROP COLUMN mac",
                          "DROP TABLE cap_changes", "DROP TABLE acknowledgements",
                          "DELETE FROM meta WHERE key IN ('chain', 'chain_head')"):
            db.execute(statement)  # schema 4's additions (issue 27), then schema 3's
        db.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    return path, identity


def test_a_schema_2_ledger_is_migrated_and_its_entries_count_as_add_remove(tmp_path):
    path, identity = _schema_2_ledger(tmp_path)
    with sqlite3.connect(path) as db:
        assert "neighbouring" not in [r[1] for r in db.execute("PRAGMA table_info(entries)")]
    ledger = Ledger(path)
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == ("4",)
    assert ledger.integrity_check() == "ok"
    assert [e.neighbouring for e in ledger.entries()] == [ADD_REMOVE, ADD_REMOVE]
    b = ledger.budget(identity)
    assert (b.spent, b.remaining, b.units) == (F(4, 5), F(6, 5), ADD_REMOVE)
    # the old entries count twice once a replace-one release joins them: 0.4 + 2·0.8 = 2 ≤ 2
    ledger.reserve(identity, "DP-PCA", {}, F(2, 5), neighbouring=REPLACE)
    assert ledger.budget(identity).spent == 2


def test_a_failed_migration_to_3_leaves_schema_2_untouched(tmp_path, monkeypatch):
    path, _ = _schema_2_ledger(tmp_path)
    monkeypatch.setattr(ledger_schema, "MIGRATE_TO_3", ledger_schema.MIGRATE_TO_3 + ";\nSELECT no_such_function()")
    with pytest.raises(PpdpError):
        Ledger(path)
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == ("2",)
        assert "neighbouring" not in [r[1] for r in db.execute("PRAGMA table_info(entries)")]


def test_ppdp_ledger_states_the_units_in_words(tmp_path, capsys):
    from ppdp_gui.cli import main
    path = tmp_path / "ledger.sqlite"
    ledger = Ledger(path, default_cap=F(3))
    pure, mixed = ledger.identify(FRAME), ledger.identify(pd.DataFrame({"x": ["1", "2", "3"]}))
    ledger.reserve(pure, "Laplace histogram", {}, F(1, 2), label="pure.csv")
    ledger.reserve(mixed, "DiffGen", {}, F(1), label="mixed.csv")
    ledger.reserve(mixed, "DP-PCA", {}, F(1, 2), neighbouring=REPLACE, label="mixed.csv")
    assert main(["ledger", "--ledger", str(path), "--entries", "--csv", str(tmp_path / "e.csv")]) == 0
    out = capsys.readouterr().out
    pure_line = next(line for line in out.splitlines() if "pure.csv" in line and "spent" in line)
    mixed_line = next(line for line in out.splitlines() if "mixed.csv" in line and "spent" in line)
    assert "spent ε = 0.5 (1/2)  cap 3" in pure_line and "replaced" not in pure_line
    assert ("spent ε = 2.5 (5/2) for one record replaced (add/remove releases count twice: 1 for one record added "
            "or removed, 0.5 for one record replaced)") in mixed_line
    assert "DP-PCA ε=1/2 (one record replaced) output" in out and "DiffGen ε=1 output" in out
    csv = pd.read_csv(tmp_path / "e.csv")
    assert csv["ε stated for"].tolist() == ["one record added or removed", "one record added or removed",
                                            "one record replaced"]
