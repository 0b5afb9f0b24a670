"""Recount the claims of a large record-level release in SQL: on the query after the run, on the file after export.

The same independence rule as engine/checks (it imports no mechanism): group the released quasi-identifier
columns as text, count rows per group, leave suppressed rows (the marker in every quasi-identifier) out of the
k recount and count them for the suppression claim. On the written file it reads the bytes back with DuckDB
(`read_csv(…, all_varchar)` or `read_parquet`), not with the query that wrote them.

k-anonymity, suppression, l-diversity (distinct, entropy, recursive: the rows per group and sensitive value by
one GROUP BY, then `checks.anonymity.check_counts`, the in-memory checker's own formulas), t-closeness (the same
GROUP BY with the suppressed flag, then `checks.closeness.closeness` with the counts as weights) and risk bounds
(the group sizes, then `checks.claims.risk_check`) are recounted here; any other claim on a large table fails the
check (and the mechanisms do not offer them for large tables).
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterable

import numpy as np
import pandas as pd

from ppdp_gui.engine.bigdata.source import literal, quote
from ppdp_gui.engine.checks.anonymity import check_counts
from ppdp_gui.engine.checks.claims import ClaimCheck, closeness_check, diversity_check, risk_check
from ppdp_gui.engine.checks.closeness import TOLERANCE, closeness
from ppdp_gui.engine.claims import RECOUNTED, KAnonymity, LDiversity, RiskBound, Suppression, TCloseness
from ppdp_gui.engine.errors import CheckError


def file_relation(path: Path, fmt: str) -> str:
    """The written file as a relation of text columns."""
    if fmt == "parquet":
        return f"read_parquet({literal(str(path))})"
    sep = "\t" if fmt == "tsv" else ","
    return (f"read_csv({literal(str(path))}, header=true, all_varchar=true, delim={literal(sep)}, quote='\"', "
            "escape='\"')")


def recount(con, relation: str, claims: Iterable, *, name: Callable[[str], str] | None = None) -> list[ClaimCheck]:
    """ClaimChecks of every recountable claim on `relation` (a table name, a subquery or a file reader); a
    relation that cannot be read (a broken written file) is a CheckError."""
    import duckdb
    try:
        return _recount(con, relation, claims, name)
    except duckdb.Error as exc:
        raise CheckError(f"the released rows could not be read back: {str(exc).strip().splitlines()[0]}") from None


def _recount(con, relation: str, claims: Iterable, name) -> list[ClaimCheck]:
    name = name or (lambda t: t)
    claims = [c for c in claims if isinstance(c, RECOUNTED)]
    marker_claims = [c for c in claims if isinstance(c, Suppression)]
    out = []
    total = int(con.execute(f"SELECT COUNT(*) FROM {relation} AS r").fetchall()[0][0])

    def gone_sql(claim: Suppression) -> str:
        cols = [name(c) for c in claim.columns]
        return "(" + " AND ".join(f"CAST({quote(c)} AS VARCHAR) = {literal(name(claim.marker))}" for c in cols) + ")"

    suppressed = [gone_sql(c) for c in marker_claims if c.columns]
    n_marked = [int(con.execute(f"SELECT COUNT(*) FROM {relation} AS r WHERE {g}").fetchall()[0][0])
                for g in suppressed]
    # as engine.checks: rows showing the marker are left out unless every row does (then it is one group)
    keep = " AND ".join(f"NOT {g}" for g, n in zip(suppressed, n_marked) if n < total) or "TRUE"
    for claim in claims:
        if getattr(claim, "person", None) is not None:  # the large-table engine refuses a person column
            out.append(ClaimCheck(claim, False, f"persons ({claim.person}) cannot be recounted by the large-table "
                                                "engine: it counts rows"))
            continue
        if isinstance(claim, KAnonymity):
            keys = ", ".join(f"CAST({quote(name(c))} AS VARCHAR)" for c in claim.columns)
            got = con.execute(f"SELECT MIN(n), COUNT(*), SUM(CASE WHEN n < {int(claim.k)} THEN 1 ELSE 0 END) "
                              f"FROM (SELECT COUNT(*) AS n FROM {relation} AS r WHERE {keep} "
                              f"GROUP BY {keys}) AS g").fetchall()[0]
            smallest = int(got[0] or 0)
            if got[1] == 0:
                out.append(ClaimCheck(claim, True, "empty release", {"smallest group": 0.0}))
            elif got[2]:
                out.append(ClaimCheck(claim, False, f"{int(got[2])} group(s) have fewer than k = {claim.k} rows "
                                                    f"(smallest {smallest})", {"smallest group": float(smallest)}))
            else:
                out.append(ClaimCheck(claim, True, f"every group has at least k = {claim.k} rows (smallest "
                                                   f"{smallest})", {"smallest group": float(smallest)}))
        elif isinstance(claim, Suppression):
            s = n_marked[marker_claims.index(claim)] if claim.columns else 0
            if total and s == total:
                out.append(ClaimCheck(claim, True, "every row shows only the marker: the most general release, "
                                                   "one group", {"suppressed rows": 0.0}))
            elif s > claim.max_share * total + TOLERANCE:
                out.append(ClaimCheck(claim, False, f"{s:,} of {total:,} rows are suppressed, more than "
                                                    f"{100 * claim.max_share:g} %", {"suppressed rows": float(s)}))
            else:
                out.append(ClaimCheck(claim, True, f"{s:,} of {total:,} rows suppressed (at most "
                                                   f"{100 * claim.max_share:g} %)", {"suppressed rows": float(s)}))
        elif isinstance(claim, LDiversity) and claim.kind in ("distinct", "entropy", "recursive"):
            got = _grouped(con, relation, [name(c) for c in claim.columns], keep, name(claim.column))
            counts = pd.Series(got["n"].to_numpy(dtype=np.int64),
                               index=pd.MultiIndex.from_arrays([got["g"].to_numpy(), got["s"].to_numpy()],
                                                               names=["g", "s"]))
            sizes = counts.groupby(level="g").sum().to_numpy()
            res = check_counts(sizes, 1, counts, sensitive=name(claim.column), l=int(claim.l),
                               diversity=claim.kind, c=claim.c)
            out.append(diversity_check(claim, res))
        elif isinstance(claim, TCloseness):
            out.append(_closeness(con, relation, claim, name, keep))
        elif isinstance(claim, RiskBound) and claim.model in ("highest", "average"):
            got = _grouped(con, relation, [name(c) for c in claim.columns], keep)
            out.append(risk_check(claim, got["n"].to_numpy(dtype=np.int64)))
        else:
            out.append(ClaimCheck(claim, False, f"{type(claim).__name__} cannot be recounted on a large table"))
    return out


def _closeness(con, relation: str, claim: TCloseness, name, keep: str) -> ClaimCheck:
    """t-closeness from one GROUP BY (group, sensitive value, kept or suppressed): `checks.closeness` with each
    entry weighted by its rows (the whole distribution counts every row, the groups only the kept ones)."""
    cols = [name(c) for c in claim.columns]
    keys = [f"CAST({quote(c)} AS VARCHAR) AS k{i}" for i, c in enumerate(cols)]
    keys += [f"CAST({quote(name(claim.column))} AS VARCHAR) AS s", f"({keep}) AS kept"]
    got = con.execute(f"SELECT {', '.join(keys)}, COUNT(*) AS n FROM {relation} AS r "
                      f"GROUP BY {', '.join(str(i + 1) for i in range(len(keys)))}").df()
    names = [f"k{i}" for i in range(len(cols))]
    group = (got.groupby(names, sort=False, dropna=False).ngroup().to_numpy() if names and len(got)
             else np.zeros(len(got), dtype=np.int64))
    table = pd.DataFrame({name(claim.column): got["s"].to_numpy(dtype=object)})
    dist, reason = closeness(table, group, name(claim.column), claim.distance, name=name, order=claim.order,
                             hierarchy=claim.hierarchy, keep=got["kept"].to_numpy(dtype=bool),
                             weights=got["n"].to_numpy(dtype=float))
    return closeness_check(claim, dist, reason)


def _grouped(con, relation: str, columns: list[str], keep: str, sensitive: str | None = None) -> pd.DataFrame:
    """Rows per released group (as text), left out the suppressed ones; with `sensitive`, per group and value:
    columns g (group number), s (the value as text) and n."""
    text = [f"CAST({quote(c)} AS VARCHAR)" for c in columns]
    keys = [f"{t} AS k{i}" for i, t in enumerate(text)] + ([f"CAST({quote(sensitive)} AS VARCHAR) AS s"]
                                                           if sensitive else [])
    group = ", ".join(str(i + 1) for i in range(len(keys)))
    sql = (f"SELECT {', '.join(keys + ['COUNT(*) AS n'])} FROM {relation} AS r WHERE {keep}"
           + (f" GROUP BY {group}" if keys else ""))
    got = con.execute(sql).df()
    if not len(got) or (not keys):
        got["g"] = 0
        return got[got["n"] > 0] if len(got) else got
    names = [f"k{i}" for i in range(len(columns))]
    got["g"] = got.groupby(names, sort=False, dropna=False).ngroup().to_numpy() if names else 0
    return got
