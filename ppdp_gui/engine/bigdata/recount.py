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

Persons: when the table has a person column every k, l, t and risk claim is recounted in distinct persons, as
engine.checks does in memory — `COUNT(DISTINCT person)` per group (per group and value for l and t, per value for
the whole distribution of t), the person being the checker's own reading of the source's column
(bigdata/persons.py), never the mechanism's. A claim that counts rows on such a table fails, as in memory. On the
written file the persons come by position from the written order (`SqlRecords.tally_written`); a row that does
not line up fails every per-person claim.
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
from ppdp_gui.engine.claims import (PER_PERSON, RECOUNTED, KAnonymity, LDiversity, RiskBound, Suppression, TCloseness,
                                    k_text)
from ppdp_gui.engine.errors import CheckError

#: the tally's own columns, named so that no released column clashes with them (bigdata/columns.py, HELPER)
H, KEPT, G, S = helper("h"), helper("kept"), helper("g"), helper("s")
P, BAD = helper("p"), helper("bad")  # distinct persons per combination; rows not lined up with their person


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
          weight: str | None = None, person: str | None = None, person_hash: str | None = None,
          aligned: str | None = None) -> "Tally":
    """One `GROUP BY` over `relation`: the rows per combination (as text) of every column a recountable claim
    reads, plus `extra` columns (released names, passed through `name` like the claims'); with `hash_columns`,
    also the per-combination sum of DuckDB's row hashes (the records' digest; the columns `as_text` hashed as
    their text, so a label held as an ENUM hashes as the same VARCHAR). Every claim is then recounted
    from this small result, so the relation is read once, however many claims there are. With `weight`, each
    row of the relation stands for that many rows (a histogram).

    Persons: `person` names the table's person column and `person_hash` the relation's column holding each row's
    person (bigdata/persons.py); the same pass then also counts distinct persons per combination, and a claim
    grouping on fewer columns asks one more `COUNT(DISTINCT …) GROUP BY` of its own (`Tally.persons`). `aligned`:
    a boolean column, false where a row's person could not be lined up (the written file: `SqlRecords.written`);
    any such row fails every per-person claim."""
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
    if person_hash is not None:
        select.append(f"COUNT(DISTINCT {person_hash}) AS {quote(P)}")
    if aligned is not None:
        select.append(f"SUM(CASE WHEN {aligned} THEN 0 ELSE 1 END) AS {quote(BAD)}")
    group = f" GROUP BY {', '.join(str(i + 1) for i in range(len(keys)))}" if keys else ""

    def read(sql: str) -> pd.DataFrame:
        try:
            return con.execute(sql).df()
        except duckdb.Error as exc:
            raise CheckError(f"the released rows could not be read back: {str(exc).strip().splitlines()[0]}") from None

    got = read(f"SELECT {', '.join(select)} FROM {relation} AS r{group}")
    got = got[got[N].fillna(0) > 0].reset_index(drop=True)  # no key: one row, 0 when the relation is empty
    hash_sum = sum(int(v) for v in got[H]) if hash_columns is not None else None  # a loop over groups
    frame = got.rename(columns={f"k{i}": c for i, c in enumerate(cols)})
    frame = frame.astype({c: object for c in cols}).where(frame.notna(), None) if len(cols) else frame
    def counter(columns: list[str]) -> pd.DataFrame:
        """Distinct persons per combination of `columns` (released names), one pass."""
        if set(columns) == set(cols):
            return frame[list(columns) + [P]].rename(columns={P: N})
        k = [f"CAST({quote(c)} AS VARCHAR) AS k{i}" for i, c in enumerate(columns)]
        by = f" GROUP BY {', '.join(str(i + 1) for i in range(len(k)))}" if k else ""
        out = read(f"SELECT {', '.join(k + [f'COUNT(DISTINCT {person_hash}) AS {quote(N)}'])} FROM {relation} AS r{by}")
        out = out[out[N].fillna(0) > 0].reset_index(drop=True)
        out = out.rename(columns={f"k{i}": c for i, c in enumerate(columns)})
        return out.astype({c: object for c in columns}).where(out.notna(), None) if columns else out
    bad = int(got[BAD].sum()) if aligned is not None and len(got) else 0
    return Tally(frame, int(frame[N].sum()), name, hash_sum, person=person,
                 count_persons=counter if person_hash is not None else None, misaligned=bad)


@dataclass
class Tally:
    """Rows per combination of the claims' columns (text; None for a missing cell), read in one pass."""

    frame: pd.DataFrame  # the columns by released name, and n (rows); h when hashed; p (persons) with persons
    total: int
    name: Callable[[str], str]
    hash_sum: int | None = None
    #: the table's person column (None: it has none, one row is one unit)
    person: str | None = None
    #: distinct persons per combination of some columns (None: the rows' persons are not known here)
    count_persons: Callable[[list[str]], pd.DataFrame] | None = None
    #: rows whose person could not be lined up (the written file read back against the query)
    misaligned: int = 0

    def __post_init__(self) -> None:
        self._persons: dict[tuple, pd.DataFrame] = {}

    def persons(self, columns: list[str]) -> pd.DataFrame:
        """Distinct persons per combination of `columns` (a frame of the columns and n), counted once."""
        key = tuple(columns)
        if key not in self._persons:
            self._persons[key] = self.count_persons(list(columns))
        return self._persons[key]

    @staticmethod
    def marked(frame: pd.DataFrame, columns: list[str], marker: str) -> tuple[np.ndarray, np.ndarray]:
        """Per combination, as SQL's `col = marker AND …`: (true, false); both false where it is NULL."""
        eq = np.ones(len(frame), dtype=bool)
        differs = np.zeros(len(frame), dtype=bool)
        for c in columns:
            v = frame[c]
            present = v.notna().to_numpy()
            same = (v == marker).to_numpy(dtype=bool) & present
            eq &= same
            differs |= present & ~same
        return eq, differs

    @staticmethod
    def sizes(frame: pd.DataFrame, columns: list[str], rows: np.ndarray | None = None) -> pd.DataFrame:
        """Units (the frame's n) per group of `columns` (among `rows`): a frame of the columns and n."""
        f = frame if rows is None else frame[rows]
        if not columns:
            return pd.DataFrame({N: [int(f[N].sum())]}) if len(f) else pd.DataFrame({N: []})
        return f.groupby(columns, dropna=False, sort=False)[N].sum().reset_index()

    def group_sizes(self, qis: list[str], marker: str | None) -> np.ndarray:
        """`SqlRecords.group_sizes`: units per released group (persons when the table has a person column and
        they are known, else rows), the rows with the marker in every QI left out."""
        frame = self.persons(list(qis)) if self.person is not None and self.count_persons is not None \
            else self.frame
        rows = None if marker is None else ~self.marked(frame, qis, marker)[0]
        return self.sizes(frame, qis, rows)[N].to_numpy(dtype=np.int64)

    def _person_problem(self, claim) -> str | None:
        """Why a claim cannot be recounted in the unit it states (None: it can), as engine.checks says it."""
        if not isinstance(claim, PER_PERSON):
            return None
        stated = getattr(claim, "person", None)
        if self.person is None:
            return None if stated is None else (f"the claim counts persons ({stated}) but the table has no person "
                                                "column to recount them with")
        if stated != self.person:
            if stated is None:
                return (f"the release counts rows, but the table has a person column ({self.person}): several rows "
                        "of one person could make up a group, so the promise does not hold for persons")
            return f"the claim counts persons by {stated!r}, but the table's person column is {self.person!r}"
        if self.count_persons is None:
            return f"the person ids ({self.person}) of the released rows are not known, so persons cannot be recounted"
        if self.misaligned:
            return (f"the person ids ({self.person}) of {self.misaligned:,} written rows could not be lined up with "
                    "the rows of the release, so persons cannot be recounted")
        return None

    def checks(self, claims: Iterable) -> list[ClaimCheck]:
        name = self.name
        claims = [c for c in claims if isinstance(c, RECOUNTED)]
        marker_claims = [c for c in claims if isinstance(c, Suppression)]
        total = self.total
        marks = [self.marked(self.frame, [name(x) for x in c.columns], name(c.marker))
                 for c in marker_claims if c.columns]
        counted = [(int(self.frame[N][eq].sum()), differs) for eq, differs in marks]
        # as engine.checks: rows showing the marker are left out unless every row does (then it is one group)
        applied = [([name(x) for x in c.columns], name(c.marker)) for c, (n_marked, _) in
                   zip([c for c in marker_claims if c.columns], counted) if n_marked < total]

        def kept(frame: pd.DataFrame) -> np.ndarray:
            keep = np.ones(len(frame), dtype=bool)
            for columns, marker in applied:
                keep &= self.marked(frame, columns, marker)[1]
            return keep

        out = []
        for claim in claims:
            problem = self._person_problem(claim)
            if problem:
                out.append(ClaimCheck(claim, False, problem))
                continue
            per_person = isinstance(claim, PER_PERSON) and getattr(claim, "person", None) is not None
            cols = [name(c) for c in getattr(claim, "columns", ())]
            unit = f"persons ({claim.person})" if per_person else "rows"
            if isinstance(claim, KAnonymity):
                frame = self.persons(cols) if per_person else self.frame
                sizes = self.sizes(frame, cols, kept(frame))[N].to_numpy(dtype=np.int64)
                smallest = int(sizes.min()) if sizes.size else 0
                figures = {"smallest group": float(smallest)}
                if per_person:
                    figures["smallest group (persons)"] = float(smallest)
                if sizes.size == 0:
                    out.append(ClaimCheck(claim, True, "empty release", {"smallest group": 0.0}))
                elif (sizes < claim.k).any():
                    out.append(ClaimCheck(claim, False, f"{int((sizes < claim.k).sum())} group(s) have fewer than "
                                                        f"{k_text(claim.k)} {unit} (smallest {smallest})", figures))
                else:
                    out.append(ClaimCheck(claim, True, f"every group has at least {k_text(claim.k)} {unit} "
                                                       f"(smallest {smallest})", figures))
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
                s_col = name(claim.column)
                frame = self.persons(cols + [s_col]) if per_person else self.frame
                got = self._grouped(frame, cols, kept(frame), s_col)
                counts = pd.Series(got[N].to_numpy(dtype=np.int64),
                                   index=pd.MultiIndex.from_arrays([got[G].to_numpy(), got[S].to_numpy()],
                                                                   names=["g", "s"]))
                sizes = counts.groupby(level="g").sum().to_numpy()
                res = check_counts(sizes, 1, counts, sensitive=s_col, l=int(claim.l),
                                   diversity=claim.kind, c=claim.c)
                out.append(diversity_check(claim, res))
            elif isinstance(claim, TCloseness):
                out.append(self._closeness(claim, cols, kept, per_person))
            elif isinstance(claim, RiskBound) and claim.model in ("highest", "average"):
                frame = self.persons(cols) if per_person else self.frame
                out.append(risk_check(claim, self.sizes(frame, cols, kept(frame))[N].to_numpy(dtype=np.int64)))
            else:
                out.append(ClaimCheck(claim, False, f"{type(claim).__name__} cannot be recounted on a large table"))
        return out

    def _grouped(self, frame: pd.DataFrame, cols: list[str], keep: np.ndarray, sensitive: str) -> pd.DataFrame:
        """Units per (group, sensitive value) among the kept rows: columns G (group number), S and N."""
        got = self.sizes(frame, cols + [sensitive], keep).rename(columns={sensitive: S})
        got[G] = got.groupby(cols, sort=False, dropna=False).ngroup().to_numpy() if cols and len(got) else 0
        return got

    def _closeness(self, claim: TCloseness, cols: list[str], kept, per_person: bool) -> ClaimCheck:
        """t-closeness from the units per (group, sensitive value, kept or suppressed): `checks.closeness` with
        each entry weighted by its units (the whole distribution counts every row, the groups only the kept).
        Per person: the groups count each (group, person, value) once and the whole table each (person, value)
        once, as engine.checks does on persons."""
        s = self.name(claim.column)
        frame = self.persons(cols + [s]) if per_person else self.frame
        f = frame.assign(**{KEPT: kept(frame)})
        got = f.groupby(cols + [s, KEPT], dropna=False, sort=False)[N].sum().reset_index()
        whole = None
        if per_person:  # the whole distribution: each (person, value) once, suppressed rows too
            every = self.persons([s])
            whole = (every[s].to_numpy(dtype=object), every[N].to_numpy(dtype=float))
        group = (got.groupby(cols, sort=False, dropna=False).ngroup().to_numpy() if cols and len(got)
                 else np.zeros(len(got), dtype=np.int64))
        table = pd.DataFrame({s: got[s].to_numpy(dtype=object)})
        dist, reason = closeness(table, group, s, claim.distance, name=self.name, order=claim.order,
                                 hierarchy=claim.hierarchy, keep=got[KEPT].to_numpy(dtype=bool),
                                 weights=got[N].to_numpy(dtype=float), whole=whole)
        return closeness_check(claim, dist, reason)
