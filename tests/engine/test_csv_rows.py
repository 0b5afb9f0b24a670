"""The CSV lines put together as bytes by NumPy (data/csv_rows.py, issue 32 item 4) are the bytes pandas' `to_csv`
writes: on random tables of every covered kind (text with commas, quotes, CR, LF, tabs, unicode and blanks; missing
values; integers of every width and range; floats with -0.0, tiny, huge and NaN; booleans; categoricals), as CSV
and TSV, in one buffer or many; and on the cases the byte placement must get right: rows shorter than one 8-byte
window, cells longer than a window next to short ones in the same column, a wide cell at a row's end."""

from __future__ import annotations

import io
import math
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ppdp_gui.engine.data import csv_rows, csv_writer


def pandas_bytes(frame: pd.DataFrame, sep: str = ",") -> bytes:
    buf = io.BytesIO()
    frame.to_csv(buf, sep=sep, index=False, lineterminator="\r\n", encoding="utf-8")
    return buf.getvalue()


def ours(frame: pd.DataFrame, sep: str = ",", chunk_bytes: int | None = None, merge: bool = True) -> bytes:
    before = csv_rows.CHUNK_BYTES, csv_rows.MOST_PAIRS
    try:
        csv_rows.CHUNK_BYTES = chunk_bytes or before[0]
        csv_rows.MOST_PAIRS = before[1] if merge else 0
        with tempfile.TemporaryDirectory() as tmp:
            csv_writer.write_csv(frame, Path(tmp) / "t.csv", sep=sep)
            return (Path(tmp) / "t.csv").read_bytes()
    finally:
        csv_rows.CHUNK_BYTES, csv_rows.MOST_PAIRS = before


PIECES = list('ab ,;"\r\n\t\'=-é✓日\U0001f600\x00') + ["xyz0123456789"]  # the last makes cells wider than 8 bytes
TEXT = st.lists(st.sampled_from(PIECES), max_size=8).map("".join)
FLOATS = st.one_of(st.floats(allow_infinity=False), st.sampled_from([-0.0, 0.0, 1e-7, 1e16, 1e22, 5e-324, 0.1 + 0.2,
                                                                       2.0 ** 53 + 1, 12345678901234567890.0]))


@st.composite
def columns(draw, n: int):
    kind = draw(st.sampled_from(["object", "str", "category", "int64", "int8", "uint64", "wide int", "float64",
                                 "float32", "bool", "number category"]))
    if kind in ("object", "str", "category"):
        values = draw(st.lists(st.one_of(TEXT, st.none()), min_size=n, max_size=n))
        if kind == "object":
            return pd.Series(values, dtype=object)
        return pd.Series(values, dtype="str") if kind == "str" else pd.Series(pd.Categorical(values))
    if kind in ("int64", "int8", "uint64"):
        info = np.iinfo(kind)
        lo = draw(st.integers(int(info.min), int(info.max)))
        span = draw(st.sampled_from([0, 3, 300]))
        values = draw(st.lists(st.integers(lo, min(lo + span, int(info.max))), min_size=n, max_size=n))
        return pd.Series(np.array(values, dtype=kind))
    if kind == "wide int":
        return pd.Series(np.array(draw(st.lists(st.integers(-2 ** 63, 2 ** 63 - 1), min_size=n, max_size=n)),
                                  dtype=np.int64))
    if kind in ("float64", "float32"):
        values = draw(st.lists(FLOATS, min_size=n, max_size=n))
        if kind == "float32":
            values = [v if math.isnan(v) or abs(v) < 3e38 else 1.5 for v in values]
        return pd.Series(np.array(values, dtype=kind))
    if kind == "bool":
        return pd.Series(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    values = draw(st.lists(st.one_of(st.sampled_from([1.5, -0.0, 2.0, 1e-7]), st.none()), min_size=n, max_size=n))
    return pd.Series(pd.Categorical(values))


@st.composite
def frames(draw):
    n = draw(st.integers(0, 12))
    m = draw(st.integers(2, 9))
    names = draw(st.lists(TEXT.filter(bool), min_size=m, max_size=m, unique=True))
    return pd.DataFrame({name: draw(columns(n)) for name in names})


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frame=frames(), sep=st.sampled_from([",", "\t"]), chunk=st.sampled_from([None, 1, 40]), merge=st.booleans())
def test_same_bytes_as_pandas_on_random_tables(frame, sep, chunk, merge):
    """`merge`: neighbouring columns merged into one cell where they fit (the default), or every column apart."""
    assert ours(frame, sep, chunk, merge) == pandas_bytes(frame, sep)


def lines(codes: list[list[int]], texts: list[list[str]], chunk_bytes: int = 1 << 20, merge: bool = True) -> bytes:
    before = csv_rows.CHUNK_BYTES, csv_rows.MOST_PAIRS
    csv_rows.CHUNK_BYTES, csv_rows.MOST_PAIRS = chunk_bytes, before[1] if merge else 0
    try:
        placed = csv_rows.line_cells([np.array(c) for c in codes], [pa.array(t, pa.string()) for t in texts],
                                     ",", "\r\n")
        return b"".join(bytes(part) for part in csv_rows.byte_lines(*placed))
    finally:
        csv_rows.CHUNK_BYTES, csv_rows.MOST_PAIRS = before


def test_rows_shorter_than_one_window():
    """'1,\r\n' is 4 bytes: two rows fall in one 8-byte window, so they are placed in interleaved passes."""
    codes = [[0, 1, -1, 0, 0], [-1, -1, 0, -1, -1]]
    for merge in (True, False):
        assert lines(codes, [["1", "22"], ["3"]], merge=merge) == b"1,\r\n22,\r\n,3\r\n1,\r\n1,\r\n"


def test_wide_cells_beside_short_ones_and_at_the_row_end():
    """A 30-byte text in the same column as a 1-byte one and a missing value; the last column wide too."""
    long = "a" * 13 + ",quoted" + "b" * 10
    codes = [[0, 1, -1, 0], [1, 0, 0, -1], [0, 1, 1, 0]]
    expected = "".join(f"{a},{b},{c}\r\n" for a, b, c in [(f'"{long}"', "y", "end" * 9), ("z", "x" * 17, "e"),
                                                           ("", "x" * 17, "e"), (f'"{long}"', "", "end" * 9)])
    assert lines(codes, [[long, "z"], ["x" * 17, "y"], ["end" * 9, "e"]]) == expected.encode()
    assert lines(codes, [[long, "z"], ["x" * 17, "y"], ["end" * 9, "e"]], chunk_bytes=1) == expected.encode()


def test_the_first_bytes_of_a_row_survive_the_row_before():
    """A short last cell after short cells: the windows of the row before reach into this row's first bytes,
    which the repair pass restores (here every row is 8 to 10 bytes)."""
    codes = [[0, 1] * 50, [1, 0] * 50, [0, 0] * 50, [1, 1] * 50]
    texts = [["7", "é"], ["a", "bb"], ["", ""], ["q", "\"\""]]
    expected = "".join(f"{a},{b},,{d}\r\n" for a, b, d in [("7", "bb", '""""""'), ("é", "a", '""""""')] * 50)
    assert lines(codes, texts, merge=False) == expected.encode()
    assert lines(codes, texts) == expected.encode()
