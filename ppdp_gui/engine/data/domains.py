"""Public column domains: the numeric bounds and category sets an ε-DP release may rely on.

A DP mechanism must know every column's domain *before* it looks at the records: the smallest age in the table,
or a category held by one patient, is itself private (diffprivlib's PrivacyLeakWarning is the same lesson). So a
domain is an input the custodian states — typed in, taken from a published code list, or carried by a taxonomy
file they chose — and it records where it came from:

- ``origin="public"``: stated by the custodian (domain editor, recipe, CLI) or read from a taxonomy they supplied;
- ``origin="data"``: read from the records. Only the publish path creates these, and only when the custodian
  opts in explicitly; the release is then labelled "not ε-DP: domain of C taken from the data" everywhere.

Mechanisms never read a domain from the records themselves: they ask `numeric_bounds` / `category_set`, which
look at `ColumnSpec.domain`, then at a public taxonomy, and otherwise return None. A stated list of values always
admits the missing-value label "(missing)" (`with_missing`; the class column's list excepted, see
`category_set`): missing values are kept as that category by default,
and whether a table has any is itself read from the data, so the label is part of every list, not added on
demand. The release note says so.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import pandas as pd  # the window's stand-in until a table is read (gui/lazy_pandas.py)

from ppdp_gui.engine.errors import DataError

if TYPE_CHECKING:  # pragma: no cover
    from ppdp_gui.engine.data.schema import ColumnSpec, Dataset

Origin = Literal["public", "data"]
_NUMBER = re.compile(r"(?<![\d.eE])[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


@dataclass(frozen=True)
class Domain:
    """A column's domain: numeric bounds [low, high] (optionally whole numbers on a grid `step`), or a category
    set. `origin` says whether the custodian stated it ("public") or it was read from the data ("data")."""

    low: float | None = None
    high: float | None = None
    integer: bool = False
    step: float | None = None
    categories: tuple[str, ...] | None = None
    origin: Origin = "public"

    def __post_init__(self) -> None:
        if self.categories is not None:
            cats = tuple(str(c) for c in self.categories)
            if not cats:
                raise DataError("a category domain needs at least one value")
            if len(set(cats)) != len(cats):
                raise DataError("a category domain lists a value twice")
            object.__setattr__(self, "categories", cats)
        if (self.low is None) != (self.high is None):
            raise DataError("a numeric domain needs both a lower and an upper bound")
        if self.low is not None:
            lo, hi = float(self.low), float(self.high)
            if not (math.isfinite(lo) and math.isfinite(hi)) or hi < lo:
                raise DataError(f"the bounds [{self.low}, {self.high}] are not a valid range")
            if self.integer and not (lo.is_integer() and hi.is_integer()):
                raise DataError(f"whole-number bounds must be whole numbers, got [{self.low}, {self.high}]")
            object.__setattr__(self, "low", lo)
            object.__setattr__(self, "high", hi)
        if self.step is not None and not (float(self.step) > 0 and math.isfinite(float(self.step))):
            raise DataError(f"the grid step must be a positive number, got {self.step}")
        if self.origin not in ("public", "data"):
            raise DataError(f"unknown domain origin {self.origin!r}")

    @property
    def is_numeric(self) -> bool:
        return self.low is not None

    @property
    def is_public(self) -> bool:
        return self.origin == "public"

    def describe(self) -> str:
        if self.is_numeric:
            text = f"{_num(self.low)} to {_num(self.high)}" + (" (whole numbers)" if self.integer else "")
        else:
            cats = list(self.categories or ())
            text = ", ".join(cats[:6]) + (f", … ({len(cats)} values)" if len(cats) > 6 else "")
        return text + (" — read from the data, not public" if self.origin == "data" else "")

    def to_json(self) -> dict:
        out: dict = {"origin": self.origin}
        if self.is_numeric:
            out.update({"low": self.low, "high": self.high, "integer": self.integer})
            if self.step is not None:
                out["step"] = self.step
        if self.categories is not None:
            out["categories"] = list(self.categories)
        return out

    @classmethod
    def from_json(cls, obj: dict) -> "Domain":
        if not isinstance(obj, dict):
            raise DataError("a column domain must be a JSON object")
        cats = obj.get("categories")
        return cls(low=obj.get("low"), high=obj.get("high"), integer=bool(obj.get("integer", False)),
                   step=obj.get("step"), categories=None if cats is None else tuple(str(c) for c in cats),
                   origin=obj.get("origin", "public"))


#: public code systems whose list ships with the package: name (as in `--domain diag_1=icd9`) -> words
CODE_SYSTEMS = {"icd9": "ICD-9-CM diagnosis categories", "icd10": "ICD-10 (WHO) diagnosis categories"}


def code_system_domain(name: str) -> Domain:
    """The public list of a code system shipped with the package (taxonomies/icd/): every 3-character
    category of ICD-9-CM (001 … V91, E000 … E999) or ICD-10 (A00 … Z99). It is the classification's own list, so
    it reveals nothing of the table; the ICD builder's public tree (`icd9:categories`) holds the same values."""
    key = str(name).strip().lower().replace("-", "")
    if key not in CODE_SYSTEMS:
        raise DataError(f"unknown code system {name!r}; the lists shipped are {', '.join(CODE_SYSTEMS)}")
    from ppdp_gui.engine.taxonomy.icd import icd_categories
    return Domain(categories=tuple(icd_categories(key).leaf_values()), origin="public")


def _num(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else f"{v:g}"


def spelled_outside(seen, categories, at_most: int = 5) -> str:
    """The table's values a category list lacks, each spelled exactly as the list must write it, with the near
    miss it probably meant: "'1.0' (the list has '1'), '(missing)'". For the custodian's eyes only (it names
    values of the table): problems and errors before a run, never a release note."""
    listed = [str(c) for c in categories]
    known = set(listed)
    numbers: dict[float, str] = {}
    for c in listed:
        try:
            numbers.setdefault(float(c), c)
        except ValueError:
            pass
    lowered = {c.strip().lower(): c for c in listed}
    out = []
    stray = [v for v in dict.fromkeys(str(s) for s in seen) if v not in known]
    for v in stray[:at_most]:
        near = lowered.get(v.strip().lower())
        if near is None:
            try:
                near = numbers.get(float(v))
            except ValueError:
                near = None
        out.append(f"'{v}'" + (f" (the list has '{near}')" if near is not None else ""))
    more = f" and {len(stray) - at_most} more" if len(stray) > at_most else ""
    return ", ".join(out) + more


# ---- where a mechanism gets a domain ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Bounds:
    low: float
    high: float
    integer: bool
    step: float | None
    source: str  # "domain" | "taxonomy"
    origin: Origin

    @property
    def is_public(self) -> bool:
        return self.origin == "public"


@dataclass(frozen=True)
class Categories:
    values: tuple[str, ...]
    source: str  # "domain" | "taxonomy"
    origin: Origin

    @property
    def is_public(self) -> bool:
        return self.origin == "public"


def taxonomy_numbers(tax) -> list[float]:
    """Every finite number written in any label of a taxonomy (leaves like '39', groups like '[20, 30)')."""
    numbers = [float(m) for i in range(len(tax)) for m in _NUMBER.findall(tax.label(i))]
    return [v for v in numbers if math.isfinite(v)]


def numeric_bounds(spec: "ColumnSpec") -> Bounds | None:
    """The column's bounds: its domain, else the smallest and largest number in its taxonomy's labels (with the
    taxonomy's origin), else None. Whole numbers when the domain says so or every taxonomy number is whole."""
    d = spec.domain
    if d is not None and d.is_numeric:
        return Bounds(d.low, d.high, d.integer, d.step, "domain", d.origin)
    tax = spec.taxonomy
    if tax is not None:
        numbers = taxonomy_numbers(tax)
        if numbers:
            integer = all(v == math.floor(v) for v in numbers)
            return Bounds(min(numbers), max(numbers), integer, None, "taxonomy", getattr(tax, "origin", "public"))
    return None


def with_missing(values: tuple[str, ...]) -> tuple[str, ...]:
    """A stated list of values with the missing-value label ("(missing)") added when it lacks it: a blank is a
    value of every categorical column under the default policy, whatever the data holds, so the list everyone
    may know includes it (adding it only when the table has a blank would read the table)."""
    from ppdp_gui.engine.data.schema import MISSING_LABEL
    return values if MISSING_LABEL in values else tuple(values) + (MISSING_LABEL,)


def category_set(spec: "ColumnSpec") -> Categories | None:
    """The column's categories: its domain's (with "(missing)", see `with_missing`, except for the class column:
    its list is the data user's set of labels, and an extra class would change the classifier and InfoGain's
    sensitivity, so a blank outcome is a class only when the custodian lists it), else its taxonomy's leaves
    (with the taxonomy's origin), else None."""
    from ppdp_gui.engine.data.schema import Role
    d = spec.domain
    if d is not None and d.categories is not None:
        values = d.categories if spec.role == Role.CLASS else with_missing(d.categories)
        return Categories(values, "domain", d.origin)
    tax = spec.taxonomy
    if tax is not None:
        return Categories(tuple(tax.leaf_values()), "taxonomy", getattr(tax, "origin", "public"))
    return None


# ---- what a mechanism needs, and filling it from the data on explicit request -----------------------------------
@dataclass(frozen=True)
class DomainNeed:
    """A DP mechanism needs `what` ("bounds" or "categories") of `column` to be public."""

    column: str
    what: Literal["bounds", "categories"]

    def describe(self) -> str:
        return ("public lower and upper bounds" if self.what == "bounds" else "a public list of its values")


def need_status(data: "Dataset", need: DomainNeed) -> str:
    """'public', 'data' (only a data-derived domain or taxonomy) or 'missing'."""
    spec = data.spec(need.column)
    found = numeric_bounds(spec) if need.what == "bounds" else category_set(spec)
    if found is None:
        return "missing"
    return "public" if found.is_public else "data"


def domain_from_data(series: pd.Series, what: str) -> Domain:
    """The domain the records themselves show (min/max, or the distinct values), marked origin="data"."""
    if what == "bounds":
        import numpy as np  # here, not at the top: the window imports this module before it shows (bench_start)
        x = pd.to_numeric(series, errors="coerce").to_numpy(dtype=float)
        x = x[np.isfinite(x)]
        if not x.size:
            raise DataError(f"column {series.name!r} has no numbers to take bounds from", column=str(series.name))
        integer = bool(np.all(x == np.floor(x)))
        return Domain(low=float(x.min()), high=float(x.max()), integer=integer, origin="data")
    values = sorted(pd.unique(series.dropna().astype(str)))
    return Domain(categories=tuple(values), origin="data")


def fill_from_data(data: "Dataset", needs) -> tuple["Dataset", list[str]]:
    """`data` with every unmet or data-derived need given a domain read from the records (origin "data"), and
    the caveat for each ("domain of C taken from the data"). Only for an explicit opt-in or a local simulation."""
    caveats = []
    for need in needs:
        status = need_status(data, need)
        if status == "public":
            continue
        if status == "missing":
            data = data.with_column(need.column, domain=domain_from_data(data.frame[need.column], need.what))
        caveats.append(f"domain of {need.column} taken from the data")
    return data, list(dict.fromkeys(caveats))
