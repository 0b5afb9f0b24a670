"""DP-LDA (Jiang et al. 2013, Section 3.2): noisy class statistics, then synthetic records that match them.

Statistics (the only step that reads the records; ε-DP for one record added or removed): for every public class
c the sum Σ_{x∈c} x and the count n_c, and the pooled upper triangle of Σxxᵀ (LDA's shared covariance), each
entry with discrete Laplace noise of scale Δ/ε on the public grid, Δ = `lda_sensitivity` (one record moves its
class's sum by ‖x‖₁ ≤ p1 + p2, its count by 1 and Σxxᵀ by at most (p1 + p2)(p1 + p2 + 1)/2). The paper divides by
the true class sizes; here the noisy counts take their place, so no exact size is used anywhere.

Sampling (post-processing: it reads only the noisy statistics): the paper's greedy procedure. Records are drawn
one at a time; the m-th record of class c is the x that minimises, with the running sums S_c and R of the records
drawn so far,

    ‖m_c·μ̃_c − S_c − x‖₁ + Σ_{i≤j} |m·Q̃_ij − R_ij − x_i x_j|        (μ̃_c = noisy class mean, Q̃ = noisy E[xxᵀ])

feature by feature: the categorical attributes first (each of its K dummies tried, O(K·P)), then the numbers. For
a number z every term has the form |a·z − b|: an undecided feature's value is replaced by its noisy class mean,
and z² by z times its noisy mean (the paper's linearisation). A sum of such terms is minimised at a weighted
median of the break points b/a with weights |a| — the same point the paper finds by comparing the objective at
every break point, found here by one sort — then clamped to [0, 1].

Vectorised: the N records are drawn by B independent streams at once, each stream running the paper's greedy on
the same noisy targets for about N/B records (targets grow with each stream's own record count, so the streams'
union matches the statistics as one stream would, up to B times one record's rounding). Each stream's classes come
in a random order (the paper leaves the choice of class open), so the streams do not repeat one another.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ppdp_gui.engine.mechanisms.dp_pca import gridnoise
from ppdp_gui.engine.mechanisms.dp_pca.encoding import Encoding
from ppdp_gui.engine.mechanisms.dp_pca.sensitivity import grid_exponent

# Passes over the features per record: the paper's one. A second pass (each feature re-decided with all others
# known) lowered the second-moment gap but left classification accuracy where it was, at twice the time.
SWEEPS = 1
# About this many records per stream. Measured on Adult without noise (docs/reproduction/dp_pca_lda.md): with
# 256 per stream the class means of the synthetic records were off by up to 0.04, with 1,024 by 0.02 — as one
# single stream of 5,000 — at a third of the single stream's time per record.
RECORDS_PER_STREAM = 1024
MAX_STREAMS = 512
# Sequential steps × features decided per record: wide tables (Musk's 166 numbers) get more streams, so fewer
# records each, to bound the time; their statistics are then matched more coarsely.
MAX_DECISIONS = 20_000


@dataclass(frozen=True)
class NoisyClassStats:
    """The released statistics: noisy per-class sums and counts, the pooled noisy Σxxᵀ, and their grid."""

    sums: np.ndarray  # (K, P) noisy class sums, data units
    counts: np.ndarray  # (K,) noisy class counts (integers)
    second: np.ndarray  # (P, P) noisy pooled Σxxᵀ, symmetric, data units
    grid_exponent: int
    scale: Fraction

    def targets(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(class means μ̃_c, per-record second moment Q̃, class weights), all post-processed into the box the
        true values live in: means and Q̃ in [0, 1], counts at least 0 (a class with count ≤ 0 gets no records)."""
        counts = np.maximum(self.counts.astype(np.float64), 0.0)
        mu = np.clip(self.sums / np.maximum(counts, 1.0)[:, None], 0.0, 1.0)
        q = np.clip(self.second / max(counts.sum(), 1.0), 0.0, 1.0)
        return mu, q, counts


def noisy_class_stats(rng, x: np.ndarray, y: np.ndarray, k: int, scale: Fraction) -> NoisyClassStats:
    """Class sums, class counts and pooled upper Σxxᵀ of X on the public grid, each entry plus discrete Laplace
    noise of `scale` data units (counts: whole records)."""
    p = x.shape[1]
    j = grid_exponent(scale, power=2)
    steps = gridnoise.on_grid(x, j)
    _, s2 = gridnoise.exact_sums(steps)
    onehot = np.zeros((len(y), k), dtype=np.float64)
    onehot[np.arange(len(y)), y] = 1.0
    with gridnoise.one_blas_thread(onehot.size * p):
        sums = onehot.T @ steps  # integers below 2^53: exact
    counts = np.bincount(y, minlength=k).astype(np.int64)
    iu = gridnoise.upper_indices(p)
    noisy_sums = gridnoise.grid_noise(rng, sums.astype(np.int64), scale, j, power=1)
    noisy_counts = gridnoise.grid_noise(rng, counts, scale, 0, power=1)
    noisy_second = gridnoise.grid_noise(rng, s2[iu], scale, j, power=2)
    return NoisyClassStats(noisy_sums.astype(np.float64) * 2.0 ** -j, noisy_counts,
                           gridnoise.symmetric_from_upper(noisy_second.astype(np.float64) * 4.0 ** -j, p), j,
                           Fraction(scale))


def allocate(total: int, weights: np.ndarray) -> np.ndarray:
    """Non-negative integers proportional to `weights` summing to `total` (largest remainder)."""
    w = np.maximum(np.asarray(weights, dtype=np.float64), 0.0)
    if w.sum() <= 0:
        w = np.ones_like(w)
    exact = w / w.sum() * total
    out = np.floor(exact).astype(np.int64)
    short = int(total - out.sum())
    if short > 0:
        out[np.argsort(-(exact - out), kind="stable")[:short]] += 1
    return out


def class_sequences(rng, per_class: np.ndarray, streams: int) -> np.ndarray:
    """(streams, T) class index of every stream's t-th record (−1: the stream is done), in a random order."""
    labels = np.repeat(np.arange(per_class.size), per_class)
    labels = labels[np.asarray(rng.permutation(labels.size))]
    t = -(-labels.size // streams)
    out = np.full(streams * t, -1, dtype=np.int64)
    out[:labels.size] = labels
    return out.reshape(t, streams).T  # record i goes to stream i % streams: lengths differ by at most one


def weighted_median(points: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Row-wise minimiser of Σ_i w_i·|z − p_i| (the smallest point where the cumulative weight reaches half)."""
    order = np.argsort(points, axis=1)
    rows = np.arange(len(points))[:, None]
    cum = np.cumsum(weights[rows, order], axis=1)
    idx = np.argmax(cum >= cum[:, -1:] / 2.0, axis=1)
    return points[rows[:, 0], order[rows[:, 0], idx]]


def _best_category(res, diag, r, v, blk, b_idx) -> np.ndarray:
    """One-hot rows for the categorical block `blk`: the dummy whose choice lowers the objective most. The block's
    own entries of `v` are zero here, so its within-block products (always 0) add nothing to the cross terms."""
    s, e = blk.start, blk.stop
    rows = res[:, s:e, :]  # (B, K_blk, P)
    cross = (np.abs(rows - v[:, None, :]) - np.abs(rows)).sum(axis=2)
    d = diag[:, s:e]
    cost = cross + (np.abs(d - 1.0) - np.abs(d)) + (np.abs(r[:, s:e] - 1.0) - np.abs(r[:, s:e]))
    out = np.zeros((len(b_idx), e - s))
    out[b_idx, np.argmin(cost, axis=1)] = 1.0
    return out


def _best_number(res, r, v, target_mean, f, pts, w) -> np.ndarray:
    """The value of number `f` minimising its terms, each |a·z − b|: a weighted median of b/a, clamped. `pts` and
    `w` are (B, P + 1) work arrays."""
    p = v.shape[1]
    a = w[:, :p]
    a[:] = v
    a[:, f] = target_mean[:, f]  # z² linearised as z · (its noisy mean)
    positive = a > 0
    np.divide(res[:, f, :], a, out=pts[:, :p], where=positive)
    pts[:, :p][~positive] = 0.0
    pts[:, p] = r[:, f]
    w[:, p] = 1.0
    return np.clip(weighted_median(pts, w), 0.0, 1.0)


def greedy_sample(stats: NoisyClassStats, enc: Encoding, n_records: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """(X (N × P) in [0, 1], class index (N,)) drawn by the greedy procedure (module docstring)."""
    gen = greedy_steps(stats, enc, n_records, rng)
    while True:
        try:
            next(gen)
        except StopIteration as stop:
            return stop.value


def stream_count(n_records: int, decisions_per_record: int) -> int:
    """Streams: about RECORDS_PER_STREAM records each, and more for wide tables, so that the sequential steps
    times the features decided per record stay below MAX_DECISIONS."""
    by_size = -(-n_records // RECORDS_PER_STREAM)
    by_width = -(-n_records * max(decisions_per_record, 1) // MAX_DECISIONS)
    return int(min(MAX_STREAMS, max(1, by_size, by_width), max(n_records, 1)))


def greedy_steps(stats: NoisyClassStats, enc: Encoding, n_records: int, rng):
    """Generator form of `greedy_sample`: yields the fraction done every few steps (closing it stops the
    sampling), returns (X, class index)."""
    mu, q, counts = stats.targets()
    k, p = mu.shape
    cats = enc.categorical_blocks()
    numeric = enc.numeric_index()
    streams = stream_count(n_records, len(cats) + len(numeric))
    seq = class_sequences(rng, allocate(n_records, counts), streams)
    b_idx = np.arange(streams)
    sums = np.zeros((streams, k, p))
    drawn = np.zeros((streams, k))
    res = np.zeros((streams, p, p))  # residual of Σxxᵀ: (records so far)·Q̃ − Σ xxᵀ of the records so far
    out_x = np.zeros((seq.shape[1], streams, p))
    pts, w = np.empty((streams, p + 1)), np.empty((streams, p + 1))
    steps = seq.shape[1]
    for t in range(steps):
        cls = seq[:, t]
        live = cls >= 0
        c = np.where(live, cls, 0)
        drawn[b_idx, c] += live
        res += q[None] * live[:, None, None]
        target_mean = mu[c]  # (B, P)
        r = drawn[b_idx, c][:, None] * target_mean - sums[b_idx, c]
        diag = np.diagonal(res, axis1=1, axis2=2)
        v = target_mean.copy()  # undecided features: their noisy class mean
        for _sweep in range(SWEEPS):
            for blk in cats:
                v[:, blk.start:blk.stop] = 0.0
                v[:, blk.start:blk.stop] = _best_category(res, diag, r, v, blk, b_idx)
            for f in numeric:
                v[:, f] = _best_number(res, r, v, target_mean, f, pts, w)
        v[~live] = 0.0
        sums[b_idx, c] += v
        res -= v[:, :, None] * v[:, None, :]
        out_x[t] = v
        if t % 16 == 0:
            yield (t + 1) / steps
    flat_x = out_x.transpose(1, 0, 2).reshape(-1, p)
    flat_c = seq.reshape(-1)
    keep = flat_c >= 0
    return flat_x[keep], flat_c[keep]


__all__ = ["NoisyClassStats", "noisy_class_stats", "greedy_sample", "greedy_steps", "stream_count", "weighted_median", "allocate",
           "class_sequences"]
