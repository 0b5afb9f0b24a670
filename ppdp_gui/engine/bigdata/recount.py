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

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

import numpy as np
import pandas as pd

from ppdp_gui.engine.bigdata.columns import N, helper
from ppdp_gui.engine.bigdata.source import literal, quote
from ppdp_gui.engine.checks.anonymity import check_counts
from ppdp_gui.engine.checks.claims import ClaimCheck, closeness_check, diversity_check, risk_check
from ppdp_gui.engine.checks.closeness import TOLERANCE, closeness
from ppdp_gui.engine.claims import RECOUNTED, KAnonymity, LDiversity, RiskBound, Suppression, TCloseness, k_text
from ppdp_gui.engine.errors import CheckError

#: the tally's own columns, named so that no released column clashes with them (bigdata/columns.py, HELPER)
H, KEPT, G, S = helper("h"), helper("kept"), helper("g"), helper("s")


def file_relation(path: Path, fmt: str) -> str:
    """The written file as a relation of text columns."""
    if fmt == "parquet":
        return f"read_parquet({literal(str(path))})"
    sep = "\t" if fmt == "tsv" else ","
    return (f"read_csv({literal(str(path))}, header=true, all_varchar=true, delim={literal(sep)}, quote='\"', "
            "escape='\"')")


def recount(con, relation: str, claims: Iterable, *, name: Callable[[str], str] | None = None) -> list[ClaimCheck]:
    """ClaimChecks of every recountable claim on `relation` (a table name, a subquery or a file reader), from one
    pass over it (`tally`); a relation that cannot be read (a broken written file) is a CheckError."""
    return tally(con, relation, claims, name=name).checks(claims)


def tally(con, relation: str, claims: Iterable, *, name: Callable[[str], str] | None = None,
          extra: Iterable[str] = (), hash_columns: Iterable[str] | None = None, as_text: Iterable[str] = (),
          weight: str | None = None) -> "Tally":
    """One `GROUP BY` over `relation`: the rows per combination (as text) of every column a recountable claim
    reads, plus `extra` columns (released names, passed through `name` like the claims'); with `hash_columns`,
    also the per-combination sum of DuckDB's row hashes (the records' digest; the columns `as_text` hashed as
    their text, so a label held as an ENUM hashes as the same VARCHAR). Every claim is then recounted
    from this small result, so the relation is read once, however many claims there are. With `weight`, each
    row of the relation stands for that many rows (a histogram)."""
    import duckdb
    name = name or (lambda t: t)
    claims = [c for c in claims if isinstance(c, RECOUNTED)]
    wanted: list[str] = []
    for c in claims:
        wanted += [name(x) for x in getattr(c, "columns", ())]
        if isinstance(c, (LDiversity, TCloseness)):
            wanted.append(name(c.column))
    wanted += [name(x) for x in extra]
    cols = list(dict.fromkeys(wanted))
    keys = [f"CAST({quote(c)} AS VARCHAR) AS k{i}" for i, c in enumerate(cols)]
    select = keys + [f"CAST(SUM({weight}) AS BIGINT) AS {quote(N)}" if weight else f"COUNT(*) AS {quote(N)}"]
    if hash_columns is not None:
        text = set(as_text)
        hashed = ", ".join(f"CAST({quote(c)} AS VARCHAR)" if c in text else quote(c) for c in hash_columns)
        times = f" * {weight}" if weight else ""
        select.append(f"CAST(COALESCE(SUM(CAST(hash({hashed}) AS HUGEINT){times}), 0) AS VARCHAR) AS {quote(H)}")
    sql = f"SELECT {', '.join(select)} FROM {relation} AS r"
    sql += f" GROUP BY {', '.join(str(i + 1) for i in range(len(keys)))}" if keys else ""
    try:
        got = con.execute(sql).df()
    except duckdb.Error as exc:
        raise CheckError(f"the released rows could not be read back: {str(exc).strip().splitlines()[0]}") from None
    got = got[got[N].fillna(0) > 0].reset_index(drop=True)  # no key: one row, 0 when the relation is empty
    hash_sum = sum(int(v) for v in got[H]) if hash_columns is not None else None  # a loop over groups
    frame = got.rename(columns={f"k{i}": c for i, c in enumerate(cols)})
    frame = frame.astype({c: object for c in cols}).where(frame.notna(), None) if len(cols) else frame
    return Tally(frame, int(frame[N].sum()), name, hash_sum)


@dataclass
class Tally:
    """Rows per combination of the claims' columns (text; None for a missing cell), read in one pass."""

    frame: pd.DataFrame  # the columns by released name, and N (rows); H when hashed
    total: int
    name: Callable[[str], str]
    hash_sum: int | None = None

    def marked(self, columns: list[str], marker: str) -> tuple[np.ndarray, np.ndarray]:
        """Per combination, as SQL's `col = marker AND …`: (true, false); both false where it is NULL."""
        eq = np.ones(len(self.frame), dtype=bool)
        differs = np.zeros(len(self.frame), dtype=bool)
        for c in columns:
            v = self.frame[c]
            present = v.notna().to_numpy()
            same = (v == marker).to_numpy(dtype=bool) & present
            eq &= same
            differs |= present & ~same
        return eq, differs

    def sizes(self, columns: list[str], rows: np.ndarray | None = None) -> pd.DataFrame:
        """Rows per group of `columns` (among `rows`): a frame of the columns and N."""
        f = self.frame if rows is None else self.frame[rows]
        if not columns:
            return pd.DataFrame({N: [int(f[N].sum())]}) if len(f) else pd.DataFrame({N: []})
        return f.groupby(columns, dropna=False, sort=False)[N].sum().reset_index()

    def group_sizes(self, qis: list[str], marker: str | None) -> np.ndarray:
        """`SqlRecords.group_sizes`: rows per released group, the rows with the marker in every QI left out."""
        rows = None if marker is None else ~self.marked(qis, marker)[0]
        return self.sizes(qis, rows)[N].to_numpy(dtype=np.int64)

    def checks(self, claims: Iterable) -> list[ClaimCheck]:
        name = self.name
        claims = [c for c in claims if isinstance(c, RECOUNTED)]
        marker_claims = [c for c in claims if isinstance(c, Suppression)]
        total = self.total
        marks = [self.marked([name(x) for x in c.columns], name(c.marker)) for c in marker_claims if c.columns]
        counted = [(int(self.frame[N][eq].sum()), differs) for eq, differs in marks]
        # as engine.checks: rows showing the marker are left out unless every row does (then it is one group)
        keep = np.ones(len(self.frame), dtype=bool)
        for n_marked, differs in counted:
            if n_marked < total:
                keep &= differs
        out = []
        for claim in claims:
            if getattr(claim, "person", None) is not None:  # the large-table engine refuses a person column
                out.append(ClaimCheck(claim, False, f"persons ({claim.person}) cannot be recounted by the "
                                                    "large-table engine: it counts rows"))
                continue
            cols = [name(c) for c in getattr(claim, "columns", ())]
            if isinstance(claim, KAnonymity):
                sizes = self.sizes(cols, keep)[N].to_numpy(dtype=np.int64)
                smallest = int(sizes.min()) if sizes.size else 0
                if sizes.size == 0:
                    out.append(ClaimCheck(claim, True, "empty release", {"smallest group": 0.0}))
                elif (sizes < claim.k).any():
                    out.append(ClaimCheck(claim, False, f"{int((sizes < claim.k).sum())} group(s) have fewer than "
                                                        f"{k_text(claim.k)} rows (smallest {smallest})",
                                          {"smallest group": float(smallest)}))
                else:
                    out.append(ClaimCheck(claim, True, f"every group has at least {k_text(claim.k)} rows (smallest "
                                                       f"{smallest})", {"smallest group": float(smallest)}))
            elif isinstance(claim, Suppression):
                s = counted[[c for c in marker_claims if c.columns].index(claim)][0] if claim.columns else 0
                if total and s == total:
                    out.append(ClaimCheck(claim, True, "every row shows only the marker: the most general "
                                                       "release, one group", {"suppressed rows": 0.0}))
                elif s > claim.max_share * total + TOLERANCE:
                    out.append(ClaimCheck(claim, False, f"{s:,} of {total:,} rows are suppressed, more than "
                                                        f"{100 * claim.max_share:g} %", {"suppressed rows": float(s)}))
                else:
                    out.append(ClaimCheck(claim, True, f"{s:,} of {total:,} rows suppressed (at most "
                                                       f"{100 * claim.max_share:g} %)", {"suppressed rows": float(s)}))
            elif isinstance(claim, LDiversity) and claim.kind in ("distinct", "entropy", "recursive"):
                got = self._grouped(cols, keep, name(claim.column))
                counts = pd.Series(got[N].to_numpy(dtype=np.int64),
                                   index=pd.MultiIndex.from_arrays([got[G].to_numpy(), got[S].to_numpy()],
                                                                   names=["g", "s"]))
                sizes = counts.groupby(level="g").sum().to_numpy()
                res = check_counts(sizes, 1, counts, sensitive=name(claim.column), l=int(claim.l),
                                   diversity=claim.kind, c=claim.c)
                out.append(diversity_check(claim, res))
            elif isinstance(claim, TCloseness):
                out.append(self._closeness(claim, cols, keep))
            elif isinstance(claim, RiskBound) and claim.model in ("highest", "average"):
                out.append(risk_check(claim, self.sizes(cols, keep)[N].to_numpy(dtype=np.int64)))
            else:
                out.append(ClaimCheck(claim, False, f"{type(claim).__name__} cannot be recounted on a large table"))
        return out

    def _grouped(self, cols: list[str], keep: np.ndarray, sensitive: str) -> pd.DataFrame:
        """Rows per (group, sensitive value) among the kept rows: columns G (group number), S and N."""
        got = self.sizes(cols + [sensitive], keep).rename(columns={sensitive: S})
        got[G] = got.groupby(cols, sort=False, dropna=False).ngroup().to_numpy() if cols and len(got) else 0
        return got

    def _closeness(self, claim: TCloseness, cols: list[str], keep: np.ndarray) -> ClaimCheck:
        """t-closeness from the rows per (group, sensitive value, kept or suppressed): `checks.closeness` with
        each entry weighted by its rows (the whole distribution counts every row, the groups only the kept)."""
        s = self.name(claim.column)
        f = self.frame.assign(**{KEPT: keep})
        got = f.groupby(cols + [s, KEPT], dropna=False, sort=False)[N].sum().reset_index()
        group = (got.groupby(cols, sort=False, dropna=False).ngroup().to_numpy() if cols and len(got)
                 else np.zeros(len(got), dtype=np.int64))
        table = pd.DataFrame({s: got[s].to_numpy(dtype=object)})
        dist, reason = closeness(table, group, s, claim.distance, name=self.name, order=claim.order,
                                 hierarchy=claim.hierarchy, keep=got[KEPT].to_numpy(dtype=bool),
                                 weights=got[N].to_numpy(dtype=float))
        return closeness_check(claim, dist, reason)


