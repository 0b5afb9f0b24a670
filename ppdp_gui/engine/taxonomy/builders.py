"""Automatic taxonomies: numeric intervals, ordered bands from public bounds, named groups of categories, and
masking of codes (ZIP). Dates: taxonomy/dates.py; ICD-9 / ICD-10 codes: taxonomy/icd.py.

Every builder returns a Taxonomy whose leaves all sit at the same depth, so it is also a valid ARX hierarchy.
Interval edges come only from `low`, `width` and `fan_out` (public choices), never from where the data falls.
Leaves are the values as text, spelled the way ``Taxonomy.node_codes`` spells them (``series.astype(str)``), so
the tree matches the column it was built from. A builder whose leaves are the values found in the records marks
its taxonomy ``origin="data"`` (its leaves reveal them, so it is no public domain for ε-DP); one built only from
public bounds or a published code list stays ``origin="public"``. Siblings are in natural order (0-4, 5-9, 10-14).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Iterable, Mapping

import numpy as np
import pandas as pd

from ppdp_gui.engine.errors import TaxonomyError
from ppdp_gui.engine.taxonomy.order import natural_key
from ppdp_gui.engine.taxonomy.tree import Taxonomy

#: the one default width of the narrowest intervals, for every interval builder (the GUI's too): 10, as in 20-29
DEFAULT_INTERVAL_WIDTH = 10


def default_width(low: float, high: float, most: int = 100) -> float:
    """The width an interval builder starts with for values from `low` to `high`: DEFAULT_INTERVAL_WIDTH, unless
    that makes fewer than 2 or more than `most` intervals — then the smallest round width (1, 2 or 5 × 10^n) giving at most 10."""
    import math
    span = float(high) - float(low)
    if span <= 0 or 2 <= span / DEFAULT_INTERVAL_WIDTH <= most:
        return float(DEFAULT_INTERVAL_WIDTH)
    raw = span / 10
    power = 10 ** math.floor(math.log10(raw))
    return float(next(step * power for step in (1, 2, 5, 10) if step * power >= raw))


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


#: a top code: '90+' stands for 90 and over (HIPAA's ages over 89), placed with 90 in the intervals
TOP_CODE = r"^\s*(-?\d+(?:\.\d+)?)\s*\+\s*$"


def as_numbers(values) -> pd.Series:
    """Numbers of `values`, a top code such as '90+' read as its number (90), NaN where neither: the one rule by
    which `numeric_intervals` places values, and by which the Taxonomies step offers intervals for a text column
    (an age column holding '90+' is read as text)."""
    series = pd.Series(values)
    numbers = pd.to_numeric(series, errors="coerce")
    if numbers.isna().any():
        top = pd.to_numeric(series.astype(str).str.extract(TOP_CODE)[0], errors="coerce")
        numbers = numbers.fillna(top)
    return numbers


def numbers_with_top_codes(values, blank: str | None = None) -> bool:
    """Every present value is a number or a top code ('90+'), and there is at least one value. `blank`: the label
    of a kept missing value ("(missing)"), which is no value: the interval builders put it on a leaf of its own
    (from_spec.with_missing_leaf)."""
    present = pd.Series(values).dropna()
    if blank is not None:
        present = present[present.astype(str) != blank]
    return bool(len(present)) and not as_numbers(present).isna().any()


def numeric_intervals(column: str, values, width=DEFAULT_INTERVAL_WIDTH, fan_out: int = 2, low=None, high=None,
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
    numbers = as_numbers(series)  # '90+' goes with 90: the top interval holds it
    bad = text[numbers.isna()]
    if not bad.empty:
        raise TaxonomyError(f"column {column!r} has values that are not numbers (nor a top code such as '90+'): "
                            f"{sorted(set(bad))[:5]}")
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


def masking(column: str, values, mask_char: str = "*", root_label: str | None = None,
            pad: str | None = None) -> Taxonomy:
    """Codes generalised by masking one more character from the right per level: 47677 → 4767* → 476** → …

    Codes of different lengths are refused, naming two of them, unless `pad` is given: each shorter code is then
    masked as if padded on the left with `pad` to the longest length (ZIP 2134 read as 02134 → 0213* → …), while
    the leaf keeps the column's own spelling ('2134'), so the tree still matches the column. The fully masked code
    ('*****') is the root unless `root_label` is given.
    """
    codes = sorted({str(v) for v in pd.Series(values).dropna().astype(str)}, key=natural_key)
    if not codes:
        raise TaxonomyError(f"column {column!r} has no values to mask")
    if len(mask_char) != 1:
        raise TaxonomyError("the mask must be a single character")
    if pad is not None and len(pad) != 1:
        raise TaxonomyError("the padding must be a single character, e.g. '0'")
    by_length = {}
    for c in codes:
        by_length.setdefault(len(c), c)
    n = max(by_length)
    if len(by_length) > 1 and pad is None:
        short, long = by_length[min(by_length)], by_length[n]
        raise TaxonomyError(f"column {column!r}: codes have different lengths ({min(by_length)} to {n} characters, "
                            f"e.g. {short!r} and {long!r}); pad them on the left to {n} characters (ZIP codes: "
                            "with leading zeros) or choose padding for the masking")
    rows = []
    for code in codes:
        full = code.rjust(n, pad) if pad is not None else code
        row = [code] + [full[: n - k] + mask_char * k for k in range(1, n + 1)]
        if root_label is not None:
            row[-1] = root_label
        rows.append(row)
    tax = Taxonomy.from_paths(column, rows)
    tax.origin = "data"  # its leaves are the codes found in the records
    return tax


def ordered_intervals(column: str, low, high, width=DEFAULT_INTERVAL_WIDTH, fan_out: int = 2, step=1,
                      style: str = "interval", values=None, root_label: str = "*") -> Taxonomy:
    """Ordered bands from public bounds: leaves are every value low, low + step, …, high (e.g. ages 0 to 120);
    level 1 groups them into bands [low + i·width, low + (i+1)·width); each higher level merges `fan_out`
    neighbouring bands until one is left, the root. Nothing comes from the data, so the taxonomy is public.

    `style` "interval" labels a band '[0, 5)'; "range" labels it '0-4' (whole numbers only: the band's lowest and
    highest value). `values`, when given, are checked to be leaves (a value off the bounds or the step is named).
    """
    low_q, high_q, width_q, step_q = (_exact(low, "low"), _exact(high, "high"), _exact(width, "interval width"),
                                      _exact(step, "step"))
    if width_q <= 0 or step_q <= 0:
        raise TaxonomyError("the interval width and the step must be positive")
    if high_q < low_q:
        raise TaxonomyError(f"the highest value {float(high_q):g} is below the lowest {float(low_q):g}")
    if int(fan_out) != fan_out or fan_out < 2:
        raise TaxonomyError(f"fan-out must be a whole number of at least 2, got {fan_out!r}")
    if style not in ("interval", "range"):
        raise TaxonomyError(f"style must be 'interval' or 'range', got {style!r}")
    whole = step_q.denominator == 1 and low_q.denominator == 1 and width_q.denominator == 1
    if style == "range" and not whole:
        raise TaxonomyError("'range' labels (0-4) need whole-number bounds, width and step; use 'interval'")
    if (width_q / step_q).denominator != 1:
        raise TaxonomyError(f"the interval width {float(width_q):g} must be a whole number of steps "
                            f"({float(step_q):g})")
    count = int((high_q - low_q) / step_q) + 1
    if count > 1_000_000:
        raise TaxonomyError("these bounds and step make over a million values; choose a larger step")
    leaves = [low_q + i * step_q for i in range(count)]
    per_band = int(width_q / step_q)
    tax = Taxonomy(column, root_label=root_label)
    index = np.arange(count) // per_band
    levels = [index]
    while len(np.unique(levels[-1])) > 1:
        levels.append(levels[-1] // int(fan_out))
    node_of: dict[tuple[int, int], int] = {}
    top = max(len(levels) - 2, 0)
    for row, value in enumerate(leaves):
        parent = 0
        for level in range(top, -1, -1):
            i = int(levels[level][row])
            key = (level, i)
            if key not in node_of:
                span = per_band * int(fan_out) ** level * step_q
                lo = low_q + i * span
                label = (interval_label(lo, lo + span) if style == "interval"
                         else f"{_number_text(lo)}-{_number_text(lo + span - step_q)}")
                node_of[key] = tax.add_node(label, parent)
            parent = node_of[key]
        tax.add_node(_number_text(value), parent)
    tax._register_leaves()
    tax.origin = "public"
    if values is not None:
        texts = pd.Series(values).dropna().astype(str)
        outside = sorted({v for v in texts.unique() if not tax.has_value(v)}, key=natural_key)
        if outside:
            raise TaxonomyError(f"column {column!r}: {len(outside)} value(s) are not among {_number_text(low_q)}, "
                                f"{_number_text(low_q + step_q)}, … {_number_text(leaves[-1])} "
                                f"(e.g. {outside[:3]}); widen the bounds or change the step")
    return tax
