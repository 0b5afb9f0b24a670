"""Recount every claim a release makes, on the tables as a reader of the file sees them.

The publish path calls `check_claims` twice: once on the tables in memory right after the run (so a broken
mechanism is stopped before anything is written) and once on the bytes actually written — each temporary file is
read back with the reader, as text, after formula neutralisation and before the atomic rename. Only this second
recount is what the release note may call "checked". This module shares no code with the mechanisms (an
import-linter contract forbids `engine.checks` from importing `engine.mechanisms`), so a bug there cannot hide
itself here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping

import numpy as np
import pandas as pd

from ppdp_gui.engine.checks.anonymity import check_release
from ppdp_gui.engine.claims import RECOUNTED, KAnonymity, LDiversity, PublicSchema

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


def _check_k(table: pd.DataFrame, claim: KAnonymity, name: Callable[[str], str]) -> ClaimCheck:
    cols = [name(c) for c in claim.columns]
    res = check_release(table, cols, int(claim.k))
    return ClaimCheck(claim, res.ok, res.message, {"smallest group": res.min_class})


def _check_l(table: pd.DataFrame, claim: LDiversity, name: Callable[[str], str]) -> ClaimCheck:
    if claim.kind not in ("distinct", "entropy"):
        return ClaimCheck(claim, False, f"the checker cannot recount {claim.kind} l-diversity yet")
    cols = [name(c) for c in claim.columns]
    res = check_release(table, cols, 1, sensitive=name(claim.column), l=int(claim.l), diversity=claim.kind)
    figures = {} if res.min_l == float("inf") else {"smallest l": res.min_l}
    return ClaimCheck(claim, res.ok, res.message, figures)


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


def check_claims(tables: Mapping[str, pd.DataFrame], claims: Iterable, *,
                 neutralise: Callable[[str], str] | None = None) -> list[ClaimCheck]:
    """Recount each recountable claim on its table. `neutralise` maps a declared column name or label to the
    text the file holds (formula neutralisation); identity for tables in memory."""
    name = neutralise or _identity
    out = []
    for claim in claims:
        if not isinstance(claim, RECOUNTED):
            continue
        table = tables.get(claim.table)
        if table is None:
            out.append(ClaimCheck(claim, False, f"the release has no table named {claim.table!r}"))
            continue
        if isinstance(claim, KAnonymity):
            out.append(_check_k(table, claim, name))
        elif isinstance(claim, LDiversity):
            out.append(_check_l(table, claim, name))
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
    text = f"{len(checks)} claim(s) recounted, all hold"
    if smallest:
        text += f" (smallest group {int(np.min(smallest)):,} rows)"
    return text
