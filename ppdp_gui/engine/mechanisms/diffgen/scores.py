"""DiffGen's two utility functions (paper eq. 3 and 4) on class-count matrices, and their sensitivities.

A specialisation v → child(v) is scored from the class counts of its children: an array of shape (..., m, K)
(m children, K classes). Both functions are vectorised over the leading axes, so all split points of a numeric
interval are scored in one call.
"""

from __future__ import annotations

import math

import numpy as np

UTILITIES = ("Max", "InfoGain")


def sensitivity(utility: str, n_classes: int) -> float:
    """Δu: 1 for Max (one record moves one class count of one child by one), log2 |Ω(class)| for InfoGain
    (an entropy difference lies in [0, log2 K], so no change of the data can move it further)."""
    if utility == "Max":
        return 1.0
    if utility == "InfoGain":
        return math.log2(n_classes)
    raise ValueError(f"unknown utility {utility!r}")


def entropy_bits(counts: np.ndarray) -> np.ndarray:
    """Entropy (bits) of the class distribution in the last axis; 0 for an empty row."""
    counts = np.asarray(counts, dtype=np.float64)
    n = counts.sum(axis=-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(n > 0, counts / n, 0.0)
        terms = np.where(p > 0, p * np.log2(np.where(p > 0, p, 1.0)), 0.0)
    return -terms.sum(axis=-1)


def max_score(children: np.ndarray) -> np.ndarray:
    """Max(D, v) = Σ_c max_cls |D_c^cls|: the records a majority vote per child would get right."""
    return np.asarray(children, dtype=np.float64).max(axis=-1).sum(axis=-1)


def info_gain(children: np.ndarray) -> np.ndarray:
    """InfoGain(D, v) = H_v(D) − Σ_c |D_c|/|D_v| · H_c(D), in bits; 0 when D_v is empty."""
    children = np.asarray(children, dtype=np.float64)
    parent = children.sum(axis=-2)
    n = parent.sum(axis=-1)
    child_n = children.sum(axis=-1)
    cond = (child_n * entropy_bits(children)).sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        gain = entropy_bits(parent) - np.where(n > 0, cond / np.where(n > 0, n, 1.0), 0.0)
    return np.maximum(gain, 0.0)  # rounding can give -1e-16 for a useless split


def score(utility: str, children: np.ndarray) -> np.ndarray:
    if utility == "Max":
        return max_score(children)
    if utility == "InfoGain":
        return info_gain(children)
    raise ValueError(f"unknown utility {utility!r}")
