"""Top-Down Specialisation for k-anonymity (Fung, Wang & Yu, ICDE 2005): the baseline DiffGen is compared with.

Start with every quasi-identifier at its most general value. A candidate is a value of the current cut that can be
specialised: a taxonomy node into its children, a numeric interval into two at the public grid boundary with the
highest information gain about the class. Repeatedly apply the valid candidate (all groups still >= k) with the
highest Score = InfoGain / (AnonyLoss + 1), where AnonyLoss is the drop of the smallest group size. Because later
specialisations only split groups further, a candidate that becomes invalid never becomes valid again and is
dropped for good. The result is a global recoding (one cut per column), so unseen rows are generalised the same
way (`Release.apply_to`).

With a person column (Role.PERSON) a group's size is its distinct persons (`common.count_units`): a candidate is
valid while every group keeps the rows of at least k persons, and AnonyLoss is counted in persons.
"""

from __future__ import annotations

from typing import Any, Iterator

import numpy as np
import pandas as pd

from ppdp_gui.engine.claims import KAnonymity
from ppdp_gui.engine.data.schema import Dataset, Role
from ppdp_gui.engine.mechanisms.base import ParamSpec, PrivacyCost, Problem, Progress, Release
from ppdp_gui.engine.mechanisms.kanon.common import (GRID_PARAM, K_PARAM, count_units, kanon_problems, kanon_shape,
                                                    n_published_classes, passed_through,
                                                    release_frame, unit_note)
from ppdp_gui.engine.mechanisms.kanon import common
from ppdp_gui.engine.mechanisms.kanon.family import KAnonMechanism
from ppdp_gui.engine.data.qi_coding import QICode, code_quasi_identifier
from ppdp_gui.engine.taxonomy.order import natural_key


def entropy_of_counts(counts: np.ndarray) -> np.ndarray:
    """Entropy (bits) of each row of a counts matrix."""
    counts = np.asarray(counts, dtype=float)
    tot = counts.sum(axis=-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(tot > 0, counts / tot, 0.0)
        h = -np.where(p > 0, p * np.log2(p), 0.0).sum(axis=-1)
    return h


class _Column:
    """The current cut of one QI: nodes as code ranges [lo, hi], the node of every row, and how to split a node."""

    def __init__(self, code: QICode):
        self.code = code
        c = code.codes.astype(np.int64)
        self.values = c
        if code.index is not None:
            self.lo, self.hi, self.tax_node = [0], [code.index.n_leaves - 1], [code.index.tax.root]
        else:
            self.lo, self.hi, self.tax_node = [int(c.min())], [int(c.max())], [-1]
        self.row_node = np.zeros(len(c), dtype=np.int64)

    def split(self, node: int, rows: np.ndarray, y: np.ndarray, n_cls: int):
        """(child index per row of `rows`, child ranges, info gain) of specialising `node`, or None."""
        if rows.size == 0:
            return None
        v = self.values[rows]
        y = y[rows]
        if self.code.index is not None:
            idx = self.code.index
            kids = idx.tax.children(self.tax_node[node])
            if not kids:
                return None
            los = idx.node_lo[kids]
            order = np.argsort(los)
            kids = [kids[i] for i in order]
            los = los[order]
            child = np.searchsorted(los, v, side="right") - 1
            ranges = [(int(idx.node_lo[c]), int(idx.node_hi[c]), c) for c in kids]
        else:
            lo, hi = self.lo[node], self.hi[node]
            if lo >= hi:
                return None
            counts = np.bincount((v - lo) * n_cls + y, minlength=(hi - lo + 1) * n_cls).reshape(-1, n_cls)
            left = np.cumsum(counts, axis=0)[:-1]  # threshold after cell lo+i
            right = counts.sum(axis=0) - left
            nl, nr = left.sum(axis=1), right.sum(axis=1)
            ok = (nl > 0) & (nr > 0)
            if not ok.any():
                return None
            cond = (nl * entropy_of_counts(left) + nr * entropy_of_counts(right)) / len(v)
            cond[~ok] = np.inf
            t = int(np.argmin(cond))  # left = cells lo..lo+t
            child = (v > lo + t).astype(np.int64)
            ranges = [(lo, lo + t, -1), (lo + t + 1, hi, -1)]
        counts = np.bincount(child * n_cls + y, minlength=len(ranges) * n_cls).reshape(-1, n_cls)
        gain = float(entropy_of_counts(counts.sum(axis=0)) -
                     (counts.sum(axis=1) * entropy_of_counts(counts)).sum() / max(1, len(v)))
        return child, ranges, gain

    def apply(self, node: int, rows: np.ndarray, child: np.ndarray, ranges) -> list[int]:
        new = []
        for lo, hi, tax_node in ranges:
            self.lo.append(lo)
            self.hi.append(hi)
            self.tax_node.append(tax_node)
            new.append(len(self.lo) - 1)
        self.row_node[rows] = np.asarray(new)[child]
        return new

    def publish(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Label and loss bounds of every node."""
        return self.code.publish(np.asarray(self.lo, dtype=float), np.asarray(self.hi, dtype=float))

    def node_of(self, codes: np.ndarray) -> np.ndarray:
        """Node of the current cut containing each code (unseen rows); out-of-range codes go to the nearest."""
        leaves = np.unique(self.row_node)
        lo = np.asarray(self.lo)[leaves]
        order = np.argsort(lo)
        pos = np.clip(np.searchsorted(lo[order], codes, side="right") - 1, 0, len(order) - 1)
        return leaves[order][pos]


def specialise(columns: list[_Column], y: np.ndarray, k: int,
               persons: np.ndarray | None = None) -> Iterator[int]:
    """Run TDS on the columns in place; yields the number of specialisations done so far. `persons`: group sizes
    count distinct persons."""
    n = len(y)
    n_cls = int(y.max()) + 1 if n else 1
    group = np.zeros(n, dtype=np.int64)
    cache: dict[tuple[int, int], Any] = {(j, 0): None for j in range(len(columns))}
    done = 0
    while True:
        sizes = count_units(group, persons)
        a_now = int(sizes.min())
        best, best_score = None, -np.inf
        for key in list(cache):
            j, node = key
            entry = cache[key]
            if entry is None:
                rows = np.flatnonzero(columns[j].row_node == node)
                result = columns[j].split(node, rows, y, n_cls)
                if result is None:
                    del cache[key]
                    continue
                entry = cache[key] = (rows, *result)
            rows, child, ranges, gain = entry
            nk = len(ranges)
            refined = count_units(group[rows] * nk + child, None if persons is None else persons[rows])
            refined = refined[refined > 0]
            if refined.min() < k:
                del cache[key]  # groups only shrink from here on: never valid again
                continue
            touched = np.zeros(sizes.size, dtype=bool)
            touched[group[rows]] = True
            a_after = min(int(refined.min()), int(sizes[~touched].min()) if (~touched).any() else n)
            score = gain / (a_now - a_after + 1)
            if score > best_score:
                best, best_score = key, score
        if best is None:
            return
        j, node = best
        rows, child, ranges, _ = cache.pop(best)
        for new in columns[j].apply(node, rows, child, ranges):
            cache[(j, new)] = None
        key = group * (len(ranges) + 1)
        key[rows] += child + 1
        group = np.unique(key, return_inverse=True)[1].reshape(-1).astype(np.int64)
        done += 1
        yield done


def _regroup(columns: list[_Column]) -> np.ndarray:
    keys = np.column_stack([c.row_node for c in columns])
    return np.unique(keys, axis=0, return_inverse=True)[1].reshape(-1).astype(np.int64)


class TDS(KAnonMechanism):
    name = "TDS"
    summary = ("Top-down specialisation: starts fully generalised and refines the quasi-identifiers that best "
               "predict the class while every group keeps at least k rows (one cut per column).")
    params = (
        ParamSpec("k", K_PARAM.label, "int", default=5, low=2, high=1000, help=K_PARAM.help, formula=K_PARAM.formula,
                  more_private="higher"),
        ParamSpec("class_column", "Class column", "column", default=None, roles=(Role.CLASS,), optional=True,
                  help="The column whose prediction the specialisations should serve (information gain)."),
        GRID_PARAM,
    )

    def check(self, data: Dataset, params: dict[str, Any]) -> list[Problem]:
        # blanks of a number quasi-identifier: "(missing)" under the root of its tree (qi_coding), a value TDS
        # specialises to only when its rows hold k persons
        problems = kanon_problems(data, params["k"], params["grid_width"], blanks_ok=True)
        cls = params.get("class_column") or data.class_column
        if cls is None:
            problems.append(Problem("TDS needs a class column (mark one with the role 'class')",
                                    param="class_column"))
        elif cls in data.quasi_identifiers:
            problems.append(Problem(f"{cls!r} is a quasi-identifier; the class column must not be one",
                                    param="class_column"))
        return problems

    def describe_release(self, data: Dataset, params: dict[str, Any]):
        return kanon_shape(data, params["k"])

    def published_columns(self, data: Dataset, params: dict[str, Any]) -> list[str]:
        return passed_through(data)

    def cost(self, params: dict[str, Any]) -> PrivacyCost:
        return PrivacyCost(k=params["k"])

    def claims_for(self, data: Dataset, params: dict[str, Any]) -> tuple:
        return (KAnonymity(params["k"], tuple(data.quasi_identifiers), person=data.person_column),)

    def _run(self, data: Dataset, *, rng, k: int, class_column: str | None,
             grid_width: float) -> Iterator[Progress | Release]:
        params = {"k": k, "class_column": class_column, "grid_width": grid_width}
        declared = self.declared_claims(data, params)
        cls = class_column or data.class_column
        qnames = data.quasi_identifiers
        codes = [code_quasi_identifier(data, name, grid_width) for name in qnames]
        columns = [_Column(c) for c in codes]
        y = pd.factorize(data.frame[cls].astype(str))[0].astype(np.int64)
        yield Progress(0.05, "specialising")
        steps = 0
        person = data.person_column
        for steps in specialise(columns, y, k, common.person_codes(data)):
            yield Progress(min(0.9, 0.05 + steps / (steps + 30)), f"{steps} specialisations")
        published, intervals, node_labels = {}, {}, []
        for col in columns:
            labels, lo, hi = col.publish()
            node_labels.append(labels)
            gcodes, uniques = pd.factorize(labels)
            published[col.code.name] = pd.Categorical.from_codes(gcodes[col.row_node],
                                                                 categories=pd.Index(uniques, dtype=object))
            used = np.unique(col.row_node)
            intervals[col.code.name] = {str(labels[i]): [float(lo[i]), float(hi[i])] for i in used}
        perm = rng.permutation(data.n_rows)
        group = _regroup(columns)
        order = perm[np.argsort(group[perm], kind="stable")]
        table = release_frame(data, published, order)

        def apply_to(frame: pd.DataFrame) -> pd.DataFrame:
            """Generalise unseen rows with the released cut (values outside the taxonomy become its root)."""
            out = frame.copy()
            for col, labels in zip(columns, node_labels):
                name = col.code.name
                raw = col.code.raw_bounds(frame[name])
                if col.code.index is None:
                    raw = np.floor(raw / col.code.width)
                known = ~np.isnan(raw)
                nodes = np.zeros(len(frame), dtype=np.int64)
                nodes[known] = col.node_of(raw[known].astype(np.int64))
                texts = labels[nodes].astype(object)
                texts[~known] = col.code.index.tax.label(0) if col.code.index is not None else "*"
                out[name] = texts
            return out

        cut = {col.code.name: sorted(intervals[col.code.name], key=natural_key) for col in columns}
        note = {"quasi_identifiers": list(qnames), "k": k, **unit_note(person), "groups": n_published_classes(table, list(qnames)),
                "specialisations": steps, "class_column": cls, "cut": cut,
                "generalisation": {c.name: c.how for c in codes}}
        record = {**note, "intervals": intervals, "domains": {c.name: list(c.domain) for c in codes}}
        yield Release(mechanism=self.name, table=table, cost=self.declared_cost(data, params),
                      params={"k": k, "class_column": cls, "grid_width": grid_width},
                      claims=declared, note=note, record=record,
                      apply_to=apply_to, source_rows={"table": order})

    def measures(self, release: Release, train: Dataset, test: Dataset | None) -> dict[str, float]:
        from ppdp_gui.engine.metrics.information_loss import kanon_measures
        return kanon_measures(release, train, test)
