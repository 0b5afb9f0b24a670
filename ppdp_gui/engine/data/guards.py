"""Limits and header checks that keep a hostile or damaged table file from hurting the custodian.

Two kinds of harm, two kinds of check:

- **Resources.** A small file can stand for a huge table: a gzip or an XLSX (a zip of XML) is expanded before
  it is read, and a Parquet file declares its rows and columns. Every size is checked *before* it is expanded,
  against limits scaled to the file's size on disk (`Limits`), so any input of 10 MB or less stays well under
  2 GB of memory and nothing hangs: loading costs about 11 bytes of memory per byte of text, so expanded text is
  held to `EXPAND_FLOOR` (or `EXPAND_RATIO` times the file, for big files). A plain text file cannot expand, so
  only its size on disk is limited (`reader.DEFAULT_MAX_BYTES`).
- **Misleading names.** Roles are chosen by column name, so a name must be what the custodian sees: a name
  with an invisible character (zero-width space, bidirectional control, ...), or two names that look the same
  (equal after Unicode NFKC normalisation, case folding, white space and the Latin look-alikes of Cyrillic and
  Greek letters), are refused, naming the columns. Refused rather than warned about: with two columns that look
  like "age", the custodian could protect one and publish the other believing it was the same; one edit of
  the header fixes it for good.
"""

from __future__ import annotations

import os
import re
import unicodedata
from dataclasses import dataclass

from ppdp_gui.engine.errors import DataError

#: columns in a table. Wide enough for any clinical extract (16,384 is Excel's own limit); far more columns
#: than this is a generated or hostile file, and each column costs memory and time in every view.
MAX_COLUMNS = 50_000
#: cells (rows x columns) a compressed source (XLSX, Parquet) may always stand for (about 35 bytes of memory each
#: while typed), and two per byte of the file when that is more (a plain CSV has at most one per two bytes)
MAX_CELLS = 20_000_000
#: expanded bytes any compressed source may always reach (about 1.4 GB of memory for the worst-shaped text) ...
EXPAND_FLOOR = 128 << 20
#: ... and, for bigger files, this many times their size on disk (real CSV compresses 4-10x, XLSX XML 10-20x)
EXPAND_RATIO = 12
#: members of a zip (XLSX) file: a workbook has a few dozen; thousands is a zip bomb's trick
MAX_ZIP_MEMBERS = 10_000


#: the environment variables that raise (or lower) the limits above, for a custodian whose real files pass them;
#: every refusal names its variable
CELLS_VARIABLE = "PPDP_MAX_CELLS"
EXPAND_VARIABLE = "PPDP_MAX_EXPANDED_MB"


def configured(variable: str, default: int, scale: int = 1) -> int:
    """`default`, or the whole number set in the environment variable `variable` (times `scale`), read at each
    call so that a limit can be raised without restarting anything but the command."""
    text = os.environ.get(variable, "").strip().replace("_", "").replace(",", "")
    if not text:
        return default
    if not text.isdigit() or int(text) <= 0:
        raise DataError(f"the environment variable {variable} is set to {text!r}; it must be a whole number above 0")
    return int(text) * scale


@dataclass(frozen=True)
class Limits:
    """What a file of `disk_bytes` may expand to (see the module docstring), never more than `max_bytes` (the
    caller's limit holds for the file and for what it expands to). `trusted`: a file this process has just
    written (export reads its own release back) is not limited, only the source the custodian opens."""

    disk_bytes: int
    max_bytes: int
    trusted: bool = False

    @property
    def cells(self) -> int:
        return _UNLIMITED if self.trusted else max(configured(CELLS_VARIABLE, MAX_CELLS), 2 * self.disk_bytes)

    @property
    def expanded(self) -> int:
        if self.trusted:
            return _UNLIMITED
        floor = configured(EXPAND_VARIABLE, EXPAND_FLOOR, 1 << 20)
        return min(self.max_bytes, max(floor, EXPAND_RATIO * self.disk_bytes))

    def too_big(self, what: str) -> str:
        return (f"{what} to more than {_mb(self.expanded)}: a small file that stands for a huge table is how "
                "'decompression bombs' look, so it was not expanded. If the table really is that large, save it "
                f"as a plain (uncompressed) CSV and open that, or raise the limit (environment variable "
                f"{EXPAND_VARIABLE}, in MB)")


_UNLIMITED = 1 << 62


def _mb(n: int) -> str:
    return f"{n / 2**20:,.0f} MB"


def check_columns(n: int, path: str | None, line: int | None = None) -> None:
    """Refuse more than MAX_COLUMNS columns before any frame is built."""
    if n > MAX_COLUMNS:
        raise DataError(f"has {n:,} columns, more than the {MAX_COLUMNS:,} this app reads; a table this wide is not "
                        "a table of people (select the columns you need, e.g. in a spreadsheet, and save them)",
                        path=path, line=line)


def check_cells(n_rows: int, n_cols: int, limits: Limits, path: str | None, what: str = "the table") -> None:
    """Refuse a declared or found shape over `limits.cells`, before a dense table is built."""
    if n_rows * n_cols > limits.cells:
        raise DataError(f"{what} has {n_rows:,} rows x {n_cols:,} columns = {n_rows * n_cols:,} cells, more than "
                        f"the {limits.cells:,} this app reads from a file of this size; save the table as a plain "
                        f"CSV (or select fewer columns), or raise the limit (environment variable {CELLS_VARIABLE})",
                        path=path)


# ---- column names ------------------------------------------------------------------------------------------
# characters that draw nothing (or only a blank) and so make a name differ from what is shown
_BLANK_LOOKING = {0x115F, 0x1160, 0x3164, 0xFFA0, 0x2800, 0x034F, 0x180E}
_VISIBLE_CONTROLS = {"\t", "\n", "\r"}  # shown as space or a line break (Excel's Alt+Enter in a header)
# Cyrillic and Greek letters drawn like Latin ones (lower case after case folding): the usual spoofs of a name
_LOOK_ALIKE = str.maketrans({
    "а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "у": "y", "х": "x", "і": "i", "ј": "j", "ѕ": "s",
    "һ": "h", "ԁ": "d", "ԛ": "q", "ԝ": "w", "ү": "y", "ӏ": "l", "в": "b", "к": "k", "м": "m", "н": "h",
    "т": "t", "α": "a", "ο": "o", "ρ": "p", "ν": "v", "ι": "i", "κ": "k", "χ": "x", "τ": "t", "υ": "u",
    "β": "b", "ε": "e", "η": "n", "μ": "u",
})
_SPACES = re.compile(r"\s+")


def invisible_characters(name: str) -> list[str]:
    """Characters of `name` that are not drawn ('U+200B ZERO WIDTH SPACE'), each once."""
    if name.isascii() and name.isprintable():
        return []
    found: list[str] = []
    for ch in name:
        code = ord(ch)
        cat = unicodedata.category(ch)
        invisible = ((cat in ("Cf", "Cc", "Zl", "Zp", "Co", "Cn", "Cs") and ch not in _VISIBLE_CONTROLS)
                     or code in _BLANK_LOOKING or 0xFE00 <= code <= 0xFE0F or 0xE0100 <= code <= 0xE01EF)
        if invisible:
            label = f"U+{code:04X} {unicodedata.name(ch, 'unnamed character')}"
            if label not in found:
                found.append(label)
    return found


def look_alike_key(name: str) -> str:
    """What a name looks like: NFKC, case folded, white space collapsed, Cyrillic/Greek look-alikes as Latin."""
    if name.isascii():
        return _SPACES.sub(" ", name.lower()).strip()
    text = unicodedata.normalize("NFKC", name).casefold()
    return _SPACES.sub(" ", text.translate(_LOOK_ALIKE)).strip()


def check_names(names: list, path: str | None, header_line: int | None) -> list[str]:
    """Stripped names, or a DataError naming the column: blank, duplicate, invisible characters, look-alikes."""
    if not names:
        raise DataError("the table has no columns", path=path, line=header_line)
    clean = [str(n).strip() if n is not None else "" for n in names]
    seen: dict[str, int] = {}
    looks: dict[str, int] = {}
    for j, name in enumerate(clean, start=1):
        if not name or name.lower() == "nan":
            raise DataError(f"column {j} has no name in the header; give every column a name", path=path,
                            line=header_line, column=j)
        if name in seen:
            raise DataError(f"column {j} is named {name!r} like column {seen[name]}; column names must be unique",
                            path=path, line=header_line, column=j)
        seen[name] = j
        hidden = invisible_characters(name)
        if hidden:
            raise DataError(f"the name of column {j}, {name!r}, holds {len(hidden)} invisible character(s) "
                            f"({', '.join(hidden)}): it is not the name you see. Retype that name in the header",
                            path=path, line=header_line, column=j)
        key = look_alike_key(name)
        if key in looks:
            first = looks[key]
            raise DataError(f"column {j} is named {name!r}, which looks the same as column {first}, "
                            f"{clean[first - 1]!r} (they differ only in case, width or look-alike letters); "
                            "roles are chosen by name, so rename one of them", path=path, line=header_line,
                            column=j)
        looks[key] = j
    return clean
