"""Quality models of a full-domain generalisation with suppression, and the lower bounds that prune the search.

Per quasi-identifier, in [0, 1], a suppressed row counting as fully generalised (ARX's convention):
- Loss (Iyengar's loss metric, ARX "Loss"): a cell's (leaves under its released value − 1) / (leaves − 1);
- Precision (Sweeney): level / height of the hierarchy;
- Non-uniform entropy (ARX "Non-uniform entropy"): a cell's −log₂ P(original value | released value), P
  counted on the input, divided by the column's value at the most general level (so that level scores 1).
The release's score aggregates the QIs: ARX's geometric form (Π(1 + xⱼ))^(1/d) − 1, or the plain mean; both are
reported, with each QI's own value. Discernibility (Bayardo & Agrawal) is Σ |class|² over released classes plus
|suppressed| · |table|.

Lower bound: a node's per-QI value without suppression, Σ over rows of the generalised cells' cost. Suppression can
only raise a row's cost (to that of the root), so the bound holds; a bound never falls when a level rises, so a
node whose bound is at least the best score found cannot win, nor can any generalisation of it. The bound is exact
for a node that suppresses nothing. Discernibility has no bound that is free to compute; its search evaluates more.
"""

from __future__ import annotations

import numpy as np

from ppdp_gui.engine.mechanisms.kanon.lattice import Encoded
from ppdp_gui.engine.mechanisms.kanon.models import ClassVerdict

QUALITY_MODELS = ("Loss", "Precision", "Non-uniform entropy", "Discernibility")
AGGREGATES = ("geometric (ARX)", "arithmetic mean")


def aggregate(values: np.ndarray, how: str) -> np.ndarray:
    """Aggregate per-QI values along the last axis."""
    values = np.asarray(values, dtype=float)
    if values.shape[-1] == 0:
        return np.zeros(values.shape[:-1])
    if how.startswith("geometric"):
        return np.exp(np.log1p(values).mean(axis=-1)) - 1.0
    return values.mean(axis=-1)


class Quality:
    """Per-leaf cost tables of one model for every QI and level, and the score of an evaluated node."""

    def __init__(self, enc: Encoded, model: str, how: str = AGGREGATES[0]):
        if model not in QUALITY_MODELS:
            raise ValueError(f"unknown quality model {model!r}")
        self.enc, self.model, self.how = enc, model, how
        self.n = enc.n_rows
        self.cost: list[list[np.ndarray]] = []  # [qi][level] -> cost of each leaf (normalised units)
        self.bound: list[np.ndarray] = []  # [qi] -> mean cost over rows, per level (no suppression)
        for j, q in enumerate(enc.qis):
            self.cost.append(self._costs(j, model))
            leaf_rows = np.bincount(enc.leaf[:, j], weights=enc.count, minlength=q.n_leaves) if enc.n_tuples \
                else np.zeros(q.n_leaves)
            self.bound.append(np.array([float(leaf_rows @ c) / max(1, self.n) for c in self.cost[j]]))

    def _costs(self, j: int, model: str) -> list[np.ndarray]:
        q = self.enc.qis[j]
        levels = range(q.height + 1)
        if model == "Precision":
            return [np.full(q.n_leaves, lev / q.height if q.height else 0.0) for lev in levels]
        if model == "Non-uniform entropy":
            leaf_rows = np.bincount(self.enc.leaf[:, j], weights=self.enc.count, minlength=q.n_leaves)
            with np.errstate(divide="ignore"):
                log_leaf = np.where(leaf_rows > 0, np.log2(np.maximum(leaf_rows, 1)), 0.0)
            out = []
            for lev in levels:
                code = q.code_of_leaf[lev]
                code_rows = np.bincount(code, weights=leaf_rows, minlength=len(q.labels[lev]))
                out.append(np.where(leaf_rows > 0, np.log2(np.maximum(code_rows[code], 1)) - log_leaf, 0.0))
            top = float(leaf_rows @ out[-1]) / max(1, self.n)
            return [c / top if top > 0 else np.zeros_like(c) for c in out]
        # Loss (also the per-QI figure shown for discernibility releases)
        return [q.loss(lev)[q.code_of_leaf[lev]] for lev in levels]

    @property
    def per_qi(self) -> bool:
        return self.model != "Discernibility"

    def lower_bounds(self, levels: np.ndarray) -> np.ndarray | None:
        """Bound of every node (rows of `levels`); None for discernibility."""
        if not self.per_qi:
            return None
        per = np.column_stack([self.bound[j][levels[:, j]] for j in range(levels.shape[1])]) if levels.shape[1] \
            else np.zeros((levels.shape[0], 0))
        return aggregate(per, self.how)

    def bound_of(self, levels) -> float:
        if not self.per_qi:
            return 0.0
        return float(aggregate(np.array([self.bound[j][lev] for j, lev in enumerate(levels)]), self.how))

    def per_qi_values(self, levels, cls: np.ndarray, verdict: ClassVerdict) -> np.ndarray:
        """Exact per-QI values of a node: its bound plus what suppression adds (a suppressed row costs what the
        root costs). Loss and precision depend only on a row's released value, so classes suffice for them."""
        out = np.array([self.bound[j][lev] for j, lev in enumerate(levels)], dtype=float)
        if verdict.n_suppressed and self.model != "Non-uniform entropy":
            gone = np.flatnonzero(verdict.suppressed)
            first = np.empty(verdict.sizes.size, dtype=np.int64)
            first[cls[::-1]] = np.arange(cls.size - 1, -1, -1)  # one tuple of each class
            rows = verdict.sizes[gone]
            for j, lev in enumerate(levels):
                leaf = self.enc.leaf[first[gone], j]
                out[j] += float((rows * (self.cost[j][-1][leaf] - self.cost[j][lev][leaf])).sum()) / max(1, self.n)
        elif verdict.n_suppressed:
            gone = np.flatnonzero(verdict.suppressed[cls])
            w = self.enc.count[gone].astype(float)
            for j, lev in enumerate(levels):
                leaf = self.enc.leaf[gone, j]
                out[j] += float((w * (self.cost[j][-1][leaf] - self.cost[j][lev][leaf])).sum()) / max(1, self.n)
        return out

    def score(self, levels, cls: np.ndarray, verdict: ClassVerdict) -> tuple[float, np.ndarray]:
        """(score to minimise, per-QI values of this model or of Loss for discernibility)."""
        per = self.per_qi_values(levels, cls, verdict)
        if self.per_qi:
            return float(aggregate(per, self.how)), per
        return discernibility(verdict, self.n), per


def discernibility(verdict: ClassVerdict, n_rows: int) -> float:
    kept = verdict.sizes[~verdict.suppressed]
    return float((kept.astype(float) ** 2).sum() + verdict.n_suppressed * float(n_rows))
