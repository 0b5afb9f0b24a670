"""FMRMR vertical fragmentation (seed 002, §4.1): split the features into fragments by mutual information.

Each fragment should predict the class well on its own (relevance) while not repeating what its own
members already say (redundancy). The paper defines, for a fragment F, D(F) as the *total* mutual information
between its features and the class and R(F) as the *total* pairwise mutual information between its features
(the formula images are missing from our text copy; we read "total" literally):

    D(F) = Σ_{x∈F} I(x; c)         R(F) = Σ_{x<y∈F} I(x; y)        MRMR(F) = D(F) − R(F)
    FMRMR(𝔉) = Σ_F MRMR(F)

`scoring="mean"` gives Peng, Long & Ding's normalised form instead (D/|F|, 2R/|F|²); on Musk it puts 39 of 40
features in one fragment (adding to a one-feature fragment costs far more redundancy on average), which defeats
the purpose of fragmenting, so "total" is the default.

Seeds: the two features with the highest mutual information go to different fragments. Then, greedily, the
unassigned feature whose FMRMR contribution (MRMR after − before adding it) is highest joins that fragment.
More than two fragments: the binary step is repeated on the largest fragment ("repeating the process").

Mutual information needs discrete values. The paper does not say how it discretised Musk; we follow its MRMR
source (Ding & Peng 2003): three states split at μ − σ/2 and μ + σ/2. Categorical columns use their codes.
All MI values are in nats (natural log), like sklearn.metrics.mutual_info_score.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ppdp_gui.engine.errors import ParameterError


# ---- discretisation -----------------------------------------------------------------------------------------
def discretise_mrmr(values: np.ndarray) -> np.ndarray:
    """Three states (0, 1, 2) at μ ∓ σ/2, as Ding & Peng's MRMR; a constant column is one state."""
    x = np.asarray(values, dtype=np.float64)
    mu, sd = float(np.mean(x)), float(np.std(x))
    return (x >= mu - sd / 2).astype(np.int64) + (x > mu + sd / 2).astype(np.int64)


def discretise_quantile(values: np.ndarray, bins: int = 10) -> np.ndarray:
    """Equal-frequency bins (an alternative for skewed columns); ties stay in one bin."""
    x = np.asarray(values, dtype=np.float64)
    edges = np.unique(np.quantile(x, np.linspace(0, 1, bins + 1)[1:-1]))
    return np.searchsorted(edges, x, side="right").astype(np.int64)


def encode_columns(frame: pd.DataFrame, columns: list[str], numeric: set[str] | None = None,
                   method: str = "mrmr") -> np.ndarray:
    """n x d matrix of small non-negative integer codes, one column per feature, ready for MI."""
    numeric = set(numeric) if numeric is not None else {
        c for c in columns if pd.api.types.is_numeric_dtype(frame[c])}
    out = np.empty((len(frame), len(columns)), dtype=np.int64)
    for j, c in enumerate(columns):
        if c in numeric:
            col = frame[c].to_numpy(dtype=np.float64)
            out[:, j] = discretise_mrmr(col) if method == "mrmr" else discretise_quantile(col)
        else:
            out[:, j] = pd.factorize(frame[c], sort=True)[0]
    return out


def class_codes(series: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """(codes 0..C-1, the distinct values in code order)."""
    codes, uniques = pd.factorize(series, sort=True)
    return codes.astype(np.int64), np.asarray(uniques)


# ---- mutual information -------------------------------------------------------------------------------------
def _entropy_terms(counts: np.ndarray, n: int) -> float:
    p = counts[counts > 0] / n
    return float(-(p * np.log(p)).sum())


def mutual_information(a: np.ndarray, b: np.ndarray) -> float:
    """I(a; b) in nats from two integer code vectors, via one bincount on the joint codes."""
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    n = len(a)
    if n == 0:
        return 0.0
    nb = int(b.max()) + 1
    joint = np.bincount(a * nb + b)
    pa = np.bincount(a)
    pb = np.bincount(b)
    mi = _entropy_terms(pa, n) + _entropy_terms(pb, n) - _entropy_terms(joint, n)
    return max(mi, 0.0)


def mutual_information_matrix(codes: np.ndarray) -> np.ndarray:
    """d x d matrix of pairwise I(x_i; x_j) (diagonal = entropy), all pairs in one one-hot matrix product."""
    n, d = codes.shape
    if d == 0:
        return np.zeros((0, 0))
    sizes = codes.max(axis=0) + 1
    offsets = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    width = int(sizes.sum())
    onehot = np.zeros((n, width), dtype=np.float64)
    onehot[np.arange(n)[:, None], codes + offsets] = 1.0
    joint = onehot.T @ onehot / n  # joint probabilities for every pair of (feature, state) blocks
    marg = np.diag(joint).copy()
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = joint / np.outer(marg, marg)
        terms = np.where(joint > 0, joint * np.log(ratio), 0.0)
    block = np.repeat(np.arange(d), sizes)
    mi = np.zeros((d, d))
    np.add.at(mi, (block[:, None], block[None, :]), terms)
    return np.maximum(mi, 0.0)


def relevance(codes: np.ndarray, y: np.ndarray) -> np.ndarray:
    """I(x_j; c) for every feature column."""
    return np.array([mutual_information(codes[:, j], y) for j in range(codes.shape[1])])


# ---- MRMR scores and the greedy search ----------------------------------------------------------------------
def _score(sum_rel, sum_red_ordered, m, scoring: str):
    """MRMR from the running sums (redundancy summed over ordered pairs x≠y)."""
    if scoring == "mean":
        return sum_rel / m - sum_red_ordered / m ** 2
    return sum_rel - sum_red_ordered / 2


def mrmr(fragment: list[int], rel: np.ndarray, red: np.ndarray, scoring: str = "total") -> float:
    """MRMR(F) = D(F) − R(F), "total" (the paper's words) or "mean" (Peng's normalisation)."""
    if not fragment:
        return 0.0
    idx = np.asarray(fragment)
    sub = red[np.ix_(idx, idx)]
    return float(_score(rel[idx].sum(), sub.sum() - np.trace(sub), len(idx), scoring))


def fmrmr(fragments: list[list[int]], rel: np.ndarray, red: np.ndarray, scoring: str = "total") -> float:
    """FMRMR of a fragmentation: the sum of its fragments' MRMR."""
    return sum(mrmr(f, rel, red, scoring) for f in fragments)


def binary_fragmentation(features: list[int], rel: np.ndarray, red: np.ndarray,
                         scoring: str = "total") -> tuple[list[int], list[int]]:
    """Seeds = the pair with the highest MI; then the best FMRMR contribution joins its fragment, one at a time."""
    features = list(features)
    if len(features) < 2:
        raise ParameterError("fragmentation needs at least two feature columns")
    idx = np.asarray(features)
    sub = red[np.ix_(idx, idx)].copy()
    np.fill_diagonal(sub, -np.inf)
    i, j = np.unravel_index(int(np.argmax(sub)), sub.shape)  # first maximum in row-major order: deterministic
    frags = [[features[i]], [features[j]]]
    sum_rel = [rel[features[i]], rel[features[j]]]
    sum_red = [0.0, 0.0]  # Σ over ordered pairs x≠y inside the fragment
    # link[f][x] = Σ_{y ∈ fragment f} I(x; y), kept up to date for every feature
    link = [red[:, features[i]].copy(), red[:, features[j]].copy()]
    unassigned = [f for t, f in enumerate(features) if t not in (i, j)]
    while unassigned:
        u = np.asarray(unassigned)
        best = None
        for f in (0, 1):
            m = len(frags[f])
            before = _score(sum_rel[f], sum_red[f], m, scoring)
            after = _score(sum_rel[f] + rel[u], sum_red[f] + 2 * link[f][u], m + 1, scoring)
            gain = after - before
            t = int(np.argmax(gain))
            if best is None or gain[t] > best[0]:
                best = (gain[t], f, t)
        _, f, t = best
        x = unassigned.pop(t)
        frags[f].append(x)
        sum_rel[f] += rel[x]
        sum_red[f] += 2 * link[f][x]
        link[f] += red[:, x]
    return frags[0], frags[1]


@dataclass(frozen=True)
class Fragmentation:
    """The result of FMRMR: feature names per fragment, the MI figures it was built from, and its score."""

    fragments: tuple[tuple[str, ...], ...]
    relevance: dict[str, float]
    score: float
    seeds: tuple[str, str]


def fragment_features(frame: pd.DataFrame, features: list[str], class_column: str, n_fragments: int = 2,
                      *, numeric: set[str] | None = None, method: str = "mrmr",
                      scoring: str = "total") -> Fragmentation:
    """FMRMR fragmentation of `features` with respect to `class_column` into `n_fragments` parts."""
    if n_fragments < 2:
        raise ParameterError("number of fragments must be at least 2")
    if len(features) < n_fragments:
        raise ParameterError(f"{len(features)} feature columns cannot make {n_fragments} fragments")
    codes = encode_columns(frame, features, numeric, method)
    y, _ = class_codes(frame[class_column])
    rel = relevance(codes, y)
    red = mutual_information_matrix(codes)
    a, b = binary_fragmentation(list(range(len(features))), rel, red, scoring)
    seeds = (features[a[0]], features[b[0]])
    frags = [a, b]
    while len(frags) < n_fragments:
        frags.sort(key=len, reverse=True)
        if len(frags[0]) < 2:
            raise ParameterError(f"cannot split the features into {n_fragments} fragments")
        frags.extend(binary_fragmentation(frags.pop(0), rel, red, scoring))
    frags.sort(key=lambda f: min(f))
    return Fragmentation(
        fragments=tuple(tuple(features[i] for i in f) for f in frags),
        relevance={features[i]: float(rel[i]) for i in range(len(features))},
        score=fmrmr(frags, rel, red, scoring),
        seeds=seeds,
    )
