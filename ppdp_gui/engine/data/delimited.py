"""Delimited text (CSV/TSV) to a frame of strings, or one DataError that says where the file is broken.

The fast path is Arrow's multi-threaded CSV parser with every column typed as string (about 4 M rows/s here,
~8x pandas' C parser). It only detects problems; their messages come from a second, slow pass with Python's csv
module that knows physical line numbers, so the user is told "line 5: expected 3 fields, found 4".
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv

from ppdp_gui.engine.data.guards import Limits, check_columns, check_names
from ppdp_gui.engine.data.prechecks import TextScan, open_regular, text_blocks
from ppdp_gui.engine.errors import DataError

DELIMITERS = (",", ";", "\t", "|")
_DELIMITER_NAMES = {",": "comma", ";": "semicolon", "\t": "tab", "|": "vertical bar"}
_SNIFF_LINES = 50
_BLOCK_SIZE = 8 << 20


def delimiter_name(delimiter: str) -> str:
    return _DELIMITER_NAMES.get(delimiter, repr(delimiter))


def to_utf8(data: bytes, path: str, encoding: str | None) -> bytes:
    """UTF-8 bytes without BOM; the input must be UTF-8 unless the user chose an encoding (never a silent guess).
    UTF-8 text is checked by `prechecks.TextScan`, the check the large-table engine makes on the same file."""
    enc = encoding or "utf-8"
    utf8 = enc.lower().replace("_", "-") in ("utf-8", "utf8")
    if utf8:
        scan = TextScan(path)
        block = 1 << 24  # one block's text at a time, not up to four times the file
        for start in range(0, max(len(data), 1), block):
            scan.feed(data[start:start + block], final=start + block >= len(data))
        return data[3:] if data.startswith(b"\xef\xbb\xbf") else data
    nul = data.find(b"\x00")
    if nul >= 0:
        line, col = _line_col_of_byte(data, nul)
        raise DataError(f"contains a NUL byte at byte offset {nul}: this looks like a binary file or UTF-16 text, "
                        "not a CSV/TSV file; save it as a UTF-8 CSV", path=path, line=line, column=col)
    try:
        text = data.decode(enc)
    except UnicodeDecodeError as exc:
        line, col = _line_col_of_byte(data, exc.start)
        bad = data[exc.start:exc.start + 1].hex()
        raise DataError(f"byte 0x{bad} at byte offset {exc.start} is not valid {enc}; save the file as UTF-8, "
                        "or choose its encoding (e.g. latin-1) when opening it", path=path, line=line,
                        column=col) from None
    except LookupError:
        raise DataError(f"unknown text encoding {encoding!r}", path=path) from None
    return text.encode("utf-8")


def head_text(data: bytes, size: int = 1 << 20) -> str:
    """The start of UTF-8 `data` as text (a character cut at the end is dropped)."""
    return data[:size].decode("utf-8", errors="ignore")


def _line_col_of_byte(data: bytes, offset: int) -> tuple[int, int]:
    line = data.count(b"\n", 0, offset) + 1
    col = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
    return line, col


def sniff_delimiter(text: str) -> str:
    """The candidate found the same (non-zero) number of times on most of the first lines; ',' if none is.

    `text` is the start of the file; if it does not end at a line end its last (cut) line is ignored.
    """
    lines = text.splitlines()
    if len(lines) > 1 and not text.endswith(("\n", "\r")):
        lines = lines[:-1]
    lines = [ln for ln in lines[:_SNIFF_LINES] if ln.strip()]
    best, best_score = ",", (0.0, 0)
    for d in DELIMITERS:
        counts = [len(_split_outside_quotes(ln, d)) - 1 for ln in lines]
        if not counts or max(counts) == 0:
            continue
        mode = max(set(counts), key=counts.count)
        if mode == 0:
            continue
        score = (counts.count(mode) / len(counts), mode)
        if score > best_score:
            best, best_score = d, score
    return best


def _split_outside_quotes(line: str, delimiter: str) -> list[str]:
    return re.sub(r'"[^"]*"', "", line).split(delimiter)


def _records(text: str, delimiter: str):
    """(first line, fields) of each non-blank record, by the csv module, with strict quoting."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    end = 0
    while True:
        start = end + 1
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise DataError(f"a quoted field starting on line {start} is not closed properly ({exc}); "
                            "check the quotes (\") on that line", line=start, column=None) from None
        end = reader.line_num
        if row:
            yield start, row


def header_fields(data: bytes, delimiter: str, path: str) -> tuple[int, list[str]]:
    """(line, names) of the first non-blank record; parses only the start of the file when that suffices."""
    if len(data) > (1 << 16):
        records = _records(head_text(data, 1 << 16), delimiter)
        try:
            first = next(records)
            next(records)  # a later record exists, so the header was not cut by the prefix
            return first
        except (StopIteration, DataError):
            pass
    for first in _records(data.decode("utf-8"), delimiter):
        return first
    raise DataError("the file is empty (no header line)", path=path, line=1)


def locate_problem(data: bytes, delimiter: str, path: str) -> DataError | None:
    """The first record whose field count differs from the header's, as a DataError (slow; error path only)."""
    expected = None
    try:
        for line, row in _records(data.decode("utf-8"), delimiter):
            if expected is None:
                expected = len(row)
            elif len(row) != expected:
                return DataError(f"expected {expected} fields (as in the header) but found {len(row)}, "
                                 f"separated by {delimiter_name(delimiter)}s; check for a missing or extra "
                                 f"{delimiter_name(delimiter)} or an unquoted one inside a value",
                                 path=path, line=line, column=min(len(row), expected) + 1)
    except DataError as exc:
        return DataError(exc.reason, path=path, line=exc.line)
    return None


def line_of_record(data: bytes, delimiter: str, record: int) -> int | None:
    """Physical line where data record `record` (0 = first row after the header) starts (slow; error path)."""
    for i, (line, _row) in enumerate(_records(data.decode("utf-8"), delimiter)):
        if i == record + 1:
            return line
    return None


def parse_delimited(data: bytes, delimiter: str, path: str) -> tuple[list[str], int, pa.Table]:
    """Header names and line, and an Arrow table of strings, one row per record (see `line_of_record`).

    `data` is UTF-8 without BOM (see `to_utf8`). The width is checked on the header, before any parsing.
    """
    header_line, header = header_fields(data, delimiter, path)
    n = len(header)
    check_columns(n, path, header_line)
    table = None
    for block, threads in ((_BLOCK_SIZE, True), (max(len(data), 1) + 1, False)):
        invalid: list = []

        def on_invalid(row, _bad=invalid):
            _bad.append(row)
            return "error"

        try:
            table = pacsv.read_csv(
                pa.py_buffer(data),
                read_options=pacsv.ReadOptions(autogenerate_column_names=True, block_size=block, use_threads=threads),
                parse_options=pacsv.ParseOptions(delimiter=delimiter, newlines_in_values=True,
                                                 invalid_row_handler=on_invalid),
                convert_options=pacsv.ConvertOptions(
                    column_types={f"f{i}": pa.string() for i in range(n)}, null_values=[],
                    strings_can_be_null=False, quoted_strings_can_be_null=False),
            )
            break
        except (pa.ArrowInvalid, pa.ArrowException, ValueError, OverflowError) as exc:
            problem = locate_problem(data, delimiter, path)
            if problem is not None:
                raise problem from None
            if not invalid and block != max(len(data), 1) + 1 and "straddl" in str(exc):
                continue  # a record longer than a block: retry in one block
            detail = ""
            if invalid:
                row = invalid[0]
                detail = f" (expected {row.expected_columns} fields, found {row.actual_columns}: {row.text[:80]!r})"
            raise DataError(f"cannot be read as {delimiter_name(delimiter)}-separated text{detail}: {exc}",
                            path=path, line=header_line) from None
    if table is None or table.num_columns != n:  # pragma: no cover - guarded above
        raise DataError("cannot be read as delimited text", path=path)
    if data.count(b'"') % 2:  # an odd number of quotes may be a quoted value that never ends (Arrow accepts it)
        problem = locate_problem(data, delimiter, path)
        if problem is not None:
            raise problem
    if table.num_rows <= 1:
        raise DataError(f"has a header on line {header_line} but no data rows", path=path, line=header_line + 1)
    return header, header_line, table.slice(1)


def scan_text_file(path: Path, limits: Limits, delimiter: str | None) -> tuple[str, int, list[str]]:
    """The large-table engine's pre-read of a CSV/TSV (optionally .gz): the whole text streamed once through
    `TextScan` (NUL bytes, UTF-8) and the gzip cap, then the header's width and names checked as the in-memory
    reader checks them. Returns the delimiter (given, or sniffed by the reader's rule from the first MiB), the
    header's line and its names (stripped, as the reader names the columns)."""
    where = str(path)
    name = path.name.lower()
    handle, _st = open_regular(path)
    with handle:
        gz = name.endswith(".gz") or handle.read(2) == b"\x1f\x8b"
    scan = TextScan(where)
    head = b""
    empty = True
    for chunk in text_blocks(path, limits, gz):
        if len(head) < (1 << 20):
            head += chunk[: (1 << 20) - len(head)]
        empty = empty and not chunk.strip()
        scan.feed(chunk)
    scan.feed(b"", final=True)
    if empty:
        raise DataError("the file is empty", path=where, line=1)
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:]
    head = head.decode("utf-8", errors="ignore").encode("utf-8")  # a character cut at the end is dropped
    delim = delimiter or ("\t" if ".tsv" in name or ".tab" in name else sniff_delimiter(head_text(head)))
    line, names = header_fields(head, delim, where)
    check_columns(len(names), where, line)
    named = [n for n in names if n.strip()]  # a blank name is refused by the reader only if its column has values
    check_names(named or names, where, line)
    return delim, line, [n.strip() for n in names]
