"""The checker's new recounts: recursive (c, l)-diversity, t-closeness (three ground distances), risk bounds and
suppressed rows — against hand-counted tables, the t-closeness paper's own example, and linear programming."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st
from scipy.optimize import linprog
from scipy.stats import wasserstein_distance

from ppdp_gui.engine.checks import check_release
from ppdp_gui.engine.checks.claims import check_claims
from ppdp_gui.engine.checks.closeness import emd_equal, emd_hierarchical, emd_ordered
from ppdp_gui.engine.claims import KAnonymity, LDiversity, RiskBound, Suppression, TCloseness
from ppdp_gui.engine.data.writer import neutral_text


def test_recursive_cl_diversity_hand_counted():
    # group a: counts 3, 2, 1 -> r1 = 3 < c (r2 + r3) = 2 * 3 = 6 for l = 2; for l = 3, 3 < 2 * 1 fails
    table = pd.DataFrame({"q": ["a"] * 6 + ["b"] * 4,
                          "s": ["x", "x", "x", "y", "y", "z", "x", "y", "z", "w"]})
    assert check_release(table, ["q"], 1, sensitive="s", l=2, diversity="recursive", c=2).ok
    res = check_release(table, ["q"], 1, sensitive="s", l=3, diversity="recursive", c=2)
    assert not res.ok and "1 group(s)" in res.message
    assert res.min_l == pytest.approx(2 * 1 / 3)
    # c = 1: 3 < 3 fails for l = 2 (strict inequality)
    assert not check_release(table, ["q"], 1, sensitive="s", l=2, diversity="recursive", c=1).ok
    # a group with fewer than l distinct values has no tail and fails
    one = pd.DataFrame({"q": ["a"] * 3, "s": ["x"] * 3})
    assert not check_release(one, ["q"], 1, sensitive="s", l=2, diversity="recursive", c=10).ok


def test_ordered_emd_paper_example():
    """Li, Li & Venkatasubramanian (ICDE 2007), Table 3: salaries 3k..11k, the whole table uniform;
    {3k, 4k, 5k} is at 0.375 and {6k, 8k, 11k} at 0.167 from it (ordered distance)."""
    q = np.full((1, 9), 1 / 9)
    p1 = np.zeros((1, 9))
    p1[0, [0, 1, 2]] = 1 / 3
    p2 = np.zeros((1, 9))
    p2[0, [3, 5, 8]] = 1 / 3
    assert emd_ordered(p1, q)[0] == pytest.approx(0.375)
    assert emd_ordered(p2, q)[0] == pytest.approx(1 / 6)
    assert emd_equal(p1, q)[0] == pytest.approx(2 / 3)


def _lp_emd(p, q, ground):
    """Earth mover's distance by linear programming: min Σ f_ij d_ij, rows sum to p, columns to q."""
    m = len(p)
    a_eq = np.zeros((2 * m, m * m))
    for i in range(m):
        a_eq[i, i * m:(i + 1) * m] = 1
        a_eq[m + i, i::m] = 1
    res = linprog(ground.reshape(-1), A_eq=a_eq, b_eq=np.r_[p, q], bounds=(0, None), method="highs")
    return res.fun


PATHS = [["flu", "infection", "respiratory", "*"], ["pneumonia", "infection", "respiratory", "*"],
         ["bronchitis", "infection", "respiratory", "*"], ["edema", "vascular", "respiratory", "*"],
         ["embolism", "vascular", "respiratory", "*"], ["ulcer", "stomach", "digestive", "*"],
         ["gastritis", "stomach", "digestive", "*"], ["cancer", "stomach", "digestive", "*"],
         ["colitis", "colon", "digestive", "*"]]


def _tree_ground(paths):
    leaves = [p[0] for p in paths]
    height = len(paths[0]) - 1
    d = np.zeros((len(leaves), len(leaves)))
    for i, a in enumerate(paths):
        for j, b in enumerate(paths):
            if i != j:
                common = next(lev for lev in range(height + 1) if a[lev:] == b[lev:])
                d[i, j] = common / height
    return leaves, d


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_emd_formulas_equal_linear_programming(seed):
    rng = np.random.default_rng(seed)
    leaves, tree = _tree_ground(PATHS)
    m = len(leaves)
    p = rng.dirichlet(np.ones(m) * 0.5)
    q = rng.dirichlet(np.ones(m))
    # the LP solver (HiGHS) is exact only to about 1e-8
    assert emd_hierarchical(p[None], q[None], leaves, PATHS)[0] == pytest.approx(_lp_emd(p, q, tree), abs=1e-7)
    idx = np.arange(m)
    assert emd_ordered(p[None], q[None])[0] == pytest.approx(
        wasserstein_distance(idx, idx, p, q) / (m - 1), abs=1e-9)
    assert emd_equal(p[None], q[None])[0] == pytest.approx(_lp_emd(p, q, 1.0 - np.eye(m)), abs=1e-7)


def _salary_table():
    # two groups of three salaries; the whole table is 3k..8k once each
    return pd.DataFrame({"zip": ["476**"] * 3 + ["479**"] * 3, "salary": ["3", "4", "5", "6", "7", "8"]})


def test_t_closeness_claim_recounted():
    table = _salary_table()
    # group {3,4,5} vs uniform over 6 values, ordered: cumsum 1/6,2/6,3/6,2/6,1/6 -> 9/6 / 5 = 0.3
    ok = check_claims({"table": table}, [TCloseness(0.3, "salary", ("zip",), "ordered")])[0]
    assert ok.ok and ok.figures["largest distance"] == pytest.approx(0.3)
    bad = check_claims({"table": table}, [TCloseness(0.29, "salary", ("zip",), "ordered")])[0]
    assert not bad.ok and "2 group(s)" in bad.message
    # equal distance: each group holds half of the values -> 0.5
    eq = check_claims({"table": table}, [TCloseness(0.5, "salary", ("zip",), "equal")])[0]
    assert eq.ok and eq.figures["largest distance"] == pytest.approx(0.5)
    # a declared order that does not cover a value cannot be recounted
    partial = check_claims({"table": table}, [TCloseness(1, "salary", ("zip",), "ordered", order=("3", "4"))])[0]
    assert not partial.ok and "outside the declared domain" in partial.message
    text = pd.DataFrame({"zip": ["a", "a"], "s": ["low", "high"]})
    assert not check_claims({"table": text}, [TCloseness(1, "s", ("zip",), "ordered")])[0].ok
    assert check_claims({"table": text}, [TCloseness(0, "s", ("zip",), "ordered", order=("low", "high"))])[0].ok


def test_hierarchical_claim_with_neutralised_labels():
    paths = (("=flu", "resp", "*"), ("cold", "resp", "*"), ("ulcer", "dig", "*"))
    table = pd.DataFrame({"q": ["a", "a", "b", "b"], "s": ["=flu", "cold", "ulcer", "ulcer"]})
    claim = TCloseness(0.5, "s", ("q",), "hierarchical", hierarchy=paths)
    in_memory = check_claims({"table": table}, [claim])[0]
    on_file = table.map(neutral_text)
    assert on_file["s"].iloc[0] != "=flu"  # the writer neutralised it
    written = check_claims({"table": on_file}, [claim], neutralise=neutral_text)[0]
    assert in_memory.ok and written.ok
    assert in_memory.figures["largest distance"] == pytest.approx(written.figures["largest distance"])


def test_risk_bounds():
    table = pd.DataFrame({"q": ["a"] * 2 + ["b"] * 8})
    hi = check_claims({"table": table}, [RiskBound("highest", 0.5, ("q",)), RiskBound("highest", 0.49, ("q",))])
    assert [c.ok for c in hi] == [True, False]
    avg = check_claims({"table": table}, [RiskBound("average", 0.2, ("q",)), RiskBound("average", 0.19, ("q",))])
    assert [c.ok for c in avg] == [True, False]  # 2 groups / 10 rows


def test_suppressed_rows_left_out_of_the_other_recounts():
    table = pd.DataFrame({"q": ["a"] * 3 + ["b"] * 3 + ["*"] * 2, "r": ["x"] * 6 + ["*"] * 2,
                          "s": ["1", "2", "1", "2", "1", "2", "1", "1"]})
    claims = [KAnonymity(3, ("q", "r")), LDiversity(2, "distinct", "s", ("q", "r")),
              Suppression(0.25, ("q", "r")), RiskBound("highest", 1 / 3, ("q", "r"))]
    checks = check_claims({"table": table}, claims)
    assert all(c.ok for c in checks), [c.message for c in checks]
    assert checks[2].figures["suppressed rows"] == 2
    # without the Suppression claim the two '*' rows are a group of 2 < k
    assert not check_claims({"table": table}, claims[:1])[0].ok
    # a smaller limit fails
    assert not check_claims({"table": table}, [Suppression(0.2, ("q", "r"))])[0].ok
    # a row with '*' in only one QI is not suppressed
    partly = table.copy()
    partly.loc[7, "r"] = "x"
    res = check_claims({"table": partly}, [KAnonymity(3, ("q", "r")), Suppression(0.25, ("q", "r"))])
    assert not res[0].ok and res[1].ok


def test_most_general_release_is_one_group():
    table = pd.DataFrame({"q": ["*"] * 5, "s": list("abcab")})
    checks = check_claims({"table": table}, [KAnonymity(5, ("q",)), Suppression(0.0, ("q",)),
                                             LDiversity(3, "distinct", "s", ("q",))])
    assert all(c.ok for c in checks)
    assert not check_claims({"table": table}, [KAnonymity(6, ("q",)), Suppression(0.0, ("q",))])[0].ok
