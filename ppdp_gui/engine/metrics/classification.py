"""Classification utility (DiffGen paper, Section 5): BA, LA and CA with a decision tree as the C4.5 stand-in.

- BA, baseline accuracy: a tree trained on the raw training data, tested on the raw test data.
- LA, lower-bound accuracy: no attribute at all, i.e. always predict the training majority class.
- CA, classification accuracy: a tree trained on the released (generalised, noisy) data and tested on the test
  data generalised by the same cut (`Release.apply_to`). Released groups carry counts: they are used as sample
  weights, which trains the same tree as repeating each group `count` times, at a fraction of the cost.

The tree is scikit-learn's CART with criterion="entropy". C4.5 prunes; an unpruned tree over-fits Adult by about
4 points, so leaves must hold at least MIN_LEAF_FRACTION of the training weight (100 of 30,162 records, the
setting with which the shared reference reproduces the paper's BA of 85.3 %). Numeric features are used as
numbers, all others one-hot. scikit-learn is imported inside the functions: it takes seconds to import.
"""

from __future__ import annotations

from typing import Iterator, Sequence

import numpy as np
import pandas as pd

from ppdp_gui.engine.errors import ParameterError

MIN_LEAF_FRACTION = 100 / 30_162
TRAIN_FRACTION = 2 / 3


def split_indices(n: int, *, train_fraction: float = TRAIN_FRACTION,
                  seed: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    if not 0 < train_fraction < 1:
        raise ParameterError(f"the training share must be between 0 and 1, got {train_fraction}")
    perm = np.random.default_rng(seed).permutation(n)  # not DP randomness: only which rows are held out
    cut = int(round(n * train_fraction))
    if cut == 0 or cut == n:
        raise ParameterError(f"{n} rows are too few to split {train_fraction:.0%} / {1 - train_fraction:.0%}")
    return np.sort(perm[:cut]), np.sort(perm[cut:])


def repeated_splits(n: int, runs: int = 10, *, train_fraction: float = TRAIN_FRACTION,
                    seed: int = 0) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """`runs` independent random splits (the paper averages 10), each reproducible from `seed`."""
    for run in range(runs):
        yield split_indices(n, train_fraction=train_fraction, seed=seed * 1000 + run)


def _is_numeric(series: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(series.dtype) and not isinstance(series.dtype, pd.CategoricalDtype)


def encode_features(train: pd.DataFrame, test: pd.DataFrame,
                    features: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Feature matrices for both parts: numbers as they are, every other column one-hot over the training
    categories (a test value never seen in training gets all zeros)."""
    blocks_train, blocks_test = [], []
    for col in features:
        a, b = train[col], test[col]
        if _is_numeric(a) and _is_numeric(b):
            blocks_train.append(a.to_numpy(dtype=np.float32)[:, None])
            blocks_test.append(b.to_numpy(dtype=np.float32)[:, None])
            continue
        if (isinstance(a.dtype, pd.CategoricalDtype) and isinstance(b.dtype, pd.CategoricalDtype)
                and a.cat.categories.equals(b.cat.categories)):  # e.g. both generalised by one cut: fast path
            n_cats, codes_ab = len(a.cat.categories), (a.cat.codes.to_numpy(), b.cat.codes.to_numpy())
        else:
            cats = pd.Index(pd.unique(a.astype(str)))
            n_cats = len(cats)
            codes_ab = tuple(cats.get_indexer(v.astype(str)) for v in (a, b))
        eye = np.vstack([np.eye(n_cats, dtype=np.float32), np.zeros((1, n_cats), dtype=np.float32)])
        blocks_train.append(eye[codes_ab[0]])  # code -1 (unseen in training) picks the zero row
        blocks_test.append(eye[codes_ab[1]])
    if not blocks_train:
        return np.zeros((len(train), 0), np.float32), np.zeros((len(test), 0), np.float32)
    return np.hstack(blocks_train), np.hstack(blocks_test)


def _fit_score(train: pd.DataFrame, test: pd.DataFrame, class_column: str, features: Sequence[str],
               weights: np.ndarray | None, min_leaf_fraction: float, random_state: int) -> float:
    from sklearn.tree import DecisionTreeClassifier  # slow import: only when a figure is asked for

    if len(test) == 0:
        raise ParameterError("the test set is empty")
    x_train, x_test = encode_features(train, test, features)
    y_train = train[class_column].astype(str).to_numpy()
    y_test = test[class_column].astype(str).to_numpy()
    keep = np.ones(len(train), dtype=bool) if weights is None else weights > 0
    if not keep.any():
        return lower_bound_from_labels(y_train, y_test, weights)
    tree = DecisionTreeClassifier(criterion="entropy", min_weight_fraction_leaf=min_leaf_fraction,
                                  random_state=random_state)
    tree.fit(x_train[keep], y_train[keep], sample_weight=None if weights is None else weights[keep])
    return float((tree.predict(x_test) == y_test).mean())


def lower_bound_from_labels(y_train, y_test, weights=None) -> float:
    labels, inverse = np.unique(np.asarray(y_train, dtype=str), return_inverse=True)
    if labels.size == 0:
        return 0.0
    totals = np.bincount(inverse, weights=weights, minlength=labels.size)
    return float((np.asarray(y_test, dtype=str) == labels[int(np.argmax(totals))]).mean())


def baseline_accuracy(train: pd.DataFrame, test: pd.DataFrame, class_column: str, *,
                      features: Sequence[str] | None = None, min_leaf_fraction: float = MIN_LEAF_FRACTION,
                      random_state: int = 0) -> float:
    """BA in [0, 1]: tree on the raw training records (all columns but the class unless `features`)."""
    features = list(features) if features is not None else [c for c in train.columns if c != class_column]
    return _fit_score(train, test, class_column, features, None, min_leaf_fraction, random_state)


def lower_bound_accuracy(train: pd.DataFrame, test: pd.DataFrame, class_column: str) -> float:
    """LA in [0, 1]: share of test records in the training majority class."""
    return lower_bound_from_labels(train[class_column].astype(str), test[class_column].astype(str))


def classification_accuracy(released: pd.DataFrame, test_generalised: pd.DataFrame, class_column: str, *,
                            features: Sequence[str] | None = None, weight_column: str | None = None,
                            min_leaf_fraction: float = MIN_LEAF_FRACTION, random_state: int = 0) -> float:
    """CA in [0, 1]: tree trained on released rows (weighted by `weight_column`, e.g. noisy counts; or on
    released records), tested on the test set generalised with the release's cut."""
    skip = {class_column, weight_column}
    features = list(features) if features is not None else [c for c in released.columns if c not in skip]
    weights = None
    if weight_column is not None:
        weights = released[weight_column].to_numpy(dtype=np.float64)
        if (weights < 0).any():
            raise ParameterError(f"column {weight_column!r} has negative counts")
    return _fit_score(released, test_generalised, class_column, features, weights, min_leaf_fraction,
                      random_state)
