"""Which pairs of columns to measure: a maximum spanning tree chosen privately (MST, McKenna et al. 2021).

Score of a pair (a, b): how far its table of counts is from independence, the L1 distance between the counts
c_ij and r_i·s_j/n (r, s the one-way counts, n the rows). With a class column, the score is that distance
summed over the class's slices (the tree of a tree-augmented naive Bayes model).

Sensitivity (one record added or removed, at cell (a, b)): c moves by 1 in L1; the product term moves by
‖[n(r e_bᵀ + e_a sᵀ + e_a e_bᵀ) − r sᵀ] / (n(n+1))‖₁ ≤ (n·n + n·n + n + n·n)/(n(n+1)) = (3n+1)/(n+1) < 3, so the
score moves by less than 4 (triangle inequality). With class slices only the record's own slice moves, so the
bound is the same. SENSITIVITY = 4 is therefore sound.

Kruskal's algorithm with the exponential mechanism (engine/noise) picking each edge among those joining two
components: `rounds` = columns − 1 calls, each ε_select / rounds, pure ε-DP by sequential composition.
"""

from __future__ import annotations

import numpy as np

SENSITIVITY = 4


def independence_gap(x: np.ndarray, y: np.ndarray, nx: int, ny: int) -> float:
    """Σ |c_ij − r_i s_j / n| for the codes x, y of one slice."""
    n = len(x)
    if n == 0:
        return 0.0
    c = np.bincount(x * ny + y, minlength=nx * ny).reshape(nx, ny).astype(float)
    return float(np.abs(c - np.outer(c.sum(1), c.sum(0)) / n).sum())


def pair_scores(codes: dict[str, np.ndarray], sizes: dict[str, int], names: list[str],
                classes: np.ndarray | None, n_classes: int) -> dict[tuple[str, str], float]:
    """Every pair's score (the class slices summed when a class column is given)."""
    slices = [np.ones(len(next(iter(codes.values()))), bool)] if classes is None else \
        [classes == k for k in range(n_classes)]
    out = {}
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            out[(a, b)] = sum(independence_gap(codes[a][m], codes[b][m], sizes[a], sizes[b]) for m in slices)
    return out


def private_tree(names: list[str], scores: dict[tuple[str, str], float], epsilon, rng) -> list[tuple[str, str]]:
    """Edges of a spanning tree, each picked by the exponential mechanism with ε = epsilon / (len(names) − 1)."""
    rounds = len(names) - 1
    if rounds <= 0:
        return []
    from fractions import Fraction
    per_round = Fraction(epsilon) / rounds
    comp = {c: i for i, c in enumerate(names)}
    edges = []
    for _ in range(rounds):
        cands = [p for p in scores if comp[p[0]] != comp[p[1]]]
        pick = cands[rng.exponential_choice(np.array([scores[p] for p in cands]), per_round, SENSITIVITY)]
        edges.append(pick)
        old, new = comp[pick[1]], comp[pick[0]]
        comp = {c: (new if g == old else g) for c, g in comp.items()}
    return edges


def orient(names: list[str], edges: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """(parent, child) pairs in breadth-first order from the first column (the order records are drawn in)."""
    adj = {c: [] for c in names}
    for a, b in edges:
        adj[a].append(b)
        adj[b].append(a)
    seen, order, queue = {names[0]}, [], [names[0]]
    while queue:
        p = queue.pop(0)
        for c in adj[p]:
            if c not in seen:
                seen.add(c)
                order.append((p, c))
                queue.append(c)
    return order
