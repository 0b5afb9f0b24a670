"""Mondrian: the partition core's guarantees, the published labels, and Adult against qiyuangong's figures."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from ppdp_gui.engine.checks import check_release
from ppdp_gui.engine.mechanisms import registry
from ppdp_gui.engine.mechanisms.kanon.mondrian import Mondrian
from ppdp_gui.engine.mechanisms.kanon.mondrian_core import partition
from ppdp_gui.engine.data.qi_coding import TaxonomyIndex
from ppdp_gui.engine.metrics.information_loss import ncp

from tests.engine.kanon_helpers import (ADULT_NUMERIC, ADULT_QIS, ARX_QIS, adult_dataset, arx_adult_dataset,
                                       load_adult, random_dataset, run, two_level_taxonomy)


def boxes_disjoint(X: np.ndarray, labels: np.ndarray) -> bool:
    """Strict Mondrian regions never overlap: any two classes are separated on some dimension."""
    g = pd.DataFrame(X).assign(g=labels).groupby("g")
    lo, hi = g.min().to_numpy(), g.max().to_numpy()
    overlap = (lo[:, None, :] <= hi[None, :, :]) & (lo[None, :, :] <= hi[:, None, :])
    together = overlap.all(axis=2)
    np.fill_diagonal(together, False)
    return not together.any()


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 300), d=st.integers(1, 4), k=st.integers(1, 12),
       mode=st.sampled_from(["strict", "relaxed"]), values=st.integers(1, 30))
def test_partition_every_class_has_k_rows(seed, n, d, k, mode, values):
    X = np.random.default_rng(seed).integers(0, values, (n, d)).astype(float)
    if n < k:
        with pytest.raises(ValueError):
            partition(X, k, mode=mode)
        return
    labels = partition(X, k, mode=mode)
    sizes = np.bincount(labels)
    assert labels.min() == 0 and (sizes >= k).all()
    if mode == "strict":
        assert boxes_disjoint(X, labels)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(20, 300), k=st.integers(1, 8), l=st.integers(2, 3),
       diversity=st.sampled_from(["distinct", "entropy"]), mode=st.sampled_from(["strict", "relaxed"]))
def test_partition_l_diversity(seed, n, k, l, diversity, mode):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 20, (n, 2)).astype(float)
    s = rng.choice(list("abcd"), n, p=[0.55, 0.25, 0.15, 0.05])
    try:
        labels = partition(X, k, mode=mode, sensitive=s, l=l, diversity=diversity)
    except ValueError:
        return  # the whole table is not l-diverse: nothing to check
    frame = pd.DataFrame({"g": labels, "s": s})
    if diversity == "distinct":
        assert frame.groupby("g").s.nunique().min() >= l
    else:
        p = frame.groupby("g").s.value_counts(normalize=True)
        ent = (-(p * np.log(p))).groupby(level=0).sum()
        assert ent.min() >= np.log(l) - 1e-9
    assert np.bincount(labels).min() >= k


def test_partition_median_splits_one_dimension():
    # 100 distinct values, k=10: 100 -> 50 -> 25 -> 12|13, then 12 < 2k stops: 8 classes of 12 or 13 rows
    labels = partition(np.arange(100.0), 10)
    sizes = np.bincount(labels)
    assert sizes.size == 8 and set(sizes) <= {12, 13}


def test_partition_strict_keeps_ties_together_relaxed_splits_them():
    X = np.array([1.0] * 30 + [2.0] * 3)
    assert np.bincount(partition(X, 10, mode="strict")).tolist() == [33]
    relaxed = partition(X, 10, mode="relaxed")
    assert sorted(np.bincount(relaxed)) == [16, 17]


def test_partition_refuses_tables_that_cannot_comply():
    with pytest.raises(ValueError, match="fewer than k"):
        partition(np.zeros((3, 2)), 5)
    with pytest.raises(ValueError, match="diverse"):
        partition(np.zeros((10, 1)), 2, sensitive=np.array(["a"] * 10), l=2)


def test_release_publishes_cut_points_not_raw_extremes():
    ds = random_dataset(np.random.default_rng(3), 400, n_num=2, n_cat=2)
    rel = run(Mondrian(), ds, k=7, grid_width=10)
    assert "id" not in rel.table.columns
    assert sorted(rel.table["y"]) == sorted(ds.frame["y"])  # class passes through
    for col in ("n0", "n1"):
        for label, (lo, hi) in rel.record["intervals"][col].items():
            assert lo % 10 == 0 and (hi + 1) % 10 == 0, label  # whole cells [10m, 10m+9]
    tax = ds.spec("c0").taxonomy
    labels = {tax.label(n) for n in range(len(tax))}
    assert set(rel.table["c0"].astype(str)) <= labels
    meta = rel.record
    assert {"quasi_identifiers", "k", "l", "sensitive", "diversity", "groups"} <= set(meta)
    assert check_release(rel.table, meta["quasi_identifiers"], 7).ok


def test_mechanism_l_diversity_and_parameters():
    ds = random_dataset(np.random.default_rng(5), 500, n_num=1, n_cat=2)
    mech = registry.create("Mondrian")
    assert mech.guarantee == "k-anonymity"
    rel = run(mech, ds, k=5, l=3, diversity="entropy")
    assert rel.record["sensitive"] == "disease" and rel.cost.l == 3
    assert check_release(rel.table, rel.record["quasi_identifiers"], 5, sensitive="disease", l=3,
                         diversity="entropy").ok
    assert any("smallest allowed value" in p.message for p in mech.validate(ds, k=1))
    assert any(p.param == "k" and p.level == "error" for p in mech.validate(ds, k=600))  # 500 rows
    assert any(p.param == "l" for p in mech.validate(ds, k=5, l=5))  # only 4 diseases


def test_adult_partition_matches_or_beats_qiyuangong(shared_data):
    """Without snapping (raw ranges, categoricals coded by first appearance, qiyuangong's own measure) our
    partitioning at k=10 must be at least as fine as the reference's: NCP <= 11.24 %, >= 1,795 classes."""
    df = load_adult(shared_data)
    assert len(df) == 30162
    X = np.column_stack([df[q].to_numpy(float) if q in ADULT_NUMERIC else pd.factorize(df[q])[0].astype(float)
                         for q in ADULT_QIS])
    labels = partition(X, 10)
    span = X.max(axis=0) - X.min(axis=0)
    g = pd.DataFrame(X).assign(g=labels).groupby("g")
    sizes = np.bincount(labels)
    width = (g.max() - g.min()).to_numpy() / span
    ncp_pct = 100 * (width * sizes[:, None]).sum() / X.size
    assert sizes.min() >= 10 and sizes.size >= 1795 and ncp_pct <= 11.24


def test_adult_release_passes_checker(shared_data):
    ds = adult_dataset(shared_data)
    rel = run(Mondrian(), ds, k=10)
    assert check_release(rel.table, ADULT_QIS, 10).ok
    loss = ncp(rel.table, rel.record["intervals"], rel.record["domains"])
    assert 0.05 < loss < 0.6  # grids and flat taxonomies cost more than raw ranges, but far from everything
    assert rel.record["groups"] > 500


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 300), k=st.integers(1, 12), fan=st.integers(1, 4),
       mode=st.sampled_from(["strict", "relaxed"]), l=st.sampled_from([0, 2]))
def test_partition_with_hierarchies_keeps_guarantees(seed, n, k, fan, mode, l):
    """Taxonomy-aware cuts: classes of k rows (l-diverse), disjoint boxes when strict; a numeric column mixed in."""
    rng = np.random.default_rng(seed)
    values = [f"v{i}" for i in range(9)]
    index = TaxonomyIndex(two_level_taxonomy("c", values, fan=fan))
    X = np.column_stack([rng.integers(0, 9, n), rng.integers(0, 30, n)]).astype(float)  # leaf positions, numbers
    s = rng.choice(list("abc"), n)
    if n < k:
        with pytest.raises(ValueError):
            partition(X, k, mode=mode, hierarchies=[index, None])
        return
    try:
        labels = partition(X, k, mode=mode, sensitive=s if l else None, l=l or None, hierarchies=[index, None])
    except ValueError:
        assert l and len(set(s)) < l
        return
    assert labels.min() == 0 and np.bincount(labels).min() >= k
    if l:
        assert pd.DataFrame({"g": labels, "s": s}).groupby("g").s.nunique().min() >= l
    if mode == "strict":
        assert boxes_disjoint(X, labels)


def test_partition_cuts_between_taxonomy_groups_not_at_the_median():
    """Leaves 0..5 under g0 = {0,1,2}, g1 = {3,4,5}; counts 10,10,10 | 5,5,5. The median (position 2) would leave
    g0 split in two; the hierarchy cut separates g0 from g1, so each class publishes a group, not the root."""
    index = TaxonomyIndex(two_level_taxonomy("c", [f"v{i}" for i in range(6)], fan=3))
    X = np.repeat(np.arange(6.0), [10, 10, 10, 5, 5, 5])
    plain = partition(X, 12)
    tree = partition(X, 12, hierarchies=[index])
    assert sorted(np.bincount(tree)) == [15, 30]
    assert set(X[tree == tree[0]]) == {0, 1, 2}
    assert any(len(set(X[plain == g]) & {0, 1, 2}) and len(set(X[plain == g]) & {3, 4, 5})
               for g in np.unique(plain))  # the plain median cut mixes the two groups


# Measured on ARX's Adult with ARX's hierarchies, k = 10 strict: LM 0.1117, 2,046 classes (was 0.203 before cuts
# followed the taxonomies; ARX's local recoding reaches 0.079). The bound leaves a margin of 0.02.
ARX_ADULT_LM_K10 = 0.1117


def test_arx_adult_loss_stays_near_measured(shared_data):
    ds = arx_adult_dataset(shared_data)
    rel = run(Mondrian(), ds, k=10)
    result = check_release(rel.table, ARX_QIS, 10)
    assert result.ok, result.message
    lm = ncp(rel.table, rel.record["intervals"], rel.record["domains"])
    assert lm <= ARX_ADULT_LM_K10 + 0.02 and rel.record["groups"] >= 1900
    rel = run(Mondrian(), ds, k=10, l=2, sensitive="salary-class")
    assert check_release(rel.table, ARX_QIS, 10, sensitive="salary-class", l=2).ok
    assert ncp(rel.table, rel.record["intervals"], rel.record["domains"]) <= 0.1845 + 0.02
