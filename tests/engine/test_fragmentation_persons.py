"""Fragmentation with a person column (issue 31, item 4): the join-on-the-class condition counts distinct persons.

Two groups of different fragments that share only one class value, held by one patient in four rows of each,
join into 4 × 4 = 16 tuples — "k-anonymous" in rows — but every one of them is the same patient. Counted in
persons the join holds one pair, below k: the recount refuses it, the repair gives the group its majority value
(counted in persons), and a release's fragments, read with their rows' patients, join into no group of fewer than
k persons."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ppdp_gui.engine.mechanisms.fragmentation.anonymise import enforce_all, join_violations
from ppdp_gui.engine.mechanisms.fragmentation.diversity import join_shortfalls
from ppdp_gui.engine.mechanisms.fragmentation.enforce import Enforced
from ppdp_gui.engine.pipeline import plan, run_release

from test_person_kanon import K, dataset, hospital


def test_one_patients_rows_filling_a_joined_group_count_once():
    # two fragments, the same 4 rows in group 0 of each: one patient, class value 1; 4 rows of 4 patients
    # with value 0 in group 1
    ecs = [np.array([0, 0, 0, 0, 1, 1, 1, 1]), np.array([0, 0, 0, 0, 1, 1, 1, 1])]
    y = np.array([1, 1, 1, 1, 0, 0, 0, 0])
    persons = np.array(["p1"] * 4 + ["p2", "p3", "p4", "p5"])
    done = Enforced([y, y], None, [0, 0])
    assert join_violations(ecs, done, 2, 4) == 0  # in rows: 16 tuples, 16 ≥ 4
    assert join_violations(ecs, done, 2, 4, persons=persons) == 1  # in persons: one pair, 1 < 4
    assert join_shortfalls(ecs, y, 2, 4, 1) == []
    (f, g, pairs), = join_shortfalls(ecs, y, 2, 4, 1, persons)
    assert (f, g) == (0, 1) and pairs.tolist() == [[0, 0]]


def test_the_repair_gives_the_group_its_majority_in_persons():
    """Group 0 of fragment A and group 0 of fragment B share only value 1, which one patient holds in four rows of
    each: 16 tuples in rows (nothing for the row-level strategies to do), one pair of persons. The repair gives
    group A0 its majority value counted in persons (0: four patients), after which no join falls short."""
    a = np.array([0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1])
    b = np.array([0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0])
    y = np.array([1, 1, 1, 1, 0, 0, 0, 0, 2, 2, 2, 2])
    persons = np.array(["p1"] * 4 + [f"p{i}" for i in range(2, 10)])
    by_rows = enforce_all([a, b], y, 4)
    assert by_rows.distorted == [0, 0] and join_violations([a, b], by_rows, 3, 4, persons=persons) == 1
    done = enforce_all([a, b], y, 4, persons=persons)
    assert join_violations([a, b], done, 3, 4, persons=persons) == 0
    assert done.labels[0][:4].tolist() == [0, 0, 0, 0] and done.distorted == [4, 0]
    for strategy in ("naive", "ρ-selectivity"):
        other = enforce_all([a, b], y, 4, strategy=strategy, persons=persons)
        assert join_violations([a, b], other, 3, 4, rho=0.5 if strategy != "naive" else None, persons=persons) == 0


def _with_a_frequent_patient() -> pd.DataFrame:
    """The hospital table and one patient with six identical encounters, the only one readmitted 'RARE'."""
    extra = pd.DataFrame({"patient_nbr": ["999999"] * 6, "age": [47] * 6, "sex": ["F"] * 6, "zip": ["02110"] * 6,
                          "diagnosis": ["250.0"] * 6, "readmitted": ["RARE"] * 6})
    return pd.concat([hospital(), extra], ignore_index=True)


def _joins_in_persons(published) -> list[int]:
    """Every pair of released fragments joined on the class, in pairs of distinct persons (read from the tables
    and the person of each released row); the join sizes between 1 and k−1 found."""
    tables, ids = published.release.tables(), published.person_ids
    frags = published.release.record["fragments"]
    names = [("table" if m["where"] == "table" else m["table"]) for m in frags]
    counts = []
    for m, name in zip(frags, names):
        t = tables[name].astype(str).assign(_p=ids[name])
        t["_g"] = t.groupby(m["quasi_identifiers"]).ngroup()
        counts.append(t.drop_duplicates(["_g", "readmitted", "_p"]).pivot_table(
            index="_g", columns="readmitted", values="_p", aggfunc="count", fill_value=0))
    small = []
    for a in range(len(counts)):
        for b in range(a + 1, len(counts)):
            ca, cb = counts[a].align(counts[b], join="outer", axis=1, fill_value=0)
            join = ca.to_numpy() @ cb.to_numpy().T
            small += join[(join > 0) & (join < K)].tolist()
    return small


def test_the_released_fragments_join_into_groups_of_k_persons():
    """End to end, with a patient of six identical encounters holding a class value nobody else has."""
    data = dataset(_with_a_frequent_patient())
    published = list(run_release(plan(data, "Fragmentation", {"k": K}), seed=7))[-1]
    assert len(published.release.tables()) >= 2
    assert _joins_in_persons(published) == []
    assert "of different persons" in published.release.note["join"]["statement"]
