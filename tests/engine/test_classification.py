"""Classification utility (BA, LA, CA): splits, encoding, weights = repeated records, golden values on Adult."""

import numpy as np
import pandas as pd
import pytest

from ppdp_gui.engine.errors import ParameterError
from ppdp_gui.engine.metrics.classification import (baseline_accuracy, classification_accuracy, encode_features,
                                                    lower_bound_accuracy, repeated_splits, split_indices)


def test_two_thirds_split_is_a_reproducible_partition():
    tr, te = split_indices(300, seed=5)
    assert len(tr) == 200 and len(te) == 100
    assert np.array_equal(np.sort(np.concatenate([tr, te])), np.arange(300))
    tr2, _ = split_indices(300, seed=5)
    assert np.array_equal(tr, tr2)
    runs = list(repeated_splits(300, 4, seed=1))
    assert len(runs) == 4 and not np.array_equal(runs[0][0], runs[1][0])
    with pytest.raises(ParameterError):
        split_indices(1)


def test_encoding_one_hot_over_training_categories():
    train = pd.DataFrame({"c": ["x", "y", "x"], "n": [1, 2, 3]})
    test = pd.DataFrame({"c": ["y", "z"], "n": [5, 6]})
    a, b = encode_features(train, test, ["c", "n"])
    assert a.tolist() == [[1, 0, 1], [0, 1, 2], [1, 0, 3]]
    assert b.tolist() == [[0, 1, 5], [0, 0, 6]]  # 'z' never seen in training: all zeros
    cat = pd.CategoricalDtype(["p", "q", "r"])
    a, b = encode_features(pd.DataFrame({"c": pd.Series(["p", "q"], dtype=cat)}),
                           pd.DataFrame({"c": pd.Series(["r"], dtype=cat)}), ["c"])
    assert a.shape == (2, 3) and b.tolist() == [[0, 0, 1]]  # same cut: every label has a column


def test_lower_bound_is_the_training_majority():
    train = pd.DataFrame({"y": ["a", "a", "b"]})
    test = pd.DataFrame({"y": ["a", "b", "b", "b"]})
    assert lower_bound_accuracy(train, test, "y") == 0.25


def test_weights_train_the_same_tree_as_repeated_records():
    rng = np.random.default_rng(0)
    groups = pd.DataFrame({"g": rng.choice(["u", "v", "w", "s"], 60), "k": rng.choice(["p", "q"], 60),
                           "y": rng.choice(["0", "1"], 60), "count": rng.integers(0, 30, 60)})
    test = pd.DataFrame({"g": rng.choice(["u", "v", "w", "s"], 500), "k": rng.choice(["p", "q"], 500),
                         "y": rng.choice(["0", "1"], 500)})
    weighted = classification_accuracy(groups, test, "y", weight_column="count", min_leaf_fraction=0.01)
    records = groups.loc[np.repeat(groups.index, groups["count"])].drop(columns="count")
    expanded = classification_accuracy(records, test, "y", min_leaf_fraction=0.01)
    assert weighted == pytest.approx(expanded)


def test_all_zero_counts_fall_back_to_a_constant():
    groups = pd.DataFrame({"g": ["u"], "y": ["1"], "count": [0]})
    assert classification_accuracy(groups, pd.DataFrame({"g": ["u"], "y": ["1"]}), "y",
                                   weight_column="count") in (0.0, 1.0)


def test_adult_uci_split_reproduces_ba_and_la(shared_data):
    """The shared reference (README §6): with the UCI split BA = 85.3 %, LA = 75.4 %."""
    frame = pd.read_csv(shared_data / "adult" / "adult_all.csv.gz", dtype=str, keep_default_na=False)
    frame = frame[~(frame == "?").any(axis=1)]
    for col in ("age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week"):
        frame[col] = frame[col].astype(np.int64)
    train = frame[frame["split"] == "train"].drop(columns="split")
    test = frame[frame["split"] == "test"].drop(columns="split")
    assert (len(train), len(test)) == (30_162, 15_060)
    assert 100 * lower_bound_accuracy(train, test, "income") == pytest.approx(75.43, abs=0.01)
    assert 100 * baseline_accuracy(train, test, "income") == pytest.approx(85.3, abs=0.6)
