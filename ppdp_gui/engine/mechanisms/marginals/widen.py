"""Which (class, parent, child) tables of a class tree grow a fourth column: the parent's own parent.

Each column c of the tree around the class is measured with the class and its parent p. When the noise is small
beside the records, the table (class, g, p, c) — g the parent of p — keeps more of what predicts the class
(married *and* educated, not each alone), at no extra privacy cost: a record is still in one cell of one table
per column, so the number of tables K, the L1 sensitivity K and the noise scale K/ε_measure stay the same.

The choice reads only public facts and what is already published: a table grows when its cells times the noise
scale (the noise it would carry) stay below WIDEN_SHARE times the noisy total of the (class, column) tables
measured before it — post-processing of released counts, so it costs no budget (adaptive sequential
composition). The larger tables form a junction tree: (class, g, p, c) and (class, gg, g, p) share
(class, g, p), which the model's earlier table holds, so the model stays consistent on every shared column.
"""

from __future__ import annotations

from ppdp_gui.engine.mechanisms.marginals.model import Clique

WIDEN_SHARE = 1.0  # a four-column table when cells · scale ≤ the noisy total (chosen on benchmarks/tune_marginals.py)
NEVER, WHEN_NOISE_ALLOWS = "never", "when the noise allows"
MAX_CELLS = 2_000_000


def widen(cliques: list[Clique], tree: list[tuple[str, str]], sizes: dict[str, int], scale: float,
          noisy_total: float, rule: str = WHEN_NOISE_ALLOWS, share: float | None = None) -> list[Clique]:
    """The cliques (class, p) → c, each as (class, g, p) → c where the rule allows, in the same order."""
    if rule == NEVER:
        return list(cliques)
    share = WIDEN_SHARE if share is None else share
    parent_of = {c: p for p, c in tree}
    out = []
    for q in cliques:
        cls, p = q.parents
        g = parent_of.get(p)
        if g is not None:
            cells = sizes[cls] * sizes[g] * sizes[p] * sizes[q.child]
            if cells <= MAX_CELLS and cells * scale <= share * max(noisy_total, 0.0):
                q = Clique((cls, g, p), q.child)
        out.append(q)
    return out
