"""The independent checker: every Mondrian / TDS release passes it, tampered tables fail it."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings, strategies as st

from ppdp_gui.engine.checks import check_release
from ppdp_gui.engine.mechanisms.kanon.mondrian import Mondrian
from ppdp_gui.engine.mechanisms.kanon.tds import TDS

from tests.engine.kanon_helpers import random_dataset, run


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(30, 250), n_num=st.integers(0, 2), n_cat=st.integers(1, 3),
       k=st.integers(2, 15), mode=st.sampled_from(["strict", "relaxed"]), l=st.sampled_from([0, 2]),
       diversity=st.sampled_from(["distinct", "entropy"]))
def test_every_mondrian_release_passes_and_tampering_fails(seed, n, n_num, n_cat, k, mode, l, diversity):
    ds = random_dataset(np.random.default_rng(seed), n, n_num, n_cat)
    if n < k:
        return
    rel = run(Mondrian(), ds, k=k, mode=mode, l=l, diversity=diversity)
    meta = rel.record
    result = check_release(rel.table, meta["quasi_identifiers"], k, sensitive=meta["sensitive"], l=meta["l"],
                           diversity=diversity)
    assert result.ok, result.message
    assert result.min_class >= k
    broken = rel.table.copy()
    q = meta["quasi_identifiers"][0]
    broken[q] = broken[q].astype(str)
    broken.loc[0, q] = "tampered"  # one row now alone in its group
    assert not check_release(broken, meta["quasi_identifiers"], k).ok


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(30, 250), n_num=st.integers(0, 2), n_cat=st.integers(1, 3),
       k=st.integers(2, 15))
def test_every_tds_release_passes(seed, n, n_num, n_cat, k):
    ds = random_dataset(np.random.default_rng(seed), n, n_num, n_cat)
    rel = run(TDS(), ds, k=k)
    result = check_release(rel.table, rel.record["quasi_identifiers"], k)
    assert result.ok, result.message


def test_hand_counted_table():
    table = pd.DataFrame({"age": ["20-29"] * 3 + ["30-39"] * 2, "zip": ["47*"] * 5,
                          "disease": ["flu", "flu", "hiv", "flu", "cold"]})
    ok = check_release(table, ["age", "zip"], 2, sensitive="disease", l=2)
    assert ok.ok and ok.min_class == 2 and ok.min_l == 2
    assert not check_release(table, ["age", "zip"], 3).ok
    assert not check_release(table, ["age", "zip"], 2, sensitive="disease", l=3).ok
    # entropy of (flu, flu, hiv) = 0.6365 nats < log 2 = 0.6931: not entropy 2-diverse
    ent = check_release(table, ["age", "zip"], 2, sensitive="disease", l=2, diversity="entropy")
    assert not ent.ok and abs(ent.min_l - np.exp(0.6365141682948128)) < 1e-9
    assert not check_release(table, ["age", "missing"], 2).ok
