"""Local recoding by cheapest classes first: k-anonymity where every row may keep its own level of detail.

Global recoding gives every row the same levels; Mondrian cuts the table into boxes. Here a *class* is any
combination of taxonomy nodes (one per quasi-identifier) that at least k rows share, and every row joins the
cheapest class that covers it. The classes are built greedily, cheapest first, with a rising price limit τ
(the loss of a row in the class, `quality.py`'s Loss averaged over the QIs):

1. *Join*: a free row whose values a class already made covers (every node of the class is an ancestor of the
   row's leaf) joins the cheapest such class costing at most τ — it needs no partners, the class keeps ≥ k rows.
2. *Form*: for every level vector of the lattice whose cheapest possible class costs at most τ (in order of that
   bound), the free rows are grouped at those levels and every group of at least k rows costing at most τ becomes
   a class.
τ rises through a fixed schedule up to 1 (the root: always affordable). The few rows left (fewer than k,
covered by no class) join the class that covers them at the smallest extra loss, its nodes widened to the lowest
common ancestors. Finally every class publishes, per QI, the lowest common ancestor of its own rows (never
more general than the nodes it was formed at), and classes that then show the same values merge.

Rows with frequent combinations keep them exactly, rare ones are generalised only as far as they must be: on ARX's
Adult at k = 10 this gives a lower loss than ARX's own local recoding (docs/reproduction/global_recoding.md).
Strict: every published combination has at least k rows, no row is suppressed, the checker recounts it.

With a person column (Role.PERSON) a class is formed only by a group holding the rows of at least k distinct
persons (`Encoded.person`); joining, absorbing and merging only add rows, so every class keeps k persons.
"""

from __future__ import annotations

from typing import Any, Iterator

import numpy as np
import pandas as pd

from ppdp_gui.engine.claims import KAnonymity
from ppdp_gui.engine.data.schema import Dataset
from ppdp_gui.engine.mechanisms.base import PrivacyCost, Problem, Progress, Release
from ppdp_gui.engine.mechanisms.base import ReleaseShape
from ppdp_gui.engine.mechanisms.kanon.common import (K_PARAM, n_published_classes, passed_through,
                                                    release_frame, unit_note, unit_sentence)
from ppdp_gui.engine.mechanisms.kanon.family import KAnonMechanism
from ppdp_gui.engine.mechanisms.kanon.models import distinct_per_class
from ppdp_gui.engine.mechanisms.kanon.lattice import MAX_EXACT_NODES, Encoded, Lattice, _dense, encode

SCHEDULE = (0.0, 0.0025, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.025, 0.03, 0.04, 0.05, 0.06, 0.07, 0.085, 0.1, 0.12,
            0.14, 0.17, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6, 0.7, 0.85, 1.0)


class _Classes:
    """Classes made so far: their node per QI, level vector and loss per row; tuples' class."""

    def __init__(self, enc: Encoded):
        self.enc = enc
        self.nodes: list[np.ndarray] = []  # per batch: (c, d) taxonomy node ids
        self.levels: list[np.ndarray] = []  # per batch: (c, d) levels
        self.cost: list[np.ndarray] = []
        self.of_tuple = np.full(enc.n_tuples, -1, dtype=np.int64)
        self.n = 0
        self._by_levels: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}  # levels -> (sorted keys, class ids)

    def add(self, levels: tuple[int, ...], members: np.ndarray, group: np.ndarray, codes: np.ndarray,
            cost: np.ndarray) -> None:
        """New classes at `levels`: `group` (0..c-1) of each member tuple, `codes` (c, d) their codes."""
        c = codes.shape[0]
        ids = self.n + np.arange(c)
        self.of_tuple[members] = ids[group]
        nodes = np.column_stack([q.node_ids[lev][codes[:, j]] for j, (q, lev) in enumerate(zip(self.enc.qis, levels))])
        self.nodes.append(nodes)
        self.levels.append(np.tile(np.asarray(levels, dtype=np.int64), (c, 1)))
        self.cost.append(cost)
        self.n += c
        key = _key(self.enc, levels, codes)
        old = self._by_levels.get(levels)
        if old is not None:
            key, ids = np.r_[old[0], key], np.r_[old[1], ids]
        order = np.argsort(key, kind="stable")
        self._by_levels[levels] = (key[order], ids[order])

    def all_cost(self) -> np.ndarray:
        return np.concatenate(self.cost) if self.cost else np.zeros(0)

    def covering(self, tuples: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(cheapest covering class, its cost) of each of `tuples` (-1, inf when none covers it)."""
        best = np.full(tuples.size, -1, dtype=np.int64)
        best_cost = np.full(tuples.size, np.inf)
        if not self.n or not tuples.size:
            return best, best_cost
        cost = self.all_cost()
        codes_at = [[self.enc.codes(j, lev)[tuples] for lev in range(q.height + 1)]
                    for j, q in enumerate(self.enc.qis)]
        for levels, (keys, ids) in self._by_levels.items():
            k = np.zeros(tuples.size, dtype=np.int64)
            for j, lev in enumerate(levels):
                k = k * len(self.enc.qis[j].labels[lev]) + codes_at[j][lev]
            pos = np.minimum(np.searchsorted(keys, k), keys.size - 1)
            hit = keys[pos] == k
            cand = ids[pos]
            better = hit & (cost[cand] < best_cost)
            best[better] = cand[better]
            best_cost[better] = cost[cand[better]]
        return best, best_cost


def _key(enc: Encoded, levels, codes: np.ndarray) -> np.ndarray:
    """Mixed-radix key of per-QI codes at `levels` (same key for the same nodes)."""
    key = np.zeros(codes.shape[0], dtype=np.int64)
    for j, lev in enumerate(levels):
        key = key * len(enc.qis[j].labels[lev]) + codes[:, j]
    return key


def _node_bounds(enc: Encoded, levels: np.ndarray) -> np.ndarray:
    """Cheapest possible class of every level vector: per QI the smallest loss of a code used at that level."""
    per = []
    for j, q in enumerate(enc.qis):
        floor = np.array([q.loss(lev)[np.unique(enc.codes(j, lev))].min() for lev in range(q.height + 1)])
        per.append(floor[levels[:, j]])
    return np.mean(per, axis=0)


def local_recoding(enc: Encoded, k: int, schedule=SCHEDULE) -> Iterator[Progress | np.ndarray]:
    """Yield Progress, then the class id (0..C-1) of every tuple of `enc`; every class holds >= k rows."""
    if enc.n_rows < k:
        raise ValueError(f"the table has {enc.n_rows} rows, fewer than k = {k}")
    persons = getattr(enc, "person", None)
    if persons is not None and np.unique(persons).size < k:
        raise ValueError(f"the table has {np.unique(persons).size} persons, fewer than k = {k}")
    lattice = Lattice(tuple(q.height for q in enc.qis))
    levels_all = lattice.all_levels().astype(np.int64)
    bound = _node_bounds(enc, levels_all)
    order = np.argsort(bound, kind="stable")
    loss = [[q.loss(lev) for lev in range(q.height + 1)] for q in enc.qis]
    classes = _Classes(enc)
    d = enc.d
    dead = np.zeros(lattice.size, dtype=bool)  # no group of k free rows left there: never again (rows only leave)
    for step, tau in enumerate(schedule):
        free = np.flatnonzero(classes.of_tuple < 0)
        if free.size == 0:
            break
        # 1. join classes that already cover a free tuple
        best, best_cost = classes.covering(free)
        join = best_cost <= tau + 1e-12
        classes.of_tuple[free[join]] = best[join]
        free = free[~join]
        # 2. form new classes, level vectors in order of their cheapest possible class
        codes_at = [[enc.codes(j, lev)[free] for lev in range(q.height + 1)] for j, q in enumerate(enc.qis)]
        weight = enc.count[free].astype(float)  # zeroed as rows join classes during this step
        free_persons = None if persons is None else persons[free]
        for idx in order:
            if bound[idx] > tau + 1e-12 or weight.sum() < k:
                break
            if dead[idx]:
                continue
            levels = tuple(int(x) for x in levels_all[idx])
            key = np.zeros(free.size, dtype=np.int64)
            span = 1
            for j, lev in enumerate(levels):
                m = len(enc.qis[j].labels[lev])
                key = key * m + codes_at[j][lev]
                span *= m
            group, n_groups = _dense(key, span if span < 2 ** 62 else None)
            if free_persons is None:
                size = np.bincount(group, weights=weight, minlength=n_groups)
            else:  # distinct persons among the tuples still free
                live = weight > 0
                size = distinct_per_class(group[live], free_persons[live], n_groups)
            big = size >= k
            if not big.any():
                dead[idx] = True
                continue
            first = np.zeros(n_groups, dtype=np.int64)
            first[group[::-1]] = np.arange(group.size - 1, -1, -1)
            gcodes = np.column_stack([codes_at[j][lev][first] for j, lev in enumerate(levels)])
            gcost = np.mean([loss[j][lev][gcodes[:, j]] for j, lev in enumerate(levels)], axis=0) if d else \
                np.zeros(n_groups)
            take = big & (gcost <= tau + 1e-12)
            if not take.any():
                continue
            renum = np.full(n_groups, -1, dtype=np.int64)
            renum[take] = np.arange(int(take.sum()))
            members = (renum[group] >= 0) & (weight > 0)
            classes.add(levels, free[members], renum[group[members]], gcodes[take], gcost[take])
            weight[members] = 0.0
        yield Progress((step + 1) / len(schedule), f"local recoding: price limit {tau:g}, "
                                                   f"{classes.n:,} classes")
    free = np.flatnonzero(classes.of_tuple < 0)
    if free.size:
        best, _ = classes.covering(free)
        classes.of_tuple[free[best >= 0]] = best[best >= 0]
        free = free[best < 0]
    cls = classes.of_tuple
    if free.size:  # fewer than k rows covered by no class: widen the class that absorbs them cheapest
        cls = _absorb(enc, cls, free, classes.n)
    yield pd.factorize(cls)[0].astype(np.int64)


def _absorb(enc: Encoded, cls: np.ndarray, free: np.ndarray, n_classes: int) -> np.ndarray:
    """Put the `free` tuples into the class whose lowest common ancestors widen least (rows x extra loss)."""
    if n_classes == 0:
        out = cls.copy()
        out[:] = 0
        return out
    taken = np.flatnonzero(cls >= 0)
    lo_c, hi_c = _bounds(enc, cls[taken], taken, n_classes)
    size = np.bincount(cls[taken], weights=enc.count[taken], minlength=n_classes)
    extra = np.zeros(n_classes)
    for j, q in enumerate(enc.qis):
        pos = enc.leaf[free, j]
        lo, hi = np.minimum(lo_c[:, j], pos.min()), np.maximum(hi_c[:, j], pos.max())
        now = q.index.cover(lo_c[:, j], hi_c[:, j])[1]
        wide = q.index.cover(lo, hi)[1]
        extra += (wide - now) * size + wide * enc.count[free].sum()
    best = int(np.argmin(extra))
    out = cls.copy()
    out[free] = best
    return out


def _bounds(enc: Encoded, cls: np.ndarray, tuples: np.ndarray, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """Per class and QI, the smallest and largest leaf position of its tuples."""
    lo = np.full((n_classes, enc.d), np.iinfo(np.int64).max)
    hi = np.full((n_classes, enc.d), -1)
    order = np.argsort(cls, kind="stable")
    c = cls[order]
    starts = np.r_[0, np.flatnonzero(c[1:] != c[:-1]) + 1]
    present = c[starts]
    leaf = enc.leaf[tuples[order]].astype(np.int64)
    lo[present] = np.minimum.reduceat(leaf, starts, axis=0)
    hi[present] = np.maximum.reduceat(leaf, starts, axis=0)
    return lo, hi


# ---- the mechanism ------------------------------------------------------------------------------------------------
def publish_classes(enc: Encoded, cls: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(class of every tuple after merging, (classes, d) node ids): each class shows per QI the lowest common
    ancestor of its own rows; classes showing the same nodes are one class."""
    n_classes = int(cls.max()) + 1 if cls.size else 0
    lo, hi = _bounds(enc, cls, np.arange(enc.n_tuples), n_classes)
    nodes = np.column_stack([q.index.covering_node(lo[:, j], hi[:, j]) for j, q in enumerate(enc.qis)])
    ids, uniq = pd.factorize(pd.MultiIndex.from_arrays([nodes[:, j] for j in range(enc.d)]))
    merged = ids[cls]
    first = np.zeros(len(uniq), dtype=np.int64)
    first[ids[::-1]] = np.arange(n_classes - 1, -1, -1)
    return merged, nodes[first]


class LocalRecoding(KAnonMechanism):
    name = "Local recoding"
    summary = ("Every row keeps as much detail as it can: rows with common combinations stay exact, rare ones are "
               "generalised along their taxonomies only as far as needed for groups of at least k (local "
               "recoding, cheapest groups first; no row suppressed).")
    params = (K_PARAM,)

    def check(self, data: Dataset, params: dict[str, Any]) -> list[Problem]:
        from ppdp_gui.engine.mechanisms.kanon.globalrec import lattice_problems

        problems, size = lattice_problems(data, params["k"])
        if size is not None and size > MAX_EXACT_NODES:
            problems.append(Problem(f"{size:,} level combinations: local recoding handles at most "
                                    f"{MAX_EXACT_NODES:,}; use fewer quasi-identifiers or shallower taxonomies"))
        return problems

    def published_columns(self, data: Dataset, params: dict[str, Any]) -> list[str]:
        """The columns published as they are (the identifying-column check looks at these)."""
        return passed_through(data)

    def describe_release(self, data: Dataset, params: dict[str, Any]) -> ReleaseShape:
        return ReleaseShape(sentences=(self.summary, unit_sentence(data, params["k"])))

    def cost(self, params: dict[str, Any]) -> PrivacyCost:
        return PrivacyCost(k=params["k"])

    def claims_for(self, data: Dataset, params: dict[str, Any]) -> tuple:
        return (KAnonymity(params["k"], tuple(data.quasi_identifiers), person=data.person_column),)

    def _run(self, data: Dataset, *, rng, k: int) -> Iterator[Progress | Release]:
        declared = self.declared_claims(data, {"k": k})
        yield Progress(0.02, "coding quasi-identifiers")
        enc = encode(data, data.quasi_identifiers, None)
        cls = None
        for item in local_recoding(enc, k):
            if isinstance(item, Progress):
                yield Progress(0.05 + 0.8 * item.fraction, item.message)
            else:
                cls = item
        yield Progress(0.9, "publishing each group's lowest common ancestors")
        cls, nodes = publish_classes(enc, cls)
        names = [q.name for q in enc.qis]
        row_cls = cls[enc.row_tuple]
        published, intervals, domains = {}, {}, {}
        for j, q in enumerate(enc.qis):
            labels = q.index.labels[nodes[:, j]]
            codes, cats = pd.factorize(labels)
            published[q.name] = pd.Categorical.from_codes(codes[row_cls], categories=pd.Index(cats, dtype=object))
            intervals[q.name] = {}
            for lab, node in zip(labels, nodes[:, j]):
                lo, hi = float(q.index.node_lo[node]), float(q.index.node_hi[node])
                old = intervals[q.name].get(str(lab), [lo, hi])
                intervals[q.name][str(lab)] = [min(old[0], lo), max(old[1], hi)]
            domains[q.name] = [0.0, float(q.n_leaves - 1)]
        perm = np.asarray(rng.permutation(enc.n_rows))
        order = perm[np.argsort(row_cls[perm], kind="stable")]
        table = release_frame(data, published, order)
        groups = n_published_classes(table, names)
        person = data.person_column
        note = {"quasi_identifiers": names, "k": k, **unit_note(person), "groups": groups,
                "recoding": "local (cheapest groups first)"}
        record = {**note, "intervals": intervals, "domains": domains, "classes before merging labels": int(len(nodes))}
        yield Release(mechanism=self.name, table=table, cost=self.declared_cost(data, {"k": k}), params={"k": k},
                      claims=declared, note=note, record=record,
                      source_rows={"table": order})

    def measures(self, release: Release, train: Dataset, test: Dataset | None) -> dict[str, float]:
        from ppdp_gui.engine.metrics.information_loss import kanon_measures
        return kanon_measures(release, train, test)
