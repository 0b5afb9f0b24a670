"""Read back a sheet this app wrote, by whole arrays: the publish path's check of an XLSX on its written bytes.

Why: the general cell reader (calamine, data/xlsx_stream.py) parses every cell into a Python object and the
texts are then rebuilt per cell, three quarters of an XLSX export's time. The sheets data/xlsx_stream.py writes
have one plain shape — one worksheet, rows without attributes, cells `<c/>` (empty), `<c><v>number</v></c>`,
`<c t="s"><v>index</v></c>` (shared text) or `<c t="b"><v>0|1</v></c>` — so they can be read with NumPy over
the decompressed bytes, a few MB at a time: the cells of whole rows are walked column by column
(data/xlsx_walk.py), each distinct (kind, value) is turned into text once, and the sheet comes out as one code
per cell into the list of distinct texts.

This reader shares no code with the writer and is strict: every byte of the sheet data must be one of those
tokens in that order (each row holds as many cells as the header, each cell ends where the next begins), a value
must be a decimal number, a shared-string index in range, a boolean 0 or 1. Anything else — a workbook from
another program, a damaged file — returns None and the caller reads the file with the general reader instead,
so this is only ever a faster way to the same texts (tests/engine/test_xlsx_sheet.py changes bytes at random
and compares). The texts follow the reader's rule (data/xlsx_stream.py `_cell_text`): a whole number below 2^53
without '.0', other numbers as Python prints them, booleans 'True'/'False', shared text with Excel's `_xHHHH_`
escapes undone, an empty cell ''.
"""

from __future__ import annotations

import dataclasses
import re
import zipfile
import zlib
from pathlib import Path
from xml.etree import ElementTree

import numpy as np
import pandas as pd
import pyarrow as pa

from ppdp_gui.engine.data.coltypes import str_array
from ppdp_gui.engine.data.xlsx_walk import PADDING, Block, NotPlain

SHEET = "xl/worksheets/sheet1.xml"
STRINGS = "xl/sharedStrings.xml"
CHUNK_BYTES = 1 << 22  # the sheet data is read in pieces of about this size, cut at row ends (small enough
# that a piece's rows stay in the processor's cache while their cells are walked)
MIN_ROWS, MAX_PIECE = 512, 1 << 28
_NS = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_SPACE = "{http://www.w3.org/XML/1998/namespace}space"
_NUMBER = re.compile(rb"-?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")
_UNESCAPE = re.compile(r"_x([0-9A-Fa-f]{4})_")
_EXACT = 2 ** 53


@dataclasses.dataclass
class PlainSheet:
    """A sheet read by this module: the header's texts, and every cell as a code into `texts` (each distinct text
    once): `codes[j, i]` is row i of column j."""

    names: list[str]
    codes: np.ndarray
    texts: pa.Array

    def column(self, j: int) -> pa.DictionaryArray:
        return pa.DictionaryArray.from_arrays(pa.array(self.codes[j]), self.texts)

    def frame(self) -> pd.DataFrame:
        """The cells as text columns (pandas' "str" type)."""
        n = self.codes.shape[1]
        flat = self.texts.take(pa.array(self.codes.reshape(-1)))
        frame = pd.DataFrame({j: pd.Series(str_array(flat.slice(j * n, n)), copy=False)
                              for j in range(len(self.names))}, copy=False)
        frame.columns = self.names
        return frame


def read_plain_sheet(path) -> pd.DataFrame | None:
    """The sheet of a workbook written by data/xlsx_stream.py as text columns (first row: the names), or None
    when the file is not in that plain shape (then read it with `read_xlsx_text`)."""
    sheet = plain_sheet(path)
    return None if sheet is None else sheet.frame()


def plain_sheet(path) -> PlainSheet | None:
    """`read_plain_sheet` as codes and distinct texts."""
    try:
        with zipfile.ZipFile(Path(path)) as book:
            strings = _shared_strings(_strings_part(book))
            with book.open(SHEET) as stream:
                return _sheet(stream, strings)
    except (NotPlain, zipfile.BadZipFile, zlib.error, ElementTree.ParseError, KeyError, ValueError, OSError,
            EOFError, UnicodeDecodeError):
        return None


def _strings_part(book: zipfile.ZipFile) -> bytes:
    """The shared strings' XML; NotPlain unless the workbook has exactly one sheet, the one this module reads."""
    workbook = book.read("xl/workbook.xml")
    rels = book.read("xl/_rels/workbook.xml.rels")
    if workbook.count(b"<sheet ") != 1 or rels.count(b'Target="worksheets/sheet1.xml"') != 1:
        raise NotPlain
    if sum(n.startswith("xl/worksheets/") for n in book.namelist()) != 1:
        raise NotPlain
    return book.read(STRINGS) if STRINGS in book.namelist() else b""


def _shared_strings(xml: bytes) -> list[str]:
    """Each `<si>` holding one plain `<t>` (rich text or phonetic runs: NotPlain), Excel's escapes undone."""
    if not xml:
        return []
    root = ElementTree.fromstring(xml)
    out = []
    for si in root:
        if si.tag != _NS + "si" or len(si) != 1 or si.text or si[0].tag != _NS + "t" or len(si[0]):
            raise NotPlain
        if set(si[0].attrib) - {_SPACE}:
            raise NotPlain
        text = si[0].text or ""
        out.append(_UNESCAPE.sub(lambda m: chr(int(m.group(1), 16)), text) if "_x" in text else text)
    return out


def _sheet(stream, strings: list[str]) -> PlainSheet:
    """The sheet XML read in pieces of about CHUNK_BYTES, each cut after its last complete row."""
    buffer = b""
    while True:  # the part before the rows: anything, once
        block = stream.read(CHUNK_BYTES)
        buffer += block
        at = buffer.find(b"<sheetData>")
        if at >= 0 or not block:
            break
    if at < 0 or buffer.find(b"<sheetData") != at:
        raise NotPlain
    buffer = buffer[at + len(b"<sheetData>"):]
    while buffer.find(b"</row>") < 0:
        block = stream.read(CHUNK_BYTES)
        if not block:
            raise NotPlain
        buffer += block
    end = buffer.index(b"</row>") + len(b"</row>")
    header = Block(buffer[:end] + PADDING, end, None)
    tail = buffer[end:]
    # pieces of at least MIN_ROWS rows (as long as the header's): NumPy's cost per call is paid per column and piece
    piece = min(max(CHUNK_BYTES, MIN_ROWS * end), MAX_PIECE)
    codes = _Codes(strings)
    names = [codes.texts[i] for i in codes.of(header)[:, 0].tolist()]
    parts = []
    while True:
        block = stream.read(piece)
        buffer = b"".join((tail, block, PADDING))  # the one copy of each piece
        size = len(buffer) - len(PADDING)
        cut = buffer.rfind(b"</row>", 0, size)
        if cut >= 0:
            cut += len(b"</row>")
            parts.append(codes.of(Block(buffer, cut, header.width)))
        tail = buffer[max(cut, 0):size]
        if not block:
            break
    if tail != b"</sheetData></worksheet>":
        raise NotPlain
    matrix = np.concatenate(parts, axis=1) if parts else np.zeros((header.width, 0), dtype=np.int32)
    return PlainSheet(names, matrix, pa.array(codes.texts, pa.large_string()))


class _Codes:
    """Each distinct text read once, with its code; each block's keys turned into text codes (two keys may read
    as one text: '97' and '97.0', a text stored twice as a shared string)."""

    def __init__(self, strings: list[str]) -> None:
        self.strings = strings
        self.of_key: dict[bytes, int] = {}
        self.of_text: dict[str, int] = {}
        self.texts: list[str] = []

    def of(self, block: Block) -> np.ndarray:
        mapping = np.array([self._code(k) for k in block.keys], dtype=np.int32)
        return mapping[block.codes]

    def _code(self, key: bytes) -> int:
        code = self.of_key.get(key)
        if code is None:
            text = _texts(key, self.strings)
            code = self.of_key[key] = self.of_text.setdefault(text, len(self.of_text))
            if code == len(self.texts):
                self.texts.append(text)
        return code


def _texts(key: bytes, strings: list[str]) -> str:
    """The reader's text of one distinct cell."""
    tag, value = key[:1], key[1:]
    if tag == b"e":
        return ""
    if tag == b"s":
        if not value.isdigit() or int(value) >= len(strings):
            raise NotPlain
        return strings[int(value)]
    if tag == b"b":
        if value not in (b"0", b"1"):
            raise NotPlain
        return str(value == b"1")
    if not _NUMBER.fullmatch(value):
        raise NotPlain
    number = float(value)
    if number.is_integer() and abs(number) < _EXACT:
        return str(int(number))
    return str(number)
