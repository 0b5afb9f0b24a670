"""Non-reconstructability (seed 002 §4.2): Theorem 4.1 join sizes, the three strategies, ρ levels."""

import itertools
from math import comb

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from ppdp_gui.engine.mechanisms.fragmentation import enforce as E


def _fragments(seed, n=240, n_classes=4, sizes=(8, 10)):
    """Two random k-anonymous groupings of the same rows (groups of exactly sizes[f] rows) and a class."""
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(n_classes))
    y = rng.choice(n_classes, n, p=p)
    ecs = [rng.permutation(n) % (n // s) for s in sizes]
    return ecs, y


def _brute_join_sizes(ec_a, ec_b, y):
    """Join the two fragment tables on the class, as an attacker would, and count rows per pair of groups."""
    a = pd.DataFrame({"ea": ec_a, "c": y})
    b = pd.DataFrame({"eb": ec_b, "c": y})
    j = a.merge(b, on="c")
    return j.groupby(["ea", "eb"]).size()


def test_join_size_formula_is_the_real_join():
    ecs, y = _fragments(0, n=120, sizes=(6, 8))
    ca, cb = (E.class_counts(e, y, 4) for e in ecs)
    join = ca @ cb.T
    brute = _brute_join_sizes(ecs[0], ecs[1], y)
    for (i, j), size in brute.items():
        assert join[i, j] == size
    assert (join > 0).sum() == len(brute)
    bad = E.violating_pairs(ca, cb, 12)
    assert {tuple(p) for p in bad} == {ij for ij, s in brute.items() if s < 12}


def test_naive_leaves_one_value_per_group():
    ecs, y = _fragments(1)
    res = E.enforce_naive(ecs, [y, y], 4)
    for ec, lab in zip(ecs, res.labels):
        counts = E.class_counts(ec, lab, 4)
        assert ((counts > 0).sum(axis=1) == 1).all()
        before = E.class_counts(ec, y, 4)
        assert (np.argmax(counts, axis=1) == np.argmax(before, axis=1)).all()  # the majority value
    assert res.distorted == [int((E.class_counts(e, y, 4).sum(1) - E.class_counts(e, y, 4).max(1)).sum())
                             for e in ecs]


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n_classes=st.integers(2, 6), k=st.integers(3, 10))
def test_dependency_graph_leaves_no_violating_join(seed, n_classes, k):
    ecs, y = _fragments(seed, n=30 * k, n_classes=n_classes, sizes=(k, k + 1))
    res = E.enforce_dependency_graph(ecs, [y, y], n_classes, k)
    ca, cb = (E.class_counts(e, lab, n_classes) for e, lab in zip(ecs, res.labels))
    assert len(E.violating_pairs(ca, cb, k)) == 0
    naive = E.enforce_naive(ecs, [y, y], n_classes)
    assert sum(res.distorted) <= sum(naive.distorted)
    for ec, lab in zip(ecs, res.labels):
        before = E.class_counts(ec, y, n_classes)
        after = E.class_counts(ec, lab, n_classes)
        assert (after.sum(1) == before.sum(1)).all()  # rows stay in their groups
        changed = lab != y
        assert (lab[changed] == np.argmax(before, axis=1)[ec[changed]]).all()  # only to the group's majority


def test_dependency_graph_fixes_a_known_violation():
    # fragment A: group 0 = {a, b x4}, fragment B: group 0 = {a, c x4}; a join on 'a' has 1 tuple < k = 5
    y = np.array([0, 1, 1, 1, 1, 2, 2, 2, 2, 2])
    ec_a = np.array([0, 0, 0, 0, 0, 1, 1, 1, 1, 1])
    ec_b = np.array([0, 1, 1, 1, 1, 0, 0, 0, 0, 1])  # group 0 = {a, c, c, c, c}; group 1 = {b, b, b, b, c}
    ca, cb = E.class_counts(ec_a, y, 3), E.class_counts(ec_b, y, 3)
    assert len(E.violating_pairs(ca, cb, 5)) > 0
    res = E.enforce_dependency_graph([ec_a, ec_b], [y, y], 3, 5)
    ca, cb = (E.class_counts(e, lab, 3) for e, lab in zip((ec_a, ec_b), res.labels))
    assert len(E.violating_pairs(ca, cb, 5)) == 0
    assert sum(res.distorted) == 1  # one relabelled tuple is enough


def test_binary_class_never_needs_changes():
    # a subset of class values joins into ≥ |group| ≥ k tuples; with two values one side is always a subset
    for seed in range(5):
        ecs, y = _fragments(seed, n_classes=2)
        assert E.enforce_dependency_graph(ecs, [y, y], 2, 8).distorted == [0, 0]
        assert E.enforce_rho(ecs, [y, y], 2, 8, 1.0).distorted == [0, 0]


def test_versions_of_the_papers_table_3():
    # Table 3: five tuples flu, pneumonia, dyspepsia, pneumonia, flu -> 3 listed values, 2 ambiguous slots
    vecs, p = E.common_value_versions(5, 3, 3)
    assert len(vecs) == comb(4, 2) == 6
    assert p == pytest.approx(np.full(6, 1 / 6))
    as_sets = {tuple(v) for v in vecs}
    assert (3, 1, 1) in as_sets and (1, 2, 2) in as_sets  # Table 4's two versions (flu x3 / pneumonia, dyspepsia x2)
    assert all(sum(v) == 5 and min(v) >= 1 for v in as_sets)


def _brute_rho(n_i, s_i, n_j, s_j, k):
    """Enumerate every version of both groups and count the joins with ≥ k tuples."""
    def versions(n, s):
        vals = np.nonzero(s)[0]
        out = []
        for v in itertools.product(range(1, n + 1), repeat=len(vals)):
            if sum(v) == n:
                full = np.zeros(len(s), dtype=int)
                full[vals] = v
                out.append(full)
        return out
    if not (s_i & s_j).any():
        return 1.0  # no common value: the groups cannot be joined
    vi, vj = versions(n_i, s_i), versions(n_j, s_j)
    good = sum(1 for a in vi for b in vj if (a @ b) >= k)
    return good / (len(vi) * len(vj))


@pytest.mark.parametrize("case", [
    (6, [1, 1, 0, 1], 7, [1, 0, 1, 1], 5),
    (5, [1, 1, 1, 0], 5, [0, 1, 1, 1], 6),
    (6, [1, 1, 0, 0], 6, [0, 1, 1, 0], 4),
    (7, [1, 1, 1, 1], 6, [1, 1, 0, 0], 9),
    (5, [1, 0, 0, 1], 5, [0, 1, 1, 0], 3),
])
def test_rho_level_against_enumeration(case):
    n_i, s_i, n_j, s_j, k = case
    s_i, s_j = np.array(s_i, bool), np.array(s_j, bool)
    assert E.rho_level(n_i, s_i, n_j, s_j, k) == pytest.approx(_brute_rho(n_i, s_i, n_j, s_j, k), abs=1e-12)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), rho=st.sampled_from([0.0, 0.3, 0.5, 0.9, 1.0]))
def test_rho_selectivity_bounds_every_edge(seed, rho):
    k = 5
    ecs, y = _fragments(seed, n=120, n_classes=5, sizes=(5, 6))
    res = E.enforce_rho(ecs, [y, y], 5, k, rho)
    sizes = [np.bincount(e) for e in ecs]
    before = [E.class_counts(e, y, 5) > 0 for e in ecs]
    for f in range(2):
        assert not (res.published[f] & ~before[f]).any()  # values are only ever removed
        assert res.published[f].any(axis=1).all()  # every group keeps at least one value
        lost = E.class_counts(ecs[f], y, 5) * ~res.published[f]
        assert res.distorted[f] == lost.sum()
    a, b = res.published
    for i in range(len(a)):
        for j in np.nonzero((a[i] & b).any(axis=1))[0]:
            assert E.rho_level(sizes[0][i], a[i], sizes[1][j], b[j], k) >= rho
    if rho == 0.0:
        assert res.distorted == [0, 0]


def test_relabel_rows_moves_exactly_the_lost_tuples():
    ec = np.array([0, 0, 0, 0, 1, 1, 1])
    y = np.array([1, 0, 1, 2, 2, 2, 0])
    before = E.class_counts(ec, y, 3)
    after = before.copy()
    after[0] = [0, 4, 0]
    new = E.relabel_rows(ec, y, before, after)
    assert new.tolist() == [1, 1, 1, 1, 2, 2, 0]
    assert (E.class_counts(ec, new, 3) == after).all()
