"""ARX hierarchy CSV files in and out: one row per leaf, one column per level (leaf first, root last), ';'.

Example row: ``39;35-39;30-39;20-39;*``. An imported file that is not edited exports byte for byte as it came in:
the rows (in file order, duplicates kept) are held in ``Taxonomy.source_rows`` and the file's layout (line ending,
final newline, byte-order mark, encoding, delimiter) in ``Taxonomy.source_format``. Cells are quoted only when
they must be (delimiter, quote or line break inside), which is what ARX writes. ``.csv.gz`` is read and written
transparently (the decompressed bytes are what round-trips).
"""

from __future__ import annotations

import csv
import gzip
import io
import re
import zlib
from dataclasses import dataclass
from pathlib import Path

from ppdp_gui.engine.errors import DataError, TaxonomyError
from ppdp_gui.engine.taxonomy.tree import Taxonomy

_ENCODINGS = ("utf-8", "cp1252", "latin-1")
#: a hierarchy file (and what a .gz one unpacks to) may be at most this big: ARX's largest real ones are ~1 MB
MAX_HIERARCHY_BYTES = 64 << 20
#: levels (columns) of a hierarchy: real ones have a handful (dates: 4, ICD: 4, intervals joined two by two: ~20);
#: every level is a step of every search over the tree, so a file of 200,000 levels is refused before it is built
MAX_HIERARCHY_LEVELS = 1_000
LEVELS_VARIABLE = "PPDP_MAX_HIERARCHY_LEVELS"
#: labels (rows x levels) of a hierarchy: ~150 bytes of memory each once built, so 5 M labels stay under 1 GB;
#: ICD-10 has ~70,000, a ZIP-code hierarchy ~250,000
MAX_HIERARCHY_CELLS = 5_000_000
CELLS_VARIABLE = "PPDP_MAX_HIERARCHY_CELLS"


@dataclass(frozen=True)
class ArxFormat:
    """How a hierarchy file was laid out, so that writing it back changes nothing."""

    delimiter: str = ";"
    newline: str = "\n"
    final_newline: bool = True
    bom: bool = False
    encoding: str = "utf-8"


def column_from_filename(path: str | Path) -> str:
    """'adult_hierarchy_marital-status.csv' -> 'marital-status' (ARX's naming); otherwise the file stem."""
    name = Path(path).name
    name = re.sub(r"(\.csv|\.txt)?(\.gz)?$", "", name, flags=re.IGNORECASE)
    match = re.search(r"_hierarchy_(.+)$", name)
    return match.group(1) if match else name


def _decode(data: bytes, path: Path) -> tuple[str, str, bool]:
    bom = data.startswith(b"\xef\xbb\xbf")
    if bom:
        data = data[3:]
    for encoding in _ENCODINGS:
        try:
            return data.decode(encoding), encoding, bom
        except UnicodeDecodeError:
            continue
    raise TaxonomyError(f"{path}: cannot decode the file as text")  # pragma: no cover - latin-1 decodes anything


def _sniff_layout(text: str) -> tuple[str, bool]:
    """The file's dominant line ending and whether the last row ends with one."""
    crlf = text.count("\r\n")
    lf = text.count("\n") - crlf
    cr = text.count("\r") - crlf
    newline = max((crlf, "\r\n"), (lf, "\n"), (cr, "\r"))[1] if (crlf or lf or cr) else "\n"
    return newline, text.endswith(("\n", "\r"))


def check_shape(n_rows: int, width: int, where: str) -> None:
    """Refuse a hierarchy deeper than MAX_HIERARCHY_LEVELS or with more than MAX_HIERARCHY_CELLS labels (each
    raisable by its environment variable), before any tree is built."""
    from ppdp_gui.engine.data.guards import configured
    try:
        levels = configured(LEVELS_VARIABLE, MAX_HIERARCHY_LEVELS)
        cells = configured(CELLS_VARIABLE, MAX_HIERARCHY_CELLS)
    except DataError as exc:
        raise TaxonomyError(f"{where}: {exc}") from None
    if width > levels:
        raise TaxonomyError(f"{where}: the hierarchy has {width:,} levels, more than the {levels:,} this app reads "
                            f"(a real one has a handful); if it is right, raise the limit with the environment "
                            f"variable {LEVELS_VARIABLE}")
    if n_rows * width > cells:
        raise TaxonomyError(f"{where}: the hierarchy has {n_rows:,} rows x {width:,} levels = {n_rows * width:,} "
                            f"labels, more than the {cells:,} this app reads; if it is right, raise the limit with "
                            f"the environment variable {CELLS_VARIABLE}")


def _first_line_width(text: str, delimiter: str) -> int:
    """Delimiters on the first line + 1: the width a hierarchy declares before any row is parsed."""
    end = re.search(r"[\r\n]", text)
    return text.count(delimiter, 0, end.start() if end else len(text)) + 1


def _parse_rows(text: str, delimiter: str, path: Path) -> list[list[str]]:
    lines = text.count("\n") + 1
    check_shape(lines, _first_line_width(text, delimiter), str(path))
    try:
        reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, quotechar='"', strict=True)
        rows = [row for row in reader]
    except csv.Error as exc:
        raise TaxonomyError(f"{path}, row {reader.line_num}: {exc}") from None
    while rows and rows[-1] == []:
        rows.pop()
    for row_no, row in enumerate(rows, start=1):
        if not row:
            raise TaxonomyError(f"{path}, row {row_no}: empty row inside the hierarchy")
    return rows


def validate_rows(rows: list[list[str]], where: str) -> None:
    """Raise TaxonomyError (with the row number) unless `rows` are a well-formed ARX hierarchy.

    Rules: rectangular; no empty label; one root (the last column is the same everywhere); a value (column 0)
    may repeat only on an identical row; at every level a label has one parent in the level above.
    """
    if not rows:
        raise TaxonomyError(f"{where}: the hierarchy has no rows")
    width = len(rows[0])
    check_shape(len(rows), width, where)
    if width < 2:
        raise TaxonomyError(f"{where}, row 1: a hierarchy row needs the value and at least the root "
                            f"(found {width} column; is the delimiter ';'?)")
    root = rows[0][-1]
    first_row_of_value: dict[str, int] = {}
    parent_at: list[dict[str, tuple[str, int]]] = [dict() for _ in range(width - 1)]
    for row_no, row in enumerate(rows, start=1):
        if len(row) != width:
            raise TaxonomyError(f"{where}, row {row_no}: {len(row)} columns where row 1 has {width} "
                                "(every row needs one label per level)")
        for col, cell in enumerate(row):
            if cell.strip() == "":
                raise TaxonomyError(f"{where}, row {row_no}, column {col + 1}: empty label")
        if row[-1] != root:
            raise TaxonomyError(f"{where}, row {row_no}: root {row[-1]!r} differs from {root!r} on row 1 "
                                "(a hierarchy has one root)")
        seen = first_row_of_value.setdefault(row[0], row_no)
        if seen != row_no and rows[seen - 1] != row:
            raise TaxonomyError(f"{where}, row {row_no}: value {row[0]!r} is also on row {seen} under another "
                                "group (a value has one parent)")
        for level in range(width - 1):
            child, parent = row[level], row[level + 1]
            known = parent_at[level].setdefault(child, (parent, row_no))
            if known[0] != parent and level > 0:
                raise TaxonomyError(f"{where}, row {row_no}: group {child!r} (column {level + 1}) is under "
                                    f"{parent!r} here but under {known[0]!r} on row {known[1]}")


def taxonomy_from_rows(column: str, rows: list[list[str]], where: str = "hierarchy") -> Taxonomy:
    """Validated Taxonomy from ARX rows; the rows are kept for an exact export."""
    validate_rows(rows, where)
    try:
        tax = Taxonomy.from_paths(column, rows)
    except TaxonomyError as exc:
        raise TaxonomyError(f"{where}: {exc}") from None
    tax.source_rows = [list(r) for r in rows]
    return tax


def read_arx_hierarchy(path, column: str | None = None) -> Taxonomy:
    """Read an ARX hierarchy (.csv or .csv.gz). `column` defaults to the name in 'x_hierarchy_<column>.csv'."""
    path = Path(path)
    from ppdp_gui.engine.data.prechecks import read_regular
    try:  # only a regular file (a FIFO would wait forever), and at most MAX_HIERARCHY_BYTES
        data = read_regular(path, MAX_HIERARCHY_BYTES, "hierarchy file",
                            raise_hint=" for a hierarchy file (a real one is at most a few MB)")
    except DataError as exc:
        raise TaxonomyError(f"cannot read {path}: {exc.reason}") from None
    if data[:2] == b"\x1f\x8b":
        try:  # streamed and capped: a small gzip is never expanded past the limit (a decompression bomb)
            with gzip.GzipFile(fileobj=io.BytesIO(data)) as gz:
                data = gz.read(MAX_HIERARCHY_BYTES + 1)
        except (OSError, EOFError, zlib.error) as exc:
            raise TaxonomyError(f"{path}: damaged gzip file ({exc})") from None
        if len(data) > MAX_HIERARCHY_BYTES:
            raise TaxonomyError(f"{path}: unpacks to more than {MAX_HIERARCHY_BYTES >> 20} MB, too large for a "
                                "hierarchy (a decompression bomb?); it was not expanded")
    text, encoding, bom = _decode(data, path)
    newline, final_newline = _sniff_layout(text)
    delimiter = ";"
    rows = _parse_rows(text, delimiter, path)
    tax = taxonomy_from_rows(column if column is not None else column_from_filename(path), rows, str(path))
    tax.source_format = ArxFormat(delimiter, newline, final_newline, bom, encoding)
    return tax


def _quote(cell: str, delimiter: str) -> str:
    if any(ch in cell for ch in (delimiter, '"', "\n", "\r")):
        return '"' + cell.replace('"', '""') + '"'
    return cell


def arx_bytes(tax: Taxonomy, fmt: ArxFormat | None = None) -> bytes:
    """The hierarchy file's bytes (uncompressed): the imported layout if there was one, else UTF-8, LF, ';'."""
    fmt = fmt or getattr(tax, "source_format", None) or ArxFormat()
    rows = tax.to_paths()
    for row in rows:
        if any(cell == "" for cell in row):
            raise TaxonomyError(f"taxonomy of {tax.column!r}: a node has an empty label; name it before saving")
    lines = [fmt.delimiter.join(_quote(c, fmt.delimiter) for c in row) for row in rows]
    text = fmt.newline.join(lines) + (fmt.newline if fmt.final_newline and lines else "")
    try:
        data = text.encode(fmt.encoding)
    except UnicodeEncodeError:
        data = text.encode("utf-8")
    return (b"\xef\xbb\xbf" if fmt.bom else b"") + data


def write_arx_hierarchy(tax: Taxonomy, path) -> Path:
    """Write `tax` as an ARX hierarchy (gzip if the name ends in .gz), atomically (temp file + rename)."""
    path = Path(path)
    data = arx_bytes(tax)
    if path.suffix.lower() == ".gz":
        data = gzip.compress(data, mtime=0)
    from ppdp_gui.engine.data.writer import write_bytes_atomic
    try:
        return write_bytes_atomic(data, path)
    except DataError as exc:
        raise TaxonomyError(f"cannot write {path}: {exc.reason}") from None
