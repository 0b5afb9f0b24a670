"""The large-table passes on Apache Spark (`--engine spark`, local[2]) give the DuckDB and in-memory releases.

One SparkSession for the module. The same seed gives the same DiffGen release on the three engines; global
recoding and strict Mondrian choose the same transformation / classes and write the same rows (as a multiset); the
reading rules (missing values, kinds, roles, ledger identity) are the same; the CLI runs `--engine spark` through
the whole publish path with the recount on the written file. Skipped only where Java or pyspark is missing
(scripts/setup.sh installs both; CI runs it).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from ppdp_gui.engine.bigdata import spark_source
from ppdp_gui.engine.bigdata.dialect import to_spark
from ppdp_gui.engine.bigdata.large_dataset import ENGINE_NOTE, open_large
from ppdp_gui.engine.data.domains import Domain
from ppdp_gui.engine.data.reader import read_table
from ppdp_gui.engine.package_files import sample_table
from ppdp_gui.engine.pipeline import export, plan, run_release
from ppdp_gui.engine.taxonomy import bundled_adult_taxonomies
from tests.engine.test_big_tables_names import hostile, prepared as named_prepared, release  # noqa: F401 (a fixture)

if not shutil.which("java"):
    pytest.skip("no Java runtime: the Spark engine cannot start (scripts/setup.sh installs default-jre-headless)",
                allow_module_level=True)
pytest.importorskip("pyspark", reason="pyspark is not installed (pip install '.[spark]'; scripts/setup.sh does)")


@pytest.fixture(scope="module")
def spark():
    from ppdp_gui.engine.bigdata.spark_source import spark_session
    session = spark_session("local[2]")
    yield session
    session.stop()


@pytest.fixture(scope="module")
def tables(tmp_path_factory) -> dict[str, Path]:
    """The first 1,500 rows of the bundled Adult sample as CSV and as Parquet (of text)."""
    folder = tmp_path_factory.mktemp("spark")
    frame = pd.read_csv(sample_table(), dtype=str, keep_default_na=False).head(1500)
    frame.to_csv(folder / "adult.csv", index=False)
    frame.to_parquet(folder / "adult.parquet", index=False)
    return {"csv": folder / "adult.csv", "parquet": folder / "adult.parquet"}


def prepared(data, numeric_age: bool = False, age_taxonomy: bool = True):
    data = data.confirm_guesses()  # the custodian confirmed the roles and kinds shown (a DP plan asks for it)
    for col, tax in bundled_adult_taxonomies().items():
        if col in data.frame.columns and (age_taxonomy or col != "age"):
            data = data.with_column(col, taxonomy=tax)
    if numeric_age:
        data = data.with_column("age", taxonomy=None, domain=Domain(low=0, high=100, integer=True))
        data = data.with_column("salary-class", domain=Domain(categories=("<=50K", ">50K")))
    return data


def publish(data, mechanism, params, seed=11):
    planned = plan(data, mechanism, params)
    assert not planned.errors, planned.errors
    return list(run_release(planned, seed=seed))[-1]


@pytest.fixture(scope="module")
def three(spark, tables):
    """The same CSV read by the reader, by DuckDB and by Spark (each Spark load is a few dozen queries: once)."""
    path = tables["csv"]
    return (read_table(path), open_large(path, hashes=False), open_large(path, engine="spark", master="local[2]"))


def sorted_frame(frame: pd.DataFrame) -> pd.DataFrame:
    frame = frame.astype(str)
    return frame.sort_values(list(frame.columns)).reset_index(drop=True)


def test_transpiled_text_is_one_dialect():
    """The Spark text is the DuckDB text transpiled: the spellings sqlglot leaves are rewritten."""
    sql = to_spark("SELECT regexp_full_match(\"a b\", '[0-9]+'), isfinite(TRY_CAST(x AS DOUBLE)), "
                   "CAST(hash(y) AS HUGEINT), row_number() OVER () FROM t ORDER BY random()")
    assert "RLIKE '^(?:[0-9]+)$'" in sql and "`a b`" in sql and "RAND()" in sql
    assert "ISFINITE" not in sql.upper() and "INT128" not in sql and "MONOTONICALLY_INCREASING_ID()" in sql
    assert "TEMPORARY VIEW" in to_spark("CREATE OR REPLACE VIEW v AS SELECT 1 AS x")


def test_reading_rules_and_ledger_identity_as_in_memory(three):
    memory, _, big = three
    assert big.n_rows == memory.n_rows == 1500
    assert [(c.name, c.kind, c.role) for c in big.schema] == [(c.name, c.kind, c.role) for c in memory.schema]
    assert big.source.notes == memory.source.notes + (ENGINE_NOTE.replace("DuckDB", "Spark"),)
    assert np.array_equal(np.sort(big.source.row_hashes), np.sort(memory.source.row_hashes))


def test_diffgen_same_seed_same_release(three):
    params = {"epsilon": 1.0, "h": 8}
    got = [publish(prepared(d, numeric_age=True), "DiffGen", params) for d in three]
    for other in got[1:]:
        pd.testing.assert_frame_equal(got[0].table, other.table)
        assert got[0].release.note["cut"] == other.release.note["cut"]
        assert got[0].output_hash == other.output_hash


def test_global_recoding_same_transformation_and_rows(three, tmp_path):
    params = {"k": 5, "suppression": 3.0}
    memory, duck, sp = (publish(prepared(d), "Global recoding", params) for d in three)
    assert memory.release.note == duck.release.note == sp.release.note
    assert memory.release.record["suppressed rows"] == sp.release.record["suppressed rows"] > 0
    assert memory.figures == pytest.approx(sp.figures)
    written = {}
    for name, published in (("duckdb", duck), ("spark", sp)):
        out = tmp_path / f"{name}.csv"
        exported = export(published, out)
        assert [c.ok for c in exported.checks] == [True, True]
        written[name] = pd.read_csv(out, dtype=str, keep_default_na=False)
    pd.testing.assert_frame_equal(sorted_frame(written["spark"]), sorted_frame(memory.table))
    pd.testing.assert_frame_equal(sorted_frame(written["spark"]), sorted_frame(written["duckdb"]))
    gone = (written["spark"][sp.release.record["quasi_identifiers"]] == "*").all(axis=1).to_numpy()
    assert gone.any() and not gone[: len(gone) - gone.sum()].any()  # suppressed last, as in memory
    # the classes (a table made from the driver's data) meet the source rows by broadcast: no shuffle of every row
    # (Spark's size-based choice is turned off: this small test table would be broadcast by it anyway)
    records = sp.release.records
    with records.source.settings({"spark.sql.autoBroadcastJoinThreshold": "-1"}):
        plan = records.source.spark.sql(to_spark(records.select(True, ordered=True)))._jdf.queryExecution()
        plan = plan.executedPlan().toString()
    assert "BroadcastHashJoin" in plan and "SortMergeJoin" not in plan


def test_mondrian_same_classes_and_rows(three, tmp_path):
    memory, duck, sp = (publish(prepared(d, age_taxonomy=False), "Mondrian", {"k": 8}) for d in three)
    assert memory.release.note == duck.release.note == sp.release.note
    assert memory.figures == pytest.approx(sp.figures)
    out = tmp_path / "m.parquet"
    exported = export(sp, out)
    assert [c.ok for c in exported.checks] == [True]
    pd.testing.assert_frame_equal(sorted_frame(pd.read_parquet(out)), sorted_frame(memory.table))


def test_cli_engine_spark(spark, tables, tmp_path):
    import json

    from ppdp_gui.cli import main
    out = tmp_path / "gr.csv"
    code = main(["run", "Global recoding", "-i", str(tables["parquet"]), "--engine", "spark", "--spark-master",
                 "local[2]", "--bundled-taxonomies", "adult", "-p", "k=5", "-o", str(out), "--report",
                 str(tmp_path / "note.json"), "--ledger", str(tmp_path / "ledger.db")])
    assert code == 0
    note = json.loads((tmp_path / "note.json").read_text())
    assert note["checked on the written file"] and all(c["ok"] for c in note["checked on the written file"])
    assert note["files"][0]["rows"] == 1500 == len(pd.read_csv(out))


@pytest.fixture(scope="module")
def tricky(spark, tmp_path_factory):
    """A small CSV with blanks, unicode, quotes, delimiters and numbers spelled several ways, read by DuckDB and by
    Spark (Spark's Arrow batches made tiny, so the rows cross many batches and partitions)."""
    folder = tmp_path_factory.mktemp("tricky")
    rows = ['id,name,note,amount']
    cells = ['', ' ', 'Zoë', '"say ""hi"""', '"a,b"', '日本', '=1+2', '+039', '3.9e1', '0.10', 'nan', '?']
    for i in range(60):
        rows.append(f"{i},{cells[i % len(cells)]},{cells[(i * 5) % len(cells)]},{cells[(i * 7) % len(cells)]}")
    path = folder / "tricky.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    duck = open_large(path, hashes=False)
    sp = open_large(path, engine="spark", master="local[2]", hashes=False)
    sp.table.spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", "7")
    return duck, sp


def _collected(spark, monkeypatch) -> list:
    """Every table `DataFrame.toArrow` brings to the driver (recorded while the real one runs)."""
    DataFrame = type(spark.range(1))  # the session's class (pyspark's classic DataFrame)
    seen, real = [], DataFrame.toArrow

    def recording(self):
        table = real(self)
        seen.append(table)
        return table
    monkeypatch.setattr(DataFrame, "toArrow", recording)
    return seen


def test_row_hashes_computed_on_executors_as_duckdb(tricky, monkeypatch):
    duck, sp = tricky
    seen = _collected(sp.table.spark, monkeypatch)
    hashes = sp.table.row_hashes()
    assert hashes.dtype == np.uint64 and len(hashes) == 60
    assert np.array_equal(np.sort(hashes), np.sort(duck.table.row_hashes()))
    # only the 8-byte hashes reached the driver, never the rows' text
    assert seen and all(t.schema.types == [pa.int64()] for t in seen)


def test_copy_streams_rows_in_order_same_bytes(tricky, monkeypatch, tmp_path):
    from ppdp_gui.engine.bigdata.columns import literal
    from ppdp_gui.engine.bigdata.output import CRLF
    duck, sp = tricky
    seen = _collected(sp.table.spark, monkeypatch)
    # the sorted rows in 4 partitions of 15 rows, fetched in order
    monkeypatch.setattr(spark_source, "PARTITION_BYTES", 15 * 4 * spark_source.CELL_BYTES)
    sql = 'SELECT * FROM src ORDER BY CAST("id" AS INTEGER) DESC'
    options = f"FORMAT csv, HEADER true, DELIMITER ',', NEW_LINE {literal(CRLF)}"
    for name, big in (("duck", duck), ("spark", sp)):
        big.table.copy(sql, tmp_path / f"{name}.csv", options)
    assert (tmp_path / "spark.csv").read_bytes() == (tmp_path / "duck.csv").read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["duck.csv", "spark.csv"]  # the parts' folder removed
    # on a cluster (no parts written where the driver reads them) the rows are streamed: the same bytes
    monkeypatch.setattr(type(sp.table), "written_parts", lambda *args: [])
    sp.table.copy(sql, tmp_path / "streamed.csv", options)
    assert (tmp_path / "streamed.csv").read_bytes() == (tmp_path / "duck.csv").read_bytes()
    assert all(t.num_rows == 0 for t in seen)  # the rows came as a stream of batches, not one collected table
    sp.table.copy("SELECT * FROM src WHERE false", tmp_path / "empty.parquet", "FORMAT parquet")
    assert list(pd.read_parquet(tmp_path / "empty.parquet").columns) == ["id", "name", "note", "amount"]


def test_copy_sorts_in_bounded_range_partitions(tricky, monkeypatch):
    """The written order's sort runs in range partitions of a bounded number of rows, as many as the rows need,
    never one partition of everything (the driver's JVM holds a whole partition when it fetches it: at 10⁷ rows
    adaptive execution had merged them into partitions of half a million rows and the default heap ran out)."""
    _, sp = tricky
    monkeypatch.setattr(spark_source, "PARTITION_BYTES", 10 * 4 * spark_source.CELL_BYTES)  # 10 rows each
    sql = to_spark('SELECT * FROM src ORDER BY CAST("id" AS INTEGER) % 3, random()')
    with sp.table.settings(spark_source.copy_conf(sp.table.n_rows, 4)):
        frame = sp.table.spark.sql(sql)
        plan = frame._jdf.queryExecution().executedPlan().toString()
        sizes = frame.rdd.glom().map(len).collect()  # what adaptive execution finally ran
    assert "SinglePartition" not in plan and "rangepartitioning" in plan
    assert len(sizes) == 6 and sum(sizes) == 60 and max(sizes) <= 20


def test_first_seen_in_file_order_without_a_window(spark, tmp_path, monkeypatch):
    """Mondrian's flat tree for a categorical QI without a taxonomy lists its values in the order they first
    appear in the file (as in memory), counted in every partition: no window over the whole table, which Spark
    runs in a single partition."""
    import pyarrow.parquet as pq
    values = [f"v{(i * 37) % 101:03d}" for i in range(3000)]
    path = tmp_path / "codes.parquet"
    pq.write_table(pa.table({"code": values, "n": [str(i) for i in range(3000)]}), path, row_group_size=100)
    src = spark_source.SparkTableSource(path, master="local[2]")
    src.spark.conf.set("spark.sql.files.maxPartitionBytes", "1k")  # the file read in several partitions
    src.spark.conf.set("spark.sql.files.openCostInBytes", "0")
    src.apply_kinds({"code": "categorical", "n": "numeric"})
    assert src.spark.table("src").rdd.getNumPartitions() > 1
    asked = []
    real = src.query
    monkeypatch.setattr(src, "query", lambda sql, params=None: asked.append(sql) or real(sql, params))
    assert list(src.first_seen("code")) == list(pd.unique(pd.Series(values)))
    plan = src.spark.sql(to_spark(asked[-1]))._jdf.queryExecution().executedPlan().toString()
    assert "SinglePartition" not in plan and "Window" not in plan
    src.close()


# ---- the person column (several rows per patient) ------------------------------------------------------------------
@pytest.fixture(scope="module")
def hospital(spark, tmp_path_factory):
    """The hospital-shaped table of tests/engine/test_big_tables_persons.py (Adult rows, ~3 per patient), read in
    memory and by Spark."""
    from tests.engine.test_big_tables_persons import ROLES
    folder = tmp_path_factory.mktemp("spark_persons")
    frame = pd.read_csv(sample_table(), dtype=str, keep_default_na=False).head(900)
    ids = pd.Series((np.random.default_rng(7).integers(0, 300, len(frame)) * 7 + 100_003).astype(str))
    ids.iloc[[3, 50]] = ""
    frame.insert(0, "patient_nbr", ids.to_numpy())
    frame.to_csv(folder / "hospital.csv", index=False)
    return (read_table(folder / "hospital.csv", roles=ROLES),
            open_large(folder / "hospital.csv", engine="spark", master="local[2]", hashes=False, roles=ROLES))


def test_persons_counted_on_spark_as_in_memory(hospital, tmp_path):
    """k counts persons on Spark as in memory (global recoding, strict Mondrian: the same claims, figures and
    written rows, the recount on the written file in persons), and DiffGen keeps the same c rows per patient."""
    from tests.engine.test_big_tables_persons import prepared
    memory, sp = hospital
    for mechanism, params in (("Global recoding", {"k": 4, "suppression": 4.0}), ("Mondrian", {"k": 6})):
        m, s = (publish(prepared(d), mechanism, params) for d in (memory, sp))
        assert s.release.note == m.release.note and s.release.note["k counts"] == "persons (patient_nbr)"
        assert s.figures == pytest.approx(m.figures)
        out = tmp_path / f"{mechanism}.csv"
        exported = export(s, out)
        assert all(c.ok for c in exported.checks) and "persons (patient_nbr)" in exported.checks[0].message
        pd.testing.assert_frame_equal(sorted_frame(pd.read_csv(out, dtype=str, keep_default_na=False)),
                                      sorted_frame(m.table))
    params = {"epsilon": 1.0, "h": 6, "max_rows_per_person": 2}
    m, s = (publish(prepared(d, numeric_age=True), "DiffGen", params) for d in (memory, sp))
    pd.testing.assert_frame_equal(m.table, s.table)
    assert m.release.record["rows used"] == s.release.record["rows used"] < 900


def test_a_long_table_of_numbers_registers_exactly(spark):
    """DiffGen's keys (one uniform per row, for the bound per patient) reach Spark as Arrow, every double exact."""
    from ppdp_gui.engine.bigdata.spark_source import _ARROW_ROWS, SparkConnection
    n = _ARROW_ROWS + 7
    frame = pd.DataFrame({"pos": np.arange(1, n + 1, dtype=np.int64), "key": np.random.default_rng(3).random(n)})
    SparkConnection(spark).register("long_keys", frame)
    got = spark.sql("SELECT pos, key FROM long_keys ORDER BY pos").toPandas()
    assert np.array_equal(got["pos"].to_numpy(), frame["pos"].to_numpy())
    assert np.array_equal(got["key"].to_numpy(), frame["key"].to_numpy())


def test_columns_named_like_the_engines_helpers_on_spark(spark, hostile, tmp_path):
    """The same on the Spark engine (global recoding with l-diversity on the Parquet file): the same note and
    rows as in memory."""
    params = {"k": 4, "suppression": 5.0, "l": 2, "sensitive": "g"}
    memory = release(named_prepared(read_table(hostile["parquet"]), False, True), "Global recoding", params)
    large = release(named_prepared(open_large(hostile["parquet"], engine="spark", master="local[2]"), False, True),
                    "Global recoding", params)
    assert memory.release.note == large.release.note
    out = tmp_path / "spark.csv"
    exported = export(large, out)
    assert exported.checks and all(c.ok for c in exported.checks), [c.message for c in exported.checks]
    written = pd.read_csv(out, dtype=str, keep_default_na=False)
    expected = memory.table.astype(str).replace({"nan": "", "<NA>": ""})
    key = list(expected.columns)
    pd.testing.assert_frame_equal(written.sort_values(key).reset_index(drop=True),
                                  expected.sort_values(key).reset_index(drop=True))
