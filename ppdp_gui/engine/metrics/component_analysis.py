"""Utility figures of seed 003 (Jiang et al. 2013, Section 4): reconstruction error, classification, information.

- Reconstruction (Figure 2): the released table, re-encoded to [0, 1]^P (numbers scaled by their public bounds,
  categories one-hot), against the original encoding, row by row: Frobenius norm ‖X̃ − X‖_F and the mean squared
  error per entry; also the share of categorical cells that kept their value.
- Classification (Figure 3): an LDA classifier and a decision tree (the project's C4.5 stand-in, see
  classification.py) trained on the released records and tested on held-out original records: accuracy and the
  area under the ROC curve (one-vs-rest, macro-averaged, for more than two classes). BA: the same classifiers on
  the original training records; LA: always the majority class.
- Information (Figure 4): entropy (bits) of each released column's distribution, averaged over the columns, and
  the KL divergence D(P‖Q) of the released distribution P from the original Q, averaged likewise. Numbers are
  counted in 10 equal bins of their public bounds, categories and generalised labels as they are; both
  distributions get half a record per cell (so D stays finite when a cell is empty on one side). A generalised
  release (DiffGen) is read over the original cells by spreading each generalised value evenly over the public
  values it covers (`spread_counts`); its entropy is also given over its own labels, as released.

scikit-learn is imported inside the functions: it takes seconds to import.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from ppdp_gui.engine.metrics.classification import MIN_LEAF_FRACTION, encode_features

BINS = 10
PSEUDO_COUNT = 0.5


# ---- reconstruction ------------------------------------------------------------------------------------------------
def reconstruction_error(released: np.ndarray, original: np.ndarray,
                         categorical: Sequence[tuple[int, int]] = ()) -> dict[str, float]:
    """{"F-norm", "MSE", "categories kept %"} of two aligned encoded matrices."""
    released, original = np.asarray(released, dtype=np.float64), np.asarray(original, dtype=np.float64)
    if released.shape != original.shape:
        raise ValueError(f"shapes differ: {released.shape} vs {original.shape}")
    diff = released - original
    sq = float(np.einsum("ij,ij->", diff, diff))
    out = {"F-norm": float(np.sqrt(sq)), "MSE": sq / diff.size if diff.size else 0.0}
    if categorical:
        kept = [np.argmax(released[:, s:e], axis=1) == np.argmax(original[:, s:e], axis=1) for s, e in categorical]
        out["categories kept %"] = 100.0 * float(np.mean(kept))
    return out


# ---- information ---------------------------------------------------------------------------------------------------
def vocabulary(enc, bins: int = BINS) -> dict[str, tuple]:
    """Cells of each encoded column: ("bins", low, high, bins) for numbers, ("labels", labels) for categories."""
    return {b.column: ("bins", b.low, b.high, bins) if b.kind == "numeric" else ("labels", tuple(b.labels))
            for b in enc.blocks}


def cell_index(series: pd.Series, cells: tuple) -> tuple[np.ndarray, np.ndarray]:
    """(cell of every value, mask of the values that fall in a cell); a label unknown here falls in none."""
    if cells[0] == "bins":
        _, lo, hi, nb = cells
        x = pd.to_numeric(series, errors="coerce").to_numpy(dtype=np.float64)
        width = (hi - lo) / nb if hi > lo else 1.0
        idx = np.clip(np.floor((x - lo) / width), 0, nb - 1)
        ok = np.isfinite(idx)
        return np.where(ok, idx, 0).astype(np.int64), ok
    codes = pd.Categorical(series.astype(str), categories=list(cells[1])).codes.astype(np.int64)
    return codes, codes >= 0


def n_cells(cells: tuple) -> int:
    return int(cells[3]) if cells[0] == "bins" else len(cells[1])


def cell_counts(series: pd.Series, cells: tuple, weights: np.ndarray | None = None) -> np.ndarray:
    """Weighted count of every cell; values outside the cells (a generalised label unknown here) are dropped."""
    idx, ok = cell_index(series, cells)
    w = None if weights is None else np.asarray(weights, dtype=np.float64)[ok]
    return np.bincount(idx[ok], weights=w, minlength=n_cells(cells)).astype(np.float64)


def spread_counts(label_weights: np.ndarray, point_labels: np.ndarray, point_cells: np.ndarray,
                  size: int) -> np.ndarray:
    """Counts over the original cells of a generalised release: each generalised label's weight spread evenly over
    the points of the public domain it covers (`point_labels[i]` is the label covering point i, `point_cells[i]`
    its cell) — the usual way to read a generalised value as a distribution over the original values."""
    share = np.zeros((len(label_weights), size))
    np.add.at(share, (np.asarray(point_labels), np.asarray(point_cells)), 1.0)
    covered = share.sum(axis=1, keepdims=True)
    share = np.divide(share, covered, out=np.zeros_like(share), where=covered > 0)
    return np.asarray(label_weights, dtype=np.float64) @ share


def entropy_bits(counts: np.ndarray) -> float:
    p = np.asarray(counts, dtype=np.float64)
    total = p.sum()
    if total <= 0:
        return 0.0
    p = p[p > 0] / total
    return float(-(p * np.log2(p)).sum())


def kl_bits(p_counts: np.ndarray, q_counts: np.ndarray, pseudo: float = PSEUDO_COUNT) -> float:
    """D(P‖Q) in bits, both smoothed with `pseudo` records per cell."""
    p = np.asarray(p_counts, dtype=np.float64) + pseudo
    q = np.asarray(q_counts, dtype=np.float64) + pseudo
    p, q = p / p.sum(), q / q.sum()
    return float((p * np.log2(p / q)).sum())


def mean_entropy(frame: pd.DataFrame, cells: Mapping[str, tuple], weights=None) -> float:
    return float(np.mean([entropy_bits(cell_counts(frame[c], v, weights)) for c, v in cells.items()]))


def mean_kl(released: pd.DataFrame, original: pd.DataFrame, cells: Mapping[str, tuple], weights=None) -> float:
    """Average over the columns of D(released ‖ original); `original` must already be in the released
    vocabulary (for a generalised release: the original records generalised by the same cut)."""
    return float(np.mean([kl_bits(cell_counts(released[c], v, weights), cell_counts(original[c], v))
                          for c, v in cells.items()]))


# ---- classification ------------------------------------------------------------------------------------------------
def _auc(y_test: np.ndarray, proba: np.ndarray, classes: np.ndarray) -> float:
    from sklearn.metrics import roc_auc_score

    present = np.unique(y_test)
    if present.size < 2:
        return float("nan")
    if classes.size == 2:
        return float(roc_auc_score(y_test == classes[1], proba[:, 1]))
    full = np.zeros((len(y_test), present.size))
    for i, c in enumerate(present):
        hit = np.flatnonzero(classes == c)
        if hit.size:
            full[:, i] = proba[:, hit[0]]
    return float(roc_auc_score(y_test, full, labels=present, multi_class="ovr"))


def _class_means(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Each row's class mean (rows of `x` grouped by the labels `y`)."""
    _, codes = np.unique(y, return_inverse=True)
    sums = np.zeros((codes.max() + 1 if codes.size else 0, x.shape[1]))
    np.add.at(sums, codes, x)
    return (sums / np.bincount(codes)[:, None])[codes]


def classifier_scores(train: pd.DataFrame, test: pd.DataFrame, class_column: str, features: Sequence[str],
                      weights: np.ndarray | None = None, random_state: int = 0) -> dict[str, float]:
    """Accuracy (%) and AUC of an LDA classifier and a decision tree trained on `train` (rows weighted by
    `weights`, e.g. noisy group counts) and tested on `test`."""
    import warnings

    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    from sklearn.tree import DecisionTreeClassifier

    x_train, x_test = encode_features(train, test, list(features))
    y_train = train[class_column].astype(str).to_numpy()
    y_test = test[class_column].astype(str).to_numpy()
    w = np.ones(len(train)) if weights is None else np.asarray(weights, dtype=np.float64)
    keep = w > 0
    x_train, y_train, w = x_train[keep], y_train[keep], w[keep]
    out = {}
    if np.unique(y_train).size < 2:  # nothing to learn: the one class seen is predicted
        only = y_train[0] if len(y_train) else ""
        acc = 100.0 * float((y_test == only).mean())
        return {"ACA LDA %": acc, "AUC LDA": 0.5, "ACA tree %": acc, "AUC tree": 0.5}
    reps = np.rint(w).astype(np.int64) if weights is not None else None
    lda_x, lda_y = (x_train, y_train) if reps is None else (np.repeat(x_train, reps, axis=0),
                                                            np.repeat(y_train, reps))
    centred = lda_x - _class_means(lda_x, lda_y)
    if not centred.size or not np.any(centred):
        # every class is one point (a tiny synthetic table): no spread within the classes, which LDA's solver
        # divides by (scikit-learn fails with an IndexError); there is no LDA figure to give
        out["ACA LDA %"], out["AUC LDA"] = float("nan"), float("nan")
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # dummies are collinear: the SVD solver copes and says so
            model = LinearDiscriminantAnalysis(solver="svd").fit(lda_x, lda_y)
            out["ACA LDA %"] = 100.0 * float((model.predict(x_test) == y_test).mean())
            out["AUC LDA"] = _auc(y_test, model.predict_proba(x_test), model.classes_)
    tree = DecisionTreeClassifier(criterion="entropy", min_weight_fraction_leaf=MIN_LEAF_FRACTION,
                                  random_state=random_state)
    tree.fit(x_train, y_train, sample_weight=w)
    out["ACA tree %"] = 100.0 * float((tree.predict(x_test) == y_test).mean())
    out["AUC tree"] = _auc(y_test, tree.predict_proba(x_test), tree.classes_)
    return out


def lda_release_measures(released: pd.DataFrame, train: pd.DataFrame, test: pd.DataFrame, class_column: str,
                         enc) -> dict[str, float]:
    """Everything Figures 3–4 show for a synthetic release in the original columns."""
    features = list(enc.columns)
    cells = {**vocabulary(enc), class_column: ("labels", tuple(pd.unique(train[class_column].astype(str))))}
    out = classifier_scores(released, test, class_column, features)
    out["entropy (bits)"] = mean_entropy(released, cells)
    out["KL divergence (bits)"] = mean_kl(released, train, cells)
    return out


def lda_reference_measures(train: pd.DataFrame, test: pd.DataFrame, class_column: str, enc) -> dict[str, float]:
    """BA per classifier, LA, and the original records' own mean entropy (the reference line of Figure 4(a))."""
    features = list(enc.columns)
    base = classifier_scores(train, test, class_column, features)
    majority = train[class_column].astype(str).value_counts().idxmax()
    cells = {**vocabulary(enc), class_column: ("labels", tuple(pd.unique(train[class_column].astype(str))))}
    return {"BA LDA %": base["ACA LDA %"], "BA tree %": base["ACA tree %"],
            "LA %": 100.0 * float((test[class_column].astype(str) == majority).mean()),
            "entropy of the records (bits)": mean_entropy(train, cells)}


__all__ = ["reconstruction_error", "vocabulary", "cell_index", "n_cells", "cell_counts", "spread_counts", "entropy_bits", "kl_bits", "mean_entropy",
           "mean_kl", "classifier_scores", "lda_release_measures", "lda_reference_measures"]
