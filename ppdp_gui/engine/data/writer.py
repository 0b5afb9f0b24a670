"""Write releases and reports atomically, never over a protected file, with spreadsheet formulas neutralised.

Every write goes to a temporary file in the target's folder and is then renamed over the target (os.replace), so
a crash or a full disk leaves either the old file or the new one, never half a file. A failed write removes its
temporary file; one left by a kill or a power cut is registered and removed at the next start (leftovers.py).
`stage` / `commit` split that in two so the publish path can read each temporary file back and recount its
claims *on the bytes written* before any of them is renamed into place.

Protected files: the source table and the budget ledger (database, key, journal) are never written over, by
resolved path or by inode (hard links, symlinks); callers pass them as `protected`.

Neutralisation is injective, so the checker sees the same groups in the file as in memory: a text cell that a
spreadsheet would run as a formula — one starting with = + - @ tab CR, or their full-width forms (＝ ＋ －
＠) — gets a leading apostrophe, and so does a cell that already starts with an apostrophe ('=flu' and "'=flu"
stay different: "'=flu" and "''=flu"). Plain ASCII numbers ('-5', '+3.2e4') are left alone; a number in other
digits ('+١٢٣') is not a number to a spreadsheet's formula parser and is neutralised.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import enum
import hashlib
import json
import os
import re
from fractions import Fraction
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from ppdp_gui.engine.data.csv_writer import write_csv
from ppdp_gui.engine.data.leftovers import register, temporary_name, unregister
from ppdp_gui.engine.data.schema import SourceInfo
from ppdp_gui.engine.data.xlsx_stream import write_xlsx
from ppdp_gui.engine.errors import DataError

FORMATS = {".csv": "csv", ".tsv": "tsv", ".xlsx": "xlsx", ".parquet": "parquet"}
FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\uff1d", "\uff0b", "\uff0d", "\uff20", "\u2212", "\ufe62",
                 "\ufe63", "\ufe66", "\ufe6b")
MARK = "'"
NEUTRAL_START = FORMULA_START + (MARK,)
_PLAIN_NUMBER = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$"
EXCEL_MAX_ROWS = 1_048_576 - 1  # one row is the header
EXCEL_MAX_COLS = 16_384


def table_format(path) -> str:
    """'csv', 'tsv', 'xlsx' or 'parquet' from the file name, or DataError naming what is possible."""
    fmt = FORMATS.get(Path(path).suffix.lower())
    if fmt is None:
        raise DataError(f"cannot export to {Path(path).suffix or 'a file without suffix'}; use one of "
                        f"{', '.join(FORMATS)}", path=str(path))
    return fmt


def _table_writer(frame: pd.DataFrame, fmt: str, target: Path) -> Callable[[Path], object]:
    if not isinstance(frame, pd.DataFrame):
        raise DataError(f"expected a pandas DataFrame to export, got {type(frame).__name__}")
    if fmt == "parquet":
        table = frame.copy()
        table.columns = [str(c) for c in table.columns]
        return lambda tmp: table.to_parquet(tmp, index=False)
    _refuse_infinities(frame, target)
    safe = neutralise_formulas(frame)
    if fmt == "xlsx":
        if len(safe) > EXCEL_MAX_ROWS or safe.shape[1] > EXCEL_MAX_COLS:
            raise DataError(f"{len(safe):,} rows x {safe.shape[1]:,} columns do not fit in an Excel sheet "
                            f"(at most {EXCEL_MAX_ROWS:,} x {EXCEL_MAX_COLS:,}); export CSV or Parquet instead",
                            path=str(target))
        return lambda tmp: _write_xlsx(safe, tmp)
    sep = "\t" if fmt == "tsv" else ","
    # CRLF line ends (RFC 4180) so that a value holding a bare CR is quoted too; pandas' to_csv bytes, written
    # per distinct value (data/csv_writer.py)
    return lambda tmp: write_csv(safe, tmp, sep=sep)


def _refuse_infinities(frame: pd.DataFrame, target: Path) -> None:
    """A spreadsheet has no infinite number: CSV would hold '-inf' (read as a formula, =-inf) and Excel cannot
    store it (openpyxl leaves the cell empty), so such a table is refused for CSV/TSV/XLSX, naming the column."""
    for pos in range(frame.shape[1]):
        col = frame.iloc[:, pos]
        if pd.api.types.is_float_dtype(col.dtype) and np.isinf(col.to_numpy(dtype=float, na_value=np.nan)).any():
            raise DataError(f"column {frame.columns[pos]!r} holds infinite values, which a spreadsheet cannot hold as "
                            "numbers (CSV would show '-inf' as a formula); export Parquet instead, or remove them",
                            path=str(target), column=str(frame.columns[pos]))


def export_table(frame: pd.DataFrame, path, *, source: SourceInfo | None = None, protected=()) -> Path:
    """Write `frame` to `path` (format from the suffix: .csv .tsv .xlsx .parquet) and return the final path."""
    target = _target(path, source, protected)
    fmt = table_format(target)
    return _atomic(target, _table_writer(frame, fmt, target))


@dataclasses.dataclass
class Staged:
    """A table written to a temporary file beside its target, not yet renamed into place."""

    target: Path
    tmp: Path
    fmt: str
    sha256: str = ""
    entry: Path | None = None  # its in-flight registration (leftovers.py)

    def discard(self) -> None:
        self.tmp.unlink(missing_ok=True)
        unregister(self.entry)


def stage_table(frame: pd.DataFrame, path, *, source: SourceInfo | None = None, protected=()) -> Staged:
    """Write `frame` to a temporary file in `path`'s folder (fsynced); `commit` renames it, `discard` drops it."""
    target = _target(path, source, protected)
    fmt = table_format(target)
    tmp, entry = _write_temporary(target, _table_writer(frame, fmt, target))
    return Staged(target, tmp, fmt, file_sha256(tmp), entry)


def stage_with(path, write: Callable[[Path, str], object], *, source: SourceInfo | None = None,
               protected=()) -> Staged:
    """`stage_table` for rows that are not a DataFrame: `write(tmp, fmt)` fills the temporary file (a large
    table's release is written by DuckDB's COPY: engine/bigdata/output.py)."""
    target = _target(path, source, protected)
    fmt = table_format(target)
    tmp, entry = _write_temporary(target, lambda tmp: write(tmp, fmt))
    return Staged(target, tmp, fmt, file_sha256(tmp), entry)


def commit(staged: Staged, *, source: SourceInfo | None = None, protected=()) -> Path:
    """Rename a staged file into place (the protected paths are checked again: nothing may have moved)."""
    _target(staged.target, source, protected)
    try:
        _publishable(staged.tmp)
        os.replace(staged.tmp, staged.target)
    except OSError as exc:
        staged.discard()
        raise DataError(f"could not be written ({exc.strerror or exc}); nothing was changed",
                        path=str(staged.target)) from None
    unregister(staged.entry)
    return staged.target


def neutralise_formulas(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy where text cells (and column names) that would start a formula begin with an apostrophe.

    Only text is touched: numbers stay numbers, and a text cell that is just a number (like '-5') is left alone
    because a spreadsheet reads it as that number, not as a formula.
    """
    out = frame.copy()
    out.columns = [neutral_text(str(c)) for c in frame.columns]
    for pos in range(out.shape[1]):
        col = out.iloc[:, pos]
        if isinstance(col.dtype, pd.CategoricalDtype):
            renamed = _neutral_categories(col)
            if renamed is not None:  # one check per distinct value, not per cell
                out.isetitem(pos, renamed)
                continue
            col = col.astype(col.cat.categories.dtype)
        if not (pd.api.types.is_string_dtype(col.dtype) or pd.api.types.is_object_dtype(col.dtype)):
            continue
        # one decision per distinct value (the same `neutral_text` as column names and categories), not per cell
        codes, uniques = pd.factorize(col, use_na_sentinel=True)
        fixed_uniques = [neutral_text(v) if isinstance(v, str) else v for v in uniques]
        if any(a is not b for a, b in zip(fixed_uniques, uniques)):
            values = np.empty(len(fixed_uniques) + 1, dtype=object)
            values[:-1] = fixed_uniques
            values[-1] = None
            out.isetitem(pos, pd.Series(values[codes], index=col.index, dtype=object).where(col.notna(), col))
        else:
            out.isetitem(pos, col)
    return out


def _neutral_categories(col: pd.Series) -> pd.Series | None:
    """A categorical column with its text categories neutralised (injective, so they stay distinct), or None
    when its categories are not all text."""
    cats = col.cat.categories
    if not all(isinstance(c, str) for c in cats):
        return None
    return col.cat.rename_categories([neutral_text(c) for c in cats])


def neutral_text(text: str) -> str:
    """The text a spreadsheet export holds for `text` (see the module docstring); injective. Returns the same
    object when nothing changes."""
    if text.startswith(NEUTRAL_START) and not re.match(_PLAIN_NUMBER, text):
        return MARK + text
    return text


def _write_xlsx(frame: pd.DataFrame, tmp: Path, progress: Callable[[float], None] | None = None) -> None:
    """One sheet named 'release' by the streaming writer (data/xlsx_stream.py: per distinct value, not per cell;
    about as fast as CSV). `progress(fraction)` is called as rows are written; raising in it stops the write."""
    write_xlsx(frame, tmp, progress=progress)


# ---- plain files -------------------------------------------------------------------------------------------
def write_text_atomic(text: str, path, *, encoding: str = "utf-8", protected=()) -> Path:
    """Replace `path` with `text` in one step (never a protected file)."""
    return write_bytes_atomic(text.encode(encoding), path, protected=protected)


def write_bytes_atomic(data: bytes, path, *, protected=()) -> Path:
    """Replace `path` with `data` in one step (never a protected file)."""
    target = _target(path, None, protected)
    return _atomic(target, lambda tmp: Path(tmp).write_bytes(data))


def json_text(obj) -> str:
    """`obj` as indented UTF-8 JSON text (Fractions, numpy scalars, enums, paths made plain), one final newline."""
    try:
        return json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=False, default=_json_default) + "\n"
    except (TypeError, ValueError) as exc:
        raise DataError(f"cannot be written as JSON: {exc}") from None


def write_json_atomic(obj, path, *, protected=()) -> Path:
    """Replace `path` with `obj` as indented UTF-8 JSON (Fractions, numpy scalars, enums, paths made plain)."""
    try:
        text = json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=False, default=_json_default)
    except (TypeError, ValueError) as exc:
        raise DataError(f"cannot be written as JSON: {exc}", path=str(path)) from None
    return write_text_atomic(text + "\n", path, protected=protected)


def _json_default(value):
    if isinstance(value, Fraction):
        return str(value)
    if isinstance(value, (np.integer, np.floating, np.bool_)):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (Path, os.PathLike)):
        return os.fspath(value)
    if isinstance(value, (_dt.datetime, _dt.date)):
        return value.isoformat()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


# ---- safety ------------------------------------------------------------------------------------------------
def _target(path, source: SourceInfo | None, protected=()) -> Path:
    target = Path(os.path.expanduser(os.fspath(path)))
    if target.is_dir():
        raise DataError("is a folder; choose a file name to export to", path=str(target))
    if not target.parent.is_dir():
        raise DataError("the folder does not exist", path=str(target.parent))
    if source is not None and source.path and _same_file(target, Path(source.path)):
        raise DataError("is the file the data was read from; this app must never overwrite it, choose another name",
                        path=str(target))
    from ppdp_gui.engine.data.outputs import refuse_protected
    refuse_protected(target)
    for other in protected or ():
        if other and _same_file(target, Path(other)):
            raise DataError(f"is a file this app must never overwrite ({Path(other).name}: the source table or the "
                            "privacy budget ledger); choose another name", path=str(target))
    return target


def _same_file(a: Path, b: Path) -> bool:
    """Same resolved path, or another name (hard link, symlink, case-insensitive disk) for the same inode."""
    try:
        if a.resolve() == b.resolve():
            return True
    except OSError:
        pass
    try:
        return a.exists() and b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def _temporary(target: Path) -> tuple[Path, Path | None]:
    """A new empty file (0600) with a recognisable name beside `target`, registered before it is created so that
    an interrupted write's leftover is removed at the next start (leftovers.py); and its registration."""
    tmp = temporary_name(target)
    entry = register(tmp)
    try:
        os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except OSError:
        unregister(entry)
        raise
    return tmp, entry


def _fsync(path: Path) -> None:
    with open(path, "rb+") as fh:
        os.fsync(fh.fileno())


def _publishable(tmp: Path) -> None:
    """mkstemp makes 0600 files; a release gets the user's usual permissions."""
    mask = os.umask(0)
    os.umask(mask)
    os.chmod(tmp, 0o666 & ~mask)


def file_sha256(path: Path) -> str:
    """sha256 of a file's bytes, read in blocks (a file larger than memory too)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _write_temporary(target: Path, write: Callable[[Path], object]) -> tuple[Path, Path | None]:
    """`write` into a fresh temporary file beside `target`, fsynced; on any failure nothing is left behind."""
    try:
        tmp, entry = _temporary(target)
    except OSError as exc:
        raise DataError(f"could not be written ({exc.strerror or exc}); nothing was changed", path=str(target)) from None
    try:
        write(tmp)
        _fsync(tmp)
    except DataError:
        _drop(tmp, entry)
        raise
    except Exception as exc:  # disk full, permissions, a library error: report, leave nothing behind
        _drop(tmp, entry)
        raise DataError(f"could not be written ({type(exc).__name__}: {exc}); nothing was changed",
                        path=str(target)) from None
    return tmp, entry


def _drop(tmp: Path, entry: Path | None) -> None:
    tmp.unlink(missing_ok=True)
    unregister(entry)


def _atomic(target: Path, write: Callable[[Path], object]) -> Path:
    tmp, entry = _write_temporary(target, write)
    try:
        _publishable(tmp)
        os.replace(tmp, target)
    except OSError as exc:
        _drop(tmp, entry)
        raise DataError(f"could not be written ({exc.strerror or exc}); nothing was changed",
                        path=str(target)) from None
    unregister(entry)
    return target
