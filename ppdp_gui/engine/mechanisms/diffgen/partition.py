"""One quasi-identifier as DiffGen sees it: integer-coded records, class counts, and its current cut.

DiffGen recodes each attribute globally (one cut per attribute), so the score of a candidate v of attribute A
depends only on the records whose A-value lies under v and their classes: the 1-D marginal A × class. Each
attribute therefore keeps that marginal once (categorical: counts per taxonomy node, summed up the tree;
numeric: cumulative class counts over the sorted distinct values), and every score of every later candidate is
read from it in O(children) or O(log n) time without touching a record. This is the paper's partition-tree
bookkeeping (Section 4.3: scores from counts collected per candidate, only D_v matters) taken one step further:
records are visited once at the start and once at the end, when each is mapped to its leaf partition.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ppdp_gui.engine.errors import TaxonomyError
from ppdp_gui.engine.taxonomy.tree import Taxonomy

_NUMBER = re.compile(r"(?<![\d.eE])[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def _taxonomy_numbers(tax: Taxonomy) -> list[float]:
    numbers = [float(m) for i in range(len(tax)) for m in _NUMBER.findall(tax.label(i))]
    return [v for v in numbers if math.isfinite(v)]


def taxonomy_bounds(tax: Taxonomy) -> tuple[float, float] | None:
    """The smallest and largest number written in any label of a numeric column's taxonomy (leaves like '39',
    intervals like '30-39' or '[20, 30)'), i.e. public bounds; None if no label holds a number."""
    numbers = _taxonomy_numbers(tax)
    return (min(numbers), max(numbers)) if numbers else None


def taxonomy_is_integral(tax: Taxonomy) -> bool:
    """True when every number written in the taxonomy (leaves, interval ends, bounds) is a whole number.

    This is the public rule for an integer domain: the custodian's taxonomy speaks only of whole numbers (ages,
    counts, hours), so split points are drawn among integers and labels read '[20, 35)'. It looks at the
    taxonomy only, never at the records; a record holding a fraction anyway still falls in the right interval
    (an integer split t sends x left iff x < t, i.e. iff ceil(x) < t)."""
    numbers = _taxonomy_numbers(tax)
    return bool(numbers) and all(v == math.floor(v) for v in numbers)


def format_number(value: float, digits: int) -> str:
    """`value` with `digits` significant digits, never in exponent notation and never rounding away integer
    digits (123456.7 -> '123457'); trailing zeros dropped, so whole numbers print as integers."""
    v = float(value)
    if v == 0 or not math.isfinite(v):
        return "0" if v == 0 else str(v)
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(v))))
    text = f"{v:.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def interval_labels(edges: np.ndarray) -> list[str]:
    """'[a, b)' for each pair of neighbouring edges, the last one closed; 4 significant digits, more when two
    different edges would otherwise print alike (labels are for reading; `splits` hold the exact cut)."""
    edges = np.asarray(edges, dtype=np.float64)
    n_distinct = len(np.unique(edges))
    for digits in range(4, 18):
        text = [format_number(v, digits) for v in edges]
        if len(set(text)) == n_distinct:
            break
    labels = [f"[{text[i]}, {text[i + 1]})" for i in range(len(edges) - 1)]
    labels[-1] = labels[-1][:-1] + "]"
    return labels


@dataclass
class CategoricalAttr:
    """A categorical QI: leaf node id per record, class counts per taxonomy node, cut = taxonomy nodes."""

    column: str
    tax: Taxonomy
    leaf: np.ndarray  # leaf node id of every record
    counts: np.ndarray  # (nodes, K): class counts of the records under each node
    cut: list[int] = field(default_factory=lambda: [0])

    kind = "categorical"

    @classmethod
    def build(cls, column: str, tax: Taxonomy, values: pd.Series, y: np.ndarray, n_classes: int):
        leaf = tax.node_codes(values)
        counts = np.bincount(leaf * n_classes + y, minlength=len(tax) * n_classes).reshape(len(tax), n_classes)
        counts = counts.astype(np.int64)
        for node in tax.leaves():  # only leaves hold records; add each leaf's counts to all its ancestors
            for above in tax.ancestors(node)[1:]:
                counts[above] += counts[node]
        return cls(column, tax, leaf, counts)

    def children_counts(self, node: int) -> np.ndarray:
        return self.counts[self.tax.children(node)]

    def can_specialise(self, node: int) -> bool:
        return not self.tax.is_leaf(node)

    def specialise(self, node: int) -> list[int]:
        """Replace `node` in the cut by its children; returns the children (new candidates if not leaves)."""
        kids = self.tax.children(node)
        self.cut.remove(node)
        self.cut.extend(kids)
        return kids

    def fan_out(self, node: int) -> int:
        return len(self.tax.children(node))

    # -- the final cut ------------------------------------------------------------------------------------------
    def ordered_cut(self) -> list[int]:
        order = {leaf: i for i, leaf in enumerate(self.tax.leaves())}
        return sorted(self.cut, key=lambda n: order[self.tax.leaves(n)[0]])

    def labels(self) -> list[str]:
        return [self.tax.label(n) for n in self.ordered_cut()]

    def _lookup(self) -> np.ndarray:
        lookup = np.full(len(self.tax), -1, dtype=np.int64)
        for i, node in enumerate(self.ordered_cut()):
            lookup[self.tax.leaves(node)] = i
        return lookup

    def codes(self, values: pd.Series | None = None) -> np.ndarray:
        """Cut position of every record (of the training data, or of `values`)."""
        leaf = self.leaf if values is None else self.tax.node_codes(values)
        return self._lookup()[leaf]

    def describe_cut(self) -> dict:
        return {"kind": "categorical", "cut": self.labels()}


@dataclass
class NumericAttr:
    """A numeric QI over public bounds [lo, hi]: sorted distinct values with cumulative class counts; the cut
    is the sorted list of split points (interval i is [split_{i-1}, split_i), the last one closed at hi).

    `integer` (integer bounds and domain, see `taxonomy_is_integral`): split points are integers, and values
    are held rounded up, which sends every record to the same side of any integer split as its raw value."""

    column: str
    lo: float
    hi: float
    x: np.ndarray  # values clipped to [lo, hi]
    distinct: np.ndarray  # sorted distinct values
    cum: np.ndarray  # (len(distinct) + 1, K): class counts of the values before position i
    splits: list[float] = field(default_factory=list)
    integer: bool = False

    kind = "numeric"

    @classmethod
    def build(cls, column: str, values: np.ndarray, lo: float, hi: float, y: np.ndarray, n_classes: int,
              integer: bool = False):
        x = np.clip(np.asarray(values, dtype=np.float64), lo, hi)
        if integer:
            x = np.ceil(x)
        distinct, inverse = np.unique(x, return_inverse=True)
        per_value = np.bincount(inverse.ravel() * n_classes + y, minlength=len(distinct) * n_classes)
        cum = np.zeros((len(distinct) + 1, n_classes), dtype=np.int64)
        np.cumsum(per_value.reshape(len(distinct), n_classes), axis=0, out=cum[1:])
        return cls(column, float(lo), float(hi), x, distinct, cum, integer=integer)

    @property
    def top(self) -> float:
        """Upper end of the root interval: hi, or hi + 1 on an integer domain, whose intervals are all half-open
        [a, b) over the integers ([s, hi] is held as [s, hi + 1)), so a split t = hi leaves [a, hi) open."""
        return self.hi + 1 if self.integer else self.hi

    def _span(self, a: float, b: float) -> tuple[int, int]:
        """Positions [i0, i1) of the distinct values inside [a, b) ([a, b] when b is the upper bound)."""
        i0 = int(np.searchsorted(self.distinct, a, side="left"))
        closed = b >= self.hi and not self.integer  # integer intervals are all half-open, see `top`
        i1 = int(np.searchsorted(self.distinct, b, side="right" if closed else "left"))
        return i0, i1

    def split_options(self, a: float, b: float) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """For the interval [a, b): the edges a = B_0 ≤ v_1 < … < v_k ≤ B_{k+1} = b of the sub-intervals between
        distinct values, and the children's class counts (k+1, 2, K) of a split point in each (B_j, B_{j+1}]
        (left child = values < t). None if the interval has no length.

        Integer domain: the split points are the integers t in (a, b) — up to b itself for the last interval,
        held as [a, hi + 1) — so the top edge is b − 1 and each length B_{j+1} − B_j counts the integers
        of (B_j, B_{j+1}], which all give the same children: the same mechanism, over integer split points."""
        top = b - 1 if self.integer else b
        if not top > a:
            return None
        i0, i1 = self._span(a, b)
        edges = np.concatenate(([a], self.distinct[i0:i1], [top]))
        left = self.cum[i0:i1 + 1] - self.cum[i0]
        right = (self.cum[i1] - self.cum[i0]) - left
        return edges, np.diff(edges), np.stack([left, right], axis=-2)

    def children_counts_at(self, a: float, b: float, t: float) -> np.ndarray:
        i0, i1 = self._span(a, b)
        j = int(np.searchsorted(self.distinct, t, side="left"))
        left = self.cum[j] - self.cum[i0]
        return np.stack([left, (self.cum[i1] - self.cum[i0]) - left])

    def specialise(self, t: float) -> None:
        self.splits.append(float(t))
        self.splits.sort()

    def edges(self) -> np.ndarray:
        return np.array([self.lo, *self.splits, self.hi], dtype=np.float64)

    @property
    def cut(self) -> list[tuple[float, float]]:
        e = self.edges()
        return [(float(e[i]), float(e[i + 1])) for i in range(len(e) - 1)]

    def labels(self) -> list[str]:
        return interval_labels(self.edges())

    def codes(self, values=None) -> np.ndarray:
        x = self.x if values is None else np.clip(np.asarray(values, dtype=np.float64), self.lo, self.hi)
        return np.searchsorted(np.asarray(self.splits, dtype=np.float64), x, side="right").astype(np.int64)

    def describe_cut(self) -> dict:
        splits = [int(s) for s in self.splits] if self.integer else list(self.splits)
        return {"kind": "numeric", "integer": self.integer, "bounds": [self.lo, self.hi], "splits": splits,
                "cut": self.labels()}


def check_values_in_taxonomy(tax: Taxonomy, values: pd.Series) -> list[str]:
    """Distinct values of a column missing from its taxonomy (checked on the few distinct values)."""
    distinct = pd.unique(values.astype(str))
    return [v for v in distinct if not tax.has_value(v)]


def numeric_values(series: pd.Series) -> np.ndarray:
    x = pd.to_numeric(series, errors="coerce").to_numpy(dtype=np.float64)
    if np.isnan(x).any():
        raise TaxonomyError(f"numeric column {series.name!r} has missing or non-numeric values")
    return x
