"""Noisy marginals, a consistent tree model from them, and records drawn from the model.

Measurement: each clique's table of counts (every cell of its public domain) gets discrete Laplace noise of
scale K/ε_measure (K tables; one record is in one cell of each, so the K tables together have L1 sensitivity K).

Estimation (post-processing of the noisy tables only):
- the first column of the order (the class column, or the tree's root) gets its counts from every table that
  holds it, each summed over its other columns and weighted by 1/(cells summed) (inverse variance);
- each following table (parents…, child) is made non-negative and consistent with the model built so far: every
  row (one combination of the parents) is projected, in least squares, onto the non-negative counts whose sum is
  the model's count of that combination (a Euclidean projection onto a scaled simplex, Duchi et al. 2008).
- a (class, …, child) table is then raked (iterative proportional fitting) so that its (class, child) counts
  match the inverse-variance combination of the measured (class, child) pair table and its own sum — the sum
  over m cells carries m times the noise variance, so the pair table mostly decides the child's counts per
  class, while the rows keep the model's totals of their parents.
The model is then a tree-structured distribution whose marginals agree on every shared column by construction.

Sampling: the first column from its counts, then each child given its parents' drawn cells, with uniform draws
from the NoiseSource (post-processing, no budget).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

SHRINK = 4.0  # a row of the three-column tables keeps T / (T + SHRINK · cells · scale) of its own distribution


@dataclass(frozen=True)
class Clique:
    """A measured table: `parents` (already in the model) then `child`."""

    parents: tuple[str, ...]
    child: str

    @property
    def columns(self) -> tuple[str, ...]:
        return self.parents + (self.child,)


def true_table(codes: dict[str, np.ndarray], sizes: dict[str, int], columns: tuple[str, ...]) -> np.ndarray:
    shape = tuple(sizes[c] for c in columns)
    flat = np.ravel_multi_index(tuple(codes[c] for c in columns), shape) if len(columns) > 1 else codes[columns[0]]
    return np.bincount(flat, minlength=int(np.prod(shape))).reshape(shape).astype(np.int64)


def project_rows(noisy: np.ndarray, totals: np.ndarray) -> np.ndarray:
    """Each row of `noisy` (last axis) projected onto {x ≥ 0, Σx = total} in least squares, vectorised."""
    shape = noisy.shape
    v = noisy.reshape(-1, shape[-1]).astype(float)
    t = np.maximum(np.asarray(totals, dtype=float).reshape(-1), 0.0)
    u = -np.sort(-v, axis=1)
    css = np.cumsum(u, axis=1) - t[:, None]
    k = np.arange(1, v.shape[1] + 1)
    rho = (u - css / k > 0).sum(axis=1)  # ≥ 1 whenever t ≥ 0
    theta = css[np.arange(len(v)), np.maximum(rho, 1) - 1] / np.maximum(rho, 1)
    return np.maximum(v - theta[:, None], 0.0).reshape(shape)


def first_marginal(first: str, cliques: list[Clique], noisy: list[np.ndarray]) -> np.ndarray:
    """Counts of the first column from every table that holds it (inverse-variance weighted), non-negative."""
    acc, weight = 0.0, 0.0
    for clique, table in zip(cliques, noisy):
        if first in clique.columns:
            axis = clique.columns.index(first)
            summed = table.size // table.shape[axis]
            other = tuple(i for i in range(table.ndim) if i != axis)
            acc = acc + np.asarray(table.sum(axis=other), float) / summed
            weight += 1.0 / summed
    est = acc / weight
    return project_rows(est[None, :], np.array([max(est.sum(), 0.0)]))[0]


@dataclass
class TreeModel:
    """The first column's counts and, per clique, the child's conditional distribution given its parents."""

    first: str
    first_counts: np.ndarray
    cliques: list[Clique]
    conditionals: list[np.ndarray]

    @property
    def total(self) -> float:
        return float(self.first_counts.sum())


def normalise(counts: np.ndarray) -> np.ndarray:
    """Rows of counts as distributions (a row with no mass: uniform)."""
    sums = counts.sum(axis=-1, keepdims=True)
    return np.where(sums > 0, counts / np.where(sums > 0, sums, 1), 1.0 / counts.shape[-1])


def marginal_of(table: np.ndarray, columns: tuple[str, ...], keep: tuple[str, ...]) -> np.ndarray:
    """`table` (axes `columns`) summed onto the columns `keep`, in that order."""
    drop = tuple(i for i, c in enumerate(columns) if c not in keep)
    summed = table.sum(axis=drop) if drop else table
    left = [c for c in columns if c in keep]
    return np.transpose(summed, [left.index(c) for c in keep])


def shrunk_conditional(noisy: np.ndarray, fitted: np.ndarray, scale: float,
                       prior: np.ndarray | None = None) -> np.ndarray:
    """P(child | parents), each row pulled towards a less noisy P(child | fewer parents) by how little it holds.

    A row whose count T is small beside the noise it carries (cells · scale) says little: its distribution is
    blended with `prior` (broadcastable to the rows: P(child | class) from its measured pair table, or the
    three-column conditional under a four-column table), or else with the table summed over the last parent,
    with weight T / (T + SHRINK · cells · scale) on its own. Reads only noisy counts and the public scale:
    post-processing."""
    own = normalise(fitted)
    if noisy.ndim < 2:
        return own
    if prior is None:
        pooled = noisy.sum(axis=-2)
        prior = np.expand_dims(normalise(project_rows(pooled, np.maximum(pooled.sum(axis=-1), 0.0))), axis=-2)
    total = fitted.sum(axis=-1, keepdims=True)
    w = total / (total + SHRINK * noisy.shape[-1] * float(scale))
    return w * own + (1 - w) * prior


RAKE_ROUNDS = 5  # rounds of iterative proportional fitting in `rake`


def rake(fitted: np.ndarray, noisy: np.ndarray, pair: np.ndarray, base: np.ndarray, totals: np.ndarray
         ) -> np.ndarray:
    """`fitted` (class, …, child) adjusted so that its (class, child) counts match the better estimate of them:
    the measured pair table and the table's own sum, weighted by the inverse of their noise variances (the sum
    over m cells has m times the variance), made non-negative with the class's counts; iterative proportional
    fitting between that and the rows' totals (post-processing)."""
    axes = tuple(range(1, noisy.ndim - 1))
    m = int(np.prod([noisy.shape[a] for a in axes]))
    own = noisy.sum(axis=axes).astype(float)
    target = (pair * m + own) / (m + 1.0)
    target = project_rows(target, base)
    shape = (target.shape[0],) + (1,) * len(axes) + (target.shape[1],)
    out = fitted.astype(float)
    for _ in range(RAKE_ROUNDS):
        now = out.sum(axis=axes)
        out = out * np.where(now > 0, target / np.where(now > 0, now, 1), 1.0).reshape(shape)
        rows = out.sum(axis=-1, keepdims=True)
        out = out * np.where(rows > 0, np.expand_dims(totals, -1) / np.where(rows > 0, rows, 1), 0.0)
    return out


def estimate(first: str, cliques: list[Clique], noisy: list[np.ndarray], class_column: str | None,
             scale: float = 0.0, pairs: dict[str, np.ndarray] | None = None) -> TreeModel:
    """Fit the tree model clique by clique; `fitted[c]` holds the model's counts over c's clique's columns.

    `pairs`: measured (class, column) tables besides the cliques' (the star under a class tree): they count
    towards the class's counts and are the priors of the larger tables. A four-column table (class, g, p, c)
    is shrunk towards the three-column conditional P(c | class, p) read from its own sum over g (noise of
    √cells(g) · scale per cell), itself shrunk towards P(c | class)."""
    pairs = pairs or {}
    extra = [Clique((class_column,), c) for c in pairs]
    base = first_marginal(first, cliques + extra, noisy + list(pairs.values()))
    fitted_of = {first: (base, (first,))}
    priors = {c: normalise(project_rows(t, base)) for c, t in pairs.items()}
    conditionals = []
    for clique, table in zip(cliques, noisy):
        if clique.parents:
            owner, owner_cols = fitted_of[clique.parents[-1]]
            totals = marginal_of(owner, owner_cols, clique.parents)
        else:
            totals = np.array(base.sum())
        fitted = project_rows(table, totals)
        if clique.parents and clique.parents[0] == class_column and len(clique.parents) >= 2 \
                and clique.child in pairs:  # its (class, child) counts from the pair table too
            fitted = rake(fitted, table, pairs[clique.child], base, totals)
        prior = None
        if len(clique.parents) >= 2 and clique.child in priors:
            prior = np.expand_dims(priors[clique.child], axis=-2)
        if len(clique.parents) == 3:  # (class, g, p, c): towards P(c | class, p) from the sum over g
            noisy3 = table.sum(axis=1)
            fitted3 = project_rows(noisy3, totals.sum(axis=1))
            cond3 = shrunk_conditional(noisy3, fitted3, scale * np.sqrt(table.shape[1]), prior)
            prior = np.expand_dims(cond3, axis=1)
        conditionals.append(shrunk_conditional(table, fitted, scale, prior))
        fitted_of[clique.child] = (fitted, clique.columns)
    return TreeModel(first, base, cliques, conditionals)


def draw_codes(probabilities: np.ndarray, parent_index: np.ndarray, rng) -> np.ndarray:
    """One child cell per record: inverse CDF of its parents' row, with uniform draws (vectorised)."""
    cdf = np.cumsum(probabilities, axis=-1)
    cdf = cdf / np.where(cdf[..., -1:] > 0, cdf[..., -1:], 1.0)
    rows = cdf.reshape(-1, probabilities.shape[-1])[parent_index]
    u = rng.uniform(0.0, 1.0, size=len(parent_index))
    return np.minimum((u[:, None] >= rows).sum(axis=1), probabilities.shape[-1] - 1)


def sample(model: TreeModel, sizes: dict[str, int], n: int, rng) -> dict[str, np.ndarray]:
    """`n` records' cell codes, column by column along the model's order."""
    p = model.first_counts / model.total if model.total > 0 else np.full(len(model.first_counts),
                                                                         1 / len(model.first_counts))
    out = {model.first: draw_codes(p, np.zeros(n, dtype=np.int64), rng)}
    for clique, cond in zip(model.cliques, model.conditionals):
        if clique.parents:
            shape = tuple(sizes[c] for c in clique.parents)
            idx = np.ravel_multi_index(tuple(out[c] for c in clique.parents), shape)
        else:
            idx = np.zeros(n, dtype=np.int64)
        out[clique.child] = draw_codes(cond, idx, rng)
    return out
