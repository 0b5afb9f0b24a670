"""A table read and counted by Apache Spark: the second implementation of `TableSource` (docs/big_tables.md).

Everything above the source is shared with the DuckDB engine: the views (`raw_src` → `kept` → `src`), the
reader's rules for missing values, kinds and roles (bigdata/columns.py), the counting passes of DiffGen, global
recoding and strict Mondrian, the released-records query and its recount. Only three things differ:

- *reading*: Spark reads the file where it lies (a local path, `hdfs://`, `s3a://` …): a CSV/TSV as text
  (header, the reader's delimiter, `"` quoting, malformed lines an error), a Parquet file with its types;
- *running*: each statement is the DuckDB text transpiled to Spark SQL (bigdata/dialect.py), run in a session of
  its own (temporary views do not meet another table's), results collected to the driver (counts, a few values);
  once the kinds are decided, `src` (the cells as the reader's text) is cached by Spark (memory, spilling to
  disk) so the counting passes do not redo that text for every query;
- *writing*: the released rows, in their written order, come to the driver a partition at a time as Arrow
  batches and are streamed into the same DuckDB `COPY` as the DuckDB engine's (so a CSV has the same bytes); the
  sort's range partitions are counted from the rows (`copy_conf`), so the driver's JVM holds a few MB at a time;
  the written file is read back and recounted by DuckDB on the driver;
- *the ledger's row hashes*: computed on the executors, batch by batch, by the same `canonical_row_hashes`; only
  the 8-byte hashes come back. So the driver never holds the table (its default 1 GB is enough at 10⁷ rows).

The session is `local[2]` by default; `--spark-master URL` (or $PPDP_SPARK_MASTER) names a cluster, and the usual
Spark configuration ($SPARK_CONF_DIR/spark-defaults.conf) applies. What leaves the driver: the queries (text) and,
to the executors, the small mapping tables of values → released labels and two small Python functions (the row
hashes, the batches' serialisation: the executors need this package's Python environment, as any PySpark code
does; locally they use the driver's interpreter); the rows stay where the file is.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd

from ppdp_gui.engine.bigdata.dialect import to_spark
from ppdp_gui.engine.bigdata.source import (TableSource, check_parquet_file, check_spaced_names, is_remote,
                                            pre_read_checks)
from ppdp_gui.engine.data.schema import NAPolicy
from ppdp_gui.engine.errors import DataError

#: a registered table of numbers at least this long goes to Spark as Arrow, not as Python tuples
_ARROW_ROWS = 50_000
#: the driver's DuckDB table of the written rows' positions and persons (`SparkTableSource.copy` with `keep`)
WRITTEN = "ppdp_written"
#: the master used when none is named: two local cores (a cluster: --spark-master or $PPDP_SPARK_MASTER)
DEFAULT_MASTER = "local[2]"

#: a registered table of at most this many rows (the mapping tables: values or QI tuples → released labels) is
#: joined by broadcast: Spark cannot size a table made from driver data, and would otherwise shuffle the whole
#: source by the join key (a sort-merge join) to meet a few thousand rows
BROADCAST_ROWS = 200_000

#: Spark's type names → the DuckDB names bigdata/columns.py decides on
_TYPES = {"string": "VARCHAR", "bigint": "BIGINT", "int": "INTEGER", "smallint": "SMALLINT", "tinyint": "TINYINT",
          "double": "DOUBLE", "float": "FLOAT", "boolean": "BOOLEAN", "date": "DATE", "timestamp": "TIMESTAMP",
          "timestamp_ntz": "TIMESTAMP", "binary": "BLOB"}


def spark_session(master: str | None = None):
    """The process's SparkSession (created once; Java must be installed: scripts/setup.sh installs it)."""
    if not shutil.which("java") and not os.environ.get("JAVA_HOME"):
        raise DataError("the Spark engine needs a Java runtime: install it (scripts/setup.sh does: "
                        "default-jre-headless) or use the DuckDB engine")
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise DataError("the Spark engine needs pyspark: pip install '.[spark]' (scripts/setup.sh installs it) "
                        "or use the DuckDB engine") from None
    master = master or os.environ.get("PPDP_SPARK_MASTER") or DEFAULT_MASTER
    builder = (SparkSession.builder.master(master).appName("ppdp")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.execution.arrow.pyspark.enabled", "true")
               .config("spark.sql.session.timeZone", "UTC")
               # a partition of released rows (a few MB) comes back in the task's reply, not through the block
               # manager (where one was lost under memory pressure at 10⁷ rows)
               .config("spark.task.maxDirectResultSize", "64m"))
    if master.startswith("local"):  # a few cores: a few shuffle partitions
        builder = builder.config("spark.sql.shuffle.partitions", "2")
        # the executors' Python (row hashes, streamed rows): this one, with its packages (pyspark reads it from
        # the environment when the context starts; a cluster names its own)
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def _spark_type(name: str) -> str:
    return "VARCHAR" if name.startswith("decimal") else _TYPES.get(name, "VARCHAR")


class _Result:
    def __init__(self, frame):
        self.frame = frame

    def fetchall(self):
        return [tuple(r) for r in self.frame.collect()]

    def df(self) -> pd.DataFrame:
        return self.frame.toPandas()


class SparkConnection:
    """What the shared code asks of a connection (`execute(sql).fetchall() / .df()`, `register`), on Spark."""

    def __init__(self, spark):
        self.spark = spark

    def execute(self, sql: str, params=None) -> _Result:
        if params:
            raise ValueError("the Spark engine takes no query parameters")
        return _Result(self.spark.sql(to_spark(sql)))

    def register(self, name: str, frame: pd.DataFrame) -> None:
        from pyspark.sql import types as T
        from pandas.api import types as P
        numbers = all((P.is_integer_dtype(frame[c].dtype) or P.is_float_dtype(frame[c].dtype))
                      and not P.is_bool_dtype(frame[c].dtype) for c in frame.columns)
        if len(frame) >= _ARROW_ROWS and numbers and len(frame.columns):  # DiffGen's keys: one per row, by Arrow
            fields = [T.StructField(str(c), T.LongType() if P.is_integer_dtype(frame[c].dtype) else T.DoubleType())
                      for c in frame.columns]
            plain = pd.DataFrame({str(c): frame[c].to_numpy(dtype=np.int64 if P.is_integer_dtype(frame[c].dtype)
                                                            else np.float64) for c in frame.columns})
            key = "spark.sql.execution.arrow.pyspark.enabled"
            before = self.spark.conf.get(key, None)
            self.spark.conf.set(key, "true")
            try:
                self.spark.createDataFrame(plain, schema=T.StructType(fields)).createOrReplaceTempView(name)
            finally:
                self.spark.conf.unset(key) if before is None else self.spark.conf.set(key, before)
            return
        fields, rows = [], {}
        for c in frame.columns:
            col = frame[c]
            if P.is_bool_dtype(col.dtype):
                t, v = T.BooleanType(), col.astype(bool)
            elif P.is_integer_dtype(col.dtype):
                t, v = T.LongType(), col.astype(np.int64)
            elif P.is_float_dtype(col.dtype):
                t, v = T.DoubleType(), col.astype(np.float64)
            else:
                t, v = T.StringType(), col.astype(object)
            fields.append(T.StructField(str(c), t))
            rows[str(c)] = v.to_numpy(dtype=object)
        data = list(zip(*rows.values())) if rows else []
        table = self.spark.createDataFrame(data, schema=T.StructType(fields))
        if len(frame) <= BROADCAST_ROWS:  # a mapping table: sent to every task, the big side never shuffled
            from pyspark.sql.functions import broadcast
            table = broadcast(table)
        table.createOrReplaceTempView(name)

    def close(self) -> None:
        for view in self.spark.catalog.listTables():
            if view.isTemporary:
                self.spark.catalog.dropTempView(view.name)


def spark_error(exc: Exception, path) -> DataError:
    """A Spark error as the reader would say it: the file and the first line of Spark's message."""
    lines = [t.strip() for t in str(exc).strip().splitlines() if t.strip()]
    return DataError(f"cannot be read as a table: {lines[0] if lines else type(exc).__name__}", path=str(path))


class SparkTableSource(TableSource):
    """`TableSource` on Spark (see the module docstring); every view and query is the DuckDB engine's."""

    engine = "Spark"
    #: the written file is read back by another connection (DuckDB on the driver) than the one that ran the query
    recount_elsewhere = True

    def __init__(self, path, *, na_policy: NAPolicy = NAPolicy(), delimiter: str | None = None, roles=None,
                 master: str | None = None):
        self.given_roles = dict(roles or {})
        text = str(path)
        self.remote = is_remote(text)
        self.path = Path(text) if self.remote else Path(os.path.expanduser(text))
        self.url = text if self.remote else str(self.path.resolve())
        limits = None if self.remote else pre_read_checks(self.path)  # the reader's checks, on a local file
        if na_policy.action not in ("drop", "category"):
            raise DataError(f"unknown missing-value action {na_policy.action!r} (use 'drop' or 'category')")
        self.na_policy = na_policy
        self.spark = spark_session(master).newSession()  # its own temporary views
        self.con = SparkConnection(self.spark)
        name = text.lower()
        self.file_format = "parquet" if name.endswith((".parquet", ".pq")) or name.endswith("/") else "csv"
        try:
            if self.file_format == "parquet":
                if limits is not None:
                    check_parquet_file(self.path, limits)
                raw = self.spark.read.parquet(self.url)
            else:
                if limits is not None:  # NUL bytes, UTF-8, a gzip's expansion, the delimiter: as the reader
                    from ppdp_gui.engine.data.delimited import scan_text_file
                    delim = scan_text_file(self.path, limits, delimiter)[0]
                else:
                    delim = delimiter or ("\t" if ".tsv" in name or ".tab" in name else ",")
                raw = self.spark.read.options(header=True, sep=delim, quote='"', escape='"', multiLine=True,
                                              mode="FAILFAST", inferSchema=False).csv(self.url)
            raw.createOrReplaceTempView("raw_src")
        except DataError:
            raise
        except Exception as exc:  # noqa: BLE001 - Spark's errors (Py4J, analysis) as one message
            raise spark_error(exc, self.path) from None
        self.delimiter = delimiter
        self.raw_columns = [str(c) for c in raw.columns]
        check_spaced_names(self.raw_columns, self.url if self.remote else self.path)
        self.raw_types = {str(c): _spark_type(t) for c, t in raw.dtypes}
        self._count_missing()
        self._n_rows = None if self.dropped is None else self.n_rows_read - self.dropped
        self.kinds = {}
        self._whole_floats = set()
        self.integers = set()
        self._define_views()

    def _define_views(self) -> None:
        """The views as on DuckDB, and `src` cached (memory, then disk) when first read: every pass after the
        reading ones counts it, and recomputing the reader's text of every cell for each query is what costs."""
        self.spark.sql("UNCACHE TABLE IF EXISTS src")
        super()._define_views()
        if self.kinds:  # the final views (apply_kinds); before that only the reading passes run, once each
            self.spark.sql("CACHE LAZY TABLE src")

    def run(self, sql: str, params=None, fetch: str = "all"):
        try:
            result = self.con.execute(sql, params)
            return result.df() if fetch == "df" else (result.fetchall() if fetch == "all" else None)
        except (ValueError, DataError):
            raise
        except Exception as exc:  # noqa: BLE001 - Spark's errors (a malformed line, a value not a number)
            raise spark_error(exc, self.path) from None

    @contextmanager
    def file_order(self):
        """Nothing to set: `row_number() OVER ()` is ordered by Spark's row ids (bigdata/dialect.py)."""
        yield

    def first_seen(self, column: str) -> pd.Series:
        """As `TableSource.first_seen`, without a window: each value's smallest Spark row id
        (`monotonically_increasing_id()`, increasing in file order within a file Spark reads), a GROUP BY in every
        partition. `row_number() OVER ()` would move every row to one partition (a window with no PARTITION BY)."""
        from ppdp_gui.engine.bigdata.columns import quote
        c = quote(column)
        got = self.query(f"SELECT v FROM (SELECT v, MIN(p) AS first FROM (SELECT {c} AS v, "
                         f"monotonically_increasing_id() AS p FROM src) AS r GROUP BY v) AS g ORDER BY first")
        return got["v"].astype(str)

    def register(self, name: str, frame: pd.DataFrame) -> None:
        self.con.register(name, frame)

    def row_hashes(self) -> np.ndarray:
        """The ledger's raw row hashes over the file's raw text, as the DuckDB engine computes them: hashed on the
        executors batch by batch (`batch_row_hashes`), only the 8-byte hashes reach the driver. The ledger uses
        them as a multiset (sorted for the identity, distinct and sorted for the sketch), so their order is free."""
        try:
            frame = self.spark.sql(to_spark(f"SELECT {self.hash_texts()} FROM raw_src"))
            got = frame.mapInArrow(batch_row_hashes, "h bigint").toArrow()
        except Exception as exc:  # noqa: BLE001
            raise spark_error(exc, self.path) from None
        if not got.num_rows:
            return np.zeros(0, dtype=np.uint64)
        return got.column("h").to_numpy().astype(np.int64).view(np.uint64)

    def copy(self, sql: str, path: Path, options: str, keep: str | None = None) -> None:
        """The rows of `sql`, in order, written by DuckDB's COPY on the driver (so a CSV has the DuckDB engine's
        bytes). On a local master the executors are this machine and share the driver's JVM heap: they write the
        sorted rows as Parquet parts in a temporary folder beside the output, one per range partition, and DuckDB
        reads the parts in partition order (`written_parts`). On a cluster the driver streams them, a partition
        at a time, as Arrow batches (`released_batches`). Either way the driver never holds the released table.
        `keep`: a column of `sql` that is not written but kept, with each row's written position, in a DuckDB
        table (`WRITTEN`, spilling to disk) of the connection `reader` then gives: the persons of the written rows,
        for the recount on the file (bigdata/output.py `SqlRecords.tally_written`)."""
        import duckdb
        import pyarrow as pa

        from ppdp_gui.engine.bigdata.columns import helper, literal, quote
        from ppdp_gui.engine.bigdata.source import MEMORY_LIMIT
        try:
            frame = self.spark.sql(to_spark(sql))
            schema = frame.limit(0).toArrow().schema  # the column types `toArrow` gives (an empty result too)
        except Exception as exc:  # noqa: BLE001
            raise spark_error(exc, self.path) from None
        # insertion order kept: the parts' rows in the order they are listed, the stream's in its order
        con = duckdb.connect(config={"memory_limit": MEMORY_LIMIT, "temp_directory": tempfile.gettempdir()})
        folder = None
        try:
            rows = None
            if self.spark.sparkContext.master.startswith("local"):
                folder = Path(tempfile.mkdtemp(prefix=".ppdp-parts-", dir=Path(path).parent))
                parts = self.written_parts(frame, folder, len(schema))
                rows = f"read_parquet([{', '.join(literal(str(f)) for f in parts)}])" if parts else None
            if rows is None:
                con.register("released_rows", pa.RecordBatchReader.from_batches(
                    schema, self.released_batches(frame, schema)))
                rows = "released_rows"
            if keep is None:
                con.execute(f"COPY (SELECT * FROM {rows}) TO {literal(str(path))} ({options})")
            else:  # in insertion order, which is the written order (a file out of line fails the recount)
                pos = quote(helper("pos"))  # bigdata/persons.py POS: the recount joins on it
                con.execute(f"CREATE TABLE {WRITTEN} AS SELECT row_number() OVER () AS {pos}, * FROM {rows}")
                shown = ", ".join(quote(f.name) for f in schema if f.name != keep)
                con.execute(f"COPY (SELECT {shown} FROM {WRITTEN} ORDER BY {pos}) TO {literal(str(path))} "
                            f"({options})")
        except duckdb.Error as exc:  # a Spark error raised inside the stream reaches us through DuckDB
            con.close()
            raise spark_error(exc, self.path) from None
        except BaseException:
            con.close()
            raise
        finally:
            if folder is not None:
                shutil.rmtree(folder, ignore_errors=True)
        if keep is None:
            con.close()
        else:
            self._written = con

    def written_parts(self, frame, folder: Path, columns: int) -> list[Path]:
        """The rows of `frame` written by the executors as Parquet files, one per range partition of the sort
        (bounded: `copy_conf`), listed in partition order (Spark numbers them `part-00000…`). No task returns rows
        to the driver: a partition's rows as one task result are what filled the default 1 GB heap at 10⁷ rows."""
        try:
            with self.settings(copy_conf(self.n_rows, columns)):
                frame.write.mode("overwrite").parquet(str(folder / "rows"))
        except Exception as exc:  # noqa: BLE001
            raise spark_error(exc, self.path) from None
        return sorted((folder / "rows").glob("part-*.parquet"))

    def released_batches(self, frame, schema):
        """The rows of `frame` as Arrow batches, in order: each partition's batches are serialised on the
        executors (`batch_as_ipc`), and the driver fetches one partition at a time (`toLocalIterator`; no
        prefetch: at 10⁷ rows a prefetched partition's result was lost from the block manager). Each fetched
        partition is held whole by the driver's JVM (the task's result), so the written order's sort is split into
        range partitions of a bounded size (`copy_conf`), fetched in order."""
        import pyarrow as pa
        with self.settings(copy_conf(self.n_rows, len(schema))):
            for row in frame.mapInArrow(batch_as_ipc, "ipc binary").toLocalIterator(prefetchPartitions=False):
                for batch in pa.ipc.open_stream(bytes(row[0])):
                    yield batch if batch.schema.equals(schema) else pa.Table.from_batches([batch]).cast(
                        schema).to_batches()[0]

    @contextmanager
    def settings(self, conf: dict[str, str]):
        """The session's configuration changed while a query is planned and run, then put back."""
        before = {k: self.spark.conf.get(k, None) for k in conf}
        for k, v in conf.items():
            self.spark.conf.set(k, v)
        try:
            yield
        finally:
            for k, v in before.items():
                if v is None:
                    self.spark.conf.unset(k)
                else:
                    self.spark.conf.set(k, v)

    def reader(self):
        """The written file is on the driver: DuckDB reads it back there (on the connection that keeps the written
        rows' persons, after a `copy` with `keep`)."""
        import duckdb
        written, self._written = getattr(self, "_written", None), None
        return written if written is not None else duckdb.connect()

    def close(self) -> None:
        self.spark.sql("UNCACHE TABLE IF EXISTS src")
        self.con.close()


#: the released rows' size a partition of the written order's sort is meant to hold (Arrow's text, estimated at
#: CELL_BYTES a cell): one executor task writes it as a Parquet part (a local master), or the driver's JVM holds
#: it as the task's result while it is streamed (a cluster)
PARTITION_BYTES = 16 << 20
CELL_BYTES = 24


def copy_conf(rows: int, columns: int) -> dict[str, str]:
    """The session's settings while released rows are written: the sort's range partitions counted from the
    rows (PARTITION_BYTES each), and adaptive execution not allowed to merge them back (it merges by the
    shuffle's compressed bytes, which for repetitive labels are a small part of the rows' size: at 10⁷ rows it
    made 14 partitions of 660,000-750,000 rows, and the driver's heap ran out fetching the first)."""
    per_partition = max(1, PARTITION_BYTES // (CELL_BYTES * max(1, columns)))
    parts = max(2, -(-int(rows) // per_partition))
    return {"spark.sql.shuffle.partitions": str(parts), "spark.sql.adaptive.coalescePartitions.enabled": "false"}


def batch_row_hashes(batches):
    """On an executor: each Arrow batch of raw texts → its rows' `canonical_row_hashes` (as int64, Spark's
    bigint). A row's hash depends on that row only, so hashing by batches gives the whole table's hashes."""
    import pyarrow as pa

    from ppdp_gui.engine.privacy.fingerprint import canonical_row_hashes
    for batch in batches:
        hashes = canonical_row_hashes(pa.Table.from_batches([batch])) if batch.num_rows else \
            np.zeros(0, dtype=np.uint64)
        yield pa.RecordBatch.from_arrays([pa.array(hashes.view(np.int64))], names=["h"])


def batch_as_ipc(batches):
    """On an executor: each Arrow batch → one row holding it as an Arrow IPC stream (the driver reads them back
    in order: `SparkTableSource.released_batches`)."""
    import pyarrow as pa
    for batch in batches:
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, batch.schema) as writer:
            writer.write_batch(batch)
        yield pa.RecordBatch.from_arrays([pa.array([sink.getvalue().to_pybytes()], pa.binary())], names=["ipc"])
