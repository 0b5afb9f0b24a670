"""The built-in audit tables: small pairs of neighbouring tables per DP mechanism, each built to show one way a
release could leak, and the loss it may show.

Small on purpose: a run takes milliseconds, so thousands of runs fit in seconds. Each scenario states what it
may lose and why, read from the release note's own public statements where the mechanism splits its budget:

- the whole release (tables + note) may lose the claimed ε per add/remove step (2ε for a changed record);
- DiffGen's counts, on a table whose cut cannot depend on the data (one candidate per choice), may lose only
  the note's "epsilon counts" (ε/2): a count that leaks more than its share is a bug even when the total looks
  small;
- one exponential-mechanism call may lose the note's "epsilon prime" ε'; with the Max utility, which adding a
  record never lowers, only ε'/2 (all scores move the same way, so the normaliser cancels half);
- calibration (white box, one table): the odds with which the exponential mechanism picks the better of two
  candidates whose scores the verifier computes itself must fit the stated ε' with the paper's sensitivity
  (InfoGain: log2 of the number of classes). A choice sharper than that uses more ε' than the note says.

Sizes: "smoke" (plumbing tests, not a verdict anyone should quote), "quick" (`ppdp verify --quick` and the
window's Self-check, under half a minute per mechanism), "full" (`ppdp verify`, the figures in docs/trust.md).
Runs are per table and split in halves (choose events on one, bound on the other); 0 leaves a table out of that
size (the two exponential-mechanism audits need thousands of runs to say anything, so only the full audit has
them; the quick one checks the exponential mechanism through the calibration).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, Literal

import numpy as np
import pandas as pd

from ppdp_gui.engine.data.domains import Domain
from ppdp_gui.engine.data.schema import ColumnSpec, Dataset, Role
from ppdp_gui.engine.errors import ParameterError
from ppdp_gui.engine.taxonomy import Taxonomy
from ppdp_gui.engine.verify.neighbours import (Neighbour, add_record, change_record, class_flip, domain_extreme,
                                               gap_record, remove_record)

Size = Literal["smoke", "quick", "full"]
SIZES = ("smoke", "quick", "full")

# allowed(note features of one run, claimed ε, distance) -> (allowed loss, why)
Allowed = Callable[[dict[str, Any], Fraction, int], tuple[float, str]]


def _frac(q: Fraction) -> str:
    """'2' for a whole number, '5/3 ≈ 1.667' otherwise."""
    return str(q) if q.denominator == 1 else f"{q} ≈ {float(q):.4g}"


def whole(note: dict[str, Any], eps: Fraction, distance: int) -> tuple[float, str]:
    if distance == 1:
        return float(eps), f"the claimed ε = {float(eps):g} for the whole release"
    return float(eps * distance), (f"{distance}ε = {float(eps * distance):g}: a changed record is one removed and "
                                   "one added")


def counts_share(note: dict[str, Any], eps: Fraction, distance: int) -> tuple[float, str]:
    share = Fraction(str(note["note/details/epsilon counts"]))
    return float(share), (f"the note's ε for the counts, {_frac(share)}: the cut cannot depend on the data here "
                          "(one candidate per choice), so only the counts can tell the tables apart")


def monotone_call(note: dict[str, Any], eps: Fraction, distance: int) -> tuple[float, str]:
    prime = Fraction(str(note["note/details/epsilon prime"]))
    return float(prime / 2), (f"ε'/2 = {_frac(prime / 2)} for one exponential-mechanism call (the note's "
                              f"ε' = {_frac(prime)}) with Max, a score adding a record never lowers")


def one_call(note: dict[str, Any], eps: Fraction, distance: int) -> tuple[float, str]:
    prime = Fraction(str(note["note/details/epsilon prime"]))
    return float(prime), f"the note's ε' = {_frac(prime)} for one exponential-mechanism call"


@dataclass
class Scenario:
    """One audit: a table, its neighbour (None for a calibration), the parameters, and what it may lose."""

    name: str
    words: str
    data: Dataset
    neighbour: Neighbour | None
    params: dict[str, Any]
    runs: dict[str, int]
    allowed: Allowed = whole
    view: tuple[str, ...] | None = None  # feature-name prefixes the events may use (None: everything)
    constant: tuple[str, ...] = ()  # feature prefixes the premise says cannot vary
    kind: Literal["dp", "calibration"] = "dp"
    choice: str = ""  # calibration: the feature naming the chosen candidate
    scores: dict[str, float] = field(default_factory=dict)  # calibration: the verifier's own scores
    sensitivity: float = 1.0  # calibration: the paper's sensitivity of the utility

    def runs_for(self, size: str) -> int:
        if size not in self.runs:
            raise ParameterError(f"unknown audit size {size!r}; use one of {', '.join(SIZES)}")
        return self.runs[size]


# ---- small tables -----------------------------------------------------------------------------------------------
def _cat(name: str, values, role=Role.QUASI_IDENTIFIER, taxonomy: bool = False) -> ColumnSpec:
    values = tuple(values)
    if taxonomy:
        return ColumnSpec(name, "categorical", role, Taxonomy.flat(name, values))
    return ColumnSpec(name, "categorical", role, domain=Domain(categories=values))


def _table(columns: dict[str, list], specs: list[ColumnSpec]) -> Dataset:
    return Dataset(pd.DataFrame(columns), tuple(specs))


WARDS = ("A", "B", "C", "D")
OUTCOME = ("no", "yes")


def laplace_scenarios() -> list[Scenario]:
    wards = _table({"ward": ["A"] * 6 + ["B"] * 3 + ["C"]}, [_cat("ward", WARDS)])
    ages = _table({"age": [31, 35, 38, 42, 47, 52, 58, 60]},
                  [ColumnSpec("age", "numeric", Role.QUASI_IDENTIFIER, domain=Domain(low=0, high=100, integer=True))])
    two = _table({"ward": ["A", "A", "B", "B", "C", "A"], "sex": ["F", "M", "F", "F", "M", "F"]},
                 [_cat("ward", WARDS), _cat("sex", ("F", "M"))])
    return [
        Scenario("one patient added", "a ward count moves by one", wards,
                 add_record(wards, {"ward": "C"}, "one patient added to ward C"),
                 {"epsilon": 2.0, "columns": "ward"}, {"smoke": 40, "quick": 800, "full": 8000}),
        Scenario("extreme age added", "a patient at the top of the public age range: moves any range read from "
                 "the data", ages, add_record(ages, domain_extreme(ages, "age"), "one patient aged 100 added"),
                 {"epsilon": 1.0, "columns": "age", "bins": 5}, {"smoke": 40, "quick": 300, "full": 2000}),
        Scenario("one patient removed, records output", "both released tables (records and noisy counts)", two,
                 remove_record(two, 0, "one patient (ward A, F) removed"),
                 {"epsilon": 1.0, "columns": "ward,sex", "output": "records"},
                 {"smoke": 40, "quick": 400, "full": 4000}),
        Scenario("one patient changed", "a patient moved from ward A to ward D: two counts move", wards,
                 change_record(wards, 0, {"ward": "D"}, "one patient's ward changed from A to D"),
                 {"epsilon": 1.0, "columns": "ward"}, {"smoke": 40, "quick": 400, "full": 4000}),
    ]


def _groups(cells: dict[tuple, int], names: tuple[str, ...]) -> dict[str, list]:
    rows = [key for key, n in cells.items() for _ in range(n)]
    return {name: [r[i] for r in rows] for i, name in enumerate(names)}


def info_gain(frame: pd.DataFrame, column: str, class_column: str) -> float:
    """InfoGain (bits) of splitting the whole table by the values of `column`: the verifier's own arithmetic,
    independent of DiffGen's scores module (a bug there must not hide itself here)."""
    def entropy(counts: np.ndarray) -> float:
        p = counts[counts > 0] / counts.sum()
        return float(-(p * np.log2(p)).sum())
    table = pd.crosstab(frame[column], frame[class_column]).to_numpy(dtype=float)
    n = table.sum()
    return entropy(table.sum(axis=0)) - sum(row.sum() / n * entropy(row) for row in table)


def diffgen_scenarios() -> list[Scenario]:
    outcome = _cat("outcome", OUTCOME, Role.CLASS)
    counts = _table(_groups({("w1", "yes"): 5, ("w1", "no"): 5, ("w2", "yes"): 2, ("w2", "no"): 6},
                            ("ward", "outcome")), [_cat("ward", ("w1", "w2"), taxonomy=True), outcome])
    ages = _table({"age": [31, 35, 38, 42, 44, 47, 52, 55, 58, 60], "sex": list("FMFFMMFMFM"),
                   "outcome": ["no", "no", "yes", "no", "yes", "yes", "no", "yes", "yes", "yes"]},
                  [ColumnSpec("age", "numeric", Role.QUASI_IDENTIFIER, domain=Domain(low=0, high=100, integer=True)),
                   _cat("sex", ("F", "M"), taxonomy=True), outcome])
    choice = _table(_groups({("a1", "b2", "yes"): 1, ("a2", "b1", "yes"): 6, ("a2", "b1", "no"): 8,
                             ("a2", "b2", "yes"): 7, ("a2", "b2", "no"): 8, ("a1", "b1", "no"): 1},
                            ("a", "b", "outcome")),
                    [_cat("a", ("a1", "a2"), taxonomy=True), _cat("b", ("b1", "b2"), taxonomy=True), outcome])
    split = _table({"x": [2.0] * 5 + [6.0] * 6, "outcome": ["yes"] * 5 + ["no"] * 6},
                   [ColumnSpec("x", "numeric", Role.QUASI_IDENTIFIER, domain=Domain(low=0, high=8)), outcome])
    gain = _table(_groups({("a1", "b1", "yes"): 2, ("a1", "b2", "yes"): 2, ("a2", "b1", "no"): 2,
                           ("a2", "b2", "no"): 2}, ("a", "b", "outcome")),
                  [_cat("a", ("a1", "a2"), taxonomy=True), _cat("b", ("b1", "b2"), taxonomy=True), outcome])
    gains = {"a": info_gain(gain.frame, "a", "outcome"), "b": info_gain(gain.frame, "b", "outcome")}
    return [
        Scenario("class majority flipped", "a patient who decides a ward's tied outcome: only the counts can tell",
                 counts, add_record(counts, class_flip(counts, ["ward"], "outcome"),
                                    "one patient (ward w1, outcome no) added: w1's 5–5 tie becomes a 'no' majority"),
                 {"epsilon": 4.0, "h": 1}, {"smoke": 40, "quick": 800, "full": 8000}, allowed=counts_share,
                 constant=("note/details/cut", "note/details/history")),
        Scenario("extreme age added", "a patient at the top of the public age range: moves any bound or split "
                 "grid read from the data", ages,
                 add_record(ages, domain_extreme(ages, "age"), "one patient aged 100 added"),
                 {"epsilon": 1.0, "h": 2}, {"smoke": 40, "quick": 200, "full": 2000}),
        Scenario("choice of the column to split", "a patient who raises one column's Max score only", choice,
                 add_record(choice, {"a": "a1", "b": "b1", "outcome": "yes"},
                            "one patient (a1, b1, yes) added"),
                 {"epsilon": 8.0, "h": 1}, {"smoke": 40, "quick": 0, "full": 12000}, allowed=monotone_call,
                 view=("note/details/history/0/column",)),
        Scenario("split point of a real number", "a patient in the widest gap between the values: moves where "
                 "the split falls (thresholds at 64 points, not 4 bins)", split,
                 add_record(split, gap_record(split, "x", "outcome"), "one patient at x = 4 added"),
                 {"epsilon": 10.0, "h": 1}, {"smoke": 40, "quick": 0, "full": 12000}, allowed=monotone_call,
                 view=("note/details/history/0/split",)),
        Scenario("InfoGain choice calibration", "the odds of choosing the informative column a over b must fit "
                 f"ε' with sensitivity log2 2 = 1 (InfoGain a = {gains['a']:.3g}, b = {gains['b']:.3g} bits)", gain,
                 None, {"epsilon": 8.0, "h": 1, "utility": "InfoGain"}, {"smoke": 40, "quick": 1200, "full": 8000},
                 allowed=one_call, kind="calibration", choice="note/details/history/0/column", scores=gains,
                 sensitivity=math.log2(len(OUTCOME))),
    ]


def scenarios_for(name: str) -> list[Scenario]:
    """The audit tables of the mechanism registered as `name`, read from its registry line (`registry._AUDITS`:
    the one list, so a mechanism added there — in a test too — is audited with no second list here); a
    ParameterError when it has none."""
    import importlib

    from ppdp_gui.engine.mechanisms import registry
    target = registry.audit_tables(name)
    if target is None:
        known = [n for n in registry.names() if registry.audit_tables(n)]
        raise ParameterError(f"there are no audit tables for {name!r} yet; the verifier knows "
                             f"{', '.join(known)}")
    module, function = target.split(":")
    return getattr(importlib.import_module(module), function)()
