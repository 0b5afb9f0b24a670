"""The sheet rows placed by NumPy (data/xlsx_rows.py, issue 32 item 4) are exactly the cells joined one after the
other: short cells next to long ones, empty cells at a row's end, a one-column sheet whose rows are shorter than
a window, blocks of any size."""

from __future__ import annotations

import re
import zipfile

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from ppdp_gui.engine.data import xlsx_rows
from ppdp_gui.engine.data.xlsx_rows import column_cells, sheet_rows
from ppdp_gui.engine.data.xlsx_stream import write_xlsx

SHEET = "xl/worksheets/sheet1.xml"


def _joined(codes: list[np.ndarray], cells: list[list[bytes]]) -> bytes:
    """The rows the slow way: every row's cells joined in Python."""
    return b"".join(b"".join(cells[j][codes[j][i]] for j in range(len(codes))) for i in range(len(codes[0])))


def _placed(codes, cells, rows=1000) -> bytes:
    placed = column_cells([pa.array(c, pa.large_binary()) for c in cells])
    return b"".join(part.tobytes() for _done, part in sheet_rows(codes, placed, rows))


@pytest.mark.parametrize("seed", range(6))
def test_placed_rows_are_the_cells_joined(seed):
    rng = np.random.default_rng(seed)  # test data only
    width = int(rng.integers(1, 9))
    cells, codes = [], []
    for j in range(width):
        distinct = int(rng.integers(1, 40))
        texts = [b"<c" + bytes(rng.choice(list(b"0123456789.t=s\""), int(rng.integers(0, 40)))) + b"</c>"
                 for _ in range(distinct)] + [b"<c/>"]
        if j == 0:
            texts = [b"<row>" + t for t in texts]
        if j == width - 1:
            texts = [t + b"</row>" for t in texts]
        cells.append(texts)
        codes.append(rng.integers(-1, distinct, 500))  # -1: the empty cell, the last one
    for rows in (1, 7, 1000):
        assert _placed(codes, cells, rows) == _joined(codes, cells)


def test_short_cells_never_spill_into_the_next_row():
    """A one-column sheet of empty cells: each row (15 bytes) is shorter than a 16-byte window."""
    cells = [[b"<row><c><v>1</v></c></row>", b"<row><c/></row>"]]
    codes = [np.array([1, 0, 1, 1, 0, 1, 1, 1])]
    assert _placed(codes, cells) == _joined(codes, cells)
    wide = [[b"<row><c/>"], [b"<c/>"], [b"<c/></row>"]]  # every cell shorter than a wide window
    codes = [np.zeros(9, dtype=np.int64)] * 3
    assert _placed(codes, wide) == b"<row><c/><c/><c/></row>" * 9


def test_blocks_follow_the_byte_size(monkeypatch):
    monkeypatch.setattr(xlsx_rows, "CHUNK_BYTES", 64)
    monkeypatch.setattr(xlsx_rows, "MIN_ROWS", 1)
    cells = [[b"<row><c><v>12345</v></c>"], [b"<c><v>6</v></c></row>"]]
    codes = [np.zeros(50, dtype=np.int64)] * 2
    placed = column_cells([pa.array(c, pa.large_binary()) for c in cells])
    parts = list(sheet_rows(codes, placed, 1000))
    assert [done for done, _ in parts][-1] == 50 and len(parts) > 10
    assert b"".join(p.tobytes() for _, p in parts) == _joined(codes, cells)


def test_the_sheet_holds_each_rows_cells(tmp_path):
    """The written sheet, cell for cell, against the same cells joined in Python."""
    rng = np.random.default_rng(9)  # test data only
    n = 3000
    frame = pd.DataFrame({"id": np.arange(n) * 7919, "band": rng.choice(["a", "bb", None], n),
                          "x": np.where(rng.random(n) < 0.3, np.nan, rng.normal(size=n)), "flag": rng.random(n) < 0.5,
                          "last": rng.choice([None, "z"], n)})
    write_xlsx(frame, tmp_path / "t.xlsx")
    with zipfile.ZipFile(tmp_path / "t.xlsx") as book:
        xml = book.read(SHEET)
        strings = book.read("xl/sharedStrings.xml")
    index = {t.decode(): i for i, t in enumerate(re.findall(rb"<t>([^<]*)</t>", strings))}

    def cell(v):
        if v is None or (isinstance(v, float) and v != v):
            return "<c/>"
        if isinstance(v, (bool, np.bool_)):
            return f'<c t="b"><v>{int(v)}</v></c>'
        if isinstance(v, str):
            return f'<c t="s"><v>{index[v]}</v></c>'
        return f"<c><v>{v!r}</v></c>" if isinstance(v, float) else f"<c><v>{v}</v></c>"

    rows = "".join("<row>" + "".join(cell(v) for v in row) + "</row>" for row in frame.astype(object).itertuples(
        index=False))
    body = xml[xml.index(b"</row>") + 6:xml.index(b"</sheetData>")]
    assert body.decode() == rows


def test_a_wide_sheet_is_placed_in_blocks_of_many_rows(monkeypatch):
    """Rows so wide that few fill a block's bytes: MIN_ROWS rows a block all the same (NumPy's cost is per call)."""
    monkeypatch.setattr(xlsx_rows, "CHUNK_BYTES", 1 << 16)
    cells = [[b"<row><c><v>1</v></c>"]] + [[b"<c><v>2</v></c>"]] * 300 + [[b"<c/></row>"]]
    codes = [np.zeros(2000, dtype=np.int64)] * len(cells)
    placed = column_cells([pa.array(c, pa.large_binary()) for c in cells])
    parts = list(sheet_rows(codes, placed, 10_000))
    assert [done for done, _ in parts] == [512, 1024, 1536, 2000]
    assert b"".join(p.tobytes() for _, p in parts) == _joined(codes, cells)
