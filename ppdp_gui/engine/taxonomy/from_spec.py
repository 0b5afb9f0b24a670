"""One call that builds a column's taxonomy by name — the same call for the window's buttons and `ppdp run`.

Which builders exist, their words and parameters: taxonomy/registry.py (the list both enumerate).

A *build spec* names a builder and its few public choices, spelled as on the command line:

    intervals[:WIDTH]          numeric intervals (builders.numeric_intervals); WIDTH defaults to the width the
                               Taxonomies step starts with (builders.default_width of the column's range)
    bands:LOW:HIGH[:WIDTH[:STEP]]  ordered bands from public bounds (builders.ordered_intervals), every value in
                               the column checked to be one of LOW, LOW+STEP, … HIGH
    dates[:FORMAT]             day → month → year → decade (dates.date_hierarchy); FORMAT (e.g. %d/%m/%Y) is read
                               from the values when not given (dates.date_format_of), never guessed
    mask[:PAD]                 codes masked from the right, 47677 → 4767* → … (builders.masking); PAD (e.g. 0)
                               pads shorter codes on the left
    icd9 | icd10[:LEVEL]       code → category → block → chapter (icd.icd_taxonomy); LEVEL "categories": every
                               3-character category of the classification as the leaves (icd.icd_categories),
                               public, with the public domain icd9 / icd10; the column's codes are then written
                               as their category (`recoded_values`; the loader and the Taxonomies step do it)
    flat                       every value found directly under * (Taxonomy.flat)

Origin follows the builder: a tree whose leaves are the column's own values (flat, intervals, dates, mask, icd)
is ``origin="data"`` — a differentially private release must not treat its values as public unless the
custodian allows data domains — and `bands` (built only from the stated bounds) and `icd9:categories` /
`icd10:categories` (the classification's shipped list) are ``origin="public"``.
A value "(missing)" (a blank kept as its own category, the default) gets a leaf of its own under the root in the
trees of numbers, dates and codes (`with_missing_leaf`), so those builders keep working on tables with blanks.
A spec that is not understood, or values a builder refuses, is one TaxonomyError naming the column (and an
example value when values are at fault), never a traceback.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from ppdp_gui.engine.taxonomy.labels import MISSING_LABEL
from ppdp_gui.engine.errors import TaxonomyError
from ppdp_gui.engine.taxonomy.builders import (DEFAULT_INTERVAL_WIDTH, as_numbers, default_width, masking,
                                               numeric_intervals, ordered_intervals)
from ppdp_gui.engine.taxonomy.tree import Taxonomy

from ppdp_gui.engine.taxonomy.registry import BUILDERS as _REGISTRY
from ppdp_gui.engine.taxonomy.registry import spec_help

#: builder names and how each is spelled (from the one registry the window and `ppdp` enumerate)
BUILDERS = {b.name: b.spelling for b in _REGISTRY}
SPEC_HELP = spec_help()


@dataclass(frozen=True)
class BuildSpec:
    """A builder (a key of BUILDERS) and its public choices; None means the builder's own default."""

    kind: str
    width: float | None = None
    low: float | None = None
    high: float | None = None
    step: float | None = None
    date_format: str | None = None
    pad: str | None = None
    level: str | None = None  # icd9 / icd10: "codes" (the table's, default) or "categories" (the public list)


def _number(column: str, text: str, what: str, spec: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise TaxonomyError(f"column {column!r}: the {what} in {spec!r} must be a number, got {text!r} "
                            f"(e.g. {column}=intervals:5 or {column}=bands:0:120:10)") from None
    if not math.isfinite(value):
        raise TaxonomyError(f"column {column!r}: the {what} in {spec!r} must be a finite number")
    return value


def parse_spec(column: str, text: str) -> BuildSpec:
    """'intervals:5' → BuildSpec('intervals', width=5.0); anything else malformed is a TaxonomyError that names
    the column and shows the accepted forms."""
    spec = str(text).strip()
    kind, _, rest = spec.partition(":")
    kind = kind.strip().lower()
    if kind not in BUILDERS:
        raise TaxonomyError(f"column {column!r}: unknown taxonomy builder {spec!r}; use one of {SPEC_HELP}")
    args = [a.strip() for a in rest.split(":")] if rest else []
    if kind == "intervals":
        if len(args) > 1:
            raise TaxonomyError(f"column {column!r}: {spec!r} — write intervals or intervals:WIDTH (e.g. intervals:5)")
        width = _number(column, args[0], "interval width", spec) if args else None
        if width is not None and width <= 0:
            raise TaxonomyError(f"column {column!r}: the interval width must be positive, got {args[0]}")
        return BuildSpec(kind, width=width)
    if kind == "bands":
        if not 2 <= len(args) <= 4:
            raise TaxonomyError(f"column {column!r}: {spec!r} — bands need public bounds: bands:LOW:HIGH[:WIDTH"
                                f"[:STEP]] (e.g. {column}=bands:0:120:10)")
        low, high = _number(column, args[0], "lowest value", spec), _number(column, args[1], "highest value", spec)
        width = _number(column, args[2], "band width", spec) if len(args) > 2 else None
        step = _number(column, args[3], "step", spec) if len(args) > 3 else None
        return BuildSpec(kind, width=width, low=low, high=high, step=step)
    if kind == "dates":
        fmt = rest.strip() or None  # a format may itself hold ':' (%H:%M), so the rest is taken whole
        if fmt is not None and "%" not in fmt:
            raise TaxonomyError(f"column {column!r}: {fmt!r} is not a date format; write e.g. dates:%d/%m/%Y")
        return BuildSpec(kind, date_format=fmt)
    if kind == "mask":
        if len(args) > 1 or (args and len(args[0]) != 1):
            raise TaxonomyError(f"column {column!r}: {spec!r} — write mask, or mask:PAD with one padding "
                                "character (e.g. mask:0 for ZIP codes)")
        return BuildSpec(kind, pad=args[0] if args else None)
    if kind in ("icd9", "icd10") and args:
        if len(args) > 1 or args[0].lower() not in ("codes", "categories"):
            raise TaxonomyError(f"column {column!r}: {spec!r} — write {kind}, {kind}:codes or {kind}:categories")
        return BuildSpec(kind, level=args[0].lower())
    if args:
        raise TaxonomyError(f"column {column!r}: {kind} takes no options, got {spec!r}")
    return BuildSpec(kind)


def interval_width_for(values) -> float:
    """The width the Taxonomies step starts with for a column: `default_width` of its range (a top code such as
    '90+' read as its number), DEFAULT_INTERVAL_WIDTH when there are no numbers."""
    numbers = as_numbers(pd.Series(values).dropna().unique()).dropna()
    if not len(numbers):
        return float(DEFAULT_INTERVAL_WIDTH)
    return default_width(float(numbers.min()), float(numbers.max()))


def recoded_values(column: str, values, spec: BuildSpec | str, keep=()):
    """The column's values as the tree `spec` builds expects them, when that tree is at a coarser level than the
    values: `icd9:categories` / `icd10:categories` write each code as its category (a public rule, see
    icd.to_categories); None when the values are used as they are (every other builder). `keep`: labels left
    unchanged (the missing-value category)."""
    if isinstance(spec, str):
        spec = parse_spec(column, spec)
    if spec.kind in ("icd9", "icd10") and spec.level == "categories":
        from ppdp_gui.engine.taxonomy.icd import to_categories
        return to_categories(column, values, spec.kind, keep=keep)
    return None


def build_taxonomy(column: str, values, spec: BuildSpec | str) -> Taxonomy:
    """The taxonomy `spec` describes for `column`, whose values (all of them, or their distinct values) are
    `values`. The window's buttons and `ppdp run --build-taxonomy` both come here, so one spec gives one tree."""
    if isinstance(spec, str):
        spec = parse_spec(column, spec)
    values = pd.Series(values)
    if spec.kind in ("icd9", "icd10") and spec.level == "categories":
        # a public list admits "(missing)" always, as every stated list of values does: whether the table has a
        # blank must not shape a public tree
        return with_missing_leaf(_build(column, values, spec))
    blanks = spec.kind in MISSING_AS_LEAF and bool((values.astype(str) == MISSING_LABEL).any())
    if blanks:  # kept missing values ("(missing)", the default policy): a leaf of their own under the root
        return with_missing_leaf(_build(column, values[values.astype(str) != MISSING_LABEL], spec))
    return _build(column, values, spec)


#: builders whose values are numbers, dates or codes: "(missing)" is none of them, so it is set aside and put
#: back as its own leaf (flat takes it as any value; bands checks every value against its public bounds)
MISSING_AS_LEAF = ("intervals", "dates", "mask", "icd9", "icd10")


def with_missing_leaf(tax: Taxonomy) -> Taxonomy:
    """`tax` with the value "(missing)" on its own branch directly under the root, padded ARX-style to the
    tree's height ("(missing)" at every level below the root) so every leaf stays at one depth."""
    paths = tax.to_paths()
    height = max(len(p) for p in paths)
    out = Taxonomy.from_paths(tax.column, paths + [[MISSING_LABEL] * (height - 1) + [tax.label(tax.root)]])
    out.origin = getattr(tax, "origin", "public")
    return out


def _build(column: str, values: pd.Series, spec: BuildSpec) -> Taxonomy:
    if spec.kind == "flat":
        # built from the table's own values: marked so, it cannot serve as a public domain for ε-DP
        return Taxonomy.flat(column, values.dropna().astype(str).unique(), origin="data")
    if spec.kind == "intervals":
        width = spec.width if spec.width is not None else interval_width_for(values)
        return numeric_intervals(column, values, width)
    if spec.kind == "bands":
        width = spec.width if spec.width is not None else DEFAULT_INTERVAL_WIDTH
        step = spec.step if spec.step is not None else 1
        return ordered_intervals(column, spec.low, spec.high, width, step=step, values=values)
    if spec.kind == "dates":
        from ppdp_gui.engine.taxonomy.dates import date_format_of, date_hierarchy
        fmt = spec.date_format if spec.date_format else date_format_of(column, values)
        return date_hierarchy(column, values, date_format=fmt)
    if spec.kind == "mask":
        return masking(column, values, pad=spec.pad)
    if spec.kind in ("icd9", "icd10") and spec.level == "categories":
        from ppdp_gui.engine.taxonomy.icd import icd_categories
        tax = Taxonomy.from_paths(column, icd_categories(spec.kind).to_paths())
        tax.origin = "public"  # the classification's own list: nothing read from the table
        return tax
    if spec.kind in ("icd9", "icd10"):
        from ppdp_gui.engine.taxonomy.icd import icd_taxonomy
        return icd_taxonomy(column, values, version=spec.kind)
    raise TaxonomyError(f"column {column!r}: unknown taxonomy builder {spec.kind!r}; use one of {SPEC_HELP}")
