"""A large table that repeats its rows is read once: its distinct rows are counted, then every pass reads them.

Adult resampled to 10⁷ rows has about 20,000 distinct rows. The missing-value pass, the kinds pass, the role
facts, the ledger's row hashes, the histograms and the released records each used to read the whole file; now one
GROUP BY of every column (`TableSource._count_rows`) gives the distinct rows with their counts and those passes
read that, weighted, and the records are written by repeating each distinct released row as often as it counts,
in the written order, without sorting every row (`TableSource.copy_counted`). These tests check that the file is
read once, that nothing changes (the same dataset, ledger identity and release as reading the file each time, and
as in memory), and that the written rows are still grouped by class.
"""

from __future__ import annotations

import re

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from ppdp_gui.engine.bigdata import source as big
from ppdp_gui.engine.bigdata.source import TableSource
from ppdp_gui.engine.bigdata.large_dataset import open_large
from ppdp_gui.engine.data.domains import Domain
from ppdp_gui.engine.data.reader import read_table
from ppdp_gui.engine.data.schema import NAPolicy, Role
from ppdp_gui.engine.package_files import sample_table
from ppdp_gui.engine.pipeline import export, plan, run_release
from ppdp_gui.engine.privacy.fingerprint import _cell_hashes, dataset_fingerprint, keyed_row_hashes
from ppdp_gui.engine.taxonomy import bundled_adult_taxonomies
from ppdp_gui.engine.taxonomy.builders import grouped, ordered_intervals

ROWS = 4000
POLICIES = {"drop": NAPolicy(action="drop"), "category": NAPolicy(action="category")}
# a statement that reads the source's rows: its views over the file, not the counted rows (raw_rows, src_rows)
_READS_FILE = re.compile(r"\b(FROM|JOIN)\s+(src|kept|raw_src)\b", re.IGNORECASE)


def repeated_frame() -> pd.DataFrame:
    """300 distinct-ish rows drawn 4,000 times: missing cells ('?', empty), white space, a mostly-missing column."""
    r = np.random.default_rng(11)
    n = 300
    base = pd.DataFrame({
        "age": r.integers(18, 91, n).astype(str),
        "sex": r.choice(["F", "M", " M\u00a0"], n),
        "zip3": r.choice(["101", "102", "103", "?", ""], n),
        "weight": np.where(r.random(n) < 0.97, "?", "[50-75)"),
        "los": np.where(r.random(n) < 0.05, "NA", r.integers(1, 31, n).astype(str)),
        "diagnosis": r.choice(["I10", "E11", "J45, asthma", "=cmd"], n),
        "outcome": r.choice(["no", "yes"], n),
    })
    return base.iloc[r.integers(0, n, ROWS)].reset_index(drop=True)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("counted")
    frame = repeated_frame()
    frame.to_csv(folder / "t.csv", index=False)
    frame.to_parquet(folder / "t.parquet", index=False)
    return {"csv": folder / "t.csv", "parquet": folder / "t.parquet"}


class Spy:
    """Every DuckDB connection the engine opens, with the statements that read the source file's rows."""

    def __init__(self, monkeypatch):
        self.reads: list[str] = []
        real = duckdb.connect
        spy = self

        class Counting:
            def __init__(self, con):
                self._con = con

            def _seen(self, sql):
                text = " ".join(str(sql).split())
                if _READS_FILE.search(text) and "LIMIT" not in text and not text.upper().startswith(
                        ("CREATE VIEW", "CREATE OR REPLACE VIEW", "DESCRIBE")):
                    spy.reads.append(text)

            def execute(self, sql, params=None):
                self._seen(sql)
                return self._con.execute(sql, params or [])

            def sql(self, sql, *a, **k):
                self._seen(sql)
                return self._con.sql(sql, *a, **k)

            def __getattr__(self, name):
                return getattr(self._con, name)

        monkeypatch.setattr(duckdb, "connect", lambda *a, **k: Counting(real(*a, **k)))


def _taxonomies(data):
    ages = ordered_intervals("age", 0, 100, width=10)
    zips = grouped("zip3", {"10x": ["101", "102"], "other": ["103", "(missing)"]})
    sex = grouped("sex", {"person": ["F", "M"]})
    for col, tax in {"age": ages, "zip3": zips, "sex": sex}.items():
        data = data.with_column(col, taxonomy=tax)
    return data


def _open(path, policy, counted: bool, monkeypatch):
    if not counted:
        monkeypatch.setattr(TableSource, "_count_rows", lambda self: None)
    data = open_large(path, na_policy=policy, roles={"age": Role.QUASI_IDENTIFIER, "sex": Role.QUASI_IDENTIFIER,
                                                     "zip3": Role.QUASI_IDENTIFIER, "outcome": Role.SENSITIVE})
    monkeypatch.undo()
    return data.confirm_guesses()


def test_a_table_of_repeated_rows_is_read_once_from_load_to_export(files, tmp_path, monkeypatch):
    """Load (missing values, kinds, roles, row hashes), plan, run, recount and export of global recoding: the
    source file is read by one statement, the count of its distinct rows (the written file is then read back)."""
    spy = Spy(monkeypatch)
    data = open_large(files["parquet"], roles={"age": Role.QUASI_IDENTIFIER, "sex": Role.QUASI_IDENTIFIER,
                                               "zip3": Role.QUASI_IDENTIFIER}).confirm_guesses()
    assert data.table.counted_rows is not None
    data = _taxonomies(data)
    planned = plan(data, "Global recoding", {"k": 5, "suppression": 5.0})
    assert not planned.errors, planned.errors
    published = list(run_release(planned, seed=2))[-1]
    exported = export(published, tmp_path / "out.csv")
    assert all(c.ok for c in exported.checks)
    assert len(spy.reads) == 1 and "GROUP BY" in spy.reads[0], spy.reads


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
@pytest.mark.parametrize("policy", list(POLICIES))
def test_counted_rows_give_the_dataset_and_ledger_identity_of_the_file(files, fmt, policy, monkeypatch):
    pol = POLICIES[policy]
    counted = _open(files[fmt], pol, True, monkeypatch)
    each = _open(files[fmt], pol, False, monkeypatch)
    assert counted.table.counted_rows is not None and each.table.counted_rows is None
    memory = read_table(files[fmt], na_policy=pol)
    assert [(c.name, c.kind) for c in counted.schema] == [(c.name, c.kind) for c in each.schema] \
        == [(c.name, c.kind) for c in memory.schema]
    assert counted.n_rows == each.n_rows == memory.n_rows
    assert counted.source.missing == each.source.missing
    assert counted.source.left_out == each.source.left_out and counted.source.notes == each.source.notes
    hashes = counted.source.row_hashes
    assert bool((hashes[1:] >= hashes[:-1]).all())  # handed over sorted
    assert np.array_equal(hashes, np.sort(each.source.row_hashes))
    assert np.array_equal(hashes, np.sort(memory.source.row_hashes))
    key = b"k" * 32
    names = list(memory.frame.columns)
    assert dataset_fingerprint(hashes, names, key) == dataset_fingerprint(memory.source.row_hashes, names, key)
    assert np.array_equal(keyed_row_hashes(hashes, key), keyed_row_hashes(memory.source.row_hashes, key))
    for col in ("age", "zip3", "outcome"):
        assert counted.table.histogram((col,)).sort_values(col).reset_index(drop=True).equals(
            each.table.histogram((col,)).sort_values(col).reset_index(drop=True))


def _written(path) -> pd.DataFrame:
    return pd.read_csv(path, dtype=str, keep_default_na=False)


@pytest.mark.parametrize("mechanism,params", [("Global recoding", {"k": 5, "suppression": 5.0}),
                                              ("Mondrian", {"k": 5})])
@pytest.mark.parametrize("policy", list(POLICIES))
def test_counted_rows_publish_the_release_of_the_file_grouped_by_class(files, tmp_path, monkeypatch, mechanism,
                                                                       params, policy):
    """The same rows (as a multiset) and output hash as reading the file each time; the written file holds each
    class's rows together (suppressed rows last), and the rows were not sorted one by one (no ORDER BY in the
    COPY: the distinct rows were ordered, then repeated)."""
    out = {}
    for counted in (True, False):
        data = _taxonomies(_open(files["csv"], POLICIES[policy], counted, monkeypatch))
        copies: list[str] = []
        real = data.table.run
        data.table.run = lambda sql, params=None, fetch="all", _r=real: (
            copies.append(sql) if sql.startswith("COPY") else None) or _r(sql, params, fetch)
        published = list(run_release(plan(data, mechanism, params), seed=5))[-1]
        exported = export(published, tmp_path / f"{mechanism[0]}{counted}.csv")
        assert all(c.ok for c in exported.checks)
        assert ("ORDER BY" in copies[0]) is not counted
        out[counted] = (published.output_hash, _written(tmp_path / f"{mechanism[0]}{counted}.csv"),
                        list(data.quasi_identifiers))
    (h1, rows, qis), (h2, other, _) = out[True], out[False]
    assert h1 == h2
    key = lambda f: f.sort_values(list(f.columns)).reset_index(drop=True)  # noqa: E731
    assert key(rows).equals(key(other))
    label = rows[qis].agg("|".join, axis=1)
    assert int((label != label.shift()).sum()) == label.nunique()  # every class in one run of rows
    gone = (rows[qis] == "*").all(axis=1).to_numpy()
    assert not gone.any() or gone[-int(gone.sum()):].all()


def test_diffgen_on_counted_rows_is_the_release_of_the_file(tmp_path, monkeypatch):
    """Adult's first 400 rows drawn 4,000 times: the same seed gives the same DiffGen release either way."""
    frame = pd.read_csv(sample_table(), dtype=str, keep_default_na=False).head(400)
    frame.iloc[np.random.default_rng(3).integers(0, 400, ROWS)].to_parquet(tmp_path / "a.parquet", index=False)
    out = []
    for counted in (True, False):
        if not counted:
            monkeypatch.setattr(TableSource, "_count_rows", lambda self: None)
        data = open_large(tmp_path / "a.parquet").confirm_guesses()
        assert (data.table.counted_rows is not None) is counted
        for col, tax in bundled_adult_taxonomies().items():
            if col in data.frame.columns:
                data = data.with_column(col, taxonomy=tax)
        data = data.with_column("age", taxonomy=None, domain=Domain(low=0, high=100, integer=True))
        data = data.with_column("salary-class", domain=Domain(categories=("<=50K", ">50K")))
        planned = plan(data, "DiffGen", {"epsilon": 1.0, "h": 6})
        assert not planned.errors, planned.errors
        published = list(run_release(planned, seed=9))[-1]
        out.append((published.output_hash, published.table))
    assert out[0][0] == out[1][0]
    pd.testing.assert_frame_equal(out[0][1], out[1][1])


def test_a_file_of_distinct_rows_or_with_a_float_column_is_not_counted(tmp_path):
    frame = repeated_frame()
    frame["id"] = [f"r{i}" for i in range(len(frame))]
    frame.to_parquet(tmp_path / "distinct.parquet", index=False)
    assert TableSource(tmp_path / "distinct.parquet").counted_rows is None
    typed = repeated_frame()
    typed["x"] = 0.5
    typed.to_parquet(tmp_path / "float.parquet", index=False)
    assert TableSource(tmp_path / "float.parquet").counted_rows is None
    assert TableSource(tmp_path / "distinct.parquet").weighted("src") == ("src", None)
    assert big.REPEAT_SAMPLE >= 10_000


def test_a_mostly_distinct_text_column_hashes_as_through_its_dictionary():
    """Record numbers and other mostly distinct texts are hashed cell by cell, without a dictionary (most of the
    row hashes' time on a table with a record number): each cell gets the hash it gets through the dictionary."""
    tricky = [" 042 ", "3.50", "1e3", None, "x\u00a0", "-0", "inf", "0.1", "", "12345678901234567890", "Ab c"]
    values = tricky + [f"R{i}" for i in range(3000)]

    def hashes(texts):
        return _cell_hashes(pd.Series(pd.arrays.ArrowStringArray(pa.array(texts, pa.large_string()))))
    direct = hashes(values)  # the first 1,000 cells are mostly distinct: no dictionary
    through = hashes([v for v in values for _ in range(3)])  # each value three times: through the dictionary
    assert np.array_equal(direct, through[::3])


def test_a_file_whose_first_rows_repeat_but_not_the_rest_is_not_held_counted(tmp_path):
    frame = pd.DataFrame({"a": ["x"] * 60_000 + [f"v{i}" for i in range(200_000)]})
    frame.to_parquet(tmp_path / "t.parquet", index=False, row_group_size=1_000_000)
    source = TableSource(tmp_path / "t.parquet")
    assert source.counted_rows is None and source.n_rows == 260_000
    assert not source.con.execute("SELECT * FROM duckdb_tables() WHERE table_name = 'raw_rows'").fetchall()


@pytest.mark.parametrize("policy", list(POLICIES))
def test_typed_parquet_columns_counted_read_as_the_reader_reads_them(tmp_path, monkeypatch, policy):
    """Integers, booleans, dates and timestamps (with missing cells) in a file of repeated rows: the same kinds,
    missing counts, rows and row hashes counted or not, and as in memory (a boolean column's cells are hashed as
    the reader's 'True'/'False', not DuckDB's 'true'/'false', so the file has one identity on both engines)."""
    r = np.random.default_rng(5)
    n = 200
    base = pd.DataFrame({
        "num": pd.array(r.integers(0, 50, n), dtype="Int64"),
        "flag": pd.array(r.random(n) < 0.5, dtype="boolean"),
        "day": pd.to_datetime("2020-01-01") + pd.to_timedelta(r.integers(0, 30, n), unit="D"),
        "at": pd.to_datetime("2020-01-01 10:30") + pd.to_timedelta(r.integers(0, 5, n), unit="h"),
        "text": r.choice(["a", " b ", "?", "c"], n),
    })
    base.loc[r.random(n) < 0.05, "num"] = pd.NA
    base.loc[r.random(n) < 0.05, "flag"] = pd.NA
    base["day"] = base["day"].dt.date
    base.iloc[r.integers(0, n, 3000)].to_parquet(tmp_path / "typed.parquet", index=False)
    pol = POLICIES[policy]
    got = []
    for counted in (True, False):
        if not counted:
            monkeypatch.setattr(TableSource, "_count_rows", lambda self: None)
        data = open_large(tmp_path / "typed.parquet", na_policy=pol)
        monkeypatch.undo()
        assert (data.table.counted_rows is not None) is counted
        got.append(data)
    memory = read_table(tmp_path / "typed.parquet", na_policy=pol)
    for data in got:
        assert [(c.name, c.kind) for c in data.schema] == [(c.name, c.kind) for c in memory.schema]
        assert data.n_rows == memory.n_rows and data.source.missing == memory.source.missing
        assert np.array_equal(np.sort(data.source.row_hashes), np.sort(memory.source.row_hashes))
    for col in ("num", "flag", "day", "at", "text"):
        a, b = (d.table.histogram((col,)).astype(str).sort_values(col).reset_index(drop=True) for d in got)
        pd.testing.assert_frame_equal(a, b)
