"""Hostile inputs: every generated file is refused with a message naming it, or loaded — never a traceback.

The corpus (hostile_corpus.py) is built once per run without its few slow-to-make files; scripts/trust_report.py
runs the full corpus, each file in its own process with its peak memory measured. Here also: the reader's
vectorised paths agree with the per-column rules they replace, and a cyclic taxonomy is refused before any
mechanism starts (so DiffGen never charges ε for one).
"""

from __future__ import annotations

import importlib.util
import io
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ppdp_gui.engine.data import NAPolicy, coltypes, read_table
from ppdp_gui.engine.data.reader import inspect_table
from ppdp_gui.engine.errors import DataError
from ppdp_gui.engine.privacy.fingerprint import canonical_row_hashes

_spec = importlib.util.spec_from_file_location("hostile_corpus", Path(__file__).with_name("hostile_corpus.py"))
corpus = importlib.util.module_from_spec(_spec)
sys.modules["hostile_corpus"] = corpus
_spec.loader.exec_module(corpus)


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    return corpus.build(tmp_path_factory.mktemp("hostile"), heavy=False)


def test_every_hostile_file_is_refused_clearly_or_loaded(cases):
    assert len(cases) >= 300
    groups = {case.group for case in cases}
    assert {"special files", "small file, big memory", "hierarchies", "projects"} <= groups
    problems = []
    for case in cases:
        outcome, message = corpus.run_case(case)
        wrong = corpus.verdict(case, outcome, message)
        if wrong:
            problems.append(f"{case.path.name}: {wrong}")
    assert not problems, "\n".join(problems)


def test_every_hostile_table_is_refused_clearly_or_loaded_by_the_large_table_engine(cases):
    """The same corpus through `--engine duckdb` (bigdata/source.py): the same pre-read checks (data/prechecks.py),
    so a gzip bomb, a NUL byte, a FIFO or a ragged line is refused there too."""
    run = [case for case in cases if case.duckdb is not None]
    assert len(run) >= 100
    problems = []
    for case in run:
        outcome, message = corpus.run_case(case, engine="duckdb")
        wrong = corpus.verdict(case, outcome, message, engine="duckdb")
        if wrong:
            problems.append(f"{case.path.name}: {wrong}")
    assert not problems, "\n".join(problems)


def test_the_corpus_can_fail(tmp_path):
    """The verdict notices a traceback, a silent load and a message that does not name the file."""
    case = corpus.Case("x", tmp_path / "x.csv", "table", "refuse", ("word",))
    assert corpus.verdict(case, "traceback", "Traceback ...")
    assert corpus.verdict(case, "load", "")
    assert corpus.verdict(case, "refused", "some other file: word")
    assert corpus.verdict(case, "refused", f"{case.path}: no such thing")
    assert corpus.verdict(case, "refused", f"{case.path}: the word") is None


# ---- what the refusals and notes say ---------------------------------------------------------------------------
def test_look_alike_headers_name_both_columns(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("id,Age,sex,age\n1,2,F,3\n", encoding="utf-8")
    with pytest.raises(DataError) as err:
        read_table(path)
    assert err.value.column == 4 and "column 2" in str(err.value) and "'Age'" in str(err.value)
    path.write_text("id,a\u200bge\n1,2\n", encoding="utf-8")
    with pytest.raises(DataError, match="U\\+200B ZERO WIDTH SPACE") as err:
        read_table(path)
    assert err.value.column == 2


def test_excel_formulas_merged_cells_and_sheets_are_named(tmp_path):
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "patients"
    sheet.append(["age", "twice"])
    for age in (30, 41, 52):
        sheet.append([age, f"=A{sheet.max_row + 1}*2"])  # openpyxl stores no computed value
    book.create_sheet("other")
    path = tmp_path / "f.xlsx"
    book.save(path)
    with pytest.raises(DataError) as err:
        read_table(path)
    assert "B2" in str(err.value) and "formula" in str(err.value) and err.value.line == 2
    sheet.delete_cols(2)
    sheet.merge_cells("A3:A4")
    book.save(path)
    data = read_table(path)
    notes = " ".join(data.source.notes)
    assert "A3:A4" in notes and "'patients'" in notes and "'other'" in notes


def test_xlsx_values_match_openpyxl(tmp_path):
    """The streaming reader shows what openpyxl (the reader it replaces) showed, on a workbook of every type."""
    import datetime as dt

    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["n", "f", "big", "s", "b", "d", "t", "e"])
    rows = [[39, 39.0, 12345678901234567, "x &amp; <y>", True, dt.date(2020, 1, 2), dt.datetime(2020, 1, 2, 10, 30),
             "=1/0"], [-2.5, 1e-7, 2**60, " pad ", False, dt.date(1900, 3, 1), dt.datetime(1999, 12, 31, 23, 59, 59),
                       "#N/A"]]
    for row in rows:
        sheet.append(row)
    for row in sheet.iter_rows(min_row=2, min_col=8, max_col=8):
        row[0].value = "plain"  # no formulas here
    path = tmp_path / "types.xlsx"
    book.save(path)
    got = read_table(path, kinds={c: "categorical" for c in ["n", "f", "big", "s", "b", "d", "t", "e"]},
                     na_policy=NAPolicy(action="category"))
    ref = openpyxl.load_workbook(path, read_only=True, data_only=True)
    values = list(ref.active.iter_rows(values_only=True))[1:]

    def shown(v):
        if isinstance(v, float) and v.is_integer() and abs(v) < 2**53:
            return str(int(v))
        if hasattr(v, "isoformat"):
            text = v.isoformat(sep=" ") if isinstance(v, dt.datetime) else v.isoformat()
            return text[:-9] if text.endswith(" 00:00:00") else text
        return str(v).strip()

    expected = pd.DataFrame([[shown(v) for v in row] for row in values], columns=got.frame.columns)
    assert got.frame.astype(str).values.tolist() == expected.values.tolist()


# ---- the vectorised paths agree with the rules they replace -----------------------------------------------------
cells = st.one_of(st.sampled_from(["", " ", "?", "NA", "01", "1", "2.5", " 7 ", "-3", "+4", "1e3", "inf", "nan",
                                   "x", "١٢", "0", "1.", ".5"]), st.integers(-50, 50).map(str))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 6).flatmap(lambda n: st.lists(st.lists(cells, min_size=n, max_size=n), min_size=1,
                                                       max_size=30)))
def test_batched_typing_matches_the_per_column_rule(rows):
    n_cols = len(rows[0])
    arrays = [pa.array([r[j] for r in rows], pa.string()) for j in range(n_cols)]
    tokens = ("", "?", "NA")
    batch = coltypes.TextBatch(arrays, len(rows), tokens)
    miss = batch.cell_missing()
    kinds = batch.kinds(miss)
    for j, arr in enumerate(arrays):
        col = pd.Series(arr.to_pylist(), dtype="str").str.strip()
        missing = col.isin(tokens).to_numpy()
        assert (miss[j] == missing).all()
        assert kinds[j] == coltypes.infer_text_kind(col[~missing]), (j, col.tolist())
        assert batch.distinct_counts(miss)[j] == col[~missing].nunique()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 4).flatmap(lambda n: st.lists(st.lists(cells, min_size=n, max_size=n), min_size=1,
                                                       max_size=30)))
def test_coded_columns_are_typed_as_their_texts(rows):
    """Columns given as codes into one dictionary (the XLSX read-back's form; the dictionary may hold a text
    twice) give the batch the same texts give."""
    n_cols = len(rows[0])
    dictionary = sorted({c for r in rows for c in r})
    dictionary = dictionary + dictionary[:1]  # one text twice
    index = {c: i for i, c in enumerate(dictionary[:-1])}
    codes = [[index[r[j]] if k % 2 else (len(dictionary) - 1 if r[j] == dictionary[0] else index[r[j]])
              for k, r in enumerate(rows)] for j in range(n_cols)]
    coded = [pa.DictionaryArray.from_arrays(pa.array(c, pa.int32()), pa.array(dictionary)) for c in codes]
    plain = [pa.array([r[j] for r in rows], pa.string()) for j in range(n_cols)]
    tokens = ("", "?", "NA")
    a, b = coltypes.TextBatch(coded, len(rows), tokens), coltypes.TextBatch(plain, len(rows), tokens)
    miss = a.cell_missing()
    assert (miss == b.cell_missing()).all()
    assert a.kinds(miss) == b.kinds(miss)
    assert [t.to_pylist() for t in a.texts("(missing)")] == [t.to_pylist() for t in b.texts("(missing)")]


def test_coded_columns_of_other_kinds_take_the_general_path():
    """Codes into a dictionary of numbers, or with missing codes, or over two dictionaries: typed as text."""
    numbers = pa.DictionaryArray.from_arrays(pa.array([0, 1, 0], pa.int32()), pa.array([5, 7]))
    holes = pa.DictionaryArray.from_arrays(pa.array([0, None, 1], pa.int32()), pa.array(["a", "b"]))
    other = pa.DictionaryArray.from_arrays(pa.array([1, 1, 0], pa.int32()), pa.array(["b", "c"]))
    batch = coltypes.TextBatch([numbers, holes, other], 3, ())
    assert [t.to_pylist() for t in batch.texts(None)] == [["5", "7", "5"], ["a", None, "b"], ["c", "c", "b"]]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(cells, min_size=3, max_size=3), min_size=1, max_size=20),
       st.permutations(["b", " a", "c "]))
def test_row_hashes_of_arrow_text_equal_those_of_the_frame(rows, names):
    """The ledger's identity of a table must not depend on which path read it."""
    table = pa.table({name: pa.array([r[j] for r in rows], pa.string()) for j, name in enumerate(names)})
    frame = table.to_pandas()
    assert (canonical_row_hashes(table) == canonical_row_hashes(frame)).all()


def test_inspect_counts_match_pandas(tmp_path):
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({f"c{j}": rng.choice(["a", "b", "", "?", "12", "x y"], size=40) for j in range(300)})
    frame["num"] = [str(i % 23) for i in range(40)]
    path = tmp_path / "w.csv"
    frame.to_csv(path, index=False)
    data, counts = inspect_table(path)
    raw = pd.read_csv(path, dtype=str, keep_default_na=False)
    for spec, (distinct, missing) in zip(data.schema, counts):
        col = raw[spec.name].str.strip()
        is_missing = col.isin(data.source.na_policy.tokens)
        assert missing == int(is_missing.sum()), spec.name
        assert distinct == col[~is_missing].nunique(), spec.name


# ---- taxonomies: refused when attached or imported, the same way for every mechanism ---------------------------
@pytest.mark.parametrize("mechanism, params", [
    ("DiffGen", ["-p", "epsilon=1", "-p", "h=3", "--domain", "sex=F,M", "--domain", "age=0:120:int",
                 "--domain", "flag=yes,no", "--role", "flag=class"]),
    ("Mondrian", ["-p", "k=2"]),
])
def test_a_cyclic_taxonomy_is_refused_before_any_mechanism_runs(tmp_path, mechanism, params):
    from ppdp_gui import cli
    from ppdp_gui.engine.privacy import Ledger

    table = tmp_path / "t.csv"
    table.write_text("sex,age,diag,flag\n" + "".join(f"{'FM'[i % 2]},{20 + i},{['flu', 'copd', 'asthma'][i % 3]},"
                                                       f"{['yes', 'no'][i % 2]}\n" for i in range(30)))
    hierarchy = tmp_path / "diag.csv"
    hierarchy.write_text("flu;A;B;*\ncopd;B;A;*\nasthma;C;C;*\n")
    ledger = tmp_path / "ledger.sqlite"
    err = io.StringIO()
    sys_err, sys.stderr = sys.stderr, err
    try:
        code = cli.main([
            "run", mechanism, "-i", str(table), "--role", "sex=qi", "--role", "age=qi", "--role", "diag=qi",
            "--taxonomy", f"diag={hierarchy}", "-o", str(tmp_path / "out.csv"), "--ledger", str(ledger), *params])
    finally:
        sys.stderr = sys_err
    assert code == 2, err.getvalue()
    assert "diag.csv" in err.getvalue() and "'A'" in err.getvalue()
    assert not (tmp_path / "out.csv").exists()
    if ledger.exists():
        assert Ledger(ledger).entries() == []  # nothing reserved: no ε charged


def test_limits_scale_with_the_file_and_never_bind_the_apps_own_files():
    from ppdp_gui.engine.data.guards import EXPAND_FLOOR, EXPAND_RATIO, MAX_CELLS, Limits

    small = Limits(1000, 1 << 30)
    assert small.expanded == EXPAND_FLOOR and small.cells == MAX_CELLS
    assert Limits(1000, 5000).expanded == 5000  # the caller's limit holds for what the file expands to
    big = Limits(50 << 20, 1 << 30)
    assert big.expanded == EXPAND_RATIO * (50 << 20) and big.cells == 2 * (50 << 20)
    assert Limits(1 << 30, 1 << 30).expanded == 1 << 30  # never past the caller's limit once above the floor
    own = Limits(1000, 1001, trusted=True)
    assert own.expanded > 1 << 40 and own.cells > 1 << 40
