"""Large tables near DuckDB's own GROUP BY (issue 28, item 4): the passes over the rows are counted, not timed.

A release of a large table used to read the file once per quasi-identifier (the plan's distinct values), once
more for the tuples, then once per claim, once for the digest, once for the group sizes and once for the row
count, and the written file four times. Now one histogram of the quasi-identifiers answers the plan and the
mechanism, one GROUP BY over the released rows recounts every claim and gives the digest, the groups and the
rows, and the written file is read back once. These tests count the statements that read the rows, and check
that the shortcuts give exactly what the long way gave.
"""

from __future__ import annotations

import hashlib
import re

import numpy as np
import pandas as pd
import pytest

from ppdp_gui.engine.bigdata.recount import recount, tally
from ppdp_gui.engine.bigdata.source import N, TableSource
from ppdp_gui.engine.bigdata.large_dataset import open_large
from ppdp_gui.engine.claims import KAnonymity, LDiversity, RiskBound, Suppression, TCloseness
from ppdp_gui.engine.data.schema import NAPolicy, Role
from ppdp_gui.engine.package_files import sample_table
from ppdp_gui.engine.pipeline import export, plan, run_release
from ppdp_gui.engine.taxonomy import bundled_adult_taxonomies

_READS_ROWS = re.compile(r"\b(FROM|JOIN)\s+(src|kept|raw_src|read_csv|read_parquet)\b", re.IGNORECASE)


class CountingConnection:
    """A DuckDB connection that counts the statements reading the table's rows (its views or a file)."""

    def __init__(self, con):
        self._con = con
        self.reads: list[str] = []

    def execute(self, sql, params=None):
        if _READS_ROWS.search(sql) and not sql.lstrip().upper().startswith("CREATE") and "LIMIT" not in sql:
            self.reads.append(sql)
        return self._con.execute(sql, params or [])

    def __getattr__(self, name):
        return getattr(self._con, name)


@pytest.fixture(scope="module")
def adult(tmp_path_factory):
    """The bundled Adult sample, with a free-text column that is released as it is (`note`)."""
    folder = tmp_path_factory.mktemp("passes")
    frame = pd.read_csv(sample_table(), dtype=str, keep_default_na=False).head(2000)
    frame["note"] = [f"n{i % 997}" for i in range(len(frame))]
    frame.to_parquet(folder / "adult.parquet", index=False)
    return folder / "adult.parquet"


def _counted(path, note: bool = False):
    roles = {"note": Role.INSENSITIVE} if note else {"note": Role.IDENTIFIER}
    data = open_large(path, hashes=False, roles=roles).confirm_guesses()
    for col, tax in bundled_adult_taxonomies().items():
        if col in data.frame.columns:
            data = data.with_column(col, taxonomy=tax)
    spy = CountingConnection(data.table.con)
    data.table.con = spy
    return data, spy


@pytest.mark.parametrize("note", [False, True])
@pytest.mark.parametrize("mechanism,params", [("Mondrian", {"k": 8}),
                                              ("Global recoding", {"k": 8, "suppression": 3.0})])
def test_a_release_reads_the_rows_a_few_times_not_once_per_column_and_claim(adult, tmp_path, mechanism, params,
                                                                            note):
    """Without `note` every released column is in the histogram, so the recount reads it, not the file; with
    `note` (released as it is, not counted) the recount is one pass over the released rows."""
    data, spy = _counted(adult, note)
    planned = plan(data, mechanism, params)
    assert not planned.errors, planned.errors
    published = list(run_release(planned, seed=3))[-1]
    qis = list(data.quasi_identifiers)
    assert len(qis) >= 6
    # the histogram of the QIs with the class (plan, mechanism and recount) and the uniqueness test of the plan
    assert len(spy.reads) <= 2 + note, spy.reads
    before = len(spy.reads)
    out = tmp_path / f"{mechanism.split()[0]}.parquet"
    exported = export(published, out)
    assert all(c.ok for c in exported.checks)
    # the written file read back once; the rows are written from the histogram when it holds every released
    # column (each distinct row repeated as often as it counts), else by one pass over the file (`note`)
    assert len(spy.reads) - before == 1 + note, spy.reads[before:]
    assert exported.note_doc["files"][0]["rows"] == 2000
    # the digest is the written rows' (labels held as ENUMs hash as their text, as before)
    cols = ", ".join(f'"{c}"' for c in pd.read_parquet(out).columns)
    n, total = spy._con.execute(f"SELECT COUNT(*), COALESCE(SUM(CAST(hash({cols}) AS HUGEINT)), 0) "
                                f"FROM read_parquet('{out}')").fetchall()[0]
    assert published.output_hash == hashlib.sha256(f"sql-records-v1:{n}:{total}".encode()).hexdigest()


def _relation_frame() -> pd.DataFrame:
    """Released rows with suppressed rows, a NULL in a quasi-identifier and a sensitive column."""
    return pd.DataFrame({
        "a": ["x"] * 6 + ["y"] * 5 + ["*"] * 3 + [None, "*"],
        "b": ["1"] * 6 + ["2"] * 5 + ["*"] * 3 + ["*", None],
        "s": list("ppqqrsppqqrstuvv"),
    })


def test_one_pass_recount_gives_what_one_query_per_claim_gave():
    """k, suppression, l-diversity, t-closeness and risk, with SQL's NULL logic for the marker (a row with a
    NULL quasi-identifier is neither suppressed nor in a group), from the one tally."""
    import duckdb
    con = duckdb.connect()
    con.register("rel", _relation_frame())
    claims = [KAnonymity(2, ("a", "b")), Suppression(0.25, ("a", "b"), "*"),
              LDiversity(2, "distinct", "s", ("a", "b")), RiskBound("highest", 0.6, ("a", "b")),
              TCloseness(0.9, "s", ("a", "b"), distance="equal")]
    got = recount(con, "rel", claims)
    assert [c.ok for c in got] == [True, True, True, True, True]
    assert "smallest 5" in got[0].message and "3 of 16" in got[1].message
    strict = recount(con, "rel", [KAnonymity(6, ("a", "b")), Suppression(0.1, ("a", "b"), "*")])
    assert [c.ok for c in strict] == [False, False]
    assert "1 group(s) have fewer than k = 6 rows (smallest 5)" in strict[0].message
    t = tally(con, "rel", claims, hash_columns=["a", "b", "s"])
    whole = con.execute("SELECT COUNT(*), SUM(CAST(hash(a, b, s) AS HUGEINT)) FROM rel").fetchall()[0]
    assert (t.total, t.hash_sum) == (16, int(whole[1]))


@pytest.mark.parametrize("action", ["drop", "category"])
def test_the_histogram_counted_on_raw_values_equals_the_group_by_on_the_views(tmp_path, action):
    """Padded values, missing tokens and a column whose blanks drop rows: the shortcut (raw values counted first,
    the reader's text rules applied per distinct value) gives the same counts as grouping the view's rows."""
    r = np.random.default_rng(4)
    n = 600
    frame = pd.DataFrame({
        "q": r.choice(["a", " a", "b\t", "NA", "", "c "], n),
        "z": r.choice(["1", "2", " 3", "?", "4"], n),
        "other": r.choice(["u", "", "v"], n),
    })
    path = tmp_path / "t.csv"
    frame.to_csv(path, index=False)
    src = TableSource(path, na_policy=NAPolicy(action=action))
    src.apply_kinds({"q": "categorical", "z": "categorical", "other": "categorical"})
    for cols in (("q", "z"), ("q", "z", "other"), ("z",)):
        fresh = TableSource(path, na_policy=NAPolicy(action=action))
        fresh.apply_kinds({"q": "categorical", "z": "categorical", "other": "categorical"})
        got = fresh.histogram(cols)
        keys = ", ".join(f'"{c}"' for c in cols)
        want = fresh.query(f"SELECT {keys}, COUNT(*) AS \"{N}\" FROM src GROUP BY {keys}")
        norm = [c for c in cols]
        a = got.sort_values(norm, na_position="last").reset_index(drop=True)
        b = want.sort_values(norm, na_position="last").reset_index(drop=True)
        assert a[N].sum() == fresh.n_rows
        pd.testing.assert_frame_equal(a.astype(str), b.astype(str))
        # a subset is summed from the counted histogram, not read again
        assert list(fresh.distinct(cols[0], among=cols)) == sorted(fresh.distinct(cols[0]).tolist())


def test_a_histogram_of_too_many_combinations_is_not_held(tmp_path, monkeypatch):
    """A continuous column among the counted ones would make the histogram as long as the table: past
    HISTOGRAM_ROWS combinations it is dropped (memory stays bounded) and the questions go to SQL."""
    from ppdp_gui.engine.bigdata import source as source_module
    path = tmp_path / "t.csv"
    pd.DataFrame({"q": ["a", "b"] * 50, "x": [str(i) for i in range(100)]}).to_csv(path, index=False)
    src = TableSource(path)
    src.apply_kinds({"q": "categorical", "x": "numeric"})
    monkeypatch.setattr(source_module, "HISTOGRAM_ROWS", 10)
    assert src.histogram(("q", "x")) is None
    assert list(src.distinct("q", among=("q", "x"))) == ["a", "b"]
    assert len(src.group_counts({"v": '"q"', "w": '"x"'})) == 100
    assert src.histogram(("q",))[N].tolist() in ([50, 50],)


def test_a_plan_and_its_run_key_the_row_hashes_once(tmp_path, monkeypatch):
    """The ledger identifies the table in the plan and again in the run: the keyed row hashes (at 10⁷ rows about
    a second and 500 MB) are computed once for the same array, again for another one."""
    from ppdp_gui.engine.privacy import ledger as ledger_module
    from ppdp_gui.engine.privacy.ledger import Ledger
    calls = []
    real = ledger_module.keyed_row_hashes
    monkeypatch.setattr(ledger_module, "keyed_row_hashes", lambda h, k: calls.append(1) or real(h, k))
    path = tmp_path / "t.csv"
    pd.DataFrame({"q": ["a", "b", "c"] * 20, "s": [str(i) for i in range(60)]}).to_csv(path, index=False)
    data = open_large(path)
    led = Ledger(tmp_path / "ledger.db")
    first, again = led.identify(data), led.identify(data.confirm_guesses())
    assert len(calls) == 1 and first.fingerprint == again.fingerprint
    other = open_large(path)  # the same rows read again: another array, keyed again, the same identity
    assert led.identify(other).fingerprint == first.fingerprint and len(calls) == 2


def test_the_kinds_pass_per_value_equals_the_pass_per_row(tmp_path):
    """One column asked about: its rows counted per value first; the facts equal those of the pass per row."""
    from ppdp_gui.engine.bigdata.columns import kind_facts
    values = ["1", "2", "2", "007", "x", "", "3.5", "1e3", "inf"] * 7
    path = tmp_path / "t.csv"
    pd.DataFrame({"x": values, "y": ["4"] * len(values)}).to_csv(path, index=False)
    src = TableSource(path, na_policy=NAPolicy(tokens=("",)))
    alone = kind_facts(src.run, "kept", ["x"], ["x"], ["x"])["x"]
    together = kind_facts(src.run, "kept", ["x", "y"], ["x", "y"], ["x", "y"])["x"]
    assert alone == together
    assert alone["not numbers"] == 14 and alone["leading zeros"] == 7 and alone["distinct"] == 7  # the empty cell is missing
