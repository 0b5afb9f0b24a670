"""Fast XLSX for releases: a streaming writer built from whole columns, and a fast cell reader for read-back.

Why not openpyxl: it builds one Python object per cell, so a 100,000 x 50 release took about a minute to write and
another to read back (the publish path re-reads every file it writes). xlsxwriter in constant-memory mode still
calls Python code per cell (about 30 s here). This writer works per *distinct value*: each column is factorised,
the XML of each distinct value is made once, and the rows are put together as bytes by NumPy
(data/xlsx_rows.py), so most of the cost is the compression (deflate level 2, about 0.2 s per 100 MB of XML).
Cells are written by their pandas type:

- numbers as numbers (whole numbers beyond 2^53, which Excel would round, and ±infinity as text, so that the file
  keeps the exact value); booleans as booleans; missing values as empty cells;
- everything else as shared-string text: strings as they are (the caller has neutralised formulas already),
  dates and times as the text the reader shows for them ('2020-01-02', '2020-01-02 10:30:00'), other objects as
  `str(value)`. Text cells are never formulas, whatever they start with.

Text is escaped for XML (& < > and carriage returns, which XML would otherwise turn into line feeds) and for
Excel's own `_xHHHH_` escapes (a literal '_x0041_' is stored as '_x005F_x0041_' so that Excel shows it verbatim).
Characters XML cannot hold (most control characters) and texts longer than Excel's 32,767 characters are refused
with a message naming the column and row. The file is deterministic: the same table gives the same bytes (zip
entries carry a fixed date), so two exports of one release have one sha256.

The reader uses python-calamine (a compiled XLSX parser that shares no code with this writer) when it is
installed, else openpyxl, and turns cells into text by the reader's rule (a whole number stored as 39.0 reads
'39'; dates as ISO text).
"""

from __future__ import annotations

import datetime as _dt
import re
import zipfile
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd
import pyarrow as pa

from ppdp_gui.engine.data.csv_writer import factorize_objects
from ppdp_gui.engine.data.xlsx_rows import column_cells, sheet_rows
from ppdp_gui.engine.errors import DataError

SHEET_NAME = "release"
EXCEL_MAX_TEXT = 32_767
EXACT_INT = 2 ** 53
ZIP_LEVEL = 2  # deflate level: on this repetitive XML zlib's level 2 is as fast as 1, a fifth smaller (6: 3x slower)
CHUNK_ROWS = 20_000
SMALL_RANGE = 1 << 16  # integers spanning fewer values are coded by subtraction, not hashed
_FIXED_TIME = (1980, 1, 1, 0, 0, 0)
_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_EXCEL_ESCAPE = re.compile(r"_(x[0-9A-Fa-f]{4}_)")
_XML_ESCAPE = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", "\r": "&#13;"})
_MAIN_NS = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_REL_NS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_PKG_REL_NS = "http://schemas.openxmlformats.org/package/2006/relationships"
_HEAD = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'

_CONTENT_TYPES = _HEAD + (
    '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
    '<Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/xl/workbook.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
    '<Override PartName="/xl/worksheets/sheet1.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>'
    '<Override PartName="/xl/styles.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/>'
    '<Override PartName="/xl/sharedStrings.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/>'
    "</Types>")
_ROOT_RELS = _HEAD + (
    f'<Relationships xmlns="{_PKG_REL_NS}">'
    f'<Relationship Id="rId1" Type="{_REL_NS}/officeDocument" Target="xl/workbook.xml"/>'
    "</Relationships>")
_BOOK_RELS = _HEAD + (
    f'<Relationships xmlns="{_PKG_REL_NS}">'
    f'<Relationship Id="rId1" Type="{_REL_NS}/worksheet" Target="worksheets/sheet1.xml"/>'
    f'<Relationship Id="rId2" Type="{_REL_NS}/styles" Target="styles.xml"/>'
    f'<Relationship Id="rId3" Type="{_REL_NS}/sharedStrings" Target="sharedStrings.xml"/>'
    "</Relationships>")
_STYLES = _HEAD + (
    f'<styleSheet xmlns="{_MAIN_NS}">'
    '<fonts count="1"><font><sz val="11"/><name val="Calibri"/><family val="2"/></font></fonts>'
    '<fills count="2"><fill><patternFill patternType="none"/></fill>'
    '<fill><patternFill patternType="gray125"/></fill></fills>'
    '<borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders>'
    '<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>'
    '<cellXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/></cellXfs>'
    '<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles>'
    "</styleSheet>")


# ---- writing -----------------------------------------------------------------------------------------------
def column_letters(index: int) -> str:
    """0 -> 'A', 25 -> 'Z', 26 -> 'AA' (Excel's column names)."""
    out = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        out = chr(65 + rest) + out
    return out


class _Strings:
    """The shared-string table: each distinct text once, in order of first use."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}

    def cell(self, text: str) -> str:
        i = self.index.get(text)
        if i is None:
            i = self.index[text] = len(self.index)
        return f' t="s"><v>{i}</v></c>'

    def xml_parts(self):
        yield _HEAD + f'<sst xmlns="{_MAIN_NS}" uniqueCount="{len(self.index)}">'
        for text in self.index:
            body = _EXCEL_ESCAPE.sub(r"_x005F_\1", text).translate(_XML_ESCAPE)
            keep = text[:1].isspace() or text[-1:].isspace() or "\n" in text or "\t" in text or "\r" in text
            yield f'<si><t xml:space="preserve">{body}</t></si>' if keep else f"<si><t>{body}</t></si>"
        yield "</sst>"


def excel_text(value) -> str:
    """A date or time as the reader shows it: ISO text, a midnight time left out."""
    text = value.isoformat(sep=" ") if isinstance(value, _dt.datetime) else value.isoformat()
    return text[:-9] if text.endswith(" 00:00:00") else text


def _value_tail(value, strings: _Strings) -> str:
    """The end of one cell's XML (after `<c`) for one distinct value."""
    if value is None or value is pd.NA or value is pd.NaT:
        return '/>'
    if isinstance(value, (bool, np.bool_)):
        return f' t="b"><v>{int(value)}</v></c>'
    if isinstance(value, (int, np.integer)):
        v = int(value)
        return f'><v>{v}</v></c>' if abs(v) < EXACT_INT else strings.cell(str(v))
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if v != v:
            return '/>'
        if v in (float("inf"), float("-inf")):
            return strings.cell(str(v))
        return f'><v>{v!r}</v></c>'
    if isinstance(value, str):
        return strings.cell(value)
    if isinstance(value, (_dt.date, _dt.time)):
        return strings.cell(excel_text(value))
    return strings.cell(str(value))


def _check_text(name: str, values, codes: np.ndarray) -> None:
    """Refuse texts XML or Excel cannot hold, naming the column and the first row (1 = first data row)."""
    for i, v in enumerate(values):
        if not isinstance(v, str):
            continue
        problem = None
        if _ILLEGAL.search(v):
            problem = "holds a control character that Excel cannot store"
        elif len(v) > EXCEL_MAX_TEXT:
            problem = f"holds a text longer than Excel's {EXCEL_MAX_TEXT:,} characters per cell"
        if problem:
            row = int(np.flatnonzero(codes == i)[0]) + 1 if codes is not None else 0
            where = f"row {row}" if row else "its name"
            raise DataError(f"column {name!r} {where} {problem}; export CSV or Parquet instead", column=name)


def factorize_exact(values: np.ndarray) -> tuple[np.ndarray, list]:
    """pd.factorize of an object array that keeps 1, 1.0 and True apart (they are equal to Python, not to a
    reader); missing values get code -1."""
    kinds, types = pd.factorize(np.fromiter(map(type, values), dtype=object, count=len(values)))
    if len(types) <= 1:
        codes, uniq = pd.factorize(values, use_na_sentinel=True)
        return codes, list(uniq)
    codes = np.full(len(values), -1, dtype=np.int64)
    uniques: list = []
    for k in range(len(types)):
        rows = np.flatnonzero(kinds == k)
        sub, uniq = pd.factorize(values[rows], use_na_sentinel=True)
        codes[rows] = np.where(sub >= 0, sub + len(uniques), -1)
        uniques += list(uniq)
    return codes, uniques


def _coded(col: pd.Series) -> tuple[np.ndarray, list]:
    """(code of each row, -1 for a missing value; the distinct values), without hashing every cell where the
    column allows: categories as they are, integers over a small range by their distance from the least, text
    objects first by identity (csv_writer.factorize_objects)."""
    dtype = col.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        return col.cat.codes.to_numpy().astype(np.int64), list(col.cat.categories)
    if dtype == object:
        return factorize_objects(col.to_numpy(), factorize_exact)
    if isinstance(dtype, np.dtype) and dtype.kind in "iu" and len(col):
        values = col.to_numpy()
        lo, hi = int(values.min()), int(values.max())
        if hi - lo < SMALL_RANGE and max(-lo, hi) < EXACT_INT:
            offset = values.astype(np.int64) - lo  # exact: every value is below 2^53
            used = np.flatnonzero(np.bincount(offset, minlength=hi - lo + 1))
            code_of = np.zeros(hi - lo + 1, dtype=np.int64)
            code_of[used] = np.arange(len(used))
            return code_of[offset], (used + lo).tolist()
    codes, uniques = pd.factorize(col, use_na_sentinel=True)
    return codes, list(uniques)


def _column_tails(col: pd.Series, strings: _Strings) -> tuple[np.ndarray, np.ndarray]:
    """(code of each row, cell-XML tail of each code; the last one is the empty cell for missing values)."""
    codes, uniques = _coded(col)
    _check_text(str(col.name), uniques, codes)
    tails = np.empty(len(uniques) + 1, dtype=object)
    tails[:-1] = [_value_tail(v, strings) for v in uniques]
    tails[-1] = '/>'
    return codes, tails


def write_xlsx(frame: pd.DataFrame, path, *, sheet_name: str = SHEET_NAME,
               progress: Callable[[float], None] | None = None, chunk_rows: int = CHUNK_ROWS) -> None:
    """Write `frame` (header row, then one row per record) as a one-sheet workbook at `path`.

    `progress(fraction)` is called after each chunk of rows; an exception it raises (a cancel) stops the write.
    """
    names = [str(c) for c in frame.columns]
    strings = _Strings()
    for name in names:
        _check_text(name, [name], None)
    header_tails = [strings.cell(name) for name in names]
    columns = []
    for pos in range(frame.shape[1]):
        col = frame.iloc[:, pos]
        col.name = names[pos]
        columns.append(_column_tails(col, strings))
    n = len(frame)
    last = f"{column_letters(max(len(names), 1) - 1)}{n + 1}"
    # ZIP64 only when the sheet could pass 2 GiB: Excel has refused files with needless ZIP64 records
    big = (n + 1) * sum(20 + max((len(t) for t in tails), default=2) for _codes, tails in columns) > 1_500_000_000
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as book:
        _put(book, "[Content_Types].xml", _CONTENT_TYPES)
        _put(book, "_rels/.rels", _ROOT_RELS)
        _put(book, "xl/workbook.xml", _HEAD + f'<workbook xmlns="{_MAIN_NS}" xmlns:r="{_REL_NS}"><sheets>'
             f'<sheet name="{sheet_name}" sheetId="1" r:id="rId1"/></sheets></workbook>')
        _put(book, "xl/_rels/workbook.xml.rels", _BOOK_RELS)
        _put(book, "xl/styles.xml", _STYLES)
        with book.open(_entry("xl/worksheets/sheet1.xml"), "w", force_zip64=big) as sheet:
            sheet.write((_HEAD + f'<worksheet xmlns="{_MAIN_NS}"><dimension ref="A1:{last}"/>'
                         '<sheetViews><sheetView workbookViewId="0"><pane ySplit="1" topLeftCell="A2" '
                         'activePane="bottomLeft" state="frozen"/></sheetView></sheetViews><sheetData>'
                         '<row>' + "".join("<c" + t for t in header_tails)
                         + "</row>").encode("utf-8"))
            for done, rows in _placed_rows(columns, n, max(1, chunk_rows)):
                sheet.write(memoryview(rows))
                if progress is not None:
                    progress(done / n)
            sheet.write(b"</sheetData></worksheet>")
        with book.open(_entry("xl/sharedStrings.xml"), "w", force_zip64=big) as sst:
            for part in strings.xml_parts():
                sst.write(part.encode("utf-8"))
    if progress is not None and n == 0:
        progress(1.0)


def _placed_rows(columns, n: int, rows: int):
    """(rows done, bytes) of the sheet's rows, placed by NumPy (data/xlsx_rows.py). Rows and cells carry no
    reference (`r`): optional in the format, they follow from the order, and leaving them out makes the sheet a
    third smaller, so faster to compress and to read back."""
    if not columns:  # a table without columns: empty rows
        for lo in range(0, n, rows):
            yield min(n, lo + rows), np.frombuffer(b"<row></row>" * (min(n, lo + rows) - lo), np.uint8)
        return
    last = len(columns) - 1
    cells = [pa.array([("<row>" if j == 0 else "") + "<c" + t + ("</row>" if j == last else "") for t in tails],
                      pa.large_binary()) for j, (_codes, tails) in enumerate(columns)]
    yield from sheet_rows([codes for codes, _tails in columns], column_cells(cells), rows)


def _entry(name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=_FIXED_TIME)
    info.compress_type = zipfile.ZIP_DEFLATED
    # the attribute is public from Python 3.13 on (compress_level), private before
    setattr(info, "compress_level" if hasattr(info, "compress_level") else "_compresslevel", ZIP_LEVEL)
    return info


def _put(book: zipfile.ZipFile, name: str, text: str) -> None:
    book.writestr(_entry(name), text.encode("utf-8"))


# ---- reading -----------------------------------------------------------------------------------------------
def _cell_text(value) -> str | None:
    """One cell as the reader's text: None for an empty cell, whole floats without '.0', dates as ISO text."""
    if value is None:
        return None
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float) and value.is_integer() and abs(value) < EXACT_INT:
        return str(int(value))
    if isinstance(value, (_dt.date, _dt.time)):
        return excel_text(value)
    return str(value)


def column_texts(values) -> np.ndarray:
    """`_cell_text` of every cell, computed once per distinct (type, value): 1, 1.0 and True stay apart."""
    if isinstance(values, np.ndarray) and values.dtype == object:
        arr = values
    else:
        arr = np.empty(len(values), dtype=object)
        arr[:] = values
    if len(arr) and pd.api.types.infer_dtype(arr, skipna=False) == "string":
        return arr  # text reads as itself: no conversion (most columns of a release); a C-level type check
    out = np.empty(len(arr), dtype=object)
    kinds, types = pd.factorize(np.fromiter(map(type, arr), dtype=object, count=len(arr))) if len(arr) else ([], [])
    if len(types) == 1 and types[0] is str:
        return arr
    for k in np.unique(kinds):
        rows = np.flatnonzero(kinds == k)
        codes, uniques = pd.factorize(arr[rows], use_na_sentinel=False)
        texts = np.empty(len(uniques), dtype=object)
        texts[:] = [_cell_text(v) for v in uniques]
        out[rows] = texts[codes]
    return out


def read_xlsx_text(path) -> pd.DataFrame:
    """The first sheet of a workbook as text: the first row names the columns, every further row is a record.
    Empty cells read as ''; empty rows inside the table are kept, but the parser ends the sheet at its last
    non-empty row, so a table whose last rows are entirely empty reads back shorter (the export then refuses it;
    no mechanism releases such rows)."""
    rows = _sheet_rows(Path(path))
    if not rows:
        raise DataError("the sheet is empty", path=str(path), line=1)
    lengths = set(map(len, rows))
    width = max(lengths)
    if len(lengths) > 1:  # openpyxl leaves short rows short; calamine's are all as wide as the sheet
        rows = [list(r) + [None] * (width - len(r)) for r in rows]
    if not width:
        return pd.DataFrame()
    grid = np.empty((len(rows), width), dtype=object)  # one C-level copy; columns are then strided views
    grid[:] = rows
    del rows
    names = [(_cell_text(v) or "") for v in grid[0]]
    data = {}
    for j in range(width):
        texts = column_texts(np.ascontiguousarray(grid[1:, j]))
        texts[pd.isna(texts)] = ""
        data[j] = texts
    frame = pd.DataFrame(data, copy=False)
    frame.columns = names
    return frame


def _sheet_rows(path: Path) -> list:
    try:
        from python_calamine import CalamineWorkbook
    except ImportError:  # pragma: no cover - calamine is a dependency; openpyxl is the slow fallback
        CalamineWorkbook = None
    try:
        if CalamineWorkbook is not None:
            book = CalamineWorkbook.from_path(str(path))
            return book.get_sheet_by_index(0).to_python(skip_empty_area=False)
        import openpyxl
        book = openpyxl.load_workbook(path, read_only=True, data_only=True)
        try:
            return [list(r) for r in book.worksheets[0].iter_rows(values_only=True)]
        finally:
            book.close()
    except DataError:
        raise
    except Exception as exc:  # both libraries raise many types for damaged files
        raise DataError(f"cannot be read as an Excel workbook ({type(exc).__name__}: {exc})",
                        path=str(path)) from None
