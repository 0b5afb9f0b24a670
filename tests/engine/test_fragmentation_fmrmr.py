"""FMRMR fragmentation (seed 002 §4.1): mutual information, discretisation and the greedy search."""

import itertools

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import mutual_info_score

from ppdp_gui.engine.errors import ParameterError
from ppdp_gui.engine.mechanisms.fragmentation import fmrmr


def test_mutual_information_matches_sklearn():
    rng = np.random.default_rng(3)
    for _ in range(20):
        a = rng.integers(0, rng.integers(1, 6), 300)
        b = (a + rng.integers(0, 3, 300)) % 4
        assert fmrmr.mutual_information(a, b) == pytest.approx(mutual_info_score(a, b), abs=1e-12)


def test_mi_matrix_matches_sklearn_on_musk(shared_data):
    d = pd.read_csv(shared_data / "musk" / "musk1.csv.gz")
    cols = [f"f{i}" for i in range(1, 13)]
    codes = fmrmr.encode_columns(d, cols)
    mat = fmrmr.mutual_information_matrix(codes)
    for i, j in itertools.combinations_with_replacement(range(len(cols)), 2):
        expect = mutual_info_score(codes[:, i], codes[:, j])
        assert mat[i, j] == pytest.approx(expect, abs=1e-10)
        assert mat[j, i] == pytest.approx(expect, abs=1e-10)
    y, _ = fmrmr.class_codes(d["class"])
    rel = fmrmr.relevance(codes, y)
    assert rel[3] == pytest.approx(mutual_info_score(codes[:, 3], y), abs=1e-12)


def test_discretisation_three_states_at_half_sigma():
    x = np.array([0.0, 10.0, 20.0, 30.0, 40.0])  # mean 20, sd ≈ 14.14 -> cuts at 12.93 and 27.07
    assert fmrmr.discretise_mrmr(x).tolist() == [0, 0, 1, 2, 2]
    assert fmrmr.discretise_mrmr(np.full(5, 7.0)).tolist() == [1, 1, 1, 1, 1]
    q = fmrmr.discretise_quantile(np.arange(100), bins=4)
    assert np.bincount(q).tolist() == [25, 25, 25, 25]


def _naive_greedy(features, rel, red, scoring):
    """Reference: the paper's greedy spelled out with full MRMR recomputations."""
    sub = red[np.ix_(features, features)].copy()
    np.fill_diagonal(sub, -np.inf)
    i, j = np.unravel_index(np.argmax(sub), sub.shape)
    frags = [[features[i]], [features[j]]]
    rest = [f for t, f in enumerate(features) if t not in (i, j)]
    while rest:
        best = None
        for f in (0, 1):
            for t, x in enumerate(rest):
                gain = fmrmr.mrmr(frags[f] + [x], rel, red, scoring) - fmrmr.mrmr(frags[f], rel, red, scoring)
                if best is None or gain > best[0] + 1e-12:
                    best = (gain, f, t)
        frags[best[1]].append(rest.pop(best[2]))
    return frags


@pytest.mark.parametrize("scoring", ["total", "mean"])
def test_incremental_greedy_equals_the_spelled_out_greedy(scoring):
    rng = np.random.default_rng(11)
    for _ in range(15):
        d = int(rng.integers(3, 9))
        m = rng.random((d, d))
        red = (m + m.T) / 2
        rel = rng.random(d)
        a, b = fmrmr.binary_fragmentation(list(range(d)), rel, red, scoring)
        ra, rb = _naive_greedy(list(range(d)), rel, red, scoring)
        assert (a, b) == (ra, rb)


def test_hand_example_seeds_and_assignment():
    # x0, x1 the most dependent pair -> seeds; x2 copies x0 -> joins x1's fragment; x3 copies x1 -> joins x0's
    red = np.array([[1.0, 0.9, 0.8, 0.1],
                    [0.9, 1.0, 0.1, 0.7],
                    [0.8, 0.1, 1.0, 0.05],
                    [0.1, 0.7, 0.05, 1.0]])
    rel = np.array([0.3, 0.3, 0.2, 0.2])
    a, b = fmrmr.binary_fragmentation([0, 1, 2, 3], rel, red)
    assert a == [0, 3] and b == [1, 2]
    assert fmrmr.fmrmr([a, b], rel, red) == pytest.approx(0.3 + 0.2 - 0.1 + 0.3 + 0.2 - 0.1)


def test_fragments_of_musk_cover_every_feature_once(shared_data):
    d = pd.read_csv(shared_data / "musk" / "musk1.csv.gz")
    feats = [f"f{i}" for i in range(1, 31)]
    res = fmrmr.fragment_features(d, feats, "class", 2)
    flat = [f for frag in res.fragments for f in frag]
    assert sorted(flat) == sorted(feats)
    assert all(len(f) >= 5 for f in res.fragments)  # "total" scoring balances the fragments
    codes = fmrmr.encode_columns(d, feats)
    mat = fmrmr.mutual_information_matrix(codes)
    np.fill_diagonal(mat, -1)
    i, j = np.unravel_index(np.argmax(mat), mat.shape)
    assert set(res.seeds) == {feats[i], feats[j]}
    assert (res.seeds[0] in res.fragments[0]) != (res.seeds[1] in res.fragments[0])
    three = fmrmr.fragment_features(d, feats, "class", 3)
    assert len(three.fragments) == 3 and sorted(f for fr in three.fragments for f in fr) == sorted(feats)


def test_too_few_features_is_an_error():
    d = pd.DataFrame({"a": [1, 2, 3], "c": [0, 1, 0]})
    with pytest.raises(ParameterError):
        fmrmr.fragment_features(d, ["a"], "c", 2)
