"""Automatic taxonomies: numeric intervals, named groups of categories, and masking of codes (ZIP, ICD).

Every builder returns a Taxonomy whose leaves all sit at the same depth, so it is also a valid ARX hierarchy.
Interval edges come only from `low`, `width` and `fan_out` (public choices), never from where the data falls;
only which intervals exist (non-empty ones) follows the data. Leaves are the values as text, spelled the way
``Taxonomy.node_codes`` spells them (``series.astype(str)``), so the tree matches the column it was built from.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Iterable, Mapping

import numpy as np
import pandas as pd

from ppdp_gui.engine.errors import TaxonomyError
from ppdp_gui.engine.taxonomy.tree import Taxonomy


def _number_text(value: Fraction) -> str:
    if value.denominator == 1:
        return str(value.numerator)
    return f"{float(value):g}"


def interval_label(lo: Fraction, hi: Fraction) -> str:
    """'[20, 30)': closed below, open above."""
    return f"[{_number_text(lo)}, {_number_text(hi)})"


def _exact(value, name: str) -> Fraction:
    try:
        out = Fraction(str(value)) if isinstance(value, float) else Fraction(value)
    except (TypeError, ValueError):
        raise TaxonomyError(f"{name} must be a number, got {value!r}") from None
    return out


def _decimal(value: float) -> Fraction:
    """A float as the decimal it prints as (0.3, not 0.29999…), so it lands in the interval a person expects."""
    return Fraction(str(float(value)))


def numeric_intervals(column: str, values, width, fan_out: int = 2, low=None, high=None,
                      root_label: str = "*") -> Taxonomy:
    """Leaves = distinct values; level 1 = intervals [low + i·width, low + (i+1)·width); each higher level merges
    `fan_out` neighbouring intervals of the level below, until one group is left, which becomes `root_label`.

    `low` defaults to the largest multiple of `width` not above the smallest value (which reveals the data's
    range: give public bounds when the taxonomy is for a DP mechanism). Values outside [low, high] are refused.
    """
    series = pd.Series(values).dropna()
    if series.empty:
        raise TaxonomyError(f"column {column!r} has no values to build intervals from")
    width_q = _exact(width, "interval width")
    if width_q <= 0:
        raise TaxonomyError(f"interval width must be positive, got {width!r}")
    if int(fan_out) != fan_out or fan_out < 2:
        raise TaxonomyError(f"fan-out must be a whole number of at least 2, got {fan_out!r}")
    fan_out = int(fan_out)
    text = series.astype(str)
    numbers = pd.to_numeric(series, errors="coerce")
    bad = text[numbers.isna()]
    if not bad.empty:
        raise TaxonomyError(f"column {column!r} has values that are not numbers: {sorted(set(bad))[:5]}")
    distinct = pd.DataFrame({"text": text.to_numpy(), "num": numbers.to_numpy(dtype=float)}).drop_duplicates("text")
    distinct = distinct.sort_values("num", kind="stable")
    vmin, vmax = float(distinct["num"].iloc[0]), float(distinct["num"].iloc[-1])
    if not (math.isfinite(vmin) and math.isfinite(vmax)):
        raise TaxonomyError(f"column {column!r} has infinite values")
    low_q = _exact(low, "low") if low is not None else math.floor(_decimal(vmin) / width_q) * width_q
    if _decimal(vmin) < low_q:
        raise TaxonomyError(f"column {column!r}: value {vmin:g} is below the lower bound {float(low_q):g}")
    if high is not None and _decimal(vmax) > _exact(high, "high"):
        raise TaxonomyError(f"column {column!r}: value {vmax:g} is above the upper bound {float(high):g}")
    steps = int(np.ceil((vmax - float(low_q)) / float(width_q)) + 2)
    if steps > 1_000_000:
        raise TaxonomyError(f"interval width {width!r} makes over a million intervals; choose a wider one")

    # level-1 index of each distinct value (exact comparison on Fractions of the few distinct values)
    index = np.array([math.floor((_decimal(v) - low_q) / width_q) for v in distinct["num"]], dtype=np.int64)
    level_index = [index]
    span = [1]
    while len(np.unique(level_index[-1])) > 1:
        level_index.append(level_index[-1] // fan_out)
        span.append(span[-1] * fan_out)

    tax = Taxonomy(column, root_label=root_label)
    node_of: dict[tuple[int, int], int] = {}
    n_levels = len(level_index)
    top = max(n_levels - 2, 0)  # the last level has one group: it is the root itself (level 1 always stays)
    for row, leaf in enumerate(distinct["text"]):
        parent = 0
        for level in range(top, -1, -1):
            i = int(level_index[level][row])
            key = (level, i)
            if key not in node_of:
                lo = low_q + i * span[level] * width_q
                node_of[key] = tax.add_node(interval_label(lo, lo + span[level] * width_q), parent)
            parent = node_of[key]
        tax.add_node(leaf, parent)
    tax._register_leaves()
    tax.origin = "data"  # its leaves are the values found in the records
    return tax


def grouped(column: str, groups: Mapping[str, Iterable[str]], root_label: str = "*") -> Taxonomy:
    """Root → named groups → values, e.g. {"Government": ["Federal-gov", "State-gov"], ...}."""
    if not groups:
        raise TaxonomyError(f"taxonomy of {column!r}: no groups given")
    rows: list[list[str]] = []
    group_of: dict[str, str] = {}
    for group, members in groups.items():
        members = [str(m) for m in members]
        if not members:
            raise TaxonomyError(f"taxonomy of {column!r}: group {group!r} has no values")
        for value in members:
            if value in group_of and group_of[value] != group:
                raise TaxonomyError(f"taxonomy of {column!r}: value {value!r} is in groups "
                                    f"{group_of[value]!r} and {group!r}")
            if value not in group_of:
                group_of[value] = group
                rows.append([value, str(group), root_label])
    return Taxonomy.from_paths(column, rows)


def masking(column: str, values, mask_char: str = "*", root_label: str | None = None) -> Taxonomy:
    """Codes generalised by masking one more character from the right per level: 47677 → 4767* → 476** → …

    All codes must have the same length (pad them first, e.g. ZIP 02134 not 2134). The fully masked code
    ('*****') is the root unless `root_label` is given.
    """
    codes = sorted({str(v) for v in pd.Series(values).dropna().astype(str)})
    if not codes:
        raise TaxonomyError(f"column {column!r} has no values to mask")
    lengths = {len(c) for c in codes}
    if len(lengths) != 1:
        raise TaxonomyError(f"column {column!r}: codes of different lengths {sorted(lengths)[:5]}; "
                            "pad them to one length first (e.g. with leading zeros)")
    if len(mask_char) != 1:
        raise TaxonomyError("the mask must be a single character")
    n = lengths.pop()
    rows = []
    for code in codes:
        row = [code[: n - k] + mask_char * k for k in range(n + 1)]
        if root_label is not None:
            row[-1] = root_label
        rows.append(row)
    tax = Taxonomy.from_paths(column, rows)
    tax.origin = "data"  # its leaves are the codes found in the records
    return tax
