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
"""

from __future__ import annotations

import hashlib
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
        from ppdp_gui.engine.bigdata.recount import tally
        claims = list(claims or [])
        if self._tally is None or (claims and claims != self._tally[0]):
            counted = self.counted_sql is not None
            self._tally = (claims, tally(self.source.con, f"({self.counted_sql if counted else self.plain_sql})",
                                         claims, extra=self.qis, hash_columns=self.columns, as_text=self.qis,
                                         weight=quote(ROWS) if counted else None))
        return self._tally[1]

    @property
    def n_rows(self) -> int:
        return self.tally().total

    def group_sizes(self) -> np.ndarray:
        """Sizes of the released groups (suppressed rows, the marker in every QI, left out)."""
        if not self.qis:
            return np.array([self.n_rows], dtype=np.int64)
        return self.tally().group_sizes(list(self.qis), self.marker)

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
        counted = self.counted_neutral_sql if neutral else self.counted_sql
        if counted is not None and self.source.engine == "DuckDB":
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

    def select(exprs: dict[str, str], neutral_names: bool, rows: str = "", joined: str = join) -> str:
        cols = ", ".join(f"{exprs[c]} AS {quote(neutral_text(c) if neutral_names else c)}" for c in columns)
        return f"SELECT {cols}{rows}{joined}"

    rows = counted_rows(table, columns, f"{tag}_rows")  # the recount and the export read them, not the file
    counted = counted_neutral = None
    if rows is not None:
        weighted = tuple_join(table, names, tuples, alias, base=rows)
        w = f", s.{quote(ROWS)} AS {quote(ROWS)}"
        counted, counted_neutral = select(plain, False, w, weighted), select(neutral, True, w, weighted)
    return SqlRecords(table, columns, select(plain, False), select(neutral, True), qis=names, marker=marker,
                      counted_sql=counted, counted_neutral_sql=counted_neutral, order_by=order_by)
