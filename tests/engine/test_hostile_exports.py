"""Export safety: no cell of an exported CSV or XLSX is a formula to a spreadsheet, whatever the table holds.

Property test over generated frames (text that starts like a formula in ASCII, full-width or other scripts'
digits, apostrophes, tabs and CRs; numbers; categories): the file written is read back the way a spreadsheet
would see it — XLSX with openpyxl, every cell's type checked (never 'f') and every text checked by the rule;
CSV field by field — and a formula start is allowed only on a plain ASCII number or behind the apostrophe.
"""

from __future__ import annotations

import csv
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ppdp_gui.engine.errors import DataError
from ppdp_gui.engine.data.writer import FORMULA_START, MARK, export_table, neutral_text

PLAIN_NUMBER = re.compile(r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$")
STARTS = list(FORMULA_START) + [MARK, "'", " ", "\u00a0", "١", "+١٢٣", "=HYPERLINK(", "@SUM(", "-2+3", "--1",
                                "\u2212", "＝1+1", "＋1", "＠a", "－5", "|cmd", "\n="]
TAILS = ["", "1", "1+1", "A1", "cmd|' /C calc'!A0", "١٢٣", "5", ".5e3", "x y", "'", "=", "\t", "SUM(1,2)"]

text = st.builds(lambda a, b: a + b, st.sampled_from(STARTS + [""]), st.sampled_from(TAILS)) | st.text(max_size=6)
number = st.one_of(st.integers(-10**6, 10**6), st.floats(allow_nan=True, allow_infinity=True, width=32))


def dangerous(value: str) -> bool:
    """A text a spreadsheet would run as a formula: starts with a formula character and is not a plain number."""
    return value.startswith(FORMULA_START) and not PLAIN_NUMBER.match(value)


@st.composite
def frames(draw):
    n = draw(st.integers(1, 6))
    cols = {}
    for j in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["text", "number", "category"]))
        if kind == "number":
            cols[draw(st.sampled_from(["n", "=n", "-n", "+n"])) + str(j)] = draw(st.lists(number, min_size=n, max_size=n))
        else:
            values = draw(st.lists(text, min_size=n, max_size=n))
            name = draw(text) + f"_{j}"
            cols[name] = pd.Categorical(values) if kind == "category" else pd.Series(values, dtype="str")
    return pd.DataFrame(cols)


def _xlsx_cells(path):
    import openpyxl

    book = openpyxl.load_workbook(path)  # not read-only: every cell with its data type
    for row in book.active.iter_rows():
        yield from row


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(frames())
def test_no_exported_cell_is_a_formula(tmp_path_factory, frame):
    folder = tmp_path_factory.mktemp("export")
    infinite = any(pd.api.types.is_float_dtype(frame[c].dtype) and np.isinf(frame[c].to_numpy(dtype=float)).any()
                   for c in frame.columns)
    if infinite:  # refused for spreadsheets (a CSV would show '-inf', a formula start); nothing written
        for name in ("release.csv", "release.xlsx"):
            with pytest.raises(DataError, match="infinite"):
                export_table(frame, folder / name)
        assert not list(folder.iterdir())
        return
    csv_path = export_table(frame, folder / "release.csv")
    with open(csv_path, newline="", encoding="utf-8") as fh:
        for row in csv.reader(fh):
            for field in row:
                assert not dangerous(field), repr(field)
    try:
        xlsx_path = export_table(frame, folder / "release.xlsx")
    except DataError:  # a control character Excel cannot store (in a value or a name): refused, nothing written
        assert not (folder / "release.xlsx").exists()
        assert [p.name for p in folder.iterdir()] == ["release.csv"]  # and no temporary file left
        return
    for cell in _xlsx_cells(xlsx_path):
        assert cell.data_type != "f", (cell.coordinate, cell.value)
        if isinstance(cell.value, str):
            assert not dangerous(cell.value), (cell.coordinate, cell.value)


@pytest.mark.parametrize("value", ["=1+1", "+A1", "-A1", "@SUM(A1)", "\t=1", "\r=1", "＝1+1", "＋1", "－1", "＠x",
                                   "+١٢٣", "\u22121", "'=1"])
def test_each_formula_start_is_neutralised(value):
    assert neutral_text(value).startswith(MARK)


@pytest.mark.parametrize("value", ["-5", "+3.2e4", "0.5", "-.5", "12"])
def test_plain_numbers_stay_numbers(value):
    assert neutral_text(value) == value


def test_the_check_can_fail(tmp_path):
    """A file written without neutralising is caught by the same reading-back."""
    path = tmp_path / "raw.csv"
    pd.DataFrame({"a": ["=1+1", "ok"]}).to_csv(path, index=False)
    with open(path, newline="", encoding="utf-8") as fh:
        assert any(dangerous(f) for row in csv.reader(fh) for f in row)
    assert np.all([dangerous(v) for v in ("=1", "＝1", "+١٢٣")])


def test_every_writer_refuses_a_table_or_hierarchy_this_process_loaded(tmp_path):
    """Issue 27: the one output guard at the bottom of every atomic write (a chart, a hierarchy saved from the
    editor, a project) — never a file `pipeline.load` read as the table or a hierarchy."""
    import shutil

    import pytest as _pytest

    from ppdp_gui.engine.data.writer import write_bytes_atomic
    from ppdp_gui.engine.errors import DataError
    from ppdp_gui.engine.package_files import sample_table
    from ppdp_gui.engine.persistence.project import Recipe
    from ppdp_gui.engine.pipeline.load import load
    table = tmp_path / "ward.csv"
    shutil.copy(sample_table(), table)
    load(Recipe(source=str(table)))
    before = table.read_bytes()
    (tmp_path / "sub").mkdir()
    for target in (table, tmp_path / "sub" / ".." / "ward.csv"):
        with _pytest.raises(DataError, match="input"):
            write_bytes_atomic(b"x", target)
    assert table.read_bytes() == before
