"""Read back a sheet this app wrote, by whole arrays: the publish path's check of an XLSX on its written bytes.

Why: the general cell reader (calamine, data/xlsx_stream.py) parses every cell into a Python object and the
texts are then rebuilt per cell, three quarters of an XLSX export's time. The sheets data/xlsx_stream.py writes
have one plain shape — one worksheet, rows without attributes, cells `<c/>` (empty), `<c><v>number</v></c>`,
`<c t="s"><v>index</v></c>` (shared text) or `<c t="b"><v>0|1</v></c>` — so they can be read with numpy over
the decompressed bytes: the position of every `<` once, then every cell's kind and value by fixed offsets.

This reader shares no code with the writer and is strict: every byte of the sheet data must be one of those
tokens in that order (the positions of each cell's `<` tokens are checked against where the cell's kind puts
them, a row must hold as many cells as the header, a value must be a decimal number, a shared-string index in
range, a boolean 0 or 1). Anything else — a workbook from another program, a damaged file — returns None and the
caller reads the file with the general reader instead, so this is only ever a faster way to the same texts.
The texts follow the reader's rule (data/xlsx_stream.py `_cell_text`): a whole number below 2^53 without '.0',
other numbers as Python prints them, booleans 'True'/'False', shared text with Excel's `_xHHHH_` escapes undone,
an empty cell ''. Each distinct value of a column is turned into text once.
"""

from __future__ import annotations

import re
import zipfile
import zlib
from pathlib import Path
from xml.etree import ElementTree

import numpy as np
import pandas as pd
import pyarrow as pa

from ppdp_gui.engine.data.coltypes import str_array

SHEET = "xl/worksheets/sheet1.xml"
STRINGS = "xl/sharedStrings.xml"
CHUNK_BYTES = 1 << 25  # the sheet data is read in pieces of about this size, cut at row ends
_NS = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_SPACE = "{http://www.w3.org/XML/1998/namespace}space"
_NUMBER = re.compile(rb"-?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")
_UNESCAPE = re.compile(r"_x([0-9A-Fa-f]{4})_")
_EXACT = 2 ** 53
# kinds of cell, by the byte after "<c"
_EMPTY, _NUM, _TYPED = ord("/"), ord(">"), ord(" ")


class _NotPlain(Exception):
    """The sheet is not in the plain shape this reader takes: the caller uses the general reader."""


def read_plain_sheet(path) -> pd.DataFrame | None:
    """The sheet of a workbook written by data/xlsx_stream.py as text columns (first row: the names), or None
    when the file is not in that plain shape (then read it with `read_xlsx_text`)."""
    try:
        with zipfile.ZipFile(Path(path)) as book:
            sheet, strings = _parts(book)
            texts = _shared_strings(strings)
            return _sheet_frame(sheet, texts)
    except (_NotPlain, zipfile.BadZipFile, zlib.error, ElementTree.ParseError, KeyError, ValueError, OSError,
            EOFError, UnicodeDecodeError):
        return None


def _parts(book: zipfile.ZipFile) -> tuple[bytes, bytes]:
    """The one worksheet's XML and the shared strings' XML; _NotPlain unless the workbook has exactly one sheet,
    the one this module reads."""
    workbook = book.read("xl/workbook.xml")
    rels = book.read("xl/_rels/workbook.xml.rels")
    if workbook.count(b"<sheet ") != 1 or rels.count(b'Target="worksheets/sheet1.xml"') != 1:
        raise _NotPlain
    if sum(n.startswith("xl/worksheets/") for n in book.namelist()) != 1:
        raise _NotPlain
    return book.read(SHEET), book.read(STRINGS) if STRINGS in book.namelist() else b""


def _shared_strings(xml: bytes) -> list[str]:
    """Each `<si>` holding one plain `<t>` (rich text or phonetic runs: _NotPlain), Excel's escapes undone."""
    if not xml:
        return []
    root = ElementTree.fromstring(xml)
    out = []
    for si in root:
        if si.tag != _NS + "si" or len(si) != 1 or si.text or si[0].tag != _NS + "t" or len(si[0]):
            raise _NotPlain
        if set(si[0].attrib) - {_SPACE}:
            raise _NotPlain
        text = si[0].text or ""
        out.append(_UNESCAPE.sub(lambda m: chr(int(m.group(1), 16)), text) if "_x" in text else text)
    return out


def _sheet_frame(xml: bytes, strings: list[str]) -> pd.DataFrame:
    start, end = xml.find(b"<sheetData>"), xml.rfind(b"</sheetData>")
    if start < 0 or end < start or xml.count(b"<sheetData") != 1:
        raise _NotPlain
    start += len(b"<sheetData>")
    if not xml.startswith(b"<row>", start) or xml[end:] != b"</sheetData></worksheet>":
        raise _NotPlain
    first = xml.index(b"</row>", start) + len(b"</row>")
    header = _Chunk(xml[start:first], None)
    width = header.width
    columns = [_Column() for _ in range(width)]
    pos = first
    while pos < end:
        stop = xml.find(b"</row>", min(pos + CHUNK_BYTES, end - 6))
        stop = end if stop < 0 or stop >= end else stop + len(b"</row>")
        chunk = _Chunk(xml[pos:stop], width)
        for j, column in enumerate(columns):
            column.add(*chunk.column(j))
        pos = stop
    names = [_texts(key, strings) for key in header.column_keys()]
    data = {j: column.series(strings) for j, column in enumerate(columns)}
    frame = pd.DataFrame(data, copy=False)
    frame.columns = names
    return frame


class _Chunk:
    """Whole rows of sheet XML, checked token by token; each cell's kind byte and value span."""

    def __init__(self, data: bytes, width: int | None):
        u = np.frombuffer(data, dtype=np.uint8)
        self.u = u
        if len(u) < 11:
            raise _NotPlain
        # the 8 bytes starting at every position, as one little-endian number (a view, no copy): a token of up to
        # 8 bytes is checked, and a value's end found, with one gather per cell
        padded = np.frombuffer(data + b"\0" * 8, dtype=np.uint8)
        self.words = np.ndarray((len(u),), dtype="<u8", buffer=padded, strides=(1,))
        w = self.words
        cells = _find(u, b"<c")  # `<c>`, `<c ` or `<c/>`: `</c>` starts with `</`
        if width is None:  # the header: one row
            width = len(cells)
        if width == 0 or len(cells) % width:
            raise _NotPlain
        n_rows = len(cells) // width
        grid = cells.reshape(n_rows, width)
        kind = u[np.minimum(cells + 2, len(u) - 1)]
        empty, number, typed = kind == _EMPTY, kind == _NUM, kind == _TYPED
        if not np.all(empty | number | typed):
            raise _NotPlain
        _expect(w, cells[empty], b"<c/>")
        _expect(w, cells[number], b"<c><v>")
        tag = np.full(len(cells), ord("e"), dtype=np.uint8)
        tag[number] = ord("n")
        if typed.any():
            t = cells[typed]
            _expect(w, t, b'<c t="')
            _expect(w, t + 7, b'"><v>')
            letter = u[t + 6]
            if not np.all((letter == ord("s")) | (letter == ord("b"))):
                raise _NotPlain
            tag[typed] = letter
        value = ~empty
        starts = np.where(typed, cells + 12, cells + 6)
        stops = np.zeros(len(cells), dtype=np.int64)
        stops[value] = _next_lt(w, starts[value])  # a value ends at the next '<': its `</v></c>`
        _expect(w, stops[value], b"</v></c>")
        # rows: `<row>` just before each row's first cell, `</row>` just after its last, one after the other
        ends = np.where(empty, cells + 4, stops + 8).reshape(n_rows, width)
        rows, row_ends = grid[:, 0] - 5, ends[:, -1]
        _expect(w, rows, b"<row>")
        _expect(w, row_ends, b"</row>")
        if rows[0] != 0 or row_ends[-1] + 6 != len(u) or np.any(rows[1:] != row_ends[:-1] + 6):
            raise _NotPlain
        # each cell ends where the next begins …
        if np.any(ends[:, :-1] != grid[:, 1:]):
            raise _NotPlain
        # … and every '<' is one of these tokens: a row's two, one per empty cell, four per other cell
        if np.count_nonzero(u == ord("<")) != 2 * n_rows + len(cells) + 3 * int(value.sum()):
            raise _NotPlain
        self.width, self.n_rows = width, n_rows
        self.tag = tag.reshape(n_rows, width)
        self.starts = np.where(value, starts, 0).reshape(n_rows, width)
        self.lengths = np.where(value, stops - starts, 0).reshape(n_rows, width)

    def column(self, j: int) -> tuple[np.ndarray, list[bytes]]:
        """(code of each row, the distinct keys: the kind byte then the value's bytes) of column j."""
        tag, starts, lengths = self.tag[:, j], self.starts[:, j], self.lengths[:, j]
        longest = int(lengths.max()) if len(lengths) else 0
        # the key's bytes packed into 64-bit words, one byte position at a time (1-D gathers only)
        words = [tag.astype(np.uint64)]
        for i in range(longest):
            byte = self.u[np.minimum(starts + i, len(self.u) - 1)].astype(np.uint64)
            byte[lengths <= i] = 0
            shift = 8 * ((i + 1) % 8)
            if shift == 0:
                words.append(byte)
            else:
                words[-1] |= byte << np.uint64(shift)
        codes, uniq = pd.factorize(words[0])
        for word in words[1:]:
            more, more_uniq = pd.factorize(word)
            codes, uniq = pd.factorize(codes.astype(np.int64) * (len(more_uniq) + 1) + more)
        first = np.empty(len(uniq), dtype=np.int64)
        first[codes[::-1]] = np.arange(len(codes) - 1, -1, -1)
        keys = []
        for i in first.tolist():
            at, size = int(starts[i]), int(lengths[i])
            keys.append(bytes([int(tag[i])]) + self.u[at:at + size].tobytes())
        return codes, keys

    def column_keys(self) -> list[bytes]:
        """The keys of the one row of a header chunk, in column order."""
        return [self.column(j)[1][0] for j in range(self.width)]


class _Column:
    """One column's codes over every chunk, against one list of distinct keys."""

    def __init__(self):
        self.index: dict[bytes, int] = {}
        self.parts: list[np.ndarray] = []

    def add(self, codes: np.ndarray, keys: list[bytes]) -> None:
        mapping = np.array([self.index.setdefault(k, len(self.index)) for k in keys], dtype=np.int32)
        self.parts.append(mapping[codes] if len(codes) else codes.astype(np.int32))  # 4 bytes a cell

    def series(self, strings: list[str]) -> pd.Series:
        codes = np.concatenate(self.parts) if self.parts else np.zeros(0, dtype=np.int32)
        texts = pa.array([_texts(k, strings) for k in self.index], type=pa.large_string())
        return pd.Series(str_array(texts.take(pa.array(codes))), copy=False)


def _texts(key: bytes, strings: list[str]) -> str:
    """The reader's text of one distinct cell."""
    tag, value = key[:1], key[1:]
    if tag == b"e":
        return ""
    if tag == b"s":
        if not value.isdigit() or int(value) >= len(strings):
            raise _NotPlain
        return strings[int(value)]
    if tag == b"b":
        if value not in (b"0", b"1"):
            raise _NotPlain
        return str(value == b"1")
    if not _NUMBER.fullmatch(value):
        raise _NotPlain
    number = float(value)
    if number.is_integer() and abs(number) < _EXACT:
        return str(int(number))
    return str(number)


def _find(u: np.ndarray, token: bytes) -> np.ndarray:
    """Positions where the two bytes `token` begin."""
    return np.flatnonzero((u[:-1] == token[0]) & (u[1:] == token[1]))


def _next_lt(words: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """For each start, the position of the first '<' at or after it: 8 bytes at a time (values are short)."""
    ones, highs, lts = np.uint64(0x0101010101010101), np.uint64(0x8080808080808080), np.uint64(0x3C3C3C3C3C3C3C3C)
    stops = starts.copy()
    todo = None  # every start, the first time round
    while True:
        at = stops if todo is None else stops[todo]
        if len(at) == 0:
            return stops
        if at.max() >= len(words):
            raise _NotPlain
        y = words[at] ^ lts  # a '<' byte is now 0
        zero = (y - ones) & ~y & highs  # the lowest 0 byte's high bit is exact
        # the lowest set bit, 2**(8k+7) for the k-th byte (or 0: no '<' in these 8 bytes), to k by its exponent
        step = (np.frexp((zero & (~zero + np.uint64(1))).astype(np.float64))[1] - 8) // 8
        missing = zero == 0
        step[missing] = 8
        if todo is None:
            stops += step
            todo = np.flatnonzero(missing)
        else:
            stops[todo] += step
            todo = todo[missing]


def _expect(words: np.ndarray, positions: np.ndarray, token: bytes) -> None:
    """_NotPlain unless `token` is at every one of `positions` (8 bytes per gather)."""
    if not len(positions):
        return
    if positions.max() + len(token) > len(words) or positions.min() < 0:
        raise _NotPlain
    for at in range(0, len(token), 8):
        part = token[at:at + 8]
        mask = np.uint64((1 << (8 * len(part))) - 1)
        if not np.all((words[positions + at] & mask) == np.uint64(int.from_bytes(part, "little"))):
            raise _NotPlain
