"""Weighted F-measure of classifiers trained on a generalised release and tested on original rows.

Learning from generalised values follows the idea of LeFevre et al. (Workload-aware anonymization, KDD 2006) as
used in seed 002: each published QI cell becomes its bounds (lo, hi) in loss units, an original test value the
degenerate interval (v, v). Classifiers: a decision tree (entropy, like C4.5/J48) and 5-nearest neighbours on
features scaled by each QI's range. scikit-learn is imported inside the functions (its import is slow).
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def weighted_f_measure(X_train, y_train, X_test, y_test, model: str = "tree") -> float:
    """Weighted F1 (each class's F1 weighted by its share of the test rows) of `model` ("tree" or "knn")."""
    from sklearn.metrics import f1_score

    if model == "tree":
        from sklearn.tree import DecisionTreeClassifier
        clf = DecisionTreeClassifier(criterion="entropy", min_samples_leaf=2, random_state=0)
    elif model == "knn":
        from sklearn.neighbors import KNeighborsClassifier
        clf = KNeighborsClassifier(n_neighbors=5)
    else:
        raise ValueError(f"unknown model {model!r}")
    clf.fit(X_train, np.asarray(y_train).astype(str))
    pred = clf.predict(X_test)
    return float(f1_score(np.asarray(y_test).astype(str), pred, average="weighted", zero_division=0))


def release_features(table: pd.DataFrame, intervals: dict, domains: dict) -> np.ndarray:
    """Rows x (2 per QI): published bounds scaled to [0, 1] by the QI's range."""
    cols = []
    for q, bounds in intervals.items():
        lo0, hi0 = domains[q]
        span = (hi0 - lo0) or 1.0
        labels = table[q].astype(str)
        cols.append((labels.map(lambda s, b=bounds: b[s][0]).to_numpy(float) - lo0) / span)
        cols.append((labels.map(lambda s, b=bounds: b[s][1]).to_numpy(float) - lo0) / span)
    return np.column_stack(cols)


def original_features(values: dict[str, np.ndarray], domains: dict) -> np.ndarray:
    """Original rows (values in loss units, NaN = unknown -> whole range) as degenerate intervals."""
    cols = []
    for q, v in values.items():
        lo0, hi0 = domains[q]
        span = (hi0 - lo0) or 1.0
        v = np.asarray(v, dtype=float)
        cols.append((np.where(np.isnan(v), lo0, v) - lo0) / span)
        cols.append((np.where(np.isnan(v), hi0, v) - lo0) / span)
    return np.column_stack(cols)


def release_f_measures(release, train, test) -> dict[str, float]:
    """F-measure % of a tree and 5-NN trained on `release` (QIs only) and tested on the original `test` rows."""
    from ppdp_gui.engine.data.qi_coding import code_quasi_identifier

    meta = release.record
    cls = train.class_column
    intervals, domains = meta["intervals"], meta["domains"]
    grid = float(release.params.get("grid_width", 0.0) or 0.0)
    X_train = release_features(release.table, intervals, domains)
    test_values = {q: code_quasi_identifier(train, q, grid).raw_bounds(test.frame[q]) for q in intervals}
    X_test = original_features(test_values, domains)
    y_train, y_test = release.table[cls], test.frame[cls]
    return {"F-measure tree %": 100 * weighted_f_measure(X_train, y_train, X_test, y_test, "tree"),
            "F-measure 5-NN %": 100 * weighted_f_measure(X_train, y_train, X_test, y_test, "knn")}
