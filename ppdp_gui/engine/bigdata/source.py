"""A table larger than memory: a Parquet or CSV file queried by DuckDB, never loaded whole.

`TableSource` is the only thing that touches the file. It exposes what the mechanisms need and nothing more:
the schema (names, kinds, roles, decided by the reader's own rules over every row: bigdata/columns.py), the row
count after the missing-value policy, the distinct values of a column (few, for taxonomy lookups) and GROUP BY
counts over SQL expressions (generalised columns: see sql.py). Every query runs in one embedded DuckDB
connection with a memory limit; DuckDB streams the file and spills to a temporary folder, so memory stays
bounded by the limit plus the (small) results. The counts a release asks again and again (the distinct values
the plan checks, the tuples a mechanism partitions, DiffGen's marginals, the recount of the released rows) come
from one `histogram` of the quasi-identifiers with the sensitive and class columns, kept in memory when it is
small: the file is read once for them, as DuckDB's own GROUP BY would read it. A file that repeats its rows is
read once in all: its distinct rows are counted when it is opened (`_count_rows`), and every pass reads those.

The Dataset made from it (`LargeDataset`, `open_large`) is bigdata/large_dataset.py.

Missing values follow the reader exactly (data/missing.py): the same tokens, columns left out by name or for
being mostly missing, rows dropped ('drop') or missing cells shown as the policy's label ('category'; a numeric
column keeps them empty), and the same notes (`MissingReport.notes`) with the same counts, which go to the
custodian record only. The missing cells of every column are counted in one SQL pass when the file is opened.
"""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd

from ppdp_gui.engine.bigdata.columns import (FLOAT_TYPES, N, helper, literal, missing_counts, missing_sql,
                                             quote, text_sql)
from ppdp_gui.engine.data.guards import Limits
from ppdp_gui.engine.data.missing import MissingReport, check_leave_out, left_out_columns, never_released
from ppdp_gui.engine.data.delimited import scan_text_file
from ppdp_gui.engine.data.prechecks import check_parquet, check_regular
from ppdp_gui.engine.data.schema import NAPolicy
from ppdp_gui.engine.errors import DataError

#: first rows looked at in Python: a column with a non-number (or a leading zero) there is categorical without
#: reading further, and one with more than 10 values there needs no distinct count; the rest is decided in SQL
SCHEMA_ROWS = 50_000
#: DuckDB's memory limit; it spills sorts and large aggregations to disk beyond it
MEMORY_LIMIT = os.environ.get("PPDP_DUCKDB_MEMORY", "1GB")
_BATCH = 1_000_000
#: most combinations a histogram holds in memory (Adult's 8 quasi-identifiers at 10⁷ rows: about 20,000)
HISTOGRAM_ROWS = 500_000
#: the column of a registered histogram holding its row counts
ROWS = helper("rows")
NO_SIZE_CAP = 1 << 62
#: rows of the file looked at to decide whether its distinct rows are counted first (`TableSource._count_rows`)
REPEAT_SAMPLE = 50_000
#: longest line DuckDB accepts (its default, 2 MB, refused a 5 MB cell the in-memory reader reads; DuckDB sets
#: aside 16 times this for a gzipped file)
MAX_LINE = 8 << 20


def duckdb_error(exc: Exception, path) -> DataError:
    """A DuckDB error as the reader would say it: the file, the line when DuckDB names one, and what is wrong."""
    import re
    lines = [t.strip() for t in str(exc).strip().splitlines() if t.strip()]
    found = re.search(r"CSV Error on Line: (\d+)", lines[0] if lines else "")
    what = next((re.search(r"(\d+)\D+(\d+)", t) for t in lines if t.startswith("Expected Number of Columns")),
                None)
    reason = (f"{what.group(2)} values where the header has {what.group(1)} columns" if what else
              (lines[0] if lines else type(exc).__name__))
    return DataError(f"cannot be read as a table: {reason}", path=str(path),
                     line=int(found.group(1)) if found else None)


def pre_read_checks(path: Path) -> Limits:
    """The in-memory reader's pre-read checks (data/prechecks.py) for a file DuckDB will read: only a regular file
    (a FIFO would hang DuckDB too), not empty; the limits on what it may expand to, scaled to its size on disk like
    the reader's (no cap on the table's own size: that is what this engine is for)."""
    st = check_regular(path, "table file")
    if st.st_size == 0:
        raise DataError("the file is empty (0 bytes)", path=str(path), line=1)
    return Limits(st.st_size, max_bytes=NO_SIZE_CAP)


def check_parquet_file(path: Path, limits: Limits) -> None:
    """The reader's footer checks (`prechecks.check_parquet`) on a Parquet file, before DuckDB reads a page."""
    import pyarrow.parquet as pq
    try:
        pf = pq.ParquetFile(str(path))
    except Exception as exc:  # pyarrow raises several types for damaged files
        raise DataError(f"cannot be read as a Parquet file ({type(exc).__name__}: {exc})", path=str(path)) from None
    check_parquet(pf, str(path), limits, in_memory=False)


def check_spaced_names(names: list[str], path) -> None:
    """A column name that starts or ends with a space is refused: the in-memory reader strips it (a CSV header is
    stripped here already), and the engine's own columns start with one (`columns.HELPER`), so none can clash."""
    spaced = [c for c in names if c != c.strip()]
    if spaced:
        raise DataError(f"the name of column {spaced[0]!r} starts or ends with a space, which the large-table engine "
                        "cannot read as the in-memory reader does (it strips it); rename the column, or open the "
                        "file without --engine duckdb", path=str(path), column=spaced[0])


def is_remote(path: str) -> bool:
    """A URL Spark reads (hdfs://, s3a://, …) rather than a local path."""
    import re
    return bool(re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", str(path))) and not str(path).startswith("file://")


def _count(weight: str | None) -> str:
    """The rows of a group: COUNT(*), or the sum of their weights over counted rows (as a BIGINT)."""
    return f"CAST(SUM({weight}) AS BIGINT)" if weight else "COUNT(*)"


class TableSource:
    """A Parquet or CSV (TSV, .gz) file as DuckDB views of text columns (see the module docstring).

    Views: `raw_src` (the file as DuckDB reads it), `kept` (the columns kept, each cell as the reader's text,
    missing cells NULL, rows dropped by the 'drop' policy left out) and `src` (what the mechanisms count:
    `kept`, with a categorical column's missing cells shown as the policy's label under 'category', see
    `apply_kinds`). Opening runs the one missing-value pass (bigdata/columns.py). bigdata/spark_source.py is the
    same on Spark."""

    engine = "DuckDB"
    remote = False
    #: the file's distinct raw rows with their row counts, when they were counted (`_count_rows`); else None
    counted_rows: str | None = None

    def __init__(self, path, *, na_policy: NAPolicy = NAPolicy(), delimiter: str | None = None,
                 memory_limit: str = MEMORY_LIMIT, threads: int | None = None, roles=None):
        import duckdb
        self.given_roles = dict(roles or {})
        self.path = Path(os.path.expanduser(str(path)))
        limits = pre_read_checks(self.path)
        if na_policy.action not in ("drop", "category"):
            raise DataError(f"unknown missing-value action {na_policy.action!r} (use 'drop' or 'category')")
        self.na_policy = na_policy
        self.con = duckdb.connect(config={"memory_limit": memory_limit,
                                          "threads": int(threads or min(4, os.cpu_count() or 1)),
                                          "temp_directory": tempfile.gettempdir(),
                                          "preserve_insertion_order": False})
        self.con.execute("SET enable_progress_bar = false")  # a long query must not draw on the terminal
        # DuckDB plans `x IN (a few constants)` as a join against a list: each column's missing-value test (the
        # policy's tokens) was a join over every row, and the views `kept` and `src` were computed whole for a
        # question about one column (one column of 10⁶ rows through `kept`: 0.12 s CPU, now 0.005 s)
        try:
            self.con.execute("SET disabled_optimizers = 'in_clause'")
        except duckdb.Error:  # a DuckDB without that optimizer's name: the same results, only slower
            pass
        name = self.path.name.lower()
        if name.endswith((".xlsx", ".xlsm", ".xls")):
            raise DataError("is an Excel workbook; the large-table engine reads CSV, TSV and Parquet files: save the "
                            "sheet as CSV, or open the workbook without --engine duckdb", path=str(self.path))
        self.file_format = "parquet" if name.endswith((".parquet", ".pq")) else "csv"
        if self.file_format == "parquet":
            check_parquet_file(self.path, limits)
            raw = f"read_parquet({literal(str(self.path))})"
        else:  # the whole text streamed once: NUL bytes, UTF-8, a gzip's expansion, the header (as in memory)
            delim, header_line, names = scan_text_file(self.path, limits, delimiter)
            opts = (f"header=true, all_varchar=true, delim={literal(delim)}, quote='\"', escape='\"', "
                    f"max_line_size={MAX_LINE}")
            if all(names):  # the reader's header, and every line held to its width (DuckDB's guess dropped rows)
                columns = ", ".join(f"{literal(n)}: 'VARCHAR'" for n in names)
                opts += f", auto_detect=false, columns={{{columns}}}, skip={header_line - 1}"
            raw = f"read_csv({literal(str(self.path))}, {opts})"
        self.delimiter = delimiter
        cols = self.run(f"DESCRIBE SELECT * FROM {raw}")
        self.raw_columns = [str(c[0]) for c in cols]
        check_spaced_names(self.raw_columns, self.path)
        self.raw_types = {str(c[0]): str(c[1]) for c in cols}
        self.con.execute(f"CREATE VIEW raw_src AS SELECT * FROM {raw}")
        self.counted_rows = self._count_rows()
        self._count_missing()
        self._n_rows: int | None = None if self.dropped is None else self.n_rows_read - self.dropped
        self.kinds: dict[str, str] = {}
        self._whole_floats: set[str] = set()
        self.integers: set[str] = set()
        self._define_views()

    def _count_rows(self) -> str | None:
        """`raw_rows`: the file's distinct raw rows, each with the number of rows it stands for (in ROWS), when the
        file repeats its rows (its first REPEAT_SAMPLE rows, and then the whole file, are less than half distinct;
        Adult resampled to 10⁷ rows has about 20,000 distinct ones). One GROUP BY of every column, DuckDB's own
        floor; the missing-value pass, the kinds pass, the role facts, the ledger's row hashes, the histograms and
        the released records then read these rows, weighted, instead of the file: each answer is a function of the
        raw row, so it is the same. The file itself is read again only for what depends on its order (the first
        rows, the first appearance of a value). None for a file of mostly distinct rows (every pass reads the file, as
        before) or with a floating-point column (a GROUP BY holds -0.0 and 0.0 as one value; the reader's text
        tells them apart)."""
        names = self.raw_columns
        if any(self.raw_types[c].upper() in FLOAT_TYPES for c in names):
            return None
        cols = ", ".join(quote(c) for c in names)
        seen, distinct = self.run(f"WITH head AS (SELECT {cols} FROM raw_src LIMIT {REPEAT_SAMPLE}) SELECT (SELECT "
                                  f"COUNT(*) FROM head), (SELECT COUNT(*) FROM (SELECT DISTINCT * FROM head))")[0]
        if not seen or 2 * distinct > seen:
            return None
        self.run(f"CREATE TEMP TABLE raw_rows AS SELECT {cols}, COUNT(*) AS {quote(ROWS)} FROM raw_src "
                 f"GROUP BY {cols}", fetch="")
        kept, rows = self.run(f"SELECT COUNT(*), SUM({quote(ROWS)}) FROM raw_rows")[0]
        if 2 * int(kept) > int(rows or 0):  # the first rows repeated, the rest did not: not worth holding
            self.run("DROP TABLE raw_rows", fetch="")
            return None
        return "raw_rows"

    def weighted(self, relation: str = "src") -> tuple[str, str | None]:
        """(relation, weight column) over which to count the rows of `relation` ('raw_src', 'kept' or 'src'): its
        view over the counted distinct rows with their counts in ROWS when the file's rows were counted
        (`_count_rows`), else `relation` itself with no weight (one row each)."""
        if self.counted_rows is None:
            return relation, None
        return {"raw_src": self.counted_rows, "kept": "kept_rows", "src": "src_rows"}[relation], quote(ROWS)

    # -- missing values (the reader's rules: data/missing.py) ---------------------------------------------------
    def _text(self, column: str) -> str:
        return text_sql(column, self.raw_types[column], self.file_format == "csv", column in self._whole_floats)

    def _missing(self, column: str) -> str:
        return missing_sql(self._text(column), self.raw_types[column], self.file_format == "csv",
                           self.na_policy.tokens)

    def _count_missing(self) -> None:
        """The one missing-value pass: rows, missing cells per column, then the reader's choice of columns to
        leave out; the rows a 'drop' would lose are counted in the same pass when no column is left out for
        being mostly missing (else by `n_rows`)."""
        pol, names = self.na_policy, self.raw_columns
        self._whole_floats = set()
        check_leave_out(names, pol, str(self.path))
        self.unreleased = never_released(names, self.given_roles)  # as in memory: their blanks cost no row
        named = [c for c in names if c not in set(pol.leave_out) and c not in self.unreleased]
        base, weight = self.weighted("raw_src")
        n, missing, any_missing = missing_counts(self.run, base, {c: self._missing(c) for c in names},
                                                 named if pol.action == "drop" else [], weight=weight)
        self.n_rows_read, self.missing = n, missing
        self.left_out = left_out_columns(names, missing, n, pol)
        self.columns = [c for c in names if c not in set(self.left_out)]
        self.dropped = (any_missing if set(self.left_out) == set(pol.leave_out) else None) \
            if pol.action == "drop" else 0

    def _define_views(self) -> None:
        self._histograms: dict[tuple, pd.DataFrame] = {}  # the views change: what was counted on them is stale
        self._too_many: set[tuple] = set()
        self.con.execute(f"CREATE OR REPLACE VIEW kept AS {self._kept_sql(self.columns, 'raw_src')}")
        self.con.execute(f"CREATE OR REPLACE VIEW src AS {self._src_sql(self.columns, 'kept')}")
        if self.counted_rows is not None:  # the same views over the counted rows, their counts carried along
            w = quote(ROWS)
            self.con.execute(f"CREATE OR REPLACE VIEW kept_rows AS "
                             f"{self._kept_sql(self.columns, self.counted_rows, w)}")
            self.con.execute(f"CREATE OR REPLACE VIEW src_rows AS {self._src_sql(self.columns, 'kept_rows', w)}")

    def _filter_columns(self) -> list[str]:
        """The columns whose missing cells drop a row ('drop'), leaving out those with none: a test that is false
        on every row costs a pass and decides nothing."""
        if self.na_policy.action != "drop":
            return []
        return [c for c in self.columns if c not in self.unreleased and self.missing.get(c, 1)]

    def _kept_sql(self, columns: list[str], base: str, extra: str = "") -> str:
        """`kept` over `base` (the raw file, or its rows already counted per raw value) for `columns`."""
        def nulled_one(c: str) -> str:
            return f"CASE WHEN {self._missing(c)} THEN NULL ELSE {self._text(c)} END AS {quote(c)}"
        if self.na_policy.action == "drop":
            texts = ", ".join([nulled_one(c) if c in self.unreleased else f"{self._text(c)} AS {quote(c)}"
                               for c in columns] + ([extra] if extra else []))
            keep = " AND ".join(f"NOT {self._missing(c)}" for c in self._filter_columns()) or "TRUE"
            return f"SELECT {texts} FROM {base} WHERE {keep}"
        nulled = ", ".join([nulled_one(c) for c in columns] + ([extra] if extra else []))
        return f"SELECT {nulled} FROM {base}"

    def _src_sql(self, columns: list[str], base: str, extra: str = "") -> str:
        """`src` over `base` (`kept`): a text column's missing cells read as the label, as in memory: under
        'category' every column's, under 'drop' those of the never-released columns whose blanks were kept."""
        label = literal(self.na_policy.category_label)
        labelled = self._labelled(columns)
        shown = ", ".join([f"COALESCE({quote(c)}, {label}) AS {quote(c)}" if c in labelled else quote(c)
                           for c in columns] + ([extra] if extra else []))
        return f"SELECT {shown} FROM {base}"

    def _labelled(self, columns: list[str]) -> list[str]:
        """The columns of `src` whose missing cells read as the policy's label (see `_src_sql`)."""
        return [c for c in columns if self.kinds.get(c) != "numeric"
                and (self.na_policy.action != "drop" or c in self.unreleased)]

    def src_head(self, kept_head: pd.DataFrame) -> pd.DataFrame:
        """`head()` of `src` from the same first rows of `kept` already read (`src` is `kept` with the labels
        shown): the first rows are read once, not once per view."""
        out = kept_head.copy()
        for c in self._labelled([c for c in out.columns]):
            out[c] = out[c].where(out[c].notna(), self.na_policy.category_label)
        return out

    def histogram(self, columns) -> pd.DataFrame | None:
        """Rows of `src` per combination of `columns` (their text, NULL a group of its own): a frame of the
        columns and n. One GROUP BY, kept for the other questions about the same columns (the distinct values a
        plan checks, the tuples a mechanism partitions: one pass, not one per column); a subset of columns
        already counted is summed from it, not read again. When the rows' fate depends only on these columns
        and none is a floating-point column, the file's raw values are counted first and the reader's text rules
        run once per distinct raw value (as DuckDB's own GROUP BY, the floor). None when there are more than
        HISTOGRAM_ROWS combinations (a continuous column among them): memory stays bounded, the caller asks SQL."""
        cols = tuple(dict.fromkeys(columns))
        if any(set(cols) >= set(have) for have in self._too_many):
            return None
        for have, frame in self._histograms.items():
            if set(cols) <= set(have):
                if cols == have:
                    return frame
                if not cols:
                    return pd.DataFrame({N: [int(frame[N].sum())]})
                return frame.groupby(list(cols), dropna=False, sort=False)[N].sum().reset_index()
        keys = ", ".join(quote(c) for c in cols)
        raw = list(dict.fromkeys(list(cols) + self._filter_columns()))
        typed = any(self.raw_types[c].upper() in FLOAT_TYPES for c in raw)
        if cols and set(raw) == set(cols) and not typed:
            base, weight = self.weighted("raw_src")
            w = quote(helper("w"))
            counted = (f"(SELECT {', '.join(quote(c) for c in raw)}, {_count(weight)} AS {w} FROM {base} "
                       f"GROUP BY {', '.join(quote(c) for c in raw)}) AS raw_counts")
            rows = self._src_sql(list(cols), f"({self._kept_sql(list(cols), counted, w)}) AS kept_counts", w)
            sql = f"SELECT {keys}, CAST(SUM({w}) AS BIGINT) AS {quote(N)} FROM ({rows}) AS h GROUP BY {keys}"
        else:
            base, weight = self.weighted("src")
            sql = (f"SELECT {keys}{', ' if keys else ''}{_count(weight)} AS {quote(N)} FROM {base}"
                   + (f" GROUP BY {keys}" if keys else ""))
        frame = self.query(f"{sql} LIMIT {HISTOGRAM_ROWS + 1}")
        if len(frame) > HISTOGRAM_ROWS:  # too many combinations to hold: the caller asks SQL instead
            self._too_many.add(cols)
            return None
        frame[N] = frame[N].astype(np.int64)
        self._histograms[cols] = frame
        return frame

    def apply_kinds(self, kinds: dict[str, str], whole=()) -> None:
        """The columns' kinds are known: under 'category', a categorical column shows missing cells as the
        label and a numeric one keeps them NULL (the reader's NaN); a float column of whole numbers reads as
        integers (as the reader's text of it)."""
        self.kinds = dict(kinds)
        floats = {c for c in self.columns if self.raw_types[c].upper() in FLOAT_TYPES}
        self._whole_floats = set(whole) & floats
        self.integers = {c for c in whole if kinds.get(c) == "numeric" and not self.nulls.get(c)}
        self._define_views()

    def value_sql(self, column: str, alias: str = "s") -> str:
        """A column as the in-memory table holds it, for released records: a numeric column as BIGINT when the
        reader holds integers (whole numbers, none missing), else DOUBLE (missing: NULL, the reader's NaN); text
        as it is. So '2.50' and '1e3' are written 2.5 and 1000 by either engine."""
        c = f"{alias}.{quote(column)}"
        if self.kinds.get(column) != "numeric":
            return c
        return f"CAST(CAST({c} AS DOUBLE) AS BIGINT)" if column in self.integers else f"CAST({c} AS DOUBLE)"

    @property
    def nulls(self) -> dict[str, int]:
        """Missing cells left in `src` per column: a numeric column's under 'category' (categorical ones show
        the label; 'drop' leaves none)."""
        if self.na_policy.action == "drop":
            return {}
        return {c: self.missing.get(c, 0) for c in self.columns if self.kinds.get(c) == "numeric"}

    def report(self) -> MissingReport:
        blanks_kept = tuple(c for c in self.columns if c in self.unreleased and self.missing.get(c)) \
            if self.na_policy.action == "drop" else ()
        return MissingReport(rows=self.n_rows_read, missing=dict(self.missing), left_out=tuple(self.left_out),
                             dropped=self.n_rows_read - self.n_rows, blanks_kept=blanks_kept)

    def run(self, sql: str, params=None, fetch: str = "all"):
        """Execute one statement and fetch its result ("all": rows, "df": a frame, "": nothing); a DuckDB error
        (a malformed line, a value that is not a number), raised by the execution or the fetch, becomes a
        DataError naming the file and the line."""
        import duckdb
        try:
            result = self.con.execute(sql, params or [])
            return result.df() if fetch == "df" else (result.fetchall() if fetch == "all" else None)
        except duckdb.Error as exc:
            raise duckdb_error(exc, self.path) from None

    # -- rows ---------------------------------------------------------------------------------------------------
    @property
    def n_rows(self) -> int:
        if self._n_rows is None:
            base, weight = self.weighted("src")
            self._n_rows = int(self.run(f"SELECT COALESCE({_count(weight)}, 0) FROM {base}")[0][0])
        return self._n_rows

    def head(self, n: int = SCHEMA_ROWS, relation: str = "src") -> pd.DataFrame:
        """The first `n` rows as text (`kept`: missing cells NULL)."""
        return self.run(f"SELECT * FROM {relation} LIMIT {int(n)}", fetch="df")

    # -- queries ------------------------------------------------------------------------------------------------
    def query(self, sql: str, params=None) -> pd.DataFrame:
        """A small result (counts, distinct values) as a frame."""
        return self.run(sql, params, fetch="df")

    def scalar(self, sql: str):
        return self.run(sql)[0][0]

    def distinct(self, column: str, among=()) -> pd.Series:
        """The distinct text values of a column (few for the columns a taxonomy generalises), sorted. With
        `among` (columns counted together, e.g. the quasi-identifiers), read from their one `histogram`."""
        if among and column in among or any(column in have for have in self._histograms):
            got = self.histogram(tuple(among) if column in among else (column,))
            if got is not None and not got[column].isna().any():
                return pd.Series(np.sort(pd.unique(got[column].astype(str).to_numpy())), dtype=object).astype(str)
        c = quote(column)
        return self.query(f"SELECT DISTINCT {c} AS v FROM {self.weighted('src')[0]} ORDER BY v")["v"].astype(str)

    def group_counts(self, keys: dict[str, str], *, relation: str = "src", where: str | None = None,
                     weight: str | None = None) -> pd.DataFrame:
        """`SELECT key expressions, COUNT(*) AS N FROM relation GROUP BY keys`: one row per non-empty group (keys
        that are columns of `src`: from its `histogram`). With `weight`, a relation of rows already counted (a
        histogram, see `counted`): N (the rows, named so no column of the file clashes) is the sum of that
        column."""
        names = {quote(c): c for c in self.columns}
        if relation == "src" and where is None and keys and all(e in names for e in keys.values()) \
                and len(set(keys.values())) == len(keys):
            got = self.histogram(tuple(names[e] for e in keys.values()))
            if got is not None:
                return got.rename(columns={names[e]: k for k, e in keys.items()})[list(keys) + [N]]
        if relation == "src" and weight is None:
            relation, weight = self.weighted("src")
        select = ", ".join(f"{expr} AS {quote(name)}" for name, expr in keys.items())
        group = ", ".join(str(i + 1) for i in range(len(keys)))
        n = f"CAST(SUM({weight}) AS BIGINT)" if weight else "COUNT(*)"
        sql = f"SELECT {select}, {n} AS {quote(N)} FROM {relation}" + (f" WHERE {where}" if where else "")
        sql += f" GROUP BY {group}" if keys else ""
        return self.query(sql)

    def cached_histogram(self, columns) -> pd.DataFrame | None:
        """`histogram(columns)` when it can be summed from one already counted (never a new pass), else None."""
        cols = tuple(dict.fromkeys(columns))
        if any(set(cols) <= set(have) for have in self._histograms):
            return self.histogram(cols)
        return None

    def counted(self, columns, name: str) -> tuple[str, str | None]:
        """(relation, weight column) over which to count `columns` of `src` several times: their `histogram`,
        registered as `name` with its counts in ROWS (a mechanism's passes then read a few thousand rows, not
        the file); `src` itself (weight None) when there are too many combinations to hold."""
        got = self.histogram(tuple(columns))
        if got is None:
            return self.weighted("src")
        self.register(name, got.rename(columns={N: ROWS}))
        return name, quote(ROWS)

    @contextmanager
    def file_order(self):
        """Queries inside see `row_number() OVER ()` in file order (DuckDB's insertion order kept; it is off
        otherwise, so the counting passes may reorder freely)."""
        self.run("SET preserve_insertion_order = true", fetch="")
        try:
            yield
        finally:
            self.run("SET preserve_insertion_order = false", fetch="")

    def first_seen(self, column: str) -> pd.Series:
        """A column's distinct values in the order they first appear among the kept rows, as the reader's frame
        would give them (`pd.unique`). File order: `row_number() OVER ()` with insertion order kept for this
        one query (the window holds the column and a position per row; DuckDB spills it past its limit)."""
        c = quote(column)
        p = quote(helper("p"))  # not a column of the file, whatever its name
        with self.file_order():
            got = self.query(f"SELECT v FROM (SELECT {c} AS v, MIN({p}) AS first FROM (SELECT {c}, row_number() "
                             f"OVER () AS {p} FROM src) AS r GROUP BY 1) AS g ORDER BY first")
        return got["v"].astype(str)

    def register(self, name: str, frame: pd.DataFrame) -> None:
        """A small mapping table (value → code) the SQL joins against."""
        self.con.register(name, frame)

    def hash_texts(self) -> str:
        """The SELECT list of the raw cells as the ledger's row hashes read them: each as the text the in-memory
        reader hashes for it. A CSV's empty field is '' to the reader, NULL to DuckDB; a Parquet boolean is
        'True'/'False' to the reader (pandas' text of it), 'true'/'false' to a CAST (it gave a boolean column
        another identity, and so another budget, on this engine than in memory)."""
        def text(c: str) -> str:
            q = quote(c)
            if self.file_format == "csv":
                return f"COALESCE(CAST({q} AS VARCHAR), '')"
            if self.raw_types[c].upper() == "BOOLEAN":
                return f"(CASE WHEN {q} THEN 'True' WHEN NOT {q} THEN 'False' END)"
            return f"CAST({q} AS VARCHAR)"
        return ", ".join(f"{text(c)} AS {quote(c)}" for c in self.raw_columns)

    def row_hashes(self) -> np.ndarray:
        """The ledger's raw row hashes (privacy/fingerprint.py), computed batch by batch over the file's raw
        text: the same people give the same identity whichever engine reads the file. When the file's rows were
        counted (`_count_rows`), each distinct row is hashed once and its hash repeated as many times as the row
        occurs: the same multiset, handed over sorted (the ledger then neither sorts it again nor keys a row
        more than once)."""
        import pyarrow as pa

        from ppdp_gui.engine.privacy.fingerprint import canonical_row_hashes
        texts = self.hash_texts()
        base, weight = self.weighted("raw_src")
        import duckdb
        try:
            reader = self.con.sql(f"SELECT {texts}{f', {weight}' if weight else ''} FROM {base}"
                                  ).to_arrow_reader(_BATCH)
            parts, counts = [], []
            for b in reader:
                if weight:
                    counts.append(b.column(b.num_columns - 1).to_numpy(zero_copy_only=False))
                    b = b.drop_columns([b.schema.names[-1]]) if hasattr(b, "drop_columns") else \
                        pa.RecordBatch.from_arrays(b.columns[:-1], names=b.schema.names[:-1])
                parts.append(canonical_row_hashes(pa.Table.from_batches([b])))
        except duckdb.Error as exc:
            raise duckdb_error(exc, self.path) from None
        hashes = np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint64)
        if not weight or not len(hashes):
            return hashes
        order = np.argsort(hashes, kind="stable")
        return np.repeat(hashes[order], np.concatenate(counts).astype(np.int64)[order])

    def copy(self, sql: str, path: Path, options: str) -> None:
        """Write the rows of `sql`, in order, to `path` (`COPY … TO`, DuckDB's options)."""
        self.run(f"COPY ({sql}) TO {literal(str(path))} ({options})", fetch="")

    def copy_counted(self, sql: str, columns: list[str], path: Path, options: str) -> None:
        """Write rows given counted to `path`: `sql` yields distinct rows in the order to write, each with its count
        in ROWS; each is written that many times, in that order. The distinct rows are put in a table in that
        order and repeated by `unnest` (in pieces of at most 65,536, so no list is large), which keeps the order
        under `preserve_insertion_order`: no sort of the written rows. `columns`: the names to write."""
        cols, w = ", ".join(quote(c) for c in columns), quote(ROWS)
        piece = 1 << 16
        self.run("SET preserve_insertion_order = true", fetch="")
        try:
            p, n, i = (quote(helper(x)) for x in ("piece", "n", "i"))
            self.run(f"CREATE OR REPLACE TEMP TABLE ppdp_ordered__ AS {sql}", fetch="")
            pieces = (f"SELECT {cols}, least({w} - {p} * {piece}, {piece}) AS {n} FROM (SELECT *, "
                      f"unnest(range(({w} + {piece - 1}) // {piece})) AS {p} FROM ppdp_ordered__) AS p")
            rows = f"SELECT {cols}, unnest(range({n})) AS {i} FROM ({pieces}) AS q"
            self.run(f"COPY (SELECT {cols} FROM ({rows}) AS r) TO {literal(str(path))} ({options})", fetch="")
        finally:
            self.run("DROP TABLE IF EXISTS ppdp_ordered__", fetch="")
            self.run("SET preserve_insertion_order = false", fetch="")

    def reader(self):
        """A DuckDB connection that reads a written file back (here: the source's own)."""
        return self.con

    def close(self) -> None:
        self.con.close()
