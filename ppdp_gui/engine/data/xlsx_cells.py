"""The cells of one sheet's XML, scanned in blocks by Arrow string kernels (see xlsx.py for the whole reader).

The sheet XML is the one part of a workbook that can be huge, so it is never handed to an XML parser cell by
cell (expat callbacks cost ~35 µs a cell, openpyxl more): each block of XML, cut at a row end, is split into
cell fragments and every attribute and value is pulled out by Arrow kernels over the whole block, ~1-2 µs a
cell. When a cell lacks its reference (r="B7"), a slower regular-expression pass that also follows the <row>
tags takes over for that block. Values stay raw text here; xlsx.py types them.
"""

from __future__ import annotations

import html
import re
import zipfile

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ppdp_gui.engine.data.guards import check_cells
from ppdp_gui.engine.errors import DataError

EXCEL_MAX_ROW, EXCEL_MAX_COL = 1_048_576, 16_384
_NUMBER, _SHARED, _TEXT, _BOOL, _ERROR, _DATE = 0, 1, 2, 3, 4, 5
TYPES = {"n": _NUMBER, "s": _SHARED, "str": _TEXT, "inlineStr": _TEXT, "b": _BOOL, "e": _ERROR, "d": _DATE}
_RANGE = re.compile(r"^\$?([A-Za-z]{1,3})\$?([0-9]{1,7})(?::\$?([A-Za-z]{1,3})\$?([0-9]{1,7}))?$")


def col_index(letters: str) -> int:
    n = 0
    for ch in letters.upper():
        n = n * 26 + (ord(ch) - 64)
    return n


def col_letters(index: int) -> str:
    out = ""
    while index:
        index, rem = divmod(index - 1, 26)
        out = chr(65 + rem) + out
    return out


# one match per <row ...> tag (group 1) or cell (attributes, "/" if empty, content): a C loop per block of XML
_SHEET_ITEM = re.compile(rb"(<(?:[A-Za-z_][\w.-]*:)?row\b[^>]*>)|<(?:[A-Za-z_][\w.-]*:)?c\b([^>]*?)(?:(/)>|>(.*?)"
                         rb"</(?:[A-Za-z_][\w.-]*:)?c>)", re.DOTALL)
_MERGE = re.compile(rb"<(?:[A-Za-z_][\w.-]*:)?mergeCell\b[^>]*?\bref=\"([^\"]*)\"")
_DIMENSION = re.compile(rb"<(?:[A-Za-z_][\w.-]*:)?dimension\b[^>]*?\bref=\"([^\"]*)\"")
_BLOCK = 1 << 22
_P = r"(?:[A-Za-z_][\w.-]*:)?"  # an optional namespace prefix, in Arrow (RE2) patterns


def _attr(arr: pa.Array, name: str, pattern: str = r"[^\"]*") -> pa.Array:
    """Attribute `name` of each tag's attribute text (null where absent), vectorised."""
    found = pc.extract_regex(arr, rf"(?:^|\s){name}=\"(?P<x>{pattern})\"")
    return pc.struct_field(found, [0])


def _inner(arr: pa.Array, tag: str) -> pa.Array:
    """Text of the first <tag>...</tag> inside each cell's content (null where absent; <tag/> is empty)."""
    found = pc.extract_regex(arr, rf"(?s)<{_P}{tag}(?:\s[^>]*)?(?:/>|>(?P<x>.*?)</{_P}{tag}>)")
    return pc.struct_field(found, [0])


class Cells:
    """A sheet's cells, sparse and compact: row, column, type, style and stored value per cell.

    The XML is scanned in blocks by one regular expression (C speed, ~1 µs a cell; expat callbacks cost ~35 µs)
    and every attribute and value is pulled out by Arrow kernels over the whole block."""

    def __init__(self, book, where: str) -> None:
        self.book, self.where = book, where
        self.parts: list[tuple] = []
        self.n_cells = 0
        self.formulas: list[tuple[str, str]] = []
        self.n_formulas = 0
        self.merged: list[str] = []
        self._last_row = 0

    def scan(self, name: str, what: str) -> None:
        tail = b""
        first = True
        with self.book.open(name, what) as stream:
            while True:
                try:
                    block = stream.read(_BLOCK)
                except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
                    raise DataError(f"cannot be read as an Excel workbook ({name}: {exc})", path=self.where) from None
                data = tail + block
                if first:
                    first = False
                    self._prolog(data, name)
                if block:
                    cut = data.rfind(b"</row>")
                    cut = cut + 6 if cut >= 0 else 0
                    if cut == 0 and len(data) < 8 * _BLOCK:
                        tail = data  # no complete row yet: read on (a row holds at most 16,384 cells)
                        continue
                    if cut == 0:
                        cut = len(data)
                    data, tail = data[:cut], data[cut:]
                else:
                    tail = b""
                self._block(data)
                if not block:
                    break

    def _prolog(self, data: bytes, name: str) -> None:
        head = data[:4096]
        if b"<!DOCTYPE" in head or b"<!ENTITY" in head:
            raise DataError(f"cannot be read as an Excel workbook: {name} declares a DOCTYPE (entities), which a "
                            "workbook never does", path=self.where)
        m = _DIMENSION.search(data[:1 << 16])
        if m:
            ref = _RANGE.match(m.group(1).decode("ascii", "replace"))
            if ref and ref.group(3):
                rows = int(ref.group(4)) - int(ref.group(2)) + 1
                cols = col_index(ref.group(3)) - col_index(ref.group(1)) + 1
                if rows > 0 and cols > 0:
                    check_cells(rows, cols, self.book.limits, self.where, "the sheet (by its declared dimension)")

    def _block(self, data: bytes) -> None:
        if len(self.merged) < 1000 and data.find(b"mergeCell") >= 0:
            self.merged += [m.decode("ascii", "replace") for m in _MERGE.findall(data)][:1000 - len(self.merged)]
        try:
            text = pa.array([data], pa.binary()).cast(pa.string())
        except pa.ArrowInvalid:
            raise DataError("cannot be read as an Excel workbook: the sheet holds text that is not UTF-8",
                            path=self.where) from None
        fast = self._fragments(text)
        if fast is not None:
            self._cells(*fast, None)
        else:
            self._items(data)

    @staticmethod
    def _fragments(text: pa.Array):
        """(attributes, empty, content) of every cell by Arrow splits alone, when every cell has its reference
        (what Excel, LibreOffice and the usual libraries write); None sends the block to `_items`."""
        frags = pc.list_flatten(pc.split_pattern_regex(text, r"<(?:[A-Za-z_][\w.-]*:)?c\s"))
        frags = frags.slice(1)
        if not len(frags):
            return None
        head = pc.split_pattern(frags, ">", max_splits=1)
        if pc.min(pc.list_value_length(head)).as_py() < 2:
            return None
        attrs, rest = pc.list_element(head, 0), pc.list_element(head, 1)
        if not pc.all(pc.match_substring_regex(attrs, r"(?:^|\s)r=\"")).as_py():
            return None
        empty = pc.ends_with(attrs, "/").to_numpy(zero_copy_only=False)
        inner = pc.list_element(pc.split_pattern_regex(rest, r"</(?:[A-Za-z_][\w.-]*:)?c>", max_splits=1), 0)
        return attrs, empty, inner

    def _items(self, data: bytes) -> None:
        """Any sheet XML (rows or cells without references, attribute-less cells), one regex match per item."""
        items = _SHEET_ITEM.findall(data)
        if not items:
            return
        row_tags, attrs, empty, inner = (pa.array(c, pa.binary()) for c in zip(*items))
        del items
        try:
            row_tags, attrs, inner = (a.cast(pa.string()) for a in (row_tags, attrs, inner))
        except pa.ArrowInvalid:
            raise DataError("cannot be read as an Excel workbook: the sheet holds text that is not UTF-8",
                            path=self.where) from None
        is_row = pc.greater(pc.binary_length(row_tags), 0).to_numpy(zero_copy_only=False)
        # a <row> is number r, or one more than the row before; a cell is in the last <row> before it
        prev_last = self._last_row
        pos = np.arange(len(is_row))
        marker = np.flatnonzero(is_row)
        at = np.zeros(len(is_row), dtype=np.int64)
        if len(marker):
            given = np.asarray(pc.cast(_attr(row_tags.take(pa.array(marker)), "r", r"[0-9]{1,7}"), pa.int64())
                               .to_numpy(zero_copy_only=False), dtype=float)
            known = np.nan_to_num(given, nan=-1).astype(np.int64)
            order = np.arange(len(marker))
            last = np.maximum.accumulate(np.where(known >= 0, order, -1))
            seq = np.where(last >= 0, known[np.maximum(last, 0)], prev_last) + order - last
            at[marker] = seq
            self._last_row = int(seq[-1])
        latest = np.maximum.accumulate(np.where(is_row, pos, -1))
        row_of = np.where(latest >= 0, at[np.maximum(latest, 0)], prev_last)
        cell = ~is_row
        if not cell.any():
            return
        cpos = np.flatnonzero(cell)
        c_empty = pc.greater(pc.binary_length(empty.take(pa.array(cpos))), 0).to_numpy(zero_copy_only=False)
        self._cells(attrs.take(pa.array(cpos)), c_empty, inner.take(pa.array(cpos)), row_of[cpos])

    def _cells(self, c_attrs: pa.Array, c_empty: np.ndarray, c_inner: pa.Array, row_of: np.ndarray | None) -> None:
        """Rows, columns, types, styles and values of a block's cells, vectorised; kept if they hold a value."""
        refs = pc.extract_regex(c_attrs, r"(?:^|\s)r=\"\$?(?P<col>[A-Za-z]{1,3})\$?(?P<row>[0-9]{1,7})\"")
        letters = pc.struct_field(refs, [0])
        ref_row = np.asarray(pc.cast(pc.struct_field(refs, [1]), pa.int64()).to_numpy(zero_copy_only=False),
                             dtype=float)
        if row_of is None:
            if np.isnan(ref_row).any():
                raise DataError("cannot be read as an Excel workbook: a cell reference is not valid", path=self.where)
            row_of = np.zeros(len(ref_row), dtype=np.int64)
        rows = np.where(np.isnan(ref_row), row_of, np.nan_to_num(ref_row)).astype(np.int64)
        cols = self._columns(letters, rows)
        bad = (rows < 1) | (rows > EXCEL_MAX_ROW) | (cols > EXCEL_MAX_COL) | (cols < 1)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise DataError(f"cell {col_letters(int(min(max(cols[i], 1), 99999)))}{rows[i]} lies outside an Excel "
                            "sheet (damaged or hostile file)", path=self.where, line=int(rows[i]))
        types = np.zeros(len(rows), dtype=np.uint8)
        if pc.any(pc.match_substring(c_attrs, "t=")).as_py():
            kinds = pc.dictionary_encode(_attr(c_attrs, "t", r"[A-Za-z]*").fill_null("n"))
            table = np.array([TYPES.get(k, _TEXT) for k in kinds.dictionary.to_pylist()], dtype=np.uint8)
            types = table[kinds.indices.to_numpy(zero_copy_only=False)]
        styles = np.asarray(pc.cast(_attr(c_attrs, "s", r"[0-9]{1,9}"), pa.int64()).fill_null(0)
                            .to_numpy(zero_copy_only=False), dtype=np.int64)
        values = _values(c_inner)
        inline = types == _TEXT
        if inline.any():  # inline strings: <is><t>..</t></is>; formula strings (t="str") have a <v>
            is_text = rich_text(_inner(c_inner.filter(pa.array(inline)), "is"))
            merged = np.flatnonzero(inline)
            filled = pc.if_else(pc.is_null(values.take(pa.array(merged))), is_text, values.take(pa.array(merged)))
            values = _put(values, merged, filled)
        has_f = pc.match_substring_regex(c_inner, rf"<{_P}f\b").to_numpy(zero_copy_only=False)
        if has_f.any():
            self._formulas(has_f, c_inner, values, rows, cols)
        values = unescape(values)
        keep = pc.is_valid(values).to_numpy(zero_copy_only=False) | (inline & ~c_empty)
        self.n_cells += int(keep.sum())
        if self.n_cells > self.book.limits.cells:
            check_cells(self.n_cells, 1, self.book.limits, self.where, "the sheet's filled cells")
        if keep.any():
            k = pa.array(keep)
            self.parts.append((rows[keep], cols[keep], types[keep], styles[keep], values.filter(k)))

    def _columns(self, letters: pa.Array, rows: np.ndarray) -> np.ndarray:
        """Column numbers from the letters; a cell without a reference follows the one before it in its row."""
        encoded = pc.dictionary_encode(letters)
        table = np.array([col_index(x) for x in encoded.dictionary.to_pylist()] + [0], dtype=np.int64)
        cols = table[encoded.indices.fill_null(len(table) - 1).to_numpy(zero_copy_only=False)]
        missing = cols == 0
        if missing.any():
            pos = np.arange(len(cols))
            start = np.r_[True, rows[1:] != rows[:-1]] | ~missing
            anchor = np.maximum.accumulate(np.where(start, pos, 0))
            base = np.where(missing[anchor], 1, cols[anchor])
            cols = np.where(missing, base + pos - anchor, cols)
        return cols

    def _formulas(self, has_f: np.ndarray, inner: pa.Array, values: pa.Array, rows, cols) -> None:
        self.n_formulas += int(has_f.sum())
        stored = pc.greater(pc.utf8_length(values), 0).fill_null(False).to_numpy(zero_copy_only=False)
        unknown = has_f & ~stored  # no <v>, or an empty one (what openpyxl and other writers that do not compute leave)
        fpos = np.flatnonzero(unknown if unknown.any() else has_f)[:5]
        texts = _inner(inner.take(pa.array(fpos)), "f").to_pylist()
        shown = [(f"{col_letters(int(cols[i]))}{rows[i]}", (t or "")[:60]) for i, t in zip(fpos, texts)]
        if unknown.any():
            ref, formula = shown[0]
            raise DataError(f"cell {ref} holds a formula (={formula}) with no stored value, so its value is "
                            "unknown here; open the workbook in Excel or LibreOffice and save it (values are then "
                            "stored), or paste the values over the formulas", path=self.where,
                            line=int(rows[fpos[0]]), column=ref.rstrip("0123456789"))
        self.formulas += shown[:5 - len(self.formulas)]

    def arrays(self):
        if not self.parts:
            e = np.zeros(0, dtype=np.int64)
            return e, e, np.zeros(0, np.uint8), e, pa.array([], pa.large_string())
        rows, cols, types, styles, values = zip(*self.parts)
        self.parts = []
        return (np.concatenate(rows), np.concatenate(cols), np.concatenate(types), np.concatenate(styles),
                pa.concat_arrays([v.cast(pa.large_string()) for v in values]))


def _values(inner: pa.Array) -> pa.Array:
    """The stored value (<v>) of each cell's content, null where it has none (plain `<v>x</v>` by Arrow alone)."""
    simple = pc.struct_field(pc.extract_regex(inner, r"<v>(?P<x>[^<]*)</v>"), [0])
    odd = pc.and_(pc.is_null(simple), pc.match_substring_regex(inner, rf"<{_P}v[\s/>]")).fill_null(False)
    if not pc.any(odd).as_py():
        return simple
    pos = np.flatnonzero(odd.to_numpy(zero_copy_only=False))
    return _put(simple, pos, _inner(inner.take(pa.array(pos)), "v"))


def _put(values: pa.Array, positions: np.ndarray, new: pa.Array) -> pa.Array:
    """`values` with the elements at `positions` replaced by `new`."""
    index = np.arange(len(values), dtype=np.int64)
    index[positions] = len(values) + np.arange(len(positions))
    return pa.concat_arrays([values.cast(pa.string()), new.cast(pa.string())]).take(pa.array(index))


def rich_text(si: pa.Array) -> pa.Array:
    """The text of <si>/<is> contents: its <t> runs joined, phonetic guides (<rPh>) left out. Plain `<t>x</t>`
    (nearly all) is extracted by Arrow; rich text is joined in Python, once per distinct value."""
    simple = pc.struct_field(pc.extract_regex(si, rf"(?s)^\s*<{_P}t(?:\s[^>]*)?(?:/>|>(?P<x>[^<]*)</{_P}t>)\s*$"),
                             [0])
    rest = pc.and_(pc.is_null(simple), pc.is_valid(si))
    if not pc.any(rest).as_py():
        return simple
    pos = np.flatnonzero(rest.to_numpy(zero_copy_only=False))
    run = re.compile(r"<(?:[A-Za-z_][\w.-]*:)?t(?:\s[^>]*)?>(.*?)</(?:[A-Za-z_][\w.-]*:)?t>", re.DOTALL)
    phonetic = re.compile(r"<(?:[A-Za-z_][\w.-]*:)?rPh\b.*?</(?:[A-Za-z_][\w.-]*:)?rPh>", re.DOTALL)
    joined = ["".join(run.findall(phonetic.sub("", x))) for x in si.take(pa.array(pos)).to_pylist()]
    return _put(simple, pos, pa.array(joined, pa.string()))


_OOXML_ESCAPE = re.compile(r"_x([0-9A-Fa-f]{4})_")


def _plain_text(text: str) -> str:
    """One cell's text: XML character references, then OOXML's own escapes (ECMA-376 ST_Xstring: '_xHHHH_' is the
    character U+HHHH, so a literal '_x0041_' is written '_x005F_x0041_'), decoded left to right in one pass."""
    text = html.unescape(text) if "&" in text else text
    return _OOXML_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), text) if "_x" in text else text


def unescape(values: pa.Array) -> pa.Array:
    """XML character references (&amp; &lt; &#10; ...) and OOXML '_xHHHH_' escapes in the values that have any,
    once per distinct value."""
    hit = pc.or_(pc.match_substring(values, "&"), pc.match_substring(values, "_x")).fill_null(False)
    if not pc.any(hit).as_py():
        return values
    pos = np.flatnonzero(hit.to_numpy(zero_copy_only=False))
    sub = pc.dictionary_encode(values.take(pa.array(pos)))
    plain = pa.array([_plain_text(x) for x in sub.dictionary.to_pylist()], pa.string()).take(sub.indices)
    return _put(values, pos, plain)
