"""The person as the unit of privacy for every DP mechanism: one shared contribution bound and one declared claim.

A hospital extract holds several rows per patient (encounters). A DP guarantee stated per row protects a patient
with m rows only to m·ε (group privacy). When the table has a person column (Role.PERSON, `Dataset.person_column`)
every DP mechanism here first keeps at most c rows of each person (`max_rows_per_person`, a public parameter,
default 1) — the rows kept drawn by the release's noise source, each person's independently of every other
person's — and then runs so that all c rows of one person together cost ε, either

- by *group privacy*: the mechanism runs at ε/c per row (c rows then lose at most c·ε/c = ε), or
- by *scaling the sensitivity*: the noise is calibrated to c times the change one row can make.

Each mechanism states which in its docstring (`DPMechanism.per_person`) and in its note. The ledger is charged the
ε the custodian asked for, which is the ε per person. Without a person column nothing is bounded and the unit is
one row; the claim says so in words ("a person with several rows is protected less").

Why the bound is sound: take D and D' that differ in all rows of one person P. The rows kept of every other person
are drawn the same way on both (independent draws per person), so the bounded tables differ only in P's at most c
rows: added or removed (add/remove), or — for a mechanism that publishes one row per record, with c = 1 — one row
replaced. The kept rows are then put in an order drawn by the noise source, so a row's position says nothing about
how many rows its person had or where they were in the file.

How many rows the bound left out is computed from the records: it goes to the custodian record only, never to the
release note.

A table larger than memory (`--engine duckdb` or `spark`) is bounded by the same rule with the same draws: one
uniform per row from the noise source in file order, per person the c rows with the smallest (bigdata/persons.py,
in SQL), then the kept rows' order drawn as here; so the same seed keeps the same rows on every engine.

A mechanism declares its guarantee from its parameters before it runs (`DPMechanism.declared_claims`); the cost
shown before the run (`privacy_cost` / `declared_cost`) is derived from that claim, and the release carries the
same claim, so what is priced, what is charged and what the note says cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from ppdp_gui.engine.claims import DifferentialPrivacy, Neighbouring, Unit
from ppdp_gui.engine.data.schema import Dataset
from ppdp_gui.engine.mechanisms.base import Mechanism, ParamSpec, PrivacyCost, Problem, cost_from_claims
from ppdp_gui.engine.noise.sampler import exact_epsilon

MAX_ROWS_PARAM = "max_rows_per_person"
MAX_ROWS = ParamSpec(
    MAX_ROWS_PARAM, "Rows per patient (c)", "int", default=1, low=1, high=1000,
    help="When a column is marked Person: at most this many rows of each patient are used (chosen at random), and "
         "ε protects all of them together. More rows keep more of the data but add more noise.",
    formula="each person's rows are cut to c, drawn at random; ε per person = c × ε per row (group privacy) or "
            "noise for c × the change one row makes (sensitivity × c); no person column: no effect")

#: how a mechanism makes c rows of one person cost ε (stated in its docstring and its note)
GROUP_PRIVACY = "group privacy: the mechanism runs at ε/c per row, so the c rows of one person lose at most ε"
SCALED_SENSITIVITY = "sensitivity × c: the noise is calibrated to c times the change one row can make"


@dataclass(frozen=True)
class Bounded:
    """The table a DP mechanism runs on: at most `unit.max_rows` rows per person, in an order drawn by the noise
    source. `kept`: the positions of those rows in the source table (None: every row, in order, as without a
    person column); `left_out`: how many rows the bound left out (custodian record only)."""

    data: Dataset
    kept: np.ndarray | None
    left_out: int
    #: a large table's kept rows: their SQL relation (bigdata/persons.py `BoundRows`); `kept` is then None
    rows: Any = None

    @property
    def n_kept(self) -> int | None:
        """Rows kept by the bound (None: no bound, every row)."""
        if self.rows is not None:
            return int(self.rows.n_kept)
        return None if self.kept is None else int(len(self.kept))


def unit_of(data: Dataset | None, params: dict[str, Any]) -> Unit:
    """The unit of privacy of a DP release of `data` with these parameters: every row of one person (at most c)
    when the table has a person column, else one row. Without data (a price shown before a table is chosen) the
    unit is one row."""
    person = None if data is None else data.person_column
    if person is None:
        return Unit()
    return Unit(person, int(params.get(MAX_ROWS_PARAM) or 1))


def bound_contribution(data: Dataset, unit: Unit, rng) -> Bounded:
    """At most `unit.max_rows` rows of each person of `data`, drawn with `rng` (the release's NoiseSource), in a
    random order; `data` itself when the unit is one row. Rows whose person is missing count as one person (the
    cautious reading: they may all be the same patient). Vectorised: one random key per row, sorted by (person,
    key); a row is kept when fewer than c rows of its person come before it."""
    if unit.person_column is None:
        return Bounded(data, None, 0)
    from ppdp_gui.engine.bigdata.large_dataset import is_large
    if is_large(data):  # the same draws and the same rule, in SQL: the rows stay in the file
        from ppdp_gui.engine.bigdata.persons import bound_rows
        n = data.n_rows
        rows = bound_rows(data.table, unit.person_column, unit.max_rows, rng.uniform(0.0, 1.0, size=n),
                          f"bound{id(data) & 0xFFFFFF:x}")
        rng.permutation(rows.n_kept)  # drawn as in memory (the kept rows' order), so the noise after is the same
        return Bounded(data, None, int(n - rows.n_kept), rows)
    frame = data.frame
    n = len(frame)
    codes, _ = pd.factorize(frame[unit.person_column], use_na_sentinel=False)
    key = rng.uniform(0.0, 1.0, size=n)
    order = np.lexsort((key, codes))
    sorted_codes = codes[order]
    positions = np.arange(n)
    starts = np.r_[True, sorted_codes[1:] != sorted_codes[:-1]] if n else np.zeros(0, dtype=bool)
    first = np.maximum.accumulate(np.where(starts, positions, 0)) if n else positions
    kept = order[(positions - first) < unit.max_rows]
    kept = kept[rng.permutation(len(kept))]  # an order that says nothing about the persons' rows
    bounded = data.with_frame(frame.iloc[kept].reset_index(drop=True), data.schema)
    return Bounded(bounded, kept.astype(np.int64), int(n - len(kept)))


def bound_record(bounded: Bounded) -> dict[str, Any]:
    """What the custodian record says about the bound (counts from the records: never for the note)."""
    if bounded.n_kept is None:
        return {}
    return {"rows left out by the bound per person": bounded.left_out,
            "rows used": bounded.n_kept}


def bound_warnings(bounded: Bounded, unit: Unit) -> tuple[str, ...]:
    """The custodian's warning about the rows the bound left out (a count from the records: never for the note)."""
    if bounded.n_kept is None or not bounded.left_out:
        return ()
    total = bounded.left_out + bounded.n_kept
    rows = "1 row" if unit.max_rows == 1 else f"{unit.max_rows} rows"
    verb = "was" if unit.max_rows == 1 else "were"
    return (f"At most {rows} of each {unit.noun} ({unit.person_column}) {verb} used, drawn at random: "
            f"{bounded.left_out:,} of {total:,} rows were left out. Raise Rows per patient (c) in the Mechanism "
            "step to use more of them (each row then gets more noise).",)


class DPMechanism(Mechanism):
    """A mechanism whose guarantee is ε-differential privacy, stated per person when the table has a person
    column. Subclasses set `neighbouring` (the relation their proof holds for) and `per_person` (GROUP_PRIVACY or
    SCALED_SENSITIVITY), take `epsilon` and MAX_ROWS among their parameters, and run on `self.bounded(...)`."""

    guarantee = "ε-DP"
    neighbouring: ClassVar[Neighbouring] = Neighbouring.ADD_REMOVE
    per_person: ClassVar[str] = GROUP_PRIVACY
    cost_note: ClassVar[str] = ""

    def unit(self, data: Dataset | None, params: dict[str, Any]) -> Unit:
        return unit_of(data, params)

    def declared_claims(self, data: Dataset | None, params: dict[str, Any]) -> tuple:
        """The DP claim a run with these resolved parameters makes: ε per unit, the neighbouring relation, the
        unit. Known before the run; the release carries exactly this claim.

        Declared once per plan: the plan's mechanism is the one that runs the release (the window sends its plan
        to the worker), so the claim priced, charged, written in the note and released is one object, and ε is
        made an exact fraction once — not again for the cost, the note's words and the release's claim."""
        key = (params["epsilon"], type(params["epsilon"]), self.unit(data, params))
        made = self.__dict__.get("_declared")
        if made is None or made[0] != key:
            made = (key, (DifferentialPrivacy(exact_epsilon(params["epsilon"]), neighbouring=self.neighbouring,
                                              unit=key[2]),))
            self._declared = made
        return made[1]

    def unit_note(self, data: Dataset | None, params: dict[str, Any]) -> dict[str, str]:
        """The note's words on the unit, the relation (typed value too) and how c rows cost ε: public facts."""
        dp = self.declared_claims(data, params)[0]
        return {"unit of privacy": dp.unit.words(),
                "per person": self.per_person if dp.unit.per_person else "no person column: ε per row",
                "neighbouring": dp.neighbours_text(), "neighbouring relation": dp.neighbouring.value}

    def declared_cost(self, data: Dataset | None, params: dict[str, Any]) -> PrivacyCost:
        return cost_from_claims(self.declared_claims(data, params), note=self.cost_note)

    def privacy_cost(self, **params: Any) -> PrivacyCost:
        """The price of a run with loose `params` on a table not yet known (one row as unit); only the two
        parameters the price reads are resolved, so a price can be shown before the columns are chosen."""
        resolved = {p.name: p.coerce(params.get(p.name, p.default)) for p in self.params
                    if p.name in ("epsilon", MAX_ROWS_PARAM)}
        return self.cost(resolved)

    def cost(self, params: dict[str, Any]) -> PrivacyCost:
        """The price of a run with resolved `params` on a table not yet known; `declared_cost` with the table
        says per whom."""
        return self.declared_cost(None, params)

    def row_epsilon(self, params: dict[str, Any], unit: Unit):
        """ε per row under group privacy: ε/c as an exact fraction; the parameter itself when c = 1 (so a release
        without a person column is the same as before persons were known)."""
        if unit.max_rows == 1:
            return params["epsilon"]
        return exact_epsilon(params["epsilon"]) / unit.max_rows

    def contribution_problems(self, data: Dataset, params: dict[str, Any]) -> list[Problem]:
        """A bound the mechanism cannot honour: a replace-one mechanism publishes its number of rows, which with
        c > 1 would tell how many rows each patient has. (The large-table engine bounds rows per person in SQL,
        bigdata/persons.py, with the in-memory rule.)"""
        c = int(params.get(MAX_ROWS_PARAM) or 1)
        person = data.person_column
        if person is None:
            if c > 1:
                return [Problem(f"Rows per patient (c) = {c} has no effect: no column is marked Person, so one row "
                                "is the unit of privacy", level="warning", param=MAX_ROWS_PARAM)]
            return []
        problems = []
        if c > 1 and self.neighbouring is Neighbouring.REPLACE_ONE:
            problems.append(Problem(
                f"{self.name} publishes one row per record, so its number of rows is public; with up to {c} rows "
                "per patient that number would tell how many rows patients have. Set Rows per patient (c) to 1.",
                param=MAX_ROWS_PARAM))
        return problems

    def bounded(self, data: Dataset, params: dict[str, Any], rng) -> tuple[Bounded, Unit]:
        unit = self.unit(data, params)
        return bound_contribution(data, unit, rng), unit


__all__ = ["MAX_ROWS", "MAX_ROWS_PARAM", "GROUP_PRIVACY", "SCALED_SENSITIVITY", "Bounded", "DPMechanism",
           "bound_contribution", "bound_record", "bound_warnings", "unit_of"]
