"""The paper's two baselines (Section 4): every record perturbed on its own, ε-DP for one record replaced.

Each record is its own disjoint piece of the table, so (parallel composition) each may use the whole ε; one
record replaced changes its encoding by ‖x − x'‖₁ ≤ Δ = p1 + 2p2 (`record_sensitivity`).

- Laplace: every entry of the encoded record plus discrete Laplace noise of scale Δ/ε on the public grid 2^-j
  (the entries are rounded onto the grid first; two grid points in [0, 1] differ by at most 1, so Δ holds), then
  the encoding's inverse (clamp, de-scale, the largest dummy).
- Exponential (McSherry & Talwar), utility q(x, y) = −‖x − y‖₁ over every possible output record y of the public
  domain (numbers on a public grid, one category per attribute), sensitivity Δ: P(y) ∝ exp(ε·q(x, y)/(2Δ)).
  The L1 utility is a sum over attributes, so the law factorises and each attribute is drawn on its own, exactly
  (gridnoise.exponential_on_grid / exponential_category): a number on a grid of G steps with scale 2ΔG/ε steps,
  a category kept or changed with weights 1 and exp(−ε/Δ) (two dummies differ: distance 2).

The numeric grid of the exponential baseline is the domain's own (whole numbers: every value; a stated step:
that step), else 1,000 steps between the bounds.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from ppdp_gui.engine.mechanisms.dp_pca import gridnoise
from ppdp_gui.engine.mechanisms.dp_pca.encoding import Block, Encoding
from ppdp_gui.engine.mechanisms.dp_pca.sensitivity import grid_exponent

DEFAULT_STEPS = 1000
MAX_STEPS = 1 << 24


def laplace_records(rng, x: np.ndarray, scale: Fraction) -> tuple[np.ndarray, int]:
    """(noisy X in data units, grid exponent): X on the public grid plus discrete Laplace noise of `scale`."""
    j = grid_exponent(scale, power=1, finest=16)
    steps = gridnoise.on_grid(x, j).astype(np.int64)
    noisy = gridnoise.grid_noise(rng, steps, scale, j, power=1)
    return noisy.astype(np.float64) * 2.0 ** -j, j


def numeric_steps(block: Block) -> int:
    """Steps of the public grid an exponential-mechanism number is drawn on (module docstring)."""
    span = block.high - block.low
    if span <= 0:
        return 1
    if block.step:
        steps = int(round(span / block.step))
    elif block.integer:
        steps = int(round(span))
    else:
        steps = DEFAULT_STEPS
    return int(min(max(steps, 1), MAX_STEPS))


def exponential_records(rng, x: np.ndarray, enc: Encoding, epsilon: Fraction, delta: Fraction) -> np.ndarray:
    """One exponential-mechanism draw per record (module docstring); returns an encoded matrix (one-hot, grid)."""
    n = x.shape[0]
    out = np.zeros_like(x)
    rows = np.arange(n)
    for b in enc.blocks:
        if b.kind == "numeric":
            top = numeric_steps(b)
            centers = np.rint(np.clip(x[:, b.start], 0.0, 1.0) * top).astype(np.int64)
            scale = 2 * delta * top / epsilon
            out[:, b.start] = gridnoise.exponential_on_grid(rng, centers, top, scale) / top
        else:
            codes = np.argmax(x[:, b.start:b.stop], axis=1)
            drawn = gridnoise.exponential_category(rng, codes, b.width, delta / epsilon)
            out[rows, b.start + drawn] = 1.0
    return out


__all__ = ["laplace_records", "exponential_records", "numeric_steps"]
