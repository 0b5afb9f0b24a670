"""Write releases and reports atomically, never over the source file, with spreadsheet formulas neutralised.

Every write goes to a temporary file in the target's folder and is then renamed over the target (os.replace), so
a crash or a full disk leaves either the old file or the new one, never half a file, and no temporary behind.
A text cell that a spreadsheet would run as a formula (= + - @ tab CR at its start) gets a leading apostrophe.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import enum
import json
import os
import re
import tempfile
from fractions import Fraction
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from ppdp_gui.engine.data.schema import SourceInfo
from ppdp_gui.engine.errors import DataError

FORMATS = {".csv": "csv", ".tsv": "tsv", ".xlsx": "xlsx", ".parquet": "parquet"}
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$"
EXCEL_MAX_ROWS = 1_048_576 - 1  # one row is the header
EXCEL_MAX_COLS = 16_384


def export_table(frame: pd.DataFrame, path, *, source: SourceInfo | None = None) -> Path:
    """Write `frame` to `path` (format from the suffix: .csv .tsv .xlsx .parquet) and return the final path."""
    target = _target(path, source)
    fmt = FORMATS.get(target.suffix.lower())
    if fmt is None:
        raise DataError(f"cannot export to {target.suffix or 'a file without suffix'}; use one of "
                        f"{', '.join(FORMATS)}", path=str(target))
    if not isinstance(frame, pd.DataFrame):
        raise DataError(f"expected a pandas DataFrame to export, got {type(frame).__name__}")
    if fmt == "parquet":
        table = frame.copy()
        table.columns = [str(c) for c in table.columns]
        return _atomic(target, lambda tmp: table.to_parquet(tmp, index=False))
    safe = neutralise_formulas(frame)
    if fmt == "xlsx":
        if len(safe) > EXCEL_MAX_ROWS or safe.shape[1] > EXCEL_MAX_COLS:
            raise DataError(f"{len(safe):,} rows x {safe.shape[1]:,} columns do not fit in an Excel sheet "
                            f"(at most {EXCEL_MAX_ROWS:,} x {EXCEL_MAX_COLS:,}); export CSV or Parquet instead",
                            path=str(target))
        return _atomic(target, lambda tmp: _write_xlsx(safe, tmp))
    sep = "\t" if fmt == "tsv" else ","
    # CRLF line ends (RFC 4180) so that a value holding a bare CR is quoted too
    return _atomic(target, lambda tmp: safe.to_csv(tmp, sep=sep, index=False, lineterminator="\r\n",
                                                   encoding="utf-8"))


def neutralise_formulas(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy where text cells (and column names) that would start a formula begin with an apostrophe.

    Only text is touched: numbers stay numbers, and a text cell that is just a number (like '-5') is left alone
    because a spreadsheet reads it as that number, not as a formula.
    """
    out = frame.copy()
    out.columns = [_neutral_text(str(c)) for c in frame.columns]
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
        text = col.astype("str")
        is_str = col.map(lambda v: isinstance(v, str)).to_numpy(dtype=bool) if col.dtype == object else \
            col.notna().to_numpy()
        risky = (text.str.startswith(FORMULA_START).fillna(False).to_numpy(dtype=bool)
                 & ~text.str.match(_PLAIN_NUMBER).fillna(False).to_numpy(dtype=bool) & is_str)
        if risky.any():
            fixed = col.astype(object).copy()
            fixed[risky] = "'" + text[risky]
            out.isetitem(pos, fixed)
        else:
            out.isetitem(pos, col)
    return out


def _neutral_categories(col: pd.Series) -> pd.Series | None:
    """A categorical column with its text categories neutralised, or None when that cannot be done in place."""
    cats = col.cat.categories
    if not all(isinstance(c, str) for c in cats):
        return None
    fixed = [_neutral_text(c) for c in cats]
    if len(set(fixed)) != len(fixed):
        return None
    return col.cat.rename_categories(fixed)


def _neutral_text(text: str) -> str:
    if text.startswith(FORMULA_START) and not re.match(_PLAIN_NUMBER, text):
        return "'" + text
    return text


def _write_xlsx(frame: pd.DataFrame, tmp: Path) -> None:
    import openpyxl  # lazy: only needed for workbooks
    from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE

    columns = []
    for pos in range(frame.shape[1]):
        col = frame.iloc[:, pos]
        if col.dtype == object or pd.api.types.is_string_dtype(col.dtype):
            bad = col.astype("str").str.contains(ILLEGAL_CHARACTERS_RE.pattern, regex=True).fillna(False)
            if bad.any():
                row = int(np.flatnonzero(bad.to_numpy(dtype=bool))[0]) + 1
                raise DataError(f"column {frame.columns[pos]!r} row {row} holds a control character that Excel "
                                "cannot store; export CSV or Parquet instead", column=str(frame.columns[pos]))
        columns.append(col.astype(object).where(col.notna(), None).tolist())
    book = openpyxl.Workbook(write_only=True)  # created only once the values are known to fit
    sheet = book.create_sheet("release")
    sheet.append(list(frame.columns))
    for row in zip(*columns):
        sheet.append(list(row))
    book.save(tmp)


# ---- plain files -------------------------------------------------------------------------------------------
def write_text_atomic(text: str, path, *, encoding: str = "utf-8") -> Path:
    """Replace `path` with `text` in one step."""
    target = _target(path, None)
    data = text.encode(encoding)
    return _atomic(target, lambda tmp: Path(tmp).write_bytes(data))


def write_json_atomic(obj, path) -> Path:
    """Replace `path` with `obj` as indented UTF-8 JSON (Fractions, numpy scalars, enums, paths made plain)."""
    try:
        text = json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=False, default=_json_default)
    except (TypeError, ValueError) as exc:
        raise DataError(f"cannot be written as JSON: {exc}", path=str(path)) from None
    return write_text_atomic(text + "\n", path)


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
def _target(path, source: SourceInfo | None) -> Path:
    target = Path(os.path.expanduser(os.fspath(path)))
    if target.is_dir():
        raise DataError("is a folder; choose a file name to export to", path=str(target))
    if not target.parent.is_dir():
        raise DataError("the folder does not exist", path=str(target.parent))
    if source is not None and source.path and _same_file(target, Path(source.path)):
        raise DataError("is the file the data was read from; it is never overwritten, choose another name",
                        path=str(target))
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


def _atomic(target: Path, write: Callable[[Path], object]) -> Path:
    fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp = Path(name)
    try:
        write(tmp)
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)
        os.replace(tmp, target)
    except DataError:
        tmp.unlink(missing_ok=True)
        raise
    except Exception as exc:  # disk full, permissions, a library error: report, leave nothing behind
        tmp.unlink(missing_ok=True)
        raise DataError(f"could not be written ({type(exc).__name__}: {exc}); nothing was changed",
                        path=str(target)) from None
    return target
