"""Recount every claim a release makes, on the tables as a reader of the file sees them.

The publish path calls `check_claims` twice: once on the tables in memory right after the run (so a broken
mechanism is stopped before anything is written) and once on the bytes actually written — each temporary file is
read back with the reader, as text, after formula neutralisation and before the atomic rename. Only this second
recount is what the release note may call "checked". This module shares no code with the mechanisms (an
import-linter contract forbids `engine.checks` from importing `engine.mechanisms`), so a bug there cannot hide
itself here.

The unit. When the source table has a person column (Role.PERSON: whose row it is; never written), the publish
path passes `person` (its name) and `persons` (per released table, the person id of every released row, in the
order the rows are written: the source's ids taken at the source rows the mechanism says each released row
comes from — `Release.source_rows`, checks/persons.py). Every k, l, t and risk claim is then recounted in
distinct persons, and a claim that still counts rows fails: a table with several rows per patient is not
k-anonymous because k of one patient's rows share a group. Suppressed rows are left out of the persons too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping

import numpy as np
import pandas as pd

from ppdp_gui.engine.checks.anonymity import check_release, distinct_pairs
from ppdp_gui.engine.checks.closeness import TOLERANCE, closeness
from ppdp_gui.engine.claims import (PER_PERSON, RECOUNTED, KAnonymity, LDiversity, PublicSchema, RiskBound,
                                    Suppression, TCloseness)

_COUNT = re.compile(r"^[0-9]+$")


@dataclass(frozen=True)
class ClaimCheck:
    """The outcome of recounting one claim; `figures` (smallest group, …) are for the custodian record only."""

    claim: object
    ok: bool
    message: str
    figures: Mapping[str, float] = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"claim": self.claim.to_json(), "ok": self.ok, "message": self.message,
                "figures": {k: float(v) for k, v in self.figures.items()}}


def _identity(text: str) -> str:
    return text


def _text(series: pd.Series) -> pd.Series:
    return series.astype(str)


def _check_k(table: pd.DataFrame, claim: KAnonymity, name: Callable[[str], str],
             persons: np.ndarray | None = None) -> ClaimCheck:
    cols = [name(c) for c in claim.columns]
    res = check_release(table, cols, int(claim.k), persons=persons, person=claim.person)
    figures = {"smallest group": res.min_class}
    if persons is not None:
        figures["smallest group (persons)"] = res.min_class
    return ClaimCheck(claim, res.ok, res.message, figures)


def _check_l(table: pd.DataFrame, claim: LDiversity, name: Callable[[str], str],
             persons: np.ndarray | None = None) -> ClaimCheck:
    if claim.kind not in ("distinct", "entropy", "recursive"):
        return ClaimCheck(claim, False, f"the checker cannot recount {claim.kind} l-diversity")
    cols = [name(c) for c in claim.columns]
    res = check_release(table, cols, 1, sensitive=name(claim.column), l=int(claim.l), diversity=claim.kind,
                        c=claim.c, persons=persons, person=claim.person)
    return diversity_check(claim, res)


def diversity_check(claim: LDiversity, res) -> ClaimCheck:
    """The ClaimCheck of an l-diversity recount (`anonymity.check_release` or `check_counts`)."""
    figures = {} if res.min_l == float("inf") else {"smallest l": res.min_l}
    return ClaimCheck(claim, res.ok, res.message, figures)


def _groups(table: pd.DataFrame, cols: list[str]) -> np.ndarray:
    """Group id of every row: rows sharing the text of every column in `cols`."""
    if not cols:
        return np.zeros(len(table), dtype=np.int64)
    as_text = pd.DataFrame({c: table[c].astype(str).to_numpy() for c in cols})
    return as_text.groupby(cols, sort=False).ngroup().to_numpy().astype(np.int64)


def _check_t(table: pd.DataFrame, claim: TCloseness, name: Callable[[str], str], keep: np.ndarray,
             persons: np.ndarray | None = None) -> ClaimCheck:
    cols = [name(c) for c in claim.columns]
    missing = [c for c in cols + [name(claim.column)] if c not in table.columns]
    if missing:
        return ClaimCheck(claim, False, f"released table lacks column(s) {missing}")
    dist, reason = closeness(table, _groups(table, cols), name(claim.column), claim.distance, name=name,
                             order=claim.order, hierarchy=claim.hierarchy, keep=keep, persons=persons)
    return closeness_check(claim, dist, reason)


def closeness_check(claim: TCloseness, dist: np.ndarray, reason: str) -> ClaimCheck:
    """The ClaimCheck of a t-closeness recount (`closeness.closeness` on rows, or on weighted counts)."""
    if reason:
        return ClaimCheck(claim, False, f"t-closeness cannot be recounted: {reason}")
    worst = float(dist.max()) if dist.size else 0.0
    n_bad = int((dist > claim.t + TOLERANCE).sum())
    if n_bad:
        return ClaimCheck(claim, False, f"{n_bad} group(s) are farther than t = {claim.t:g} from the whole "
                                        f"table's {claim.column!r} distribution (largest {worst:.4g})",
                          {"largest distance": worst})
    return ClaimCheck(claim, True, f"every group's {claim.column!r} distribution is within t = {claim.t:g} "
                                   f"(largest {worst:.4g}, {claim.distance} distance)", {"largest distance": worst})


def _check_risk(table: pd.DataFrame, claim: RiskBound, name: Callable[[str], str], keep: np.ndarray,
                persons: np.ndarray | None = None) -> ClaimCheck:
    cols = [name(c) for c in claim.columns]
    missing = [c for c in cols if c not in table.columns]
    if missing:
        return ClaimCheck(claim, False, f"released table lacks column(s) {missing}")
    if claim.model not in ("highest", "average"):
        return ClaimCheck(claim, False, f"unknown risk model {claim.model!r}")
    group = _groups(table, cols)[keep]
    if persons is not None and group.size:  # a group's size is its distinct persons
        group = distinct_pairs(group, persons[keep])[0]
    sizes = np.bincount(group) if group.size else np.zeros(0, dtype=np.int64)
    return risk_check(claim, sizes[sizes > 0])


def risk_check(claim: RiskBound, sizes: np.ndarray) -> ClaimCheck:
    """A RiskBound recounted from the sizes of the released groups (suppressed rows left out); shared with the
    SQL recount of a large table (bigdata/recount.py)."""
    if sizes.size == 0:
        return ClaimCheck(claim, True, "no rows to link", {"highest risk": 0.0, "average risk": 0.0})
    highest, average = 1.0 / float(sizes.min()), sizes.size / float(sizes.sum())
    value = highest if claim.model == "highest" else average
    figures = {"highest risk": highest, "average risk": average}
    if value > claim.threshold + TOLERANCE:
        return ClaimCheck(claim, False, f"{claim.model} re-identification risk is {100 * value:.4g} %, above "
                                        f"{100 * claim.threshold:g} %", figures)
    return ClaimCheck(claim, True, f"{claim.model} re-identification risk {100 * value:.4g} % "
                                   f"(at most {100 * claim.threshold:g} %)", figures)


def _marker_rows(table: pd.DataFrame, claim: Suppression, name: Callable[[str], str]) -> np.ndarray | None:
    """Rows showing the marker in every column of the claim (None: a column is missing)."""
    cols = [name(c) for c in claim.columns]
    if any(c not in table.columns for c in cols) or not cols:
        return None
    marker = name(claim.marker)
    mask = np.ones(len(table), dtype=bool)
    for c in cols:
        mask &= table[c].astype(str).to_numpy() == marker
    return mask


def _check_suppression(table: pd.DataFrame, claim: Suppression, name: Callable[[str], str]) -> ClaimCheck:
    mask = _marker_rows(table, claim, name)
    if mask is None:
        return ClaimCheck(claim, False, f"released table lacks some of the columns {list(claim.columns)}")
    n, s = len(table), int(mask.sum())
    if n and s == n:
        return ClaimCheck(claim, True, "every row shows only the marker: the most general release, one group",
                          {"suppressed rows": 0.0})
    if s > claim.max_share * n + TOLERANCE:
        return ClaimCheck(claim, False, f"{s:,} of {n:,} rows are suppressed, more than "
                                        f"{100 * claim.max_share:g} %", {"suppressed rows": float(s)})
    return ClaimCheck(claim, True, f"{s:,} of {n:,} rows suppressed (at most {100 * claim.max_share:g} %)",
                      {"suppressed rows": float(s)})


def suppressed_rows(table: pd.DataFrame, claims: Iterable, table_name: str = "table") -> np.ndarray:
    """Rows of `table` that its Suppression claims mark as suppressed (for figures such as class sizes)."""
    return _suppressed(table, [c for c in claims if getattr(c, "table", None) == table_name], _identity)


def _suppressed(table: pd.DataFrame, claims: list, name: Callable[[str], str]) -> np.ndarray:
    """Rows the table's Suppression claims mark as suppressed (left out of the other recounts); none when every
    row shows the marker (the most general release is one group, recounted as such)."""
    out = np.zeros(len(table), dtype=bool)
    for claim in claims:
        if isinstance(claim, Suppression):
            mask = _marker_rows(table, claim, name)
            if mask is not None and not mask.all():
                out |= mask
    return out


def _check_schema(table: pd.DataFrame, claim: PublicSchema, name: Callable[[str], str]) -> ClaimCheck:
    expected = [name(c) for c in claim.columns]
    if list(map(str, table.columns)) != expected:
        extra = [c for c in map(str, table.columns) if c not in expected]
        lacking = [c for c in expected if c not in map(str, table.columns)]
        return ClaimCheck(claim, False, "the table's columns are not the declared ones"
                          + (f"; undeclared: {extra}" if extra else "") + (f"; missing: {lacking}" if lacking else ""))
    for col, labels in claim.labels.items():
        allowed = {name(str(v)) for v in labels}
        seen = pd.unique(_text(table[name(col)]))
        stray = [v for v in seen if v not in allowed]
        if stray:
            return ClaimCheck(claim, False, f"column {col!r} holds {len(stray)} value(s) outside its declared "
                                            "domain (a raw value may have slipped through)")
    for col in claim.counts:
        values = table[name(col)]
        if pd.api.types.is_integer_dtype(values.dtype):
            bad = bool((values.to_numpy() < 0).any())
        else:
            bad = not bool(_text(values).str.match(_COUNT).all())
        if bad:
            return ClaimCheck(claim, False, f"column {col!r} holds something other than non-negative whole counts")
    return ClaimCheck(claim, True, f"only the declared columns and values ({len(table):,} rows)")


def _unit_problem(claim, person: str | None, ids: np.ndarray | None, n_rows: int) -> str | None:
    """Why a per-person claim cannot be recounted as stated (None: it can). With a person column every k, l, t
    and risk claim must count persons (that column), and the released rows' person ids must line up."""
    if not isinstance(claim, PER_PERSON):
        return None
    if person is None:
        if claim.person is not None:
            return (f"the claim counts persons ({claim.person}) but the table has no person column to recount "
                    "them with")
        return None
    if claim.person != person:
        if claim.person is None:
            return (f"the release counts rows, but the table has a person column ({person}): several rows of one "
                    "person could make up a group, so the promise does not hold for persons")
        return f"the claim counts persons by {claim.person!r}, but the table's person column is {person!r}"
    if ids is None:
        return (f"the person ids ({person}) of the released rows are not known, so persons cannot be recounted "
                "(the mechanism did not say which of your rows each released row is, or what it said does not match "
                "the columns published as they are)")
    if len(ids) != n_rows:
        return (f"the person ids ({person}) of {len(ids):,} rows do not line up with the {n_rows:,} released "
                "rows")
    return None


def check_claims(tables: Mapping[str, pd.DataFrame], claims: Iterable, *,
                 neutralise: Callable[[str], str] | None = None, person: str | None = None,
                 persons: Mapping[str, np.ndarray] | None = None) -> list[ClaimCheck]:
    """Recount each recountable claim on its table. `neutralise` maps a declared column name or label to the
    text the file holds (formula neutralisation); identity for tables in memory. `person`: the source table's
    person column (None: one row is one unit); `persons`: per table, the person id of each of its rows, in the
    rows' order (see the module docstring)."""
    name = neutralise or _identity
    claims = [c for c in claims if isinstance(c, RECOUNTED)]
    persons = persons or {}
    out = []
    suppressed: dict[str, np.ndarray] = {}
    for claim in claims:
        table = tables.get(claim.table)
        if table is None:
            out.append(ClaimCheck(claim, False, f"the release has no table named {claim.table!r}"))
            continue
        ids = persons.get(claim.table) if person is not None else None
        problem = _unit_problem(claim, person, ids, len(table))
        if problem:
            out.append(ClaimCheck(claim, False, problem))
            continue
        ids = None if ids is None else np.asarray(ids)
        if claim.table not in suppressed:
            suppressed[claim.table] = _suppressed(table, [c for c in claims if c.table == claim.table], name)
        gone = suppressed[claim.table]
        kept = table if not gone.any() else table[~gone]
        kept_ids = ids if ids is None or not gone.any() else ids[~gone]
        if isinstance(claim, KAnonymity):
            out.append(_check_k(kept, claim, name, kept_ids))
        elif isinstance(claim, LDiversity):
            out.append(_check_l(kept, claim, name, kept_ids))
        elif isinstance(claim, TCloseness):
            out.append(_check_t(table, claim, name, ~gone, ids))
        elif isinstance(claim, RiskBound):
            out.append(_check_risk(table, claim, name, ~gone, ids))
        elif isinstance(claim, Suppression):
            out.append(_check_suppression(table, claim, name))
        else:
            out.append(_check_schema(table, claim, name))
    return out


def failures(checks: Iterable[ClaimCheck]) -> list[ClaimCheck]:
    return [c for c in checks if not c.ok]


def summary(checks: Iterable[ClaimCheck]) -> str:
    """One line for the custodian: what was recounted and the smallest group."""
    checks = list(checks)
    if not checks:
        return "nothing to recount"
    bad = failures(checks)
    if bad:
        return "; ".join(f"{c.claim.table}: {c.message}" for c in bad)
    smallest = [c.figures["smallest group"] for c in checks if "smallest group" in c.figures]
    persons = any("smallest group (persons)" in c.figures for c in checks)
    text = f"{len(checks)} claim(s) recounted, all hold"
    if smallest:
        text += f" (smallest group {int(np.min(smallest)):,} {'persons' if persons else 'rows'})"
    return text
