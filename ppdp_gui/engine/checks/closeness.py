"""Recount t-closeness on a released table: the earth mover's distance between each group's distribution of the
sensitive column and the whole table's (Li, Li & Venkatasubramanian, ICDE 2007).

Written from the paper's formulas, not from the mechanisms' code (the checker may not import them): group the rows
as text, count the sensitive values per group, and compute per group

- equal ground distance: EMD = ½ Σ |pᵢ − qᵢ|;
- ordered distance (values v₁ < … < vₘ at distance |i − j| / (m − 1)): EMD = Σᵢ |Σ_{j≤i} (pⱼ − qⱼ)| / (m − 1);
- hierarchical distance (two values at height(lowest common ancestor) / H): for every inner node N, with
  extra(C) = Σ of p − q over the leaves under child C, cost(N) = height(N)/H · min(Σ positive extras,
  Σ |negative extras|), and EMD = Σ_N cost(N).
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
import pandas as pd

TOLERANCE = 1e-9


def value_counts_by_group(group: np.ndarray, values: np.ndarray, n_values: int,
                          weights: np.ndarray | None = None) -> np.ndarray:
    """groups x values matrix of row counts (group ids 0..G-1, value codes 0..m-1; `weights`: rows per entry)."""
    n_groups = int(group.max()) + 1 if group.size else 0
    flat = np.bincount(group.astype(np.int64) * n_values + values, weights=weights,
                       minlength=n_groups * n_values)
    return flat.reshape(n_groups, n_values).astype(float)


def emd_equal(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    return 0.5 * np.abs(p - q).sum(axis=1)


def emd_ordered(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    m = p.shape[1]
    if m < 2:
        return np.zeros(p.shape[0])
    return np.abs(np.cumsum(p - q, axis=1)[:, :-1]).sum(axis=1) / (m - 1)


def emd_hierarchical(p: np.ndarray, q: np.ndarray, values: Sequence[str],
                     paths: Sequence[Sequence[str]]) -> np.ndarray:
    """`values` name the columns of p and q; `paths` are the hierarchy's rows leaf → root."""
    node_of: dict[tuple, int] = {}
    depth: list[int] = []
    parent: list[int] = []
    leaf_chain: dict[str, list[int]] = {}
    for path in paths:
        top_down = list(reversed([str(x) for x in path]))
        key: tuple = ()
        chain = []
        for label in top_down:
            key = key + (label,)
            if key not in node_of:
                node_of[key] = len(depth)
                depth.append(len(key) - 1)
                parent.append(node_of[key[:-1]] if len(key) > 1 else -1)
            chain.append(node_of[key])
        leaf_chain[top_down[-1]] = chain
    height = max(depth) if depth else 0
    n_nodes = len(depth)
    member = np.zeros((len(values), n_nodes))
    for i, v in enumerate(values):
        member[i, leaf_chain[v]] = 1.0
    extra = (p - q) @ member  # groups x nodes
    child = np.zeros((n_nodes, n_nodes))
    for node, par in enumerate(parent):
        if par >= 0:
            child[node, par] = 1.0
    pos = np.maximum(extra, 0) @ child
    neg = np.maximum(-extra, 0) @ child
    weight = np.array([(height - d) / height if height else 0.0 for d in depth])
    return (np.minimum(pos, neg) * weight).sum(axis=1)


def closeness(table: pd.DataFrame, group: np.ndarray, column: str, distance: str, *,
              name: Callable[[str], str], order: Sequence[str] = (),
              hierarchy: Sequence[Sequence[str]] = (), keep: np.ndarray | None = None,
              weights: np.ndarray | None = None, persons: np.ndarray | None = None,
              whole: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[np.ndarray, str]:
    """EMD of every group (rows with `keep`, grouped by `group`) from the whole table's distribution of `column`
    (all rows). Returns (distances, "") or (empty, reason it cannot be recounted). `weights`: each row of `table`
    stands for that many rows (a large table's rows counted by a GROUP BY, bigdata/recount.py). `persons` (the
    person id of every row): each (person, value) counts once in the whole table, each (group, person, value)
    once in its group. `whole` (values, weights): the whole table's distribution counted apart (a large table's
    distinct (person, value) pairs: bigdata/recount.py) instead of from the rows."""
    text = table[column].astype(str).to_numpy()
    if distance == "ordered":
        if order:
            domain = [name(str(v)) for v in order]
        else:
            distinct = pd.unique(text)
            numbers = pd.to_numeric(pd.Series(distinct), errors="coerce")
            if numbers.isna().any():
                return np.zeros(0), f"{column!r} is not numeric and no order of its values was declared"
            domain = list(distinct[np.argsort(numbers.to_numpy(), kind="stable")])
    elif distance == "hierarchical":
        if not hierarchy:
            return np.zeros(0), "no hierarchy was declared for the hierarchical distance"
        domain = list(dict.fromkeys(name(str(p[0])) for p in hierarchy))
        hierarchy = [[name(str(x)) for x in p] for p in hierarchy]
    elif distance == "equal":
        domain = list(pd.unique(text))
    else:
        return np.zeros(0), f"unknown distance {distance!r}"
    index = {v: i for i, v in enumerate(domain)}
    codes = pd.Series(text).map(index)
    if codes.isna().any():
        stray = sorted(set(text[codes.isna().to_numpy()]))[:3]
        return np.zeros(0), f"{column!r} holds values outside the declared domain: {stray}"
    codes = codes.to_numpy(dtype=np.int64)
    if whole is not None:
        at = pd.Series(np.asarray(whole[0]).astype(str)).map(index)
        if at.isna().any():
            return np.zeros(0), f"{column!r} holds values outside the declared domain"
        whole = np.bincount(at.to_numpy(dtype=np.int64), weights=np.asarray(whole[1], dtype=float),
                            minlength=len(domain)).astype(float)
    elif persons is not None:
        persons = np.asarray(persons)
        first = ~pd.DataFrame({"p": persons, "v": codes}).duplicated().to_numpy()
        whole = np.bincount(codes[first], minlength=len(domain)).astype(float)
    else:
        whole = np.bincount(codes, weights=weights, minlength=len(domain)).astype(float)
    q = whole / whole.sum()
    if keep is not None:
        group, codes = group[keep], codes[keep]
        weights = None if weights is None else weights[keep]
        persons = None if persons is None else persons[keep]
    if persons is not None and group.size:
        first = ~pd.DataFrame({"g": group, "p": persons, "v": codes}).duplicated().to_numpy()
        group, codes = group[first], codes[first]
    if group.size == 0:
        return np.zeros(0), ""
    counts = value_counts_by_group(group, codes, len(domain), weights)
    counts = counts[counts.sum(axis=1) > 0]
    p = counts / counts.sum(axis=1, keepdims=True)
    if distance == "equal":
        return emd_equal(p, q[None, :]), ""
    if distance == "ordered":
        return emd_ordered(p, q[None, :]), ""
    return emd_hierarchical(p, q[None, :], domain, hierarchy), ""
