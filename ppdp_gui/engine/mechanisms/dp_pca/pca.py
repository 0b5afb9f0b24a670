"""DP-PCA (Jiang et al. 2013, Section 3.1) on an encoded matrix X ∈ [0, 1]^(n × P), n public (one record replaced).

1. ε/2: noisy Σx and upper triangle of Σxxᵀ, noise of scale 2Δ/ε (Δ = `pca_moment_sensitivity`), on the grid.
2. μ̃ = Σ̃x / n, D̄ = Σ̃xxᵀ / n − μ̃μ̃ᵀ (symmetric by construction); its k leading eigenvectors Ū_k.
3. ε/2: the projection (X − μ̃)·Ū_k, row by row, with noise of scale 2Δ_k/ε (Δ_k = √(k(p1 + 2p2)), Lemma 2); Ū_k
   and μ̃ are already public, so each record moves only its own row.
4. Recovery: X̃ = Ỹ·Ū_kᵀ + μ̃, then the encoding's inverse (numbers clamped and de-scaled, the largest dummy).

Steps 2 and 4 only read noisy values, so the whole is ε-DP (Theorem 2) for neighbours that replace one record; the
number of rows n is published with the table (it has one row per record, in the same order, as the paper says).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ppdp_gui.engine.mechanisms.dp_pca import gridnoise
from ppdp_gui.engine.mechanisms.dp_pca.sensitivity import grid_exponent, projection_sensitivity


@dataclass(frozen=True)
class NoisyMoments:
    """What step 1 released (noisy, hence public): the noisy mean and second moment per record, and their grid."""

    mean: np.ndarray  # (P,)
    second: np.ndarray  # (P, P), symmetric
    grid_exponent: int
    scale: Fraction  # noise scale in data units

    @property
    def covariance(self) -> np.ndarray:
        return self.second - np.outer(self.mean, self.mean)


def noisy_moments(rng, x: np.ndarray, n: int, scale: Fraction) -> NoisyMoments:
    """Step 1–2's inputs: Σx and the upper Σxxᵀ of X rounded to the public grid, plus discrete Laplace noise of
    `scale` data units on every entry, divided by the public n."""
    p = x.shape[1]
    j = grid_exponent(scale, power=2)
    steps = gridnoise.on_grid(x, j)
    s1, s2 = gridnoise.exact_sums(steps)
    iu = gridnoise.upper_indices(p)
    noisy1 = gridnoise.grid_noise(rng, s1, scale, j, power=1)
    noisy2 = gridnoise.grid_noise(rng, s2[iu], scale, j, power=2)
    step1, step2 = 2.0 ** -j, 4.0 ** -j
    mean = noisy1.astype(np.float64) * step1 / n
    second = gridnoise.symmetric_from_upper(noisy2.astype(np.float64) * step2 / n, p)
    return NoisyMoments(mean, second, j, Fraction(scale))


def components(moments: NoisyMoments, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(eigenvalues in decreasing order, the k leading eigenvectors as columns) of the noisy covariance."""
    values, vectors = np.linalg.eigh(moments.covariance)
    order = np.argsort(values)[::-1]
    return values[order], vectors[:, order[:k]]


@dataclass(frozen=True)
class Projection:
    noisy: np.ndarray  # (n, k) noisy projected rows, in data units
    grid_exponent: int
    scale: Fraction
    sensitivity: Fraction


def noisy_projection(rng, x: np.ndarray, mean: np.ndarray, basis: np.ndarray, epsilon_half: Fraction,
                     p1: int, p2: int, sensitivity=projection_sensitivity) -> Projection:
    """Step 3: (X − μ̃)·Ū_k on the public grid plus discrete Laplace noise of scale Δ_k/(ε/2). The grid is chosen
    first (from a provisional Δ_k), then Δ_k is computed for that grid (it includes one grid step per
    coordinate), so both are public."""
    k = basis.shape[1]
    provisional = sensitivity(k, p1, p2, Fraction(0)) / epsilon_half
    j = grid_exponent(provisional, power=1, finest=20)
    delta = sensitivity(k, p1, p2, Fraction(1, 1 << j))
    scale = delta / epsilon_half
    with gridnoise.one_blas_thread(x.size * k):
        y = (x - mean) @ basis
    steps = gridnoise.on_grid(y, j).astype(np.int64)
    noisy = gridnoise.grid_noise(rng, steps, scale, j, power=1).astype(np.float64) * 2.0 ** -j
    return Projection(noisy, j, scale, delta)


def recover(projection: np.ndarray, basis: np.ndarray, mean: np.ndarray) -> np.ndarray:
    """Step 4 before the encoding's inverse: X̃ = Ỹ·Ū_kᵀ + μ̃."""
    with gridnoise.one_blas_thread(projection.size * basis.shape[0]):
        return projection @ basis.T + mean


def energy(eigenvalues: np.ndarray, k: int) -> float:
    """Share of the (noisy) variance carried by the k leading components (Figure 2(a)); negative noisy
    eigenvalues count as 0."""
    pos = np.clip(eigenvalues, 0.0, None)
    total = float(pos.sum())
    return float(pos[:k].sum() / total) if total > 0 else 0.0


__all__ = ["NoisyMoments", "noisy_moments", "components", "Projection", "noisy_projection", "recover", "energy"]
