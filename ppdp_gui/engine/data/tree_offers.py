"""Trees to offer before a run: quasi-identifiers that, without a taxonomy, would show '*' in nearly every row
although one builder of the registry fits them without reading anything but their spelling — exact dates (the
Dates builder keeps the month or the year) and codes named as such, a ZIP or postcode (masking from the right
keeps the area). The Run step lists them with one button each; the Taxonomies step offers the same builder first
(data/coltypes.suggested_builder)."""

from __future__ import annotations

from dataclasses import dataclass

from ppdp_gui.engine.data.coltypes import code_by_name, needs_no_tree
from ppdp_gui.engine.data.schema import MISSING_LABEL
from ppdp_gui.engine.taxonomy.dates import looks_like_dates


@dataclass(frozen=True)
class TreeOffer:
    column: str
    builder: str  # a name of taxonomy/registry.py, built with its defaults (from_spec.build_taxonomy)
    reason: str  # for the custodian: it counts the column's values
    button: str


def exact_date_columns(data) -> list[str]:
    """The quasi-identifiers of `data` (a Dataset) without a taxonomy whose values are exact dates
    (taxonomy/dates.looks_like_dates): without a tree a date can only be kept or replaced by '*'."""
    return [name for name in data.quasi_identifiers
            if data.spec(name).taxonomy is None and data.spec(name).kind == "categorical"
            and looks_like_dates(data.frame[name], (MISSING_LABEL,))]


def tree_offers(data) -> list[TreeOffer]:
    """One offer per quasi-identifier of `data` without a taxonomy that the Dates or the masking builder fits."""
    dates = set(exact_date_columns(data))
    out = []
    for name in data.quasi_identifiers:
        spec = data.spec(name)
        if spec.taxonomy is not None or spec.kind != "categorical":
            continue
        values = data.frame[name]
        if name in dates:
            days = values[values.astype(str) != MISSING_LABEL].nunique()
            out.append(TreeOffer(name, "dates", f"{name} holds exact dates ({days:,} different days) and has no "
                                 "taxonomy: each date can only be kept or replaced by '*', so expect '*' in nearly "
                                 "every row. A Dates tree lets the release keep the month or the year instead.",
                                 f"Build a Dates tree for {name}"))
        elif code_by_name(name) and not needs_no_tree(values, (MISSING_LABEL,)):
            codes = values.nunique()  # with "(missing)", as the Mechanism step's warning counts them
            out.append(TreeOffer(name, "mask", f"{name} holds codes ({codes:,} different values) and has no "
                                 "taxonomy: each code can only be kept or replaced by '*', so expect '*' in nearly "
                                 "every row. Masking from the right keeps the area (90001 → 9000* → 900**).",
                                 f"Mask {name} from the right"))
    return out
