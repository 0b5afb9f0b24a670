"""A table larger than memory: a Parquet or CSV file queried by DuckDB, never loaded whole.

`TableSource` is the only thing that touches the file. It exposes what the mechanisms need and nothing more:
the schema (names, kinds, roles, read by the reader's own rules from the first rows), the row count after the
missing-value policy, the distinct values of a column (few, for taxonomy lookups) and GROUP BY counts over SQL
expressions (generalised columns: see sql.py). Every query runs in one embedded DuckDB connection with a memory
limit; DuckDB streams the file and spills to a temporary folder, so memory stays bounded by the limit plus the
(small) results.

`LargeDataset` is a `Dataset` whose `frame` holds no rows (only the typed columns, so schema code keeps working)
and whose `table` is the TableSource: the publish path (plan → run_release → export) is the same one; the
mechanisms that support it ask `is_large(data)` and count through SQL.

Missing values: rows with a missing-value token in any column are left out (the 'drop' policy, the default);
the 'category' policy and the automatic leaving out of mostly-missing columns are not offered for such tables
(a clear error says so).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd

from ppdp_gui.engine.data.schema import Dataset, NAPolicy, SourceInfo
from ppdp_gui.engine.errors import DataError, ParameterError

#: rows read to decide each column's kind and role guess (the reader's rules, on these rows)
SCHEMA_ROWS = 50_000
#: DuckDB's memory limit; it spills sorts and large aggregations to disk beyond it
MEMORY_LIMIT = os.environ.get("PPDP_DUCKDB_MEMORY", "1GB")
_BATCH = 1_000_000


def quote(name: str) -> str:
    """A SQL identifier in double quotes (portable: DuckDB, Spark SQL with ANSI quoting, PostgreSQL)."""
    return '"' + str(name).replace('"', '""') + '"'


def literal(text: str) -> str:
    """A SQL string literal."""
    return "'" + str(text).replace("'", "''") + "'"


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


def _sniff(path: Path) -> str:
    """The delimiter by the reader's own rule on the first MiB (gzip-compressed files too)."""
    import gzip
    from ppdp_gui.engine.data.delimited import head_text, sniff_delimiter
    opener = gzip.open if path.name.lower().endswith(".gz") else open
    with opener(path, "rb") as f:
        return sniff_delimiter(head_text(f.read(1 << 20)))


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            h.update(block)
    return h.hexdigest()


class TableSource:
    """A Parquet or CSV (TSV, .gz) file as a DuckDB view `src` of text columns (see the module docstring)."""

    def __init__(self, path, *, na_policy: NAPolicy = NAPolicy(), delimiter: str | None = None,
                 memory_limit: str = MEMORY_LIMIT, threads: int | None = None):
        import duckdb
        self.path = Path(os.path.expanduser(str(path)))
        if not self.path.is_file():
            raise DataError("no such file", path=str(self.path))
        if na_policy.action != "drop":
            raise ParameterError("the large-table engine (DuckDB) only drops rows with missing values; use "
                                 "--na drop or the in-memory engine")
        self.na_policy = na_policy
        self.con = duckdb.connect(config={"memory_limit": memory_limit,
                                          "threads": int(threads or min(4, os.cpu_count() or 1)),
                                          "temp_directory": tempfile.gettempdir(),
                                          "preserve_insertion_order": False})
        name = self.path.name.lower()
        self.file_format = "parquet" if name.endswith((".parquet", ".pq")) else "csv"
        if self.file_format == "parquet":
            raw = f"read_parquet({literal(str(self.path))})"
        else:
            delim = delimiter or ("\t" if ".tsv" in name or ".tab" in name else _sniff(self.path))
            opts = f"header=true, all_varchar=true, delim={literal(delim)}, quote='\"', escape='\"'"
            raw = f"read_csv({literal(str(self.path))}, {opts})"
        self.delimiter = delimiter
        cols = self.run(f"DESCRIBE SELECT * FROM {raw}")
        self.raw_columns = [str(c[0]) for c in cols]
        left_out = set(na_policy.leave_out)
        self.columns = [c for c in self.raw_columns if c not in left_out]
        # every column as trimmed text: the reader reads text first, then types by its shown rule
        texts = ", ".join(f"trim(CAST({quote(c)} AS VARCHAR)) AS {quote(c)}" for c in self.columns)
        self.con.execute(f"CREATE VIEW raw_src AS SELECT * FROM {raw}")
        self.con.execute(f"CREATE VIEW src AS SELECT {texts} FROM raw_src WHERE {self._kept_rows()}")
        self._n_rows: int | None = None
        self._n_read: int | None = None

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
    def _kept_rows(self) -> str:
        """The WHERE clause of the 'drop' policy: no column holds a missing value (NULL or a token)."""
        tokens = ", ".join(literal(t) for t in self.na_policy.tokens)
        parts = []
        for c in self.columns:
            text = f"trim(CAST({quote(c)} AS VARCHAR))"
            parts.append(f"({text} IS NOT NULL" + (f" AND {text} NOT IN ({tokens}))" if tokens else ")"))
        return " AND ".join(parts) or "TRUE"

    @property
    def n_rows(self) -> int:
        if self._n_rows is None:
            self._n_rows = int(self.run("SELECT COUNT(*) FROM src")[0][0])
        return self._n_rows

    @property
    def n_rows_read(self) -> int:
        if self._n_read is None:
            self._n_read = int(self.run("SELECT COUNT(*) FROM raw_src")[0][0])
        return self._n_read

    def head(self, n: int = SCHEMA_ROWS) -> pd.DataFrame:
        """The first `n` kept rows as text (the reader's typing rules decide kinds and role guesses on them)."""
        return self.run(f"SELECT * FROM src LIMIT {int(n)}", fetch="df")

    # -- queries ------------------------------------------------------------------------------------------------
    def query(self, sql: str, params=None) -> pd.DataFrame:
        """A small result (counts, distinct values) as a frame."""
        return self.run(sql, params, fetch="df")

    def scalar(self, sql: str):
        return self.run(sql)[0][0]

    def distinct(self, column: str) -> pd.Series:
        """The distinct text values of a column (few for the columns a taxonomy generalises), sorted."""
        c = quote(column)
        return self.query(f"SELECT DISTINCT {c} AS v FROM src ORDER BY v")["v"].astype(str)

    def group_counts(self, keys: dict[str, str], *, relation: str = "src", where: str | None = None
                     ) -> pd.DataFrame:
        """`SELECT key expressions, COUNT(*) AS n FROM relation GROUP BY keys`: one row per non-empty group."""
        select = ", ".join(f"{expr} AS {quote(name)}" for name, expr in keys.items())
        group = ", ".join(str(i + 1) for i in range(len(keys)))
        sql = f"SELECT {select}, COUNT(*) AS n FROM {relation}" + (f" WHERE {where}" if where else "")
        sql += f" GROUP BY {group}" if keys else ""
        return self.query(sql)

    def register(self, name: str, frame: pd.DataFrame) -> None:
        """A small mapping table (value → code) the SQL joins against."""
        self.con.register(name, frame)

    def row_hashes(self) -> np.ndarray:
        """The ledger's raw row hashes (privacy/fingerprint.py), computed batch by batch over the file's raw
        text: the same people give the same identity whichever engine reads the file."""
        from ppdp_gui.engine.privacy.fingerprint import canonical_row_hashes
        import pyarrow as pa
        texts = ", ".join(f"CAST({quote(c)} AS VARCHAR) AS {quote(c)}" for c in self.raw_columns)
        import duckdb
        try:
            reader = self.con.sql(f"SELECT {texts} FROM raw_src").to_arrow_reader(_BATCH)
            parts = [canonical_row_hashes(pa.Table.from_batches([b])) for b in reader]
        except duckdb.Error as exc:
            raise duckdb_error(exc, self.path) from None
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint64)

    def close(self) -> None:
        self.con.close()


@dataclass(frozen=True)
class LargeDataset(Dataset):
    """A Dataset whose rows stay in the file: `frame` has the typed columns and no rows; `table` counts."""

    table: TableSource | None = field(default=None, compare=False, repr=False)

    @property
    def n_rows(self) -> int:
        return self.table.n_rows if self.table is not None else 0


def is_large(data) -> bool:
    return isinstance(data, LargeDataset) and data.table is not None


def open_large(path, *, na_policy: NAPolicy = NAPolicy(), kinds=None, roles=None, delimiter=None,
               hashes: bool = True) -> LargeDataset:
    """A LargeDataset over `path`: kinds and role guesses from the first rows by the reader's rules, the source
    hash streamed, the ledger's row hashes computed in batches (`hashes=False` skips them, for tests)."""
    from ppdp_gui.engine.data.reader import dataset_from_frame
    source = TableSource(path, na_policy=na_policy, delimiter=delimiter)
    unknown = [c for c in list(kinds or {}) + list(roles or {}) if c not in source.columns]
    if unknown:
        raise DataError(f"no column named {unknown[0]!r} (columns: {', '.join(source.columns)})",
                        path=str(source.path), column=unknown[0])
    sample = source.head()
    typed = dataset_from_frame(sample, kinds=kinds, roles=roles, na_policy=replace(na_policy, mostly_missing=None))
    info = SourceInfo(path=str(source.path.resolve()), sha256=file_sha256(source.path),
                      n_rows_read=source.n_rows_read, n_rows_dropped=source.n_rows_read - source.n_rows,
                      na_policy=na_policy, delimiter=delimiter, file_format=source.file_format,
                      row_hashes=source.row_hashes() if hashes else None,
                      notes=(f"read with the large-table engine (DuckDB): kinds decided on the first "
                             f"{min(SCHEMA_ROWS, len(sample)):,} rows; rows with a missing value left out",))
    data = LargeDataset(frame=typed.frame.iloc[:0], schema=typed.schema, source=info, table=source)
    check_numeric(data)
    return data


def check_numeric(data: LargeDataset) -> None:
    """Every value of a numeric column must read as a number (checked in SQL on the whole file)."""
    for spec in data.schema:
        if spec.kind != "numeric":
            continue
        c = quote(spec.name)
        bad = data.table.query(f"SELECT {c} AS v FROM src WHERE TRY_CAST({c} AS DOUBLE) IS NULL LIMIT 3")
        if len(bad):
            raise DataError(f"the numeric column {spec.name!r} holds values that are not numbers, e.g. "
                            f"{list(bad['v'].astype(str))}; give it the kind 'categorical'",
                            path=data.source.path, column=spec.name)


def uniqueness_sql(table: TableSource, column: str) -> tuple[float, float]:
    """pipeline.plan.uniqueness in SQL: (share of rows holding distinct values, share of rows whose value no
    other row has)."""
    n = table.n_rows
    if not n:
        return 0.0, 0.0
    d, u = table.con.execute(f"SELECT COUNT(*), SUM(CASE WHEN n = 1 THEN 1 ELSE 0 END) FROM (SELECT COUNT(*) AS n "
                             f"FROM src GROUP BY {quote(column)}) AS g").fetchall()[0]
    return float(d) / n, float(u or 0) / n


def distinct_typed(data: Dataset, column: str) -> pd.Series:
    """The distinct values of a column of a large table, typed as in memory."""
    return typed_values(data, column, data.table.distinct(column))


def typed_values(data: Dataset, column: str, texts: pd.Series) -> pd.Series:
    """Distinct texts of a column typed as the reader types the column (so `Taxonomy.node_codes` sees what it
    would see in memory: '39' for a whole-number column, '39.5' otherwise)."""
    from ppdp_gui.engine.data.reader import dataset_from_frame
    spec = data.spec(column)
    frame = pd.DataFrame({column: texts.astype(str).to_numpy()})
    typed = dataset_from_frame(frame, kinds={column: spec.kind}, roles={column: spec.role},
                               na_policy=NAPolicy(tokens=(), mostly_missing=None))
    return typed.frame[column].reset_index(drop=True)
