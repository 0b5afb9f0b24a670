"""Typed claims: what a release promises, as data the independent checker can recount on the written file.

A mechanism states its guarantee as claims (`KAnonymity(k=10, columns=("age", "zip"))`, `DifferentialPrivacy(ε=1)`)
instead of string keys in a metadata dict, so a typo cannot silently skip a check and the release note can say
exactly what holds. Every claim names the table it is about ("table" is the main released table; fragments and
other parts use their own names). `engine.checks` recounts each claim that can be recounted on the bytes actually
written; `DifferentialPrivacy` itself cannot be recounted, but the `PublicSchema` claim that comes with it can:
the written table holds only the declared columns and only labels from the public (or noisy) output domain, so no
raw value slipped through.

This module imports nothing from the mechanisms or the checker, so both can depend on it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Mapping, Union

MAIN_TABLE = "table"


def _frac(value) -> str:
    return str(Fraction(value))


def _eps_text(value) -> str:
    return f"{float(value):.4g}"


@dataclass(frozen=True)
class KAnonymity:
    """Every combination of the quasi-identifier values in `columns` is shared by at least k rows."""

    k: int
    columns: tuple[str, ...]
    table: str = MAIN_TABLE

    def describe(self) -> str:
        return (f"{self.table}: every combination of {', '.join(self.columns)} is shared by at least {self.k} rows "
                f"(k-anonymity, k = {self.k})")

    def to_json(self) -> dict:
        return {"claim": "k-anonymity", "table": self.table, "k": int(self.k), "columns": list(self.columns)}


@dataclass(frozen=True)
class LDiversity:
    """Every group of rows sharing the `columns` values holds l well-represented values of `column`."""

    l: int
    kind: str  # "distinct" | "entropy" | "recursive"
    column: str
    columns: tuple[str, ...]
    table: str = MAIN_TABLE
    c: float | None = None  # recursive (c, l)-diversity only

    def describe(self) -> str:
        kind = f"recursive (c = {self.c:g}, l)" if self.kind == "recursive" and self.c else self.kind
        return f"{self.table}: every group holds at least {self.l} {kind} values of {self.column!r} ({kind} l-diversity)"

    def to_json(self) -> dict:
        return {"claim": "l-diversity", "table": self.table, "l": int(self.l), "kind": self.kind,
                "column": self.column, "columns": list(self.columns), "c": self.c}


@dataclass(frozen=True)
class TCloseness:
    """Room for t-closeness: the distribution of `column` in every group is within t of the whole table's."""

    t: float
    column: str
    columns: tuple[str, ...]
    distance: str = "equal"  # "equal" | "ordered" | "hierarchical"
    table: str = MAIN_TABLE

    def describe(self) -> str:
        return f"{self.table}: the {self.column!r} distribution of every group is within t = {self.t:g} of the whole"

    def to_json(self) -> dict:
        return {"claim": "t-closeness", "table": self.table, "t": self.t, "column": self.column,
                "columns": list(self.columns), "distance": self.distance}


@dataclass(frozen=True)
class Suppression:
    """Room for row suppression: at most `max_share` of the input rows were left out."""

    max_share: float
    table: str = MAIN_TABLE

    def describe(self) -> str:
        return f"{self.table}: at most {100 * self.max_share:g} % of the rows were suppressed"

    def to_json(self) -> dict:
        return {"claim": "suppression", "table": self.table, "max_share": self.max_share}


@dataclass(frozen=True)
class RiskBound:
    """Room for re-identification risk thresholds (e.g. prosecutor model, highest risk ≤ 1/k)."""

    model: str
    threshold: float
    columns: tuple[str, ...] = ()
    table: str = MAIN_TABLE

    def describe(self) -> str:
        return f"{self.table}: {self.model} re-identification risk at most {100 * self.threshold:g} %"

    def to_json(self) -> dict:
        return {"claim": "risk bound", "table": self.table, "model": self.model, "threshold": self.threshold,
                "columns": list(self.columns)}


@dataclass(frozen=True)
class DifferentialPrivacy:
    """(ε, δ)-differential privacy of everything released, for neighbours differing in one record.

    `caveats` name what breaks the guarantee (a domain read from the data, which the custodian opted into); a
    claim with caveats is reported as *not* ε-DP everywhere."""

    epsilon: Fraction
    delta: Fraction = Fraction(0)
    neighbouring: str = "one record added or removed"
    caveats: tuple[str, ...] = ()

    @property
    def holds(self) -> bool:
        return not self.caveats

    def describe(self) -> str:
        eps = f"ε = {_eps_text(self.epsilon)}" + (f", δ = {float(self.delta):.3g}" if self.delta else "")
        if self.caveats:
            return f"NOT differentially private as stated ({eps} only if: " + "; ".join(self.caveats) + ")"
        return f"{eps} differential privacy ({self.neighbouring})"

    def to_json(self) -> dict:
        return {"claim": "differential privacy", "epsilon": _frac(self.epsilon), "delta": _frac(self.delta),
                "neighbouring": self.neighbouring, "holds": self.holds, "caveats": list(self.caveats)}


@dataclass(frozen=True)
class PublicSchema:
    """The table holds exactly `columns`; each column in `labels` takes only those values (a public domain or a
    noisy output listed in the note), each in `counts` only non-negative integers. Recounted on the file."""

    columns: tuple[str, ...]
    labels: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    counts: tuple[str, ...] = ()
    table: str = MAIN_TABLE

    def describe(self) -> str:
        return f"{self.table}: only the columns {', '.join(self.columns)}, with values from the listed domains"

    def to_json(self) -> dict:
        return {"claim": "public schema", "table": self.table, "columns": list(self.columns),
                "labelled columns": sorted(self.labels), "count columns": list(self.counts)}


Claim = Union[KAnonymity, LDiversity, TCloseness, Suppression, RiskBound, DifferentialPrivacy, PublicSchema]
RECOUNTED = (KAnonymity, LDiversity, PublicSchema)  # what engine.checks recounts on the written bytes


def dp_claim(claims) -> DifferentialPrivacy | None:
    for c in claims:
        if isinstance(c, DifferentialPrivacy):
            return c
    return None


def with_caveats(claims, caveats) -> tuple:
    """The claims with `caveats` added to the DP claim (no DP claim: unchanged)."""
    caveats = tuple(caveats)
    if not caveats:
        return tuple(claims)
    out = []
    for c in claims:
        if isinstance(c, DifferentialPrivacy):
            c = DifferentialPrivacy(c.epsilon, c.delta, c.neighbouring, tuple(dict.fromkeys(c.caveats + caveats)))
        out.append(c)
    return tuple(out)


def guarantee_text(claims, fallback: str = "no formal guarantee") -> str:
    """One line for the window and the note: the DP claim if there is one, else the syntactic claims."""
    dp = dp_claim(claims)
    if dp is not None:
        return dp.describe()
    parts = []
    for c in claims:
        if isinstance(c, KAnonymity):
            parts.append(f"{c.k}-anonymity" + ("" if c.table == MAIN_TABLE else f" ({c.table})"))
        elif isinstance(c, LDiversity):
            parts.append(f"{c.kind} {c.l}-diversity on {c.column}" + ("" if c.table == MAIN_TABLE else f" ({c.table})"))
        elif isinstance(c, (TCloseness, Suppression, RiskBound)):
            parts.append(c.describe())
    return "; ".join(dict.fromkeys(parts)) or fallback
