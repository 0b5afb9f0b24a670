"""Tables larger than memory (engine/bigdata): the DuckDB counting passes give exactly the in-memory releases.

Small tables only (the 10⁷-row figures are in benchmarks/bench_big_tables.py): the same seed gives the same
DiffGen release, the same global-recoding transformation and the same released rows (as a multiset), the SQL
grid cells equal `Grid.cells` on boundary values, the recount on the written file catches a broken file, and
the ledger identifies the file as the in-memory reader does.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ppdp_gui.engine.bigdata.recount import file_relation, recount
from ppdp_gui.engine.bigdata.source import TableSource, helper, quote
from ppdp_gui.engine.bigdata.large_dataset import open_large
from ppdp_gui.engine.bigdata.sql import cells_relation
from ppdp_gui.engine.claims import KAnonymity, Suppression
from ppdp_gui.engine.data.domains import Domain
from ppdp_gui.engine.data.reader import read_table
from ppdp_gui.engine.data.schema import NAPolicy
from ppdp_gui.engine.data.writer import neutral_text
from ppdp_gui.engine.mechanisms.diffgen.grid import Grid
from ppdp_gui.engine.pipeline import export, plan, run_release
from ppdp_gui.engine.package_files import sample_table
from ppdp_gui.engine.taxonomy import bundled_adult_taxonomies

SAMPLE = sample_table()


@pytest.fixture(scope="module")
def tables(tmp_path_factory) -> dict[str, Path]:
    """The first 2,500 rows of the bundled Adult sample as CSV and as Parquet."""
    folder = tmp_path_factory.mktemp("big")
    frame = pd.read_csv(SAMPLE, dtype=str, keep_default_na=False).head(2500)
    frame.to_csv(folder / "adult.csv", index=False)
    frame.to_parquet(folder / "adult.parquet", index=False)
    return {"csv": folder / "adult.csv", "parquet": folder / "adult.parquet"}


def with_taxonomies(data, numeric_age: bool):
    data = data.confirm_guesses()  # the custodian confirmed the roles and kinds shown (a DP plan asks for it)
    for col, tax in bundled_adult_taxonomies().items():
        if col in data.frame.columns:
            data = data.with_column(col, taxonomy=tax)
    if numeric_age:
        data = data.with_column("age", taxonomy=None, domain=Domain(low=0, high=100, integer=True))
        data = data.with_column("salary-class", domain=Domain(categories=("<=50K", ">50K")))
    return data


def publish(data, mechanism, params, seed=11):
    planned = plan(data.confirm_guesses(), mechanism, params)  # roles and kinds confirmed by the custodian
    assert not planned.errors, planned.errors
    return list(run_release(planned, seed=seed))[-1]


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_diffgen_same_seed_same_release(tables, fmt):
    params = {"epsilon": 1.0, "h": 8}
    memory = publish(with_taxonomies(read_table(tables[fmt]), True), "DiffGen", params)
    large = publish(with_taxonomies(open_large(tables[fmt], hashes=False), True), "DiffGen", params)
    pd.testing.assert_frame_equal(memory.table, large.table)
    assert memory.release.note["cut"] == large.release.note["cut"]
    assert memory.release.note["history"] == large.release.note["history"]
    assert memory.output_hash == large.output_hash
    again = publish(with_taxonomies(open_large(tables[fmt], hashes=False), True), "DiffGen", params, seed=12)
    assert not again.table.equals(large.table)  # the seed matters: the noise is not fixed by the engine


def test_diffgen_real_valued_grid_matches(tmp_path):
    """A real-valued QI on a decimal grid (step 0.025): values right on boundaries land in the same cells."""
    r = np.random.default_rng(3)
    grid_values = np.round(np.arange(0, 401) * 0.025, 3)
    x = np.concatenate([r.choice(grid_values, 1500), r.uniform(0, 10, 500)])
    frame = pd.DataFrame({"x": [repr(float(v)) for v in x], "g": r.choice(["a", "b", "c"], 2000),
                          "y": r.choice(["no", "yes"], 2000)})
    path = tmp_path / "t.csv"
    frame.to_csv(path, index=False)
    out = []
    for data in (read_table(path), open_large(path, hashes=False)):
        data = data.with_column("x", role="quasi-identifier", domain=Domain(low=0, high=10, step=0.025))
        data = data.with_column("g", role="quasi-identifier", domain=Domain(categories=("a", "b", "c")))
        data = data.with_column("y", role="class", domain=Domain(categories=("no", "yes")))
        out.append(publish(data, "DiffGen", {"epsilon": 2.0, "h": 6}, seed=5))
    pd.testing.assert_frame_equal(out[0].table, out[1].table)


@pytest.mark.parametrize("lo, hi, step", [(0, 1, 0.1), (-2.5, 7.5, 0.025), (0, 100, 1), (0.3, 0.9, 0.3)])
def test_sql_grid_cells_equal_numpy(tmp_path, lo, hi, step):
    grid = Grid.make(lo, hi, step)
    edges = grid.boundary_floats(np.arange(grid.n_cells + 1))
    x = np.concatenate([edges, np.nextafter(edges, -np.inf), np.nextafter(edges, np.inf), [lo - 1, hi + 1],
                        np.random.default_rng(0).uniform(lo, hi, 300)])
    path = tmp_path / "x.csv"
    pd.DataFrame({"x": [repr(float(v)) for v in x]}).to_csv(path, index=False)
    src = TableSource(path, na_policy=_no_tokens())
    got = src.query(f"SELECT x, {quote(helper('cell$x'))} AS c FROM {cells_relation({'x': grid}, ['x'])}")
    assert len(got) == len(x)
    assert np.array_equal(got["c"].to_numpy(), grid.cells(got["x"].astype(float).to_numpy()))


def _no_tokens():
    from ppdp_gui.engine.data.schema import NAPolicy
    return NAPolicy(tokens=())


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_global_recoding_same_transformation_and_rows(tables, tmp_path, fmt):
    params = {"k": 5, "suppression": 3.0}
    memory = publish(with_taxonomies(read_table(tables["csv"]), False), "Global recoding", params)
    large = publish(with_taxonomies(open_large(tables[fmt], hashes=False), False), "Global recoding", params)
    assert large.release.records is not None and memory.release.records is None
    assert memory.release.note == large.release.note
    assert memory.release.record["figures"] == pytest.approx(large.release.record["figures"])
    assert memory.release.record["suppressed rows"] == large.release.record["suppressed rows"] > 0
    assert memory.figures == pytest.approx(large.figures)
    out = tmp_path / f"large.{fmt}"
    exported = export(large, out)
    assert [c.ok for c in exported.checks] == [True, True]
    assert exported.note_doc["files"][0]["rows"] == 2500
    written = (pd.read_csv(out, dtype=str, keep_default_na=False) if fmt == "csv"
               else pd.read_parquet(out).astype(str))
    expected = memory.table.astype(str)
    key = list(expected.columns)
    assert list(written.columns) == key
    pd.testing.assert_frame_equal(written.sort_values(key).reset_index(drop=True),
                                  expected.sort_values(key).reset_index(drop=True))
    # rows come grouped by class, suppressed last (as in memory)
    gone = (written[large.release.record["quasi_identifiers"]] == "*").all(axis=1).to_numpy()
    assert not gone[: len(gone) - gone.sum()].any()


def test_recount_on_the_written_file_catches_a_broken_file(tmp_path):
    path = tmp_path / "bad.csv"
    pd.DataFrame({"a": ["x"] * 5 + ["y"] * 2 + ["*"] * 3, "s": list("pqrstuvwxy")}).to_csv(path, index=False)
    src = TableSource(path, na_policy=_no_tokens())
    k, sup = KAnonymity(3, ("a",)), Suppression(0.2, ("a",), "*")
    checks = recount(src.con, file_relation(path, "csv"), [k, sup])
    assert [c.ok for c in checks] == [False, False]
    assert "smallest 2" in checks[0].message and "3 of 10" in checks[1].message
    ok = recount(src.con, file_relation(path, "csv"), [KAnonymity(2, ("a",)), Suppression(0.3, ("a",), "*")])
    assert [c.ok for c in ok] == [True, True]


def test_formulas_are_neutralised_like_the_writer(tmp_path):
    values = ["=1+1", "-5", "+x", "@a", "plain", "'q"] * 10
    frame = pd.DataFrame({"qi": ["a", "b"] * 30, "note": values})
    path = tmp_path / "f.csv"
    frame.to_csv(path, index=False)
    data = open_large(path, hashes=False, roles={"qi": "quasi-identifier", "note": "insensitive"})
    out = tmp_path / "out.csv"
    export(publish(data, "Global recoding", {"k": 2, "suppression": 0.0}), out)
    written = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert sorted(written["note"]) == sorted(neutral_text(v) for v in values)


@pytest.mark.parametrize("age_taxonomy", [True, False])
def test_mondrian_same_partitions_and_rows(tables, tmp_path, age_taxonomy):
    """Strict Mondrian on the weighted QI tuples publishes exactly the in-memory rows (as a multiset)."""
    def prepared(data):
        for col, tax in bundled_adult_taxonomies().items():
            if col in data.frame.columns and (age_taxonomy or col != "age"):
                data = data.with_column(col, taxonomy=tax)
        return data
    memory = publish(prepared(read_table(tables["csv"])), "Mondrian", {"k": 8})
    large = publish(prepared(open_large(tables["parquet"], hashes=False)), "Mondrian", {"k": 8})
    assert memory.release.note == large.release.note
    assert memory.figures == pytest.approx(large.figures)
    out = tmp_path / "m.csv"
    exported = export(large, out)
    assert [c.ok for c in exported.checks] == [True]
    written = pd.read_csv(out, dtype=str, keep_default_na=False)
    expected = memory.table.astype(str)
    key = list(expected.columns)
    pd.testing.assert_frame_equal(written.sort_values(key).reset_index(drop=True),
                                  expected.sort_values(key).reset_index(drop=True))


def test_weighted_partition_equals_expanded_rows():
    """partition(weights=) on distinct tuples (shuffled) gives the classes of the expanded rows."""
    from ppdp_gui.engine.mechanisms.kanon.mondrian_core import partition
    r = np.random.default_rng(1)
    for _ in range(25):
        n, d, k = int(r.integers(50, 2000)), int(r.integers(1, 4)), int(r.integers(2, 20))
        X = r.integers(0, r.integers(2, 30), size=(n, d)).astype(float)
        rows = partition(X, k)
        uniq, inverse, counts = np.unique(X, axis=0, return_inverse=True, return_counts=True)
        perm = r.permutation(len(uniq))
        per_tuple = np.empty(len(uniq), dtype=np.int64)
        per_tuple[perm] = partition(uniq[perm], k, weights=counts[perm])
        pairs = set(zip(rows, per_tuple[inverse.ravel()]))
        assert len(pairs) == len(set(rows)) == len(set(per_tuple))  # the same classes, renamed
        assert np.bincount(rows).min() >= k


def test_large_tables_refuse_what_they_cannot_do_exactly(tables):
    data = with_taxonomies(open_large(tables["parquet"], hashes=False), False)
    assert "strict mode" in plan(data, "Mondrian", {"k": 5, "mode": "relaxed"}).errors[0].message
    assert not plan(data, "Global recoding", {"k": 5, "l": 2, "t": 0.2, "sensitive": "salary-class"}).errors
    planned = plan(data, "TDS", {"k": 5})
    assert planned.errors and "large-table engine" in planned.errors[0].message


def test_ledger_identity_and_missing_values_as_in_memory(tmp_path):
    frame = pd.read_csv(SAMPLE, dtype=str, keep_default_na=False).head(400)
    frame.loc[[3, 50, 51], "workclass"] = "?"
    path = tmp_path / "m.csv"
    frame.to_csv(path, index=False)
    assert read_table(path).n_rows == open_large(path, hashes=False).n_rows == 400  # rows kept by default
    drop = NAPolicy(action="drop")
    memory = read_table(path, na_policy=drop)
    large = open_large(path, na_policy=drop)
    assert large.n_rows == memory.n_rows == 397
    assert np.array_equal(np.sort(large.source.row_hashes), np.sort(memory.source.row_hashes))
    assert [(c.name, c.kind, c.role, c.guessed) for c in large.schema] == \
        [(c.name, c.kind, c.role, c.guessed) for c in memory.schema]


def test_cli_engine_duckdb(tables, tmp_path):
    from ppdp_gui.cli import main
    out = tmp_path / "gr.csv"
    code = main(["run", "Global recoding", "-i", str(tables["parquet"]), "--engine", "duckdb",
                 "--bundled-taxonomies", "adult", "-p", "k=5", "-o", str(out), "--report",
                 str(tmp_path / "note.json"), "--ledger", str(tmp_path / "ledger.db")])
    assert code == 0
    import json
    note = json.loads((tmp_path / "note.json").read_text())
    assert note["checked on the written file"] and all(c["ok"] for c in note["checked on the written file"])
    assert note["files"][0]["rows"] == 2500 == len(pd.read_csv(out))


def test_a_malformed_line_is_named(tmp_path):
    from ppdp_gui.engine.errors import DataError
    path = tmp_path / "bad.csv"
    path.write_text("a,b,c\n" + "".join(f"{i % 7},x,y\n" for i in range(3000)) + "2,y\n3,z,w\n")
    with pytest.raises(DataError) as err:
        open_large(path, hashes=False)
    assert err.value.line == 3002 and "2 values where the header has 3 columns" in str(err.value)


def test_dp_domains_stay_public_on_a_large_table(tables):
    """DiffGen's numeric bounds and class list must be stated; nothing is read from the file, even on opt-in."""
    data = with_taxonomies(open_large(tables["parquet"], hashes=False), False).with_column("age", taxonomy=None)
    for allow in (False, True):
        planned = plan(data, "DiffGen", {"epsilon": 1.0}, allow_data_domains=allow)
        messages = " ".join(p.message for p in planned.errors)
        assert "age needs public lower and upper bounds" in messages and not planned.caveats


def test_auto_engine_only_for_large_tables_and_able_mechanisms(tables):
    from ppdp_gui.engine.pipeline.load import choose_engine
    path = tables["parquet"]
    assert choose_engine(path, "DiffGen") == "memory"  # 2,500 rows
    assert choose_engine(path, "DiffGen", max_rows=1000) == "duckdb"
    assert choose_engine(path, "Mondrian", max_rows=1000) == "duckdb"
    assert choose_engine(path, "TDS", max_rows=1000) == "memory"  # it needs the rows in memory
    assert choose_engine(tables["csv"], "Global recoding", max_bytes=1000) == "duckdb"
    assert choose_engine(tables["csv"], "Global recoding") == "memory"
