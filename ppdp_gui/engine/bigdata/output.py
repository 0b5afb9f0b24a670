"""Released records too many for memory: a SQL query over the source, written by DuckDB's `COPY … TO`.

A record-level release of a large table (global recoding) is not a DataFrame but `SqlRecords`: the query that
produces its rows (generalised quasi-identifiers from small mapping tables, the other columns as they are), the
column names and what the claims need. `Release.records` holds it and `Release.table` is the same columns with
no rows. The publish path then:
- recounts the claims on the query right after the run (bigdata/recount.py), where a table in memory would be
  recounted by engine.checks;
- at export, stages the file with `COPY (query) TO tmp` beside the target, reads the written file back with
  DuckDB as text and recounts the claims on it, and only then renames it into place (pipeline/export.py).

For CSV, text the writer would neutralise (a leading = + - @ tab or CR that does not start a plain number) gets
the same apostrophe here: in the mapping tables for generalised labels, by a SQL CASE for the columns passed
through. Output hash: an order-independent digest of the rows (their row count and the sum of DuckDB's row
hashes); the sha256 of the written file is in the release note's file list as for any release.

With a person column (never written) the rows are written grouped by class and then in an order that depends only
on the released values and the person (a hash of the values, then the person's hash), not at random: its only
ties are rows equal in every column and person, so the recount on the file can give each written row its person
by position (`SqlRecords.tally_written`). The order says nothing the rows do not: within a class it follows
a hash of what is written, and among identical written rows nothing can be seen.
"""

from __future__ import annotations

import hashlib
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ppdp_gui.engine.bigdata.columns import N, helper
from ppdp_gui.engine.bigdata.source import ROWS, TableSource, literal, quote
from ppdp_gui.engine.data.writer import _PLAIN_NUMBER, MARK, NEUTRAL_START, neutral_text
from ppdp_gui.engine.errors import DataError

#: line ends of a written CSV / TSV, as the in-memory writer's (`writer.py`: lineterminator "\r\n")
CRLF = "\r\n"


def neutral_sql(expr: str) -> str:
    """SQL for `writer.neutral_text` of a text expression (DuckDB's regexp_full_match; Spark: RLIKE)."""
    starts = ", ".join(literal(c) for c in NEUTRAL_START)
    return (f"CASE WHEN substr({expr}, 1, 1) IN ({starts}) AND NOT regexp_full_match({expr}, "
            f"{literal(_PLAIN_NUMBER)}) THEN {literal(MARK)} || {expr} ELSE {expr} END")


@dataclass
class SqlRecords:
    """The released rows as SQL (see the module docstring). `select(neutral)` gives the query; `neutral` for
    CSV/TSV, where formula starts are neutralised."""

    source: TableSource
    columns: list[str]
    plain_sql: str  # the rows, unordered (what every count reads: no sort)
    neutral_sql: str  # the same with formula starts neutralised and neutral column names (CSV, TSV)
    qis: list[str] = field(default_factory=list)
    marker: str | None = "*"  # suppressed rows show it in every QI (None: the release suppresses nothing)
    order_by: str = ""  # the written order: grouped by class, shuffled inside it
    #: the same query over the rows already counted (the source's histogram of every released column, or the
    #: file's distinct rows: each distinct row once with its count in ROWS), when the source holds one: the recount
    #: then reads it, not the file, and the export repeats each row as often as it counts (`copy_to`)
    counted_sql: str | None = None
    counted_neutral_sql: str | None = None  # the same with formula starts neutralised and neutral names
    #: the table's person column (never written) and, for the recounts, what lines a row up with its person:
    #: `person_sql` the rows with their person's hash (bigdata/persons.py) as PERSON, `from_sql` the FROM of the
    #: query, `written_exprs` each released column as written (CSV: neutralised) for the alignment check
    person: str | None = None
    person_sql: str | None = None
    person_hash: str | None = None
    from_sql: str = ""
    written_exprs: dict = field(default_factory=dict)
    _tally: tuple | None = field(default=None, repr=False, compare=False)

    def select(self, neutral: bool = False, ordered: bool = False) -> str:
        sql = self.neutral_sql if neutral else self.plain_sql
        return f"{sql} {self.order_by}" if ordered and self.order_by else sql

    def recount(self, claims) -> list:
        """The claims recounted on the query (bigdata/recount.py), in the one pass that also counts the rows, the
        released groups and the digest: the rows are read once after the run, not once per figure."""
        return self.tally(claims).checks(claims)

    def tally(self, claims=None):
        """One GROUP BY over the query by the claims' and the QI columns, with the rows' hash sums (cached: asked
        again without claims, or with the same ones, it is not read again). Over `counted_sql` when there is
        one: the same labels, joins and casts on each distinct source row, weighted by its rows."""
        from ppdp_gui.engine.bigdata.persons import PERSON
        from ppdp_gui.engine.bigdata.recount import tally
        claims = list(claims or [])
        if self._tally is None or (claims and claims != self._tally[0]):
            counted = self.counted_sql is not None
            rows = self.counted_sql if counted else (self.person_sql or self.plain_sql)
            self._tally = (claims, tally(self.source.con, f"({rows})", claims, extra=self.qis,
                                         hash_columns=self.columns, as_text=self.qis,
                                         weight=quote(ROWS) if counted else None, person=self.person,
                                         person_hash=quote(PERSON) if self.person else None))
        return self._tally[1]

    def tally_written(self, con, relation: str, claims, name=None):
        """The claims' counts on the written file read back (`relation`, on `con`). With a person column the
        file's i-th row is given the person of the i-th row of the written order (the query sorted as `copy_to`
        sorted it, whose ties are rows equal in every column and person: bigdata/persons.py), and every column
        is compared with what was written there, so a file out of line fails the per-person claims."""
        from ppdp_gui.engine.bigdata.recount import tally
        if self.person is None:
            return tally(con, relation, claims, name=name)
        from ppdp_gui.engine.bigdata.persons import ALIGNED, PERSON, POS
        neutral = name is not None
        pos = quote(POS)
        if con is self.source.con:  # the query runs again, sorted as it was written
            exprs = [self.written_exprs[c][1 if neutral else 0] for c in self.columns]
            q = (f"SELECT {self.person_hash} AS {quote(PERSON)}, "
                 + "".join(f"{e} AS a{i}, " for i, e in enumerate(exprs))
                 + f"row_number() OVER ({self.order_by}) AS {pos}{self.from_sql}")
        else:  # Spark: the written rows and their persons were kept on the reading connection at the copy
            from ppdp_gui.engine.bigdata.spark_source import WRITTEN
            try:
                con.execute(f"SELECT 1 FROM {WRITTEN} LIMIT 0")
            except Exception:  # noqa: BLE001 - no such table: the persons were not kept
                return tally(con, relation, claims, name=name, person=self.person)
            q = (f"SELECT {quote(PERSON)}, "
                 + "".join(f"{quote(name(c) if neutral else c)} AS a{i}, " for i, c in enumerate(self.columns))
                 + f"{pos} FROM {WRITTEN}")
        same = " AND ".join(f"COALESCE(CAST(f.{quote(name(c) if neutral else c)} AS VARCHAR), '') = "
                            f"COALESCE(CAST(q.a{i} AS VARCHAR), '')" for i, c in enumerate(self.columns)) or "TRUE"
        joined = (f"(SELECT f.*, q.{quote(PERSON)}, (q.{pos} IS NOT NULL AND {same}) AS {quote(ALIGNED)} "
                  f"FROM (SELECT *, row_number() OVER () AS {pos} FROM {relation}) AS f "
                  f"LEFT JOIN ({q}) AS q ON q.{pos} = f.{pos})")
        order = self.source.file_order() if con is self.source.con else nullcontext()  # a new DuckDB keeps order
        with order:
            return tally(con, joined, claims, name=name, person=self.person, person_hash=quote(PERSON),
                         aligned=quote(ALIGNED))

    @property
    def n_rows(self) -> int:
        return self.tally().total

    def group_sizes(self) -> np.ndarray:
        """Sizes of the released groups (suppressed rows, the marker in every QI, left out)."""
        if not self.qis:
            return np.array([self.n_rows], dtype=np.int64)
        return self.tally().group_sizes(list(self.qis), self.marker)

    def person_risk(self, threshold: float = 0.1):
        """`metrics.person_risk.unit_risk` in SQL (custodian figures): a patient's risk is one over the distinct
        persons of the most exposed group their kept rows fall in; suppressed rows are no group (unless every row
        is). Two GROUP BYs over the rows with their persons."""
        from ppdp_gui.engine.bigdata.persons import PERSON, hash64
        from ppdp_gui.engine.bigdata.recount import N
        from ppdp_gui.engine.metrics.person_risk import UnitRisk
        t = self.tally()
        g = f"{hash64(self.source)}({', '.join(f'CAST({quote(q)} AS VARCHAR)' for q in self.qis)})" if self.qis \
            else "0"
        where = ""
        if self.marker is not None and self.qis:
            eq = t.marked(t.frame, list(self.qis), self.marker)[0]
            if int(t.frame[N][eq].sum()) < t.total:
                where = " WHERE NOT (" + " AND ".join(
                    f"COALESCE(CAST({quote(q)} AS VARCHAR) = {literal(self.marker)}, FALSE)" for q in self.qis) + ")"
        pairs = f"SELECT DISTINCT {g} AS g, {quote(PERSON)} AS p FROM ({self.person_sql}) AS r{where}"
        sql = (f"WITH pairs AS ({pairs}), sizes AS (SELECT g, COUNT(*) AS n FROM pairs GROUP BY g), "
               "per AS (SELECT pairs.p, MAX(CAST(1 AS DOUBLE) / sizes.n) AS r FROM pairs "
               "JOIN sizes ON sizes.g = pairs.g GROUP BY pairs.p) "
               f"SELECT COUNT(*), (SELECT COUNT(*) FROM sizes), MAX(r), AVG(r), "
               f"AVG(CASE WHEN r > CAST('{float(threshold)!r}' AS DOUBLE) THEN CAST(1 AS DOUBLE) "
               "ELSE CAST(0 AS DOUBLE) END) FROM per")
        units, classes, highest, average, at_risk = self.source.run(sql)[0]
        if not units:
            return UnitRisk(0, 0, 0.0, 0.0, 0.0, threshold)
        return UnitRisk(int(units), int(classes), float(highest), float(average), float(at_risk), threshold)

    def digest(self) -> str:
        """An order-independent digest: the row count and the sum of DuckDB's row hashes (as HUGEINT)."""
        t = self.tally()
        return hashlib.sha256(f"sql-records-v1:{t.total}:{t.hash_sum}".encode()).hexdigest()

    def copy_to(self, path: Path, fmt: str) -> None:
        """Write every row to `path` with DuckDB (the caller stages and renames it). From the counted rows when
        there are (DuckDB): the distinct released rows in the written order (by class, at random inside it), each
        repeated as many times as it counts (`TableSource.copy_counted`); equal rows of a class are then written
        together, a random order of the class's rows all the same, and a sort of a few thousand rows replaces
        the sort of every row (at 10⁷ rows, most of the export's time). Otherwise the rows of the query, sorted."""
        if fmt == "parquet":
            options = "FORMAT parquet"
        elif fmt in ("csv", "tsv"):
            sep = "\t" if fmt == "tsv" else ","
            options = f"FORMAT csv, HEADER true, DELIMITER {literal(sep)}, NEW_LINE {literal(CRLF)}"
        else:
            raise DataError("a release of a large table can be written as CSV, TSV or Parquet (an Excel sheet "
                            "holds at most 1,048,576 rows)", path=str(path))
        neutral = fmt != "parquet"
        if self.person is not None and getattr(self.source, "recount_elsewhere", False):
            # the file is recounted by another connection: the persons of the written rows go there with them
            from ppdp_gui.engine.bigdata.persons import PERSON
            sql = self.select(neutral, ordered=True).replace(
                self.from_sql, f", {self.person_hash} AS {quote(PERSON)}{self.from_sql}", 1)
            self.source.copy(sql, path, options, keep=PERSON)
            return
        counted = self.counted_neutral_sql if neutral else self.counted_sql
        if counted is not None and self.source.engine == "DuckDB" and self.person is None:
            # (with a person column the rows are sorted one by one, as the recount on the file sorts them again)
            names = [neutral_text(c) if neutral else c for c in self.columns]
            self.source.copy_counted(f"{counted} {self.order_by}", names, path, options)
            return
        self.source.copy(self.select(neutral, ordered=True), path, options)


#: the join key column (a hash of a row's quasi-identifier texts) added to `src` and to a tuples table
KEY = helper("key")


def counted_rows(table: TableSource, columns: list[str], tag: str) -> str | None:
    """The source's histogram of `columns` (every column a release writes), registered as `tag`, when it can be
    summed from one already counted (no new pass); else the file's distinct rows with their counts when they were
    counted (`TableSource.weighted`); else None."""
    got = table.cached_histogram(columns)
    if got is None:
        base, weight = table.weighted("src")
        return base if weight else None
    table.register(tag, got.rename(columns={N: ROWS}))
    return tag


def tuple_join(table: TableSource, names: list[str], tuples: str, alias: str, base: str = "src") -> str:
    """`FROM src AS s JOIN tuples AS alias` on the quasi-identifiers `names` (the tuples table holds their texts as
    v0, v1, …). One 64-bit key per row, the hash of its texts, rather than an equi-join on every column: DuckDB
    then probes one integer, not several strings (a third of the export's and the recount's time at 10⁷ rows).
    Exact because every row's texts are one of the tuples (they come from a GROUP BY of the same rows) and the
    tuples' keys are checked distinct here; if two collided, the join is on the columns themselves."""
    on = " AND ".join(f"{alias}.v{j} = s.{quote(n)}" for j, n in enumerate(names))
    keyed = table.scalar(f"SELECT COUNT(DISTINCT {_key([f'v{j}' for j in range(len(names))])}) = COUNT(*) "
                         f"FROM {tuples}") if names else False
    if not keyed:
        return f" FROM {base} AS s JOIN {tuples} AS {alias} ON {on or 'TRUE'}"
    k = quote(KEY)
    return (f" FROM (SELECT *, {_key([f's.{quote(n)}' for n in names])} AS {k} FROM {base} AS s) AS s"
            f" JOIN (SELECT *, {_key([f'x.v{j}' for j in range(len(names))])} AS {k} FROM {tuples} AS x) AS {alias}"
            f" ON {alias}.{k} = s.{k}")


def labels_column(labels) -> pd.Categorical:
    """A generalised column of a tuples table, as a categorical: DuckDB reads it as an ENUM, so the join and the
    export's sort carry a small integer per row, not a string (half the export's time), and writes it as text
    (CSV) or as a Parquet string column, the same as a VARCHAR. The digest hashes its text (`SqlRecords.tally`)."""
    return pd.Categorical(np.asarray(labels, dtype=object).astype(str))


def _key(columns: list[str]) -> str:
    return f"hash({', '.join(columns)})"


def released_columns(data, table, plain: dict[str, str], neutral: dict[str, str]) -> list[str]:
    """The columns a records release writes (every column but the identifiers), in the table's order; a column
    the mechanism did not recode is copied as it is read (`plain`) and, in the spreadsheet-safe form, with its
    text neutralised (`neutral`). Fills both maps in place."""
    columns = []
    for spec in data.schema:
        if spec.role.never_released:
            continue
        columns.append(spec.name)
        if spec.name not in plain:
            col = table.value_sql(spec.name, "s")
            plain[spec.name] = col
            neutral[spec.name] = col if spec.kind == "numeric" else neutral_sql(col)
    return columns


def joined_records(data, table: TableSource, names: list[str], tuples: str, alias: str, plain: dict[str, str],
                   neutral: dict[str, str], tag: str, marker, order_by: str) -> "SqlRecords":
    """The records of a release that recodes its quasi-identifiers through a small registered table `tuples`
    (one row per combination of their texts, with the released labels): the source joined to it on one key, every
    other column copied as read. Mondrian's tuples and global recoding's classes are such tables; the recount
    reads the source's histogram instead of the file when one already counts every released column."""
    join = tuple_join(table, names, tuples, alias)
    columns = released_columns(data, table, plain, neutral)
    person = data.person_column  # the checker's own reading of persons: never the mechanism's
    hashed = None
    if person is not None:
        from ppdp_gui.engine.bigdata.persons import PERSON, person_hash_sql
        hashed = person_hash_sql(table, person, "s")
        # a written order that is the same on every reading: its ties are rows equal in every column and person
        # (or a 64-bit collision of two rows' values with one person: then the file's check refuses, never passes)
        shown = ", ".join(plain[c] for c in columns)
        order_by = order_by.replace("random()", f"hash({shown}), {hashed}")

    def select(exprs: dict[str, str], neutral_names: bool, rows: str = "", joined: str = join) -> str:
        cols = ", ".join(f"{exprs[c]} AS {quote(neutral_text(c) if neutral_names else c)}" for c in columns)
        return f"SELECT {cols}{rows}{joined}"

    # the recount and the export read the counted rows, not the file (with the person among them when there is one)
    rows = counted_rows(table, columns + ([person] if person else []), f"{tag}_rows")
    counted = counted_neutral = None
    if rows is not None:
        weighted = tuple_join(table, names, tuples, alias, base=rows)
        w = (f", {hashed} AS {quote(PERSON)}" if person else "") + f", s.{quote(ROWS)} AS {quote(ROWS)}"
        counted, counted_neutral = select(plain, False, w, weighted), select(neutral, True, w, weighted)
    return SqlRecords(table, columns, select(plain, False), select(neutral, True), qis=names, marker=marker,
                      counted_sql=counted, counted_neutral_sql=counted_neutral, order_by=order_by, person=person,
                      person_sql=select(plain, False, f", {hashed} AS {quote(PERSON)}") if person else None,
                      person_hash=hashed, from_sql=join,
                      written_exprs={c: (plain[c], neutral[c]) for c in columns})
