"""Typed claims: what a release promises, as data the independent checker can recount on the written file.

A mechanism states its guarantee as claims (`KAnonymity(k=10, columns=("age", "zip"))`, `DifferentialPrivacy(ε=1)`)
instead of string keys in a metadata dict, so a typo cannot silently skip a check and the release note can say
exactly what holds. Every claim names the table it is about ("table" is the main released table; fragments and
other parts use their own names). `engine.checks` recounts each claim that can be recounted on the bytes actually
written; `DifferentialPrivacy` itself cannot be recounted, but the `PublicSchema` claim that comes with it can:
the written table holds only the declared columns and only labels from the public (or noisy) output domain, so no
raw value slipped through.

The DP guarantee is typed too: its neighbouring relation is a `Neighbouring` (one unit added or removed, or
replaced) and its unit a `Unit` (every row of one person, at most c of them, or one row), so the note, the window,
the ledger and the verifier read the relation from the type instead of searching words for "replace".

This module imports nothing from the mechanisms or the checker, so both can depend on it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum
from fractions import Fraction
from typing import Mapping, Union

MAIN_TABLE = "table"


def _frac(value) -> str:
    return str(Fraction(value))


def epsilon_text(value) -> str:
    """ε — of a release, a budget's total, a cap, what is left — in the one spelling every document and screen uses
    (release note, custodian record, PDF, window, `ppdp`): four significant digits, "0.5", "1.25", "0.3333". A
    text such as "1/2" (as the ledger and the record store exact fractions) is read as that fraction."""
    if isinstance(value, str):
        value = Fraction(value.strip())
    return f"{float(value):.4g}"


def k_text(k) -> str:
    """k of a k-anonymity guarantee in the one spelling the plan, `ppdp run`, the window and a claim's words use:
    "k = 5" (read from the declared `KAnonymity` claim, engine/mechanisms/kanon/family.py)."""
    return f"k = {int(k)}"


def unit_words(person: str | None, count: int | None = None) -> str:
    """What the syntactic claims count: "persons (patient_nbr)" when the table has a person column (Role.PERSON),
    else "rows". A person's rows that fall into several groups count in each of them: an attacker who knows one
    of that person's rows still finds it among rows of at least k different persons."""
    if person is None:
        return "row" if count == 1 else "rows"
    return f"{'person' if count == 1 else 'persons'} ({person})"


def _unit(person: str | None) -> dict:
    """The note's "unit" of a per-person claim (nothing for a row-level one: its JSON stays as it was)."""
    return {} if person is None else {"unit": unit_words(person), "person column": person}


@dataclass(frozen=True)
class KAnonymity:
    """Every combination of the quasi-identifier values in `columns` is shared by at least k rows — or, with a
    `person` column (Role.PERSON, never released), by the rows of at least k distinct persons. The checker then
    recounts persons on the written rows with the source's person ids aligned to them (custodian side)."""

    k: int
    columns: tuple[str, ...]
    table: str = MAIN_TABLE
    person: str | None = None

    def describe(self) -> str:
        return (f"{self.table}: every combination of {', '.join(self.columns)} is shared by at least {self.k} "
                f"{unit_words(self.person, self.k)} (k-anonymity, {k_text(self.k)})")

    def to_json(self) -> dict:
        return {"claim": "k-anonymity", "table": self.table, "k": int(self.k), "columns": list(self.columns),
                **_unit(self.person)}


@dataclass(frozen=True)
class LDiversity:
    """Every group of rows sharing the `columns` values holds l well-represented values of `column`."""

    l: int
    kind: str  # "distinct" | "entropy" | "recursive"
    column: str
    columns: tuple[str, ...]
    table: str = MAIN_TABLE
    c: float | None = None  # recursive (c, l)-diversity only
    #: the person column: a value is then counted once per person holding it in the group (the entropy and the
    #: recursive rule weigh values by the persons holding them, not by their rows)
    person: str | None = None

    def describe(self) -> str:
        if self.kind == "recursive":
            return (f"{self.table}: in every group the most frequent value of {self.column!r} is less than "
                    f"c = {self.c:g} times the {unit_words(self.person)} holding its {self.l}th most frequent and "
                    f"rarer values (recursive ({self.c:g}, {self.l})-diversity)")
        per = "" if self.person is None else f", each value counted once per person ({self.person})"
        return (f"{self.table}: every group holds at least {self.l} {self.kind} values of {self.column!r} "
                f"({self.kind} l-diversity{per})")

    def to_json(self) -> dict:
        return {"claim": "l-diversity", "table": self.table, "l": int(self.l), "kind": self.kind,
                "column": self.column, "columns": list(self.columns), "c": self.c,
                **_unit(self.person)}


@dataclass(frozen=True)
class TCloseness:
    """The distribution of `column` in every group of rows sharing the `columns` values is within t of its
    distribution in the whole table (all rows, suppressed ones included), by the earth mover's distance of Li, Li &
    Venkatasubramanian (ICDE 2007) with one of three ground distances:

    - "equal": every two values are at distance 1 (EMD = half the L1 distance);
    - "ordered": values in `order` (empty: the table's distinct values in numeric order) at distance |i - j|/(m - 1);
    - "hierarchical": two values at the height of their lowest common ancestor in `hierarchy` (rows leaf → root,
      the ARX layout) divided by the tree's height.
    """

    t: float
    column: str
    columns: tuple[str, ...]
    distance: str = "equal"  # "equal" | "ordered" | "hierarchical"
    table: str = MAIN_TABLE
    order: tuple[str, ...] = ()
    hierarchy: tuple[tuple[str, ...], ...] = ()
    #: the person column: distributions count each (person, value) once — in a group, and in the whole table
    person: str | None = None

    def describe(self) -> str:
        per = "" if self.person is None else f", values counted once per person ({self.person})"
        return (f"{self.table}: the {self.column!r} distribution of every group is within t = {self.t:g} of the "
                f"whole table's ({self.distance} distance, t-closeness{per})")

    def to_json(self) -> dict:
        out = {"claim": "t-closeness", "table": self.table, "t": self.t, "column": self.column,
               "columns": list(self.columns), "distance": self.distance,
               **_unit(self.person)}
        if self.order:
            out["order"] = list(self.order)
        if self.hierarchy:
            out["hierarchy"] = [list(p) for p in self.hierarchy]
        return out


@dataclass(frozen=True)
class Suppression:
    """Suppressed rows stay in the table with every one of `columns` replaced by `marker` (ARX's convention: a
    row that says nothing about its quasi-identifiers, consistent with everyone). They are at most `max_share` of
    the table's rows, and the table's other claims hold for the remaining rows. A table in which every row shows
    only the marker is the most general release (one group) and is not counted as suppressed."""

    max_share: float
    columns: tuple[str, ...]
    marker: str = "*"
    table: str = MAIN_TABLE

    def describe(self) -> str:
        return (f"{self.table}: at most {100 * self.max_share:g} % of the rows are suppressed (shown with "
                f"{self.marker!r} in every quasi-identifier); the other promises hold for the remaining rows")

    def to_json(self) -> dict:
        return {"claim": "suppression", "table": self.table, "max_share": self.max_share,
                "columns": list(self.columns), "marker": self.marker}


RISK_MODELS = ("highest", "average")


@dataclass(frozen=True)
class RiskBound:
    """Prosecutor re-identification risk of the rows grouped by `columns`: a row's risk is 1 / its group's size;
    "highest" bounds the largest risk, "average" the mean over rows (= groups / rows). With a `person` column a
    group's size is its distinct persons (and the average is groups / the persons of all groups)."""

    model: str  # "highest" | "average"
    threshold: float
    columns: tuple[str, ...] = ()
    table: str = MAIN_TABLE
    person: str | None = None

    def describe(self) -> str:
        per = "" if self.person is None else f" of a person ({self.person})"
        return (f"{self.table}: {self.model} re-identification risk{per} (prosecutor) at most "
                f"{100 * self.threshold:g} %")

    def to_json(self) -> dict:
        return {"claim": "risk bound", "table": self.table, "model": self.model, "threshold": self.threshold,
                "columns": list(self.columns), **_unit(self.person)}


class Neighbouring(str, Enum):
    """The neighbouring relation a DP guarantee is stated for: the two tables whose releases must be nearly
    indistinguishable differ in one unit (`Unit`) *added or removed*, or *replaced by another* (then the number of
    units is published). The values are the words the budget ledger stores (engine/privacy), so a ledger written
    before this type existed reads the same."""

    ADD_REMOVE = "add/remove"
    REPLACE_ONE = "replace"

    def __str__(self) -> str:  # the stored value, not "Neighbouring.ADD_REMOVE"
        return self.value

    def __hash__(self) -> int:  # equal to its stored text, so it must hash like it (dicts keyed by either)
        return str.__hash__(self)

    def how(self, unit: "Unit") -> str:
        """'added or removed' / 'replaced by another patient's rows; the number of patients is published'."""
        if self is Neighbouring.ADD_REMOVE:
            return "added or removed"
        if unit.person_column:
            return f"replaced by another {unit.noun}'s rows; the number of {unit.noun}s is published"
        return "replaced by another; the number of rows is published"


@dataclass(frozen=True)
class Unit:
    """The unit of privacy: what one neighbouring step adds, removes or replaces. With a person column
    (Role.PERSON) it is every row of one person, at most `max_rows` of them (the mechanism bounds each person's
    contribution to that many rows before it runs); without one it is one row, and a person with several rows
    is protected less (by group privacy, m rows lose up to m·ε)."""

    person_column: str | None = None
    max_rows: int = 1
    noun: str = "patient"

    def __post_init__(self):
        if int(self.max_rows) < 1:
            raise ValueError("a unit holds at least one row")

    @property
    def per_person(self) -> bool:
        return self.person_column is not None

    def words(self) -> str:
        """'one patient (patient_nbr), up to 3 rows each' or 'one row; a person with several rows is protected
        less'."""
        if self.person_column:
            rows = "1 row" if self.max_rows == 1 else f"{self.max_rows} rows"
            return f"one {self.noun} ({self.person_column}), up to {rows} each"
        return "one row; a person with several rows is protected less"

    def to_json(self) -> dict:
        return {"person column": self.person_column, "max rows per person": int(self.max_rows) if
                self.person_column else 1, "words": self.words()}


ROW = Unit()  # one row is one unit: no person column


@dataclass(frozen=True)
class DifferentialPrivacy:
    """(ε, δ)-differential privacy of everything released, for neighbouring tables that differ in one `unit`
    (one person's rows, or one row) added or removed, or replaced (`neighbouring`).

    `caveats` name what breaks the guarantee (a domain read from the data, which the custodian opted into); a
    claim with caveats is reported as *not* ε-DP everywhere."""

    epsilon: Fraction
    delta: Fraction = Fraction(0)
    neighbouring: Neighbouring = Neighbouring.ADD_REMOVE
    caveats: tuple[str, ...] = ()
    unit: Unit = ROW

    def __post_init__(self):
        if not isinstance(self.neighbouring, Neighbouring):
            raise TypeError("neighbouring must be a Neighbouring, not words")
        if not isinstance(self.unit, Unit):
            raise TypeError("unit must be a Unit")

    @property
    def holds(self) -> bool:
        return not self.caveats

    def neighbours_text(self) -> str:
        """'neighbouring tables differ in all rows of one patient (added or removed)'."""
        u = self.unit
        which = f"all rows of one {u.noun}" if u.person_column else "one row"
        return f"neighbouring tables differ in {which} ({self.neighbouring.how(u)})"

    def statement(self) -> str:
        """'ε = 1 per patient (patient_nbr), up to 3 rows each; neighbouring tables differ in all rows of one
        patient (added or removed)' — or per row, with what that leaves unprotected."""
        eps = f"ε = {epsilon_text(self.epsilon)}" + (f", δ = {float(self.delta):.3g}" if self.delta else "")
        u = self.unit
        if u.person_column:
            return f"{eps} per {u.words().removeprefix('one ')}; {self.neighbours_text()}"
        return f"{eps} per row; {self.neighbours_text()}; a person with several rows is protected less"

    def describe(self) -> str:
        if self.caveats:
            eps = f"ε = {epsilon_text(self.epsilon)}" + (f", δ = {float(self.delta):.3g}" if self.delta else "")
            return f"NOT differentially private as stated ({eps} only if: " + "; ".join(self.caveats) + ")"
        return f"differential privacy: {self.statement()}"

    def to_json(self) -> dict:
        return {"claim": "differential privacy", "epsilon": _frac(self.epsilon), "delta": _frac(self.delta),
                "neighbouring": self.neighbours_text(), "neighbouring relation": self.neighbouring.value,
                "unit": self.unit.to_json(), "holds": self.holds, "caveats": list(self.caveats)}


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
# what engine.checks recounts on the written bytes
RECOUNTED = (KAnonymity, LDiversity, TCloseness, Suppression, RiskBound, PublicSchema)
#: the claims whose groups are counted in persons when the table has a person column
PER_PERSON = (KAnonymity, LDiversity, TCloseness, RiskBound)


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
            c = replace(c, caveats=tuple(dict.fromkeys(c.caveats + caveats)))
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
            parts.append(f"{c.k}-anonymity" + ("" if c.person is None else f" of persons ({c.person})")
                         + ("" if c.table == MAIN_TABLE else f" ({c.table})"))
        elif isinstance(c, LDiversity):
            kind = f"recursive ({c.c:g}, {c.l})" if c.kind == "recursive" and c.c else f"{c.kind} {c.l}"
            parts.append(f"{kind}-diversity on {c.column}" + ("" if c.table == MAIN_TABLE else f" ({c.table})"))
        elif isinstance(c, (TCloseness, Suppression, RiskBound)):
            parts.append(c.describe())
    return "; ".join(dict.fromkeys(parts)) or fallback
