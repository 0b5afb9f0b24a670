"""Read one sheet of an XLSX workbook as text columns, streaming, with every size checked before it is expanded.

Why not openpyxl's reader: it pads every row to the sheet's widest column (a 1.6 KB file with one cell in column
XFD on each of a million rows became 7.9 GB), trusts the declared dimension, and turns a formula without a
stored value into an empty cell without a word. Here the zip directory is checked first (member count, declared
sizes against `guards.Limits`, encryption); the small parts (workbook, relationships, styles) are parsed with
expat callbacks (no tree is built; a DOCTYPE, the only way to declare entities, is refused) and the sheet and
shared strings are scanned in blocks by Arrow string kernels (xlsx_cells.py); cells are kept sparse as (row,
column, value) until the table's real shape is known and checked, and values are typed per distinct value with
Arrow. openpyxl is still used for its knowledge of Excel's number formats and date serials.

What a custodian sees is what is read: numbers as Excel shows them (39.0 stored reads as '39'), dates in ISO
form, booleans as True/False, error cells as their code (#N/A). Formulas: the value Excel last computed is
read and a note names the cells; a formula with no stored value is an error naming the cell. Merged cells,
macros and further sheets are named in notes, never silently.
"""

from __future__ import annotations

import io
import posixpath
import re
import zipfile
from dataclasses import dataclass, field
from xml.parsers import expat

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ppdp_gui.engine.data.guards import MAX_ZIP_MEMBERS, Limits, check_cells, check_columns
from ppdp_gui.engine.data.xlsx_cells import (_BLOCK, _BOOL, _DATE, _ERROR, _NUMBER, _SHARED, _TEXT, Cells, rich_text,
                                             unescape)
from ppdp_gui.engine.errors import DataError

_FEED = 1 << 16
_REL_DOC = "officeDocument"


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1].rsplit(":", 1)[-1]


@dataclass
class Sheet:
    """What `read_xlsx` found: header names, one text column each (None = empty), Excel row numbers, notes."""

    header: list[str]
    columns: list[pa.Array]
    row_numbers: np.ndarray
    header_row: int
    notes: list[str] = field(default_factory=list)


class _Book:
    """The zip, checked before anything is expanded."""

    def __init__(self, raw: bytes, where: str, limits: Limits) -> None:
        self.where, self.limits = where, limits
        try:
            self.zip = zipfile.ZipFile(io.BytesIO(raw))
            infos = self.zip.infolist()
        except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError) as exc:
            raise DataError(f"cannot be read as an Excel workbook (damaged zip: {exc})", path=where) from None
        if len(infos) > MAX_ZIP_MEMBERS:
            raise DataError(f"holds {len(infos):,} files inside its zip; a workbook has a few dozen, so this is "
                            "not read (a damaged or hostile file)", path=where)
        self.infos = {i.filename: i for i in infos}
        if any(i.flag_bits & 0x1 for i in infos):
            raise DataError("is password-protected (encrypted); save an unprotected copy", path=where)
        self.expanded = 0

    def has(self, name: str) -> bool:
        return name in self.infos

    def open(self, name: str, what: str):
        info = self.infos.get(name)
        if info is None:
            raise DataError(f"cannot be read as an Excel workbook: it has no {name}", path=self.where)
        self.expanded += info.file_size
        if self.expanded > self.limits.expanded:
            raise DataError(self.limits.too_big(f"its {what} expand"), path=self.where)
        try:
            return self.zip.open(info)
        except (zipfile.BadZipFile, NotImplementedError, RuntimeError, OSError, ValueError) as exc:
            raise DataError(f"cannot be read as an Excel workbook ({name}: {exc})", path=self.where) from None

    def parse(self, name: str, what: str, start=None, end=None, text=None) -> None:
        """Stream one XML member through expat; sizes were checked by `open`, a DOCTYPE is refused."""
        parser = expat.ParserCreate()
        parser.buffer_text = True
        parser.ordered_attributes = False

        def doctype(*_args):
            raise DataError(f"cannot be read as an Excel workbook: {name} declares a DOCTYPE (entities), "
                            "which a workbook never does", path=self.where)

        parser.StartDoctypeDeclHandler = doctype
        parser.EntityDeclHandler = doctype
        if start:
            parser.StartElementHandler = lambda tag, attrs: start(_local(tag), attrs)
        if end:
            parser.EndElementHandler = lambda tag: end(_local(tag))
        if text:
            parser.CharacterDataHandler = text
        with self.open(name, what) as stream:
            try:
                while True:
                    block = stream.read(_FEED)
                    parser.Parse(block, not block)
                    if not block:
                        break
            except expat.ExpatError as exc:
                raise DataError(f"cannot be read as an Excel workbook ({name} is not well-formed XML: {exc})",
                                path=self.where) from None
            except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
                raise DataError(f"cannot be read as an Excel workbook ({name}: {exc})", path=self.where) from None


def _rels(book: _Book, name: str) -> dict[str, tuple[str, str]]:
    """Relationship id -> (type's last word, target path inside the zip) of `name`'s rels file."""
    folder, base = posixpath.split(name)
    rels_name = posixpath.join(folder, "_rels", base + ".rels")
    out: dict[str, tuple[str, str]] = {}
    if not book.has(rels_name):
        return out

    def start(tag, attrs):
        if tag == "Relationship" and "Id" in attrs and "Target" in attrs:
            target = attrs["Target"]
            path = target.lstrip("/") if target.startswith("/") else posixpath.normpath(posixpath.join(folder, target))
            out[attrs["Id"]] = (attrs.get("Type", "").rsplit("/", 1)[-1], path)

    book.parse(rels_name, "relationships", start=start)
    return out


def _workbook(book: _Book) -> tuple[str, list[tuple[str, str]], bool]:
    """(workbook part, [(sheet name, sheet part)], 1904 date system)."""
    part = next((t for kind, t in _rels(book, "").values() if kind == _REL_DOC), "xl/workbook.xml")
    rels = _rels(book, part)
    sheets: list[tuple[str, str]] = []
    flags = {"1904": False}

    def start(tag, attrs):
        if tag == "sheet":
            rid = next((v for k, v in attrs.items() if _local(k) == "id"), None)
            target = rels.get(rid, ("", ""))[1] if rid else ""
            sheets.append((attrs.get("name", f"Sheet{len(sheets) + 1}"), target))
        elif tag == "workbookPr" and attrs.get("date1904", "0").lower() in ("1", "true"):
            flags["1904"] = True

    book.parse(part, "workbook description", start=start)
    if not sheets:
        raise DataError("cannot be read as an Excel workbook: it lists no sheets", path=book.where)
    return part, sheets, flags["1904"]


_SI = re.compile(rb"<(?:[A-Za-z_][\w.-]*:)?si\b[^>]*?(?:/>|>(.*?)</(?:[A-Za-z_][\w.-]*:)?si>)", re.DOTALL)


def _shared_strings(book: _Book, part: str) -> pa.Array:
    """The shared-string table (rich text runs joined; phonetic guides left out), scanned like the sheet."""
    target = next((t for kind, t in _rels(book, part).values() if kind == "sharedStrings"), None)
    if target is None or not book.has(target):
        return pa.array([], pa.large_string())
    chunks: list[pa.Array] = []
    tail = b""
    with book.open(target, "shared strings") as stream:
        while True:
            try:
                block = stream.read(_BLOCK)
            except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
                raise DataError(f"cannot be read as an Excel workbook ({target}: {exc})", path=book.where) from None
            data = tail + block
            if not chunks and (b"<!DOCTYPE" in data[:4096] or b"<!ENTITY" in data[:4096]):
                raise DataError(f"cannot be read as an Excel workbook: {target} declares a DOCTYPE (entities), "
                                "which a workbook never does", path=book.where)
            if block:
                cut = data.rfind(b"</si>")
                cut = cut + 5 if cut >= 0 else 0
                data, tail = data[:cut], data[cut:]
            found = _SI.findall(data)
            if found:
                try:
                    si = pa.array(found, pa.binary()).cast(pa.string())
                except pa.ArrowInvalid:
                    raise DataError("cannot be read as an Excel workbook: its shared strings are not UTF-8",
                                    path=book.where) from None
                chunks.append(unescape(pc.if_else(pc.equal(pc.binary_length(si), 0), "", rich_text(si))
                                        .cast(pa.string())))
            if not block:
                break
    return pa.concat_arrays([c.cast(pa.large_string()) for c in chunks]) if chunks else pa.array([], pa.large_string())


def _date_styles(book: _Book, part: str) -> tuple[np.ndarray, np.ndarray]:
    """Per cell style index: is it a date format, is it a duration format ([h]:mm)."""
    from openpyxl.styles.numbers import (
        BUILTIN_FORMATS,
        is_date_format,
        is_timedelta_format,
    )

    target = next((t for kind, t in _rels(book, part).values() if kind == "styles"), None)
    custom: dict[int, str] = {}
    xfs: list[int] = []
    depth = {"cellXfs": 0}
    if target is not None and book.has(target):
        def start(tag, attrs):
            if tag == "numFmt":
                try:
                    custom[int(attrs.get("numFmtId", "-1"))] = attrs.get("formatCode", "")
                except ValueError:
                    pass
            elif tag == "cellXfs":
                depth["cellXfs"] += 1
            elif tag == "xf" and depth["cellXfs"]:
                try:
                    xfs.append(int(attrs.get("numFmtId", "0")))
                except ValueError:
                    xfs.append(0)

        def end(tag):
            if tag == "cellXfs":
                depth["cellXfs"] -= 1

        book.parse(target, "styles", start=start, end=end)
    date, span = np.zeros(len(xfs) + 1, bool), np.zeros(len(xfs) + 1, bool)
    for i, fmt_id in enumerate(xfs):
        code = custom.get(fmt_id, BUILTIN_FORMATS.get(fmt_id, "General"))
        span[i] = bool(is_timedelta_format(code))
        date[i] = bool(is_date_format(code)) or span[i]
    return date, span


def _number_texts(texts: pa.Array) -> pa.Array:
    """Number cells as Excel shows them: '39.0' -> '39', '1E-3' -> '0.001'; long integers stay exact."""
    encoded = pc.dictionary_encode(texts)
    shown = []
    for t in encoded.dictionary.to_pylist():  # once per distinct value
        t = t.strip()
        try:
            if re.fullmatch(r"[+-]?[0-9]+", t):
                shown.append(str(int(t)))
                continue
            v = float(t)
        except ValueError:
            shown.append(t)
            continue
        shown.append(str(int(v)) if v.is_integer() and abs(v) < 2**53 else str(v))
    return pa.array(shown, pa.large_string()).take(encoded.indices)


def _date_texts(texts: pa.Array, span: np.ndarray, epoch_1904: bool) -> pa.Array:
    """Date serials (per distinct value and kind) as ISO text: '2020-01-02', '2020-01-02 10:30:00'."""
    from openpyxl.utils.datetime import (
        CALENDAR_MAC_1904,
        CALENDAR_WINDOWS_1900,
        from_excel,
    )

    epoch = CALENDAR_MAC_1904 if epoch_1904 else CALENDAR_WINDOWS_1900
    keyed = pc.binary_join_element_wise(pa.array(np.where(span, "d", "t"), pa.large_string()),
                                        texts.cast(pa.large_string()), pa.scalar(":", pa.large_string()))
    encoded = pc.dictionary_encode(keyed)
    shown = []
    for key in encoded.dictionary.to_pylist():
        kind, _, text = key.partition(":")
        try:
            v = from_excel(float(text), epoch, timedelta=(kind == "d"))
        except (ValueError, OverflowError, TypeError):
            shown.append(text)
            continue
        if hasattr(v, "isoformat") and hasattr(v, "hour") and hasattr(v, "date"):
            iso = v.isoformat(sep=" ")
            shown.append(iso.removesuffix(" 00:00:00"))
        elif hasattr(v, "isoformat"):
            shown.append(v.isoformat())
        else:
            shown.append(str(v))
    return pa.array(shown, pa.large_string()).take(encoded.indices)


def _typed_values(raw: pa.Array, types: np.ndarray, styles: np.ndarray, shared: pa.Array, date_style: np.ndarray,
                  span_style: np.ndarray, epoch_1904: bool, where: str, book: _Book) -> pa.Array:
    """Every stored cell value as the text a user sees, per type, vectorised (Python only per distinct value).

    A shared string is stored once and used by any number of cells, each of which gets its own copy: the text
    those copies add up to is counted, against the same limit as the expanded XML, before any is made (a 16 KB
    workbook whose one 2 MB string fills 1,500 cells would otherwise ask for 3 GB)."""
    parts: list[tuple[np.ndarray, pa.Array]] = []
    if (types == _SHARED).any():
        pos = np.flatnonzero(types == _SHARED)
        try:
            ints = pc.cast(pc.utf8_trim_whitespace(raw.take(pa.array(pos))), pa.int64()).to_numpy(
                zero_copy_only=False)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            ints = np.array([-1])
        if len(ints) and (ints.min() < 0 or ints.max() >= len(shared)):
            raise DataError("cannot be read as an Excel workbook: a cell points at a shared string that does not "
                            "exist (damaged file)", path=where)
        lengths = pc.binary_length(shared).fill_null(0).to_numpy(zero_copy_only=False)
        copies = int(lengths[ints].sum()) if len(ints) else 0
        if book.expanded + copies > book.limits.expanded:
            raise DataError(book.limits.too_big("its shared strings, copied into the cells that use them, expand"),
                            path=where)
        parts.append((pos, shared.take(pa.array(ints))))
    numeric = types == _NUMBER
    safe_styles = np.clip(styles, 0, len(date_style) - 1)
    is_date = numeric & date_style[safe_styles]
    if (numeric & ~is_date).any():
        pos = np.flatnonzero(numeric & ~is_date)
        parts.append((pos, _number_texts(raw.take(pa.array(pos)))))
    if is_date.any():
        pos = np.flatnonzero(is_date)
        parts.append((pos, _date_texts(raw.take(pa.array(pos)), span_style[safe_styles[pos]], epoch_1904)))
    if (types == _BOOL).any():
        pos = np.flatnonzero(types == _BOOL)
        vals = raw.take(pa.array(pos))
        parts.append((pos, pc.if_else(pc.equal(pc.utf8_trim_whitespace(vals), "1"), "True", "False")
                      .cast(pa.large_string())))
    for kind in (_TEXT, _ERROR):
        if (types == kind).any():
            pos = np.flatnonzero(types == kind)
            parts.append((pos, raw.take(pa.array(pos))))
    if (types == _DATE).any():
        pos = np.flatnonzero(types == _DATE)
        iso = pc.replace_substring(raw.take(pa.array(pos)), "T", " ")
        parts.append((pos, pc.replace_substring_regex(iso, r" 00:00:00(\.0+)?Z?$", "")))
    if not parts:
        return pa.nulls(len(raw), pa.large_string())
    order = np.concatenate([p for p, _ in parts])
    stacked = pa.concat_arrays([a.cast(pa.large_string()) for _, a in parts])
    inverse = np.empty(len(raw), dtype=np.int64)
    inverse[order] = np.arange(len(order))
    if len(order) < len(raw):  # some cells of no kind (cannot happen: every kind is handled): keep null
        filler = np.setdiff1d(np.arange(len(raw)), order)
        stacked = pa.concat_arrays([stacked, pa.nulls(1, pa.large_string())])
        inverse[filler] = len(stacked) - 1
    return stacked.take(pa.array(inverse))


def read_xlsx(raw: bytes, where: str, sheet: str | int | None, limits: Limits) -> Sheet:
    """The first non-empty row is the header; Excel row numbers are the 'lines' of messages."""
    book = _Book(raw, where, limits)
    part, sheets, epoch_1904 = _workbook(book)
    names = [n for n, _ in sheets]
    if sheet is None:
        index = 0
    elif isinstance(sheet, int):
        if not 0 <= sheet < len(names):
            raise DataError(f"has no sheet number {sheet + 1}; its sheets are {names}", path=where)
        index = sheet
    elif sheet in names:
        index = names.index(sheet)
    else:
        raise DataError(f"has no sheet named {sheet!r}; its sheets are {names}", path=where)
    title, target = sheets[index]
    if not target or not book.has(target):
        raise DataError(f"cannot be read as an Excel workbook: sheet {title!r} has no data part", path=where)
    shared = _shared_strings(book, part)
    date_style, span_style = _date_styles(book, part)
    cells = Cells(book, where)
    cells.scan(target, f"sheet {title!r}")
    rows, cols, types, styles, raw_values = cells.arrays()
    values = _typed_values(raw_values, types, styles, shared, date_style, span_style, epoch_1904, where, book)
    del raw_values
    out = _assemble(rows, cols, values, title, where, book.limits)
    if sheet is None and len(names) > 1:
        out.notes.append(f"the workbook has {len(names)} sheets; the first, {title!r}, was read "
                         f"(others: {', '.join(map(repr, names[1:6]))}{', ...' if len(names) > 6 else ''})")
    if cells.formulas:
        shown = "; ".join(f"{ref} (={f})" for ref, f in cells.formulas[:3])
        out.notes.append(f"sheet {title!r}: {cells.n_formulas:,} cell(s) hold formulas ({shown}"
                         f"{'; ...' if cells.n_formulas > 3 else ''}); the values Excel last computed and stored "
                         "were read, not recomputed")
    if cells.merged:
        out.notes.append(f"sheet {title!r} has {len(cells.merged)}{'+' if len(cells.merged) >= 1000 else ''} merged "
                         f"cell range(s) ({', '.join(cells.merged[:3])}): only the first cell of each holds the "
                         "value, the others are read as empty")
    if any(name.lower().endswith("vbaproject.bin") for name in book.infos):
        out.notes.append("the workbook contains macros; they were not run (only stored values are read)")
    return out


def _assemble(rows: np.ndarray, cols: np.ndarray, values: pa.Array, title: str, where: str, limits: Limits) -> Sheet:
    """Sparse cells -> header and dense text columns, after the real shape is checked."""
    filled = pc.match_substring_regex(values, r"\S").fill_null(False).to_numpy(zero_copy_only=False)
    filled_rows = np.unique(rows[filled])
    if not len(filled_rows):
        raise DataError(f"sheet {title!r} is empty", path=where, line=1)
    header_row = int(filled_rows[0])
    body_rows = filled_rows[1:]
    if not len(body_rows):
        raise DataError(f"sheet {title!r} has a header on row {header_row} but no data rows", path=where,
                        line=header_row + 1)
    in_header = rows == header_row
    in_body = np.isin(rows, body_rows)
    header_cols = cols[in_header & filled]
    body_cols = cols[in_body & pc.is_valid(values).to_numpy(zero_copy_only=False)]
    used = np.union1d(header_cols, body_cols)
    check_columns(len(used), where, header_row)
    check_cells(len(body_rows), len(used), limits, where, f"sheet {title!r}")
    col_pos = np.searchsorted(used, cols)
    row_pos = np.searchsorted(body_rows, rows)
    header = [""] * len(used)
    named = in_header & filled
    for j, text in zip(col_pos[named], values.filter(pa.array(named)).to_pylist()):
        header[j] = text
    keep = in_body & np.isin(cols, used)
    n = len(body_rows)
    dense = np.full(n * len(used), len(values), dtype=np.int32 if len(values) < 2**31 - 1 else np.int64)
    dense[col_pos[keep] * n + row_pos[keep]] = np.flatnonzero(keep)
    table = pa.concat_arrays([values, pa.nulls(1, pa.large_string())]).take(pa.array(dense))
    columns = [table.slice(j * n, n) for j in range(len(used))]
    return Sheet(header=header, columns=columns, row_numbers=body_rows, header_row=header_row)
