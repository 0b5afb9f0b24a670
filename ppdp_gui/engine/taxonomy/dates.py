"""A taxonomy for dates: day → month → year → decade → *.

Labels: the day is the column's own text (the leaf), then '2020-03', '2020', '2020-2029', '*'. Leaves come either
from public bounds (`start`, `end`: every day between them, ISO spelled, origin "public") or from the column's
values (origin "data": the leaves reveal the dates found in the records). Values are read as ISO dates
(2020-03-07, optionally with a time) unless `date_format` is given (e.g. '%d/%m/%Y'): a day-first or month-first
guess would silently swap days and months, so other spellings need the format. Values that are not dates are
refused, with examples, rather than left out.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from ppdp_gui.engine.errors import TaxonomyError
from ppdp_gui.engine.taxonomy.tree import Taxonomy

LEVELS = ("month", "year", "decade")
MAX_DAYS = 200_000  # about 550 years of days


def _labels(dates: pd.DatetimeIndex, level: str) -> np.ndarray:
    if level == "month":
        return dates.strftime("%Y-%m").to_numpy(dtype=object)
    if level == "year":
        return dates.strftime("%Y").to_numpy(dtype=object)
    if level == "decade":
        start = (dates.year // 10) * 10
        return np.array([f"{d}-{d + 9}" for d in start], dtype=object)
    raise TaxonomyError(f"unknown date level {level!r}; use some of {', '.join(LEVELS)}")


def _parse(texts: pd.Series, column: str, date_format: str | None) -> pd.DatetimeIndex:
    parsed = pd.to_datetime(texts, format=date_format or "ISO8601", errors="coerce")
    bad = texts[parsed.isna()]
    if len(bad):
        examples = ", ".join(repr(v) for v in bad.unique()[:3])
        how = f"in the format {date_format!r}" if date_format else "ISO dates like 2020-03-07"
        raise TaxonomyError(f"column {column!r}: {bad.nunique():,} value(s) are not {how} (e.g. {examples}); give "
                            "the format of the dates (e.g. %d/%m/%Y) or correct those values")
    return pd.DatetimeIndex(parsed)


_SLASHED = r"^\s*(\d{1,2})([./-])(\d{1,2})\2(\d{4})\s*$"


_ISO_DAY = r"^\s*\d{4}-\d{1,2}-\d{1,2}(?:[ T][\d:.]+)?\s*$"


def looks_like_dates(values, missing=()) -> bool:
    """True when every value present (blanks and the `missing` labels set aside) is written as a day — 2020-03-07,
    07/03/2020, 03.07.2020 — and there is at least one: a column of exact dates, which a Dates tree can coarsen to
    the month or the year. Read from the values' spelling only; numbers (2020, 90001) are no dates."""
    texts = pd.Series(pd.Series(values).dropna().astype(str).unique())
    texts = texts[~texts.isin(list(missing))]
    if texts.empty:
        return False
    return bool((texts.str.match(_ISO_DAY) | texts.str.match(_SLASHED)).all())


def date_format_of(column: str, values) -> str | None:
    """The format of a column's dates, for `date_hierarchy`: None for ISO dates (2020-03-07), '%d/%m/%Y' or
    '%m/%d/%Y' (with '/', '.' or '-') when some value shows which comes first (a first number above 12 is a
    day; a second one above 12 is a day too). Never a guess: when every value fits both readings, or the values
    mix spellings, a TaxonomyError says so and what to do."""
    texts = pd.Series(pd.Series(values).dropna().astype(str).unique())
    if texts.empty:
        raise TaxonomyError(f"column {column!r} has no dates to build a taxonomy from")
    iso = pd.to_datetime(texts, format="ISO8601", errors="coerce")
    if iso.notna().all():
        return None
    parts = texts.str.extract(_SLASHED)
    if parts[0].isna().any():
        bad = texts[parts[0].isna() & iso.isna()]
        examples = ", ".join(repr(v) for v in bad.iloc[:3])
        raise TaxonomyError(f"column {column!r}: some values are not dates written as 2020-03-07 or 07/03/2020 "
                            f"(e.g. {examples}); correct them in your table first")
    separators = parts[1].unique()
    if len(separators) != 1:
        raise TaxonomyError(f"column {column!r} mixes date spellings ({', '.join(map(repr, separators))}); write "
                            "them one way in your table first")
    first, second = parts[0].astype(int), parts[2].astype(int)
    day_first, month_first = bool((first > 12).any()), bool((second > 12).any())
    sep = separators[0]
    if day_first and not month_first:
        return f"%d{sep}%m{sep}%Y"
    if month_first and not day_first:
        return f"%m{sep}%d{sep}%Y"
    raise TaxonomyError(f"column {column!r}: cannot tell whether its dates start with the day or the month "
                        f"(e.g. {texts.iloc[0]!r}); write them as 2020-03-07 in your table first")


def date_hierarchy(column: str, values=None, *, start=None, end=None, levels: Sequence[str] = LEVELS,
                   date_format: str | None = None, root_label: str = "*") -> Taxonomy:
    """Day → `levels` (month, year, decade, in that order; any of them may be left out) → root.

    With `start` and `end`, the leaves are every day between them (public; `values` are then only checked to be
    among them); without, the leaves are the distinct `values` (their text) and the taxonomy's origin is "data".
    """
    unknown = set(levels) - set(LEVELS)
    if unknown:
        raise TaxonomyError(f"unknown date level(s) {sorted(unknown)}; use some of {', '.join(LEVELS)}")
    levels = [lv for lv in LEVELS if lv in set(levels)]
    if start is not None or end is not None:
        if start is None or end is None:
            raise TaxonomyError("give both the first and the last date, or neither")
        first, last = pd.Timestamp(start), pd.Timestamp(end)
        if last < first:
            raise TaxonomyError(f"the last date {last.date()} is before the first {first.date()}")
        days = pd.date_range(first.normalize(), last.normalize(), freq="D")
        if len(days) > MAX_DAYS:
            raise TaxonomyError(f"{len(days):,} days are too many for one taxonomy; narrow the range")
        leaves = pd.Series(days.strftime("%Y-%m-%d"))
        dates, origin = days, "public"
    else:
        if values is None:
            raise TaxonomyError(f"column {column!r}: give the dates, or the first and last date")
        texts = pd.Series(values).dropna().astype(str)
        leaves = pd.Series(texts.unique())
        if leaves.empty:
            raise TaxonomyError(f"column {column!r} has no dates to build a taxonomy from")
        dates, origin = _parse(leaves, column, date_format), "data"
        order = np.argsort(dates.to_numpy(), kind="stable")
        leaves, dates = leaves.iloc[order].reset_index(drop=True), dates[order]
    paths = np.column_stack([leaves.to_numpy(dtype=object)] + [_labels(dates, lv) for lv in levels]
                            + [np.full(len(leaves), root_label, dtype=object)])
    tax = Taxonomy.from_paths(column, paths.tolist())
    tax.origin = origin
    if origin == "public" and values is not None:
        texts = pd.Series(values).dropna().astype(str).unique()
        outside = [v for v in texts if not tax.has_value(v)]
        if outside:
            raise TaxonomyError(f"column {column!r}: {len(outside):,} value(s) are not days between {start} and "
                                f"{end} written as 2020-03-07 (e.g. {outside[:3]})")
    return tax
