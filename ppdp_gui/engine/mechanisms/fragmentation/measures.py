"""Utility of a fragmentation release as the paper measures it (Appendix D.I).

Information loss: the normalised interval width (U − L)/(max − min) averaged over rows and over the QIs of all
fragments (the paper's formula; the same as NCP). F-measure: one classifier per fragment, trained on that
fragment's generalised rows (each label as its bounds, LeFevre et al. 2006); a test row gets the class with the
largest sum of the fragments' class probabilities ("weighted majority, weighted by each classifier's score");
weighted F1 over the test rows. With ρ-selectivity a group's ambiguous slots ("*") take its published values in
turn, so every published value gets an equal share, the paper's "equal probability".
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ppdp_gui.engine.metrics.fmeasure import original_features, release_features
from ppdp_gui.engine.metrics.information_loss import ncp_per_qi


def fragment_tables(release) -> dict[str, pd.DataFrame]:
    """Every fragment table of a fragmentation release, by name (the first is `release.table`)."""
    out = {}
    for frag in release.record["fragments"]:
        name = frag["table"]
        out[name] = release.table if frag["where"] == "table" else release.extra_tables[name]
    return out


def resolve_ambiguous(table: pd.DataFrame, qis: list[str], cls: str, marker: str = "*") -> np.ndarray:
    """Class labels (as text) with each group's "*" slots filled round-robin from the group's listed values."""
    labels = table[cls].astype(str).to_numpy().copy()
    amb = labels == marker
    if not amb.any():
        return labels
    group = table.groupby(qis, sort=False, observed=True).ngroup().to_numpy()
    order = np.argsort(group, kind="stable")
    g, lab = group[order], labels[order]
    known = lab != marker
    first = np.searchsorted(g, g, side="left")
    n_known = np.bincount(g, weights=known, minlength=int(g.max()) + 1).astype(np.int64)
    pos = np.arange(len(g)) - first  # listed values come first in each group (ec_level_classes)
    src = first + pos % np.maximum(n_known[g], 1)
    lab = np.where(known, lab, lab[src])
    labels[order] = lab
    return labels


def fragment_classifiers_f_measure(fragments: list[dict], tables: list[pd.DataFrame], cls: str, train, test,
                                   grid_width: float, model: str) -> float:
    """Weighted F1 of the probability-summed vote of one classifier per fragment."""
    from sklearn.metrics import f1_score

    from ppdp_gui.engine.data.qi_coding import code_quasi_identifier

    votes = None
    classes = sorted(set(test.frame[cls].astype(str)) | set(train.frame[cls].astype(str)))
    for meta, table in zip(fragments, tables):
        qis = meta["quasi_identifiers"]
        X_train = release_features(table, {q: meta["intervals"][q] for q in qis}, meta["domains"])
        y_train = resolve_ambiguous(table, qis, cls)
        test_values = {q: code_quasi_identifier(train, q, grid_width).raw_bounds(test.frame[q]) for q in qis}
        X_test = original_features(test_values, meta["domains"])
        clf = _model(model)
        clf.fit(X_train, y_train)
        proba = np.zeros((len(X_test), len(classes)))
        proba[:, [classes.index(c) for c in clf.classes_]] = clf.predict_proba(X_test)
        votes = proba if votes is None else votes + proba
    pred = np.asarray(classes)[np.argmax(votes, axis=1)]
    return float(f1_score(test.frame[cls].astype(str).to_numpy(), pred, average="weighted", zero_division=0))


def _model(model: str):
    if model == "tree":
        from sklearn.tree import DecisionTreeClassifier
        return DecisionTreeClassifier(criterion="entropy", min_samples_leaf=2, random_state=0)
    from sklearn.neighbors import KNeighborsClassifier
    return KNeighborsClassifier(n_neighbors=5)


def information_loss(fragments: list[dict], tables: list[pd.DataFrame]) -> float:
    """Mean normalised interval width over rows x all fragments' QIs (fragments have the same rows)."""
    per = []
    for meta, table in zip(fragments, tables):
        per.extend(ncp_per_qi(table, meta["intervals"], meta["domains"]).values())
    return float(np.mean(per)) if per else 0.0


def fragmentation_measures(release, train, test=None) -> dict[str, float]:
    """Information loss, class distortion, smallest group and (with test data) F-measures of a release."""
    meta = release.record
    frags = meta["fragments"]
    tables = list(fragment_tables(release).values())
    n = len(release.table)
    out = {
        "information loss %": 100.0 * information_loss(frags, tables),
        "class distortion": float(meta["class_distortion"]),
        "class distortion %": 100.0 * meta["class_distortion"] / max(n * len(frags), 1),
        "smallest group": float(min(t.groupby(m["quasi_identifiers"], observed=True).size().min()
                                    for m, t in zip(frags, tables))),
    }
    cls = meta["class_column"]
    if test is not None and test.n_rows and cls in test.frame.columns:
        grid = float(release.params.get("grid_width", 0.0) or 0.0)
        for model, label in (("tree", "F-measure tree %"), ("knn", "F-measure 5-NN %")):
            out[label] = 100.0 * fragment_classifiers_f_measure(frags, tables, cls, train, test, grid, model)
    return out
