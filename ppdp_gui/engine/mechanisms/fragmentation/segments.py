"""Segments for fragmentation-based l-diversity (seed 002, §5, step 2): a top-down, class-oriented clustering.

The paper asks for a top-down clustering of the records, oriented to the classification workload, that stops
dividing a segment when a division would leave a part that is not k-anonymous or not l-diverse. We split a
segment at the median of the feature whose split gains the most information about the class (a decision-tree
step), and stop as soon as that best split is not allowable: a class-separating split quickly produces a part
with too few class values, so segments stay large, which is what leaves room for the per-fragment anonymisation.
Each segment's diversity level l_s is its number of distinct class values; every equivalence class a chunk
(segment x fragment) is cut into must hold all of them, which is what makes joined chunks l-diverse (Thm 5.1).
"""

from __future__ import annotations

import numpy as np


def _entropy(counts: np.ndarray) -> np.ndarray:
    """Entropy (nats) of each row of a counts matrix."""
    total = counts.sum(axis=-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(total > 0, counts / np.maximum(total, 1), 0.0)
        return -(np.where(p > 0, p * np.log(p), 0.0)).sum(axis=-1)


def best_median_split(X: np.ndarray, y: np.ndarray, n_classes: int) -> tuple[int, float, np.ndarray] | None:
    """(feature, threshold, left mask) of the median split with the highest information gain, or None."""
    med = np.median(X, axis=0)
    left = X <= med  # n x d
    ok = left.any(axis=0) & (~left).any(axis=0)
    if not ok.any():
        return None
    onehot = np.eye(n_classes, dtype=np.int64)[y]
    lc = left.T.astype(np.int64) @ onehot  # d x C class counts on the left
    total = onehot.sum(axis=0)
    rc = total[None, :] - lc
    n = len(y)
    nl = lc.sum(axis=1)
    gain = _entropy(total) - (nl * _entropy(lc) + (n - nl) * _entropy(rc)) / n
    gain[~ok] = -np.inf
    j = int(np.argmax(gain))
    return j, float(med[j]), left[:, j]


def segment(X: np.ndarray, y: np.ndarray, k: int, l: int, *, max_segments: int | None = None) -> np.ndarray:
    """Segment id per row. Each segment has ≥ k rows and ≥ l distinct class values (y: codes 0..C-1)."""
    n_classes = int(y.max()) + 1 if len(y) else 1
    out = np.zeros(len(y), dtype=np.int64)
    todo = [np.arange(len(y))]
    done: list[np.ndarray] = []
    while todo:
        rows = todo.pop()
        split = best_median_split(X[rows], y[rows], n_classes)
        if split is None or (max_segments is not None and len(done) + len(todo) + 2 > max_segments):
            done.append(rows)
            continue
        _, _, left = split
        parts = (rows[left], rows[~left])
        if all(len(p) >= k and len(np.unique(y[p])) >= l for p in parts):
            todo.extend(parts)
        else:
            done.append(rows)
    for s, rows in enumerate(sorted(done, key=lambda r: r[0])):
        out[rows] = s
    return out
