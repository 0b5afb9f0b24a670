"""The array reader of the sheets this app writes (data/xlsx_sheet.py, issue 32 item 4): on every kind of cell
it reads the texts the general reader (calamine) reads; anything not in the writer's plain shape — a workbook
from another program, a damaged byte, an extra cell — gives None, so the export reads that file with calamine;
and the export's read-back uses it (no calamine for the app's own files)."""

from __future__ import annotations

import zipfile

import numpy as np
import pandas as pd
import pytest

from ppdp_gui.engine.data import xlsx_sheet, xlsx_walk
from ppdp_gui.engine.data.writer import neutralise_formulas
from ppdp_gui.engine.data.xlsx_sheet import read_plain_sheet
from ppdp_gui.engine.data.xlsx_stream import read_xlsx_text, write_xlsx
from tests.engine.test_export_xlsx import tricky

SHEET = "xl/worksheets/sheet1.xml"


def _same(a: pd.DataFrame, b: pd.DataFrame) -> None:
    assert list(a.columns) == list(b.columns)
    assert a.shape == b.shape
    for j in range(a.shape[1]):
        assert a.iloc[:, j].astype(object).tolist() == b.iloc[:, j].astype(object).tolist(), a.columns[j]


def test_reads_what_calamine_reads_on_every_kind_of_cell(tmp_path):
    frame = neutralise_formulas(tricky())
    frame["wide"] = ["x" * 40 + str(i) for i in range(len(frame))]  # keys longer than one 64-bit word
    frame["numbers"] = [0.1 + 0.2, -0.0, 0.0, 5e-324, 1e300, 7, 2**52 + 0.5, 1 / 3, -1e-300, 42.0, 1e16]
    path = tmp_path / "t.xlsx"
    write_xlsx(frame, path)
    fast = read_plain_sheet(path)
    assert fast is not None
    _same(fast, read_xlsx_text(path))


def test_reads_across_chunks_and_an_empty_table(tmp_path, monkeypatch):
    rng = np.random.default_rng(3)  # test data only
    frame = pd.DataFrame({"a": rng.integers(0, 50, 3000), "b": rng.choice(["x", "y,z", ""], 3000),
                          "c": rng.normal(size=3000).round(3)})
    path = tmp_path / "t.xlsx"
    write_xlsx(frame, path)
    monkeypatch.setattr(xlsx_sheet, "CHUNK_BYTES", 1000)
    monkeypatch.setattr(xlsx_sheet, "MIN_ROWS", 1)
    blocks = []
    monkeypatch.setattr(xlsx_sheet, "Block", lambda *a: blocks.append(xlsx_walk.Block(*a)) or blocks[-1])
    _same(read_plain_sheet(path), read_xlsx_text(path))
    assert len(blocks) > 20  # the header, then many pieces
    write_xlsx(frame.iloc[:0], tmp_path / "empty.xlsx")
    empty = read_plain_sheet(tmp_path / "empty.xlsx")
    assert empty is not None and list(empty.columns) == ["a", "b", "c"] and len(empty) == 0


def test_a_wide_sheet_is_read_in_pieces_of_many_rows(tmp_path, monkeypatch):
    """Rows so wide that few fill a piece's bytes: MIN_ROWS rows a piece all the same (NumPy's cost is per call)."""
    frame = pd.DataFrame({f"c{j}": np.arange(1200) % (j + 2) for j in range(300)})
    path = tmp_path / "wide.xlsx"
    write_xlsx(frame, path)
    monkeypatch.setattr(xlsx_sheet, "CHUNK_BYTES", 1 << 16)
    blocks = []
    monkeypatch.setattr(xlsx_sheet, "Block", lambda *a: blocks.append(xlsx_walk.Block(*a)) or blocks[-1])
    back = read_plain_sheet(path)
    assert back.shape == (1200, 300) and back["c299"].tolist()[:3] == ["0", "1", "2"]
    assert [b.n_rows for b in blocks[1:-1]] and min(b.n_rows for b in blocks[1:-1]) >= xlsx_sheet.MIN_ROWS


def _tampered(tmp_path, change) -> str:
    path = tmp_path / "t.xlsx"
    if not path.exists():
        write_xlsx(pd.DataFrame({"a": [1, 2, 3], "b": ["x", "y", None], "c": [True, False, True]}), path)
    out = tmp_path / "changed.xlsx"
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            data = src.read(info.filename)
            dst.writestr(info.filename, change(data) if info.filename == SHEET else data)
    return str(out)


@pytest.mark.parametrize("change", [
    lambda x: x.replace(b"<c><v>2</v></c>", b"<c><v>2x</v></c>"),           # not a number
    lambda x: x.replace(b"<c><v>2</v></c>", b"<c><v>2</v></c><c/>", 1),      # one cell too many in a row
    lambda x: x.replace(b"<c><v>2</v></c>", b"<c><v>2</v></c> ", 1),        # a stray byte between cells
    lambda x: x.replace(b"<c><v>2</v></c>", b'<c r="A3"><v>2</v></c>', 1),   # a cell reference
    lambda x: x.replace(b'<c t="s"><v>3</v></c>', b'<c t="s"><v>99</v></c>', 1),  # no such shared string
    lambda x: x.replace(b'<c t="b"><v>1</v></c>', b'<c t="b"><v>2</v></c>', 1),   # not a boolean
    lambda x: x.replace(b"</row><row>", b"<row>", 1),                        # a row not closed
    lambda x: x.replace(b"<c/>", b"<c></c>", 1),                             # another spelling of empty
    lambda x: x.replace(b"<c><v>3</v></c>", b"<c><v>3</v><f>1+2</f></c>", 1),  # a formula
    lambda x: x.replace(b"<c><v>2</v></c>", b"<c><v>2w</v></c>", 1),         # the rows' letter in a value
    lambda x: x.replace(b"<c><v>2</v></c>", b"<c><v>2\0</v></c>", 1),        # a NUL byte after a value
    lambda x: x.replace(b"<c><v>2</v></c>", "<c><v>2é</v></c>".encode(), 1),  # a byte beyond ASCII
    lambda x: x.replace(b"<c><v>2</v></c>", b"<c><v>" + b"2" * 40 + b"</v></c>", 1),  # longer than any number written
    lambda x: x.replace(b"<c><v>2</v></c>", b"<c><v>2</v></x>", 1),          # a cell closed wrongly
    lambda x: x.replace(b'<c t="s"><v>3</v></c>', b'<c t="s"><x>3</v></c>', 1),  # a typed cell opened wrongly
    lambda x: x.replace(b'<c t="b"><v>1</v></c>', b'<c t="n"><v>1</v></c>', 1),  # another type
    lambda x: x.replace(b"</row><row>", b"</row><row></row><row>", 1),       # an empty row
    lambda x: x.replace(b"</row><row>", b'</row><row r="3">', 1),            # a row with attributes
    lambda x: x.replace(b"</sheetData>", b"</sheetData><mergeCells/>", 1),    # something after the rows
])
def test_anything_else_is_left_to_the_general_reader(tmp_path, change):
    assert read_plain_sheet(_tampered(tmp_path, lambda x: x)) is not None  # the untouched file is plain
    assert read_plain_sheet(_tampered(tmp_path, change)) is None


def test_a_changed_byte_reads_as_calamine_reads_it_or_not_at_all(tmp_path):
    """Any one byte of the sheet changed: the array reader either refuses the file or reads what calamine reads."""
    rng = np.random.default_rng(5)  # test data only
    frame = pd.DataFrame({"a": [1, 22, 333], "b": ["x", "y", None], "c": [True, False, True], "d": [0.5, -1e-300, 7]})
    path = tmp_path / "t.xlsx"
    write_xlsx(frame, path)
    with zipfile.ZipFile(path) as book:
        xml = book.read(SHEET)
    body = xml.index(b"<sheetData>")
    digits = [i for i in range(body, len(xml)) if xml[i:i + 1].isdigit()]
    read = 0
    for trial in range(60):
        at = int(rng.choice(digits) if trial % 2 else rng.integers(body, len(xml)))  # half of them in a value
        byte = bytes([int(rng.choice(list(b'<>/"=0123456789.-ecvwrst \0')))])
        changed = _tampered(tmp_path, lambda x, at=at, byte=byte: x[:at] + byte + x[at + 1:])
        fast = read_plain_sheet(changed)
        if fast is None:
            continue
        read += 1
        _same(fast, read_xlsx_text(changed))
    assert read >= 10  # some changes keep the shape (a digit for a digit): those were compared

def test_a_workbook_from_another_program_is_left_to_the_general_reader(tmp_path):
    openpyxl = pytest.importorskip("openpyxl")
    book = openpyxl.Workbook()
    book.active.append(["a", "b"])
    book.active.append([1, "x"])
    book.save(tmp_path / "other.xlsx")
    assert read_plain_sheet(tmp_path / "other.xlsx") is None
    assert read_plain_sheet(tmp_path / "missing.xlsx") is None


def test_the_export_reads_its_own_xlsx_without_calamine(tmp_path, monkeypatch):
    import sys

    from ppdp_gui.engine.data.writer import stage_table
    from ppdp_gui.engine.pipeline.export import read_back

    def refuse(_path):
        raise AssertionError("the general reader was used for the app's own file")

    monkeypatch.setattr(sys.modules["ppdp_gui.engine.pipeline.export"], "read_xlsx_text", refuse)
    frame = tricky()
    frame["real"] = frame["real"].where(np.isfinite(frame["real"]), 0.0)  # the export refuses infinities
    staged = stage_table(frame, tmp_path / "release.xlsx")
    try:
        back = read_back(staged, frame.columns)
    finally:
        staged.discard()
    assert len(back) == len(frame) and back["text"].tolist()[:2] == ["_x0041_", "a\rb"]


def test_a_planted_wrong_cell_is_caught_by_the_export(tmp_path, monkeypatch):
    """The read-back is a check that can fail: a writer that puts one wrong value in one cell (still in the plain
    shape, so the array reader reads it) makes the export refuse to publish, and nothing is written."""
    import re
    import sys

    from ppdp_gui.engine.data import xlsx_stream
    from ppdp_gui.engine.errors import CheckError
    from ppdp_gui.engine.pipeline import export
    from tests.engine.test_export_xlsx import _release

    published = _release(1)
    placed = xlsx_stream.sheet_rows

    def planted(*args):
        for i, (done, rows) in enumerate(placed(*args)):
            if i == 0:  # the first data row's first cell: a number no other row holds
                rows = np.frombuffer(re.sub(rb'^<row><c t="s"><v>[0-9]+</v></c>', b"<row><c><v>999</v></c>",
                                            rows.tobytes(), count=1), np.uint8)
            yield done, rows

    seen = []
    export_module = sys.modules["ppdp_gui.engine.pipeline.export"]
    monkeypatch.setattr(export_module, "plain_sheet",
                        lambda path: seen.append(xlsx_sheet.plain_sheet(path)) or seen[-1])
    monkeypatch.setattr(xlsx_stream, "sheet_rows", planted)
    with pytest.raises(CheckError, match="does not keep the release's promise"):
        export(published, tmp_path / "release.xlsx")
    assert seen and seen[0] is not None and "999" in seen[0].frame().iloc[:, 0].tolist()  # read by the array reader
    assert not (tmp_path / "release.xlsx").exists()


def test_the_read_back_by_codes_is_the_read_back_by_calamine(tmp_path, monkeypatch):
    """The export types the array reader's codes directly (reader.dataset_from_columns): the frame it checks is
    the one the general reader's texts give, column for column."""
    import sys

    from ppdp_gui.engine.data.writer import stage_table
    from ppdp_gui.engine.pipeline.export import read_back

    frame = tricky()
    frame["real"] = frame["real"].where(np.isfinite(frame["real"]), 0.0)  # the export refuses infinities
    frame["spaced"] = [" a", "a", "a ", "", "b", " ", "b", "1", "01", "1.0", "=x"]  # stripped, merged, neutralised
    staged = stage_table(frame, tmp_path / "release.xlsx")
    try:
        fast = read_back(staged, frame.columns)
        monkeypatch.setattr(sys.modules["ppdp_gui.engine.pipeline.export"], "plain_sheet", lambda path: None)
        general = read_back(staged, frame.columns)
    finally:
        staged.discard()
    _same(fast, general)
    assert [str(t) for t in fast.dtypes] == [str(t) for t in general.dtypes]
