"""Load a table safely: CSV/TSV (also gzipped), XLSX or Parquet -> typed Dataset, or one clear DataError.

Files are read as text, then typed by the shown rule in `coltypes`, then given guessed roles (`roles`), so what
the custodian sees is never a silent guess by a parser. Every failure becomes a DataError naming the file, line
and column; a file is either loaded completely or not at all.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import re
import zlib
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import numpy as np
import pandas as pd

from ppdp_gui.engine.data import coltypes
from ppdp_gui.engine.data.delimited import head_text, line_of_record, parse_delimited, sniff_delimiter, to_utf8
from ppdp_gui.engine.data.roles import guess_roles
from ppdp_gui.engine.data.schema import ColumnSpec, Dataset, NAPolicy, Role, SourceInfo
from ppdp_gui.engine.errors import DataError
from ppdp_gui.engine.privacy.fingerprint import canonical_row_hashes

if TYPE_CHECKING:  # pragma: no cover
    from ppdp_gui.engine.taxonomy import Taxonomy

#: files (and gzip contents) larger than this are refused unless the caller raises `max_bytes`
DEFAULT_MAX_BYTES = 1 << 30
TEXT_FORMATS = {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".txt": "csv"}
EXCEL_SUFFIXES = (".xlsx", ".xlsm")
PARQUET_SUFFIXES = (".parquet", ".pq")
SUPPORTED = "CSV, TSV (optionally .gz), XLSX or Parquet"
LineOfRow = Callable[[int], "int | None"]
_NOT_BLANK = re.compile(rb"\S")


# ---- public ------------------------------------------------------------------------------------------------
def read_table(path, *, na_policy: NAPolicy = NAPolicy(), kinds: dict[str, str] | None = None,
               roles: dict[str, Role] | None = None, sheet: str | int | None = None,
               delimiter: str | None = None, encoding: str | None = None,
               max_bytes: int = DEFAULT_MAX_BYTES) -> Dataset:
    """Read a table file completely into a Dataset, or raise one DataError.

    The first non-blank line is the header. The delimiter is sniffed among , ; tab | unless given. Text must be
    UTF-8 (a BOM is fine) unless `encoding` names another. Values are stripped of surrounding spaces.
    """
    p = Path(os.path.expanduser(str(path)))
    where = str(p)
    try:
        raw = _read_bytes(p, max_bytes)
        sha256 = hashlib.sha256(raw).hexdigest()
        fmt = _file_format(p, raw)
        delim = None
        if fmt in ("xlsx", "parquet"):
            frame, line_of_row, header_line = _read_xlsx(raw, where, sheet) if fmt == "xlsx" else (
                _read_parquet(raw, where), None, None)
        else:
            data = _text_bytes(raw, fmt, where, encoding, max_bytes)
            delim = delimiter or ("\t" if fmt.startswith("tsv") else sniff_delimiter(head_text(data)))
            header, header_line, frame = parse_delimited(data, delim, where)
            frame = _drop_empty_unnamed(frame, header)
            line_of_row = _reloading_line_lookup(p, fmt, encoding, max_bytes, delim)
            del data
        del raw  # the bytes are not kept while typing: error messages re-read the file
        n_read = len(frame)
        cols = _columns(frame, where, header_line)
        row_hashes = canonical_row_hashes(frame)  # the raw rows, before any policy: what the ledger identifies
        del frame  # _build consumes `cols`, so each original column is freed once converted
        frame, schema, dropped = _build(cols, n_read, kinds=kinds, roles=roles, taxonomies=None,
                                        na_policy=na_policy, line_of_row=line_of_row, path=where)
    except MemoryError:
        raise DataError("is too large to load into this computer's memory", path=where) from None
    source = SourceInfo(path=str(p.resolve()), sha256=sha256, n_rows_read=n_read, n_rows_dropped=dropped,
                        na_policy=na_policy, delimiter=delim, file_format=fmt, row_hashes=row_hashes)
    return Dataset(frame=frame, schema=schema, source=source)


def dataset_from_frame(frame: pd.DataFrame, *, roles: dict[str, Role] | None = None,
                       kinds: dict[str, str] | None = None, taxonomies: dict[str, "Taxonomy"] | None = None,
                       na_policy: NAPolicy = NAPolicy(), source: SourceInfo | None = None) -> Dataset:
    """A Dataset from an in-memory frame of strings or typed values, by the same rules as `read_table`.

    The input frame is not modified. Roles not given are guessed; kinds not given are inferred (pass the kinds
    of an existing Dataset to keep them). Categorical columns always hold strings in the result.
    """
    if not isinstance(frame, pd.DataFrame):
        raise DataError(f"expected a pandas DataFrame, got {type(frame).__name__}")
    where = source.path if source else None
    out, schema, dropped = _build(_columns(frame, where, None), len(frame), kinds=kinds, roles=roles,
                                  taxonomies=taxonomies, na_policy=na_policy, line_of_row=None, path=where)
    if source is None:
        source = SourceInfo(n_rows_read=len(frame), n_rows_dropped=dropped, na_policy=na_policy)
    elif dropped:
        source = replace(source, n_rows_dropped=source.n_rows_dropped + dropped)
    return Dataset(frame=out, schema=schema, source=source)


# ---- files -------------------------------------------------------------------------------------------------
def _read_bytes(p: Path, max_bytes: int) -> bytes:
    where = str(p)
    try:
        st = p.stat()
    except FileNotFoundError:
        raise DataError("no such file", path=where) from None
    except OSError as exc:
        raise DataError(f"cannot be opened: {exc.strerror or exc}", path=where) from None
    if p.is_dir():
        raise DataError("is a folder, not a file; choose a table file inside it", path=where)
    if st.st_size > max_bytes:
        raise DataError(f"is {st.st_size / 2**20:,.0f} MB, more than the limit of {max_bytes / 2**20:,.0f} MB; "
                        "raise the limit or load a smaller extract", path=where)
    try:
        with open(p, "rb") as fh:
            raw = fh.read(max_bytes + 1)
    except OSError as exc:
        raise DataError(f"cannot be read: {exc.strerror or exc}", path=where) from None
    if len(raw) > max_bytes:
        raise DataError(f"is larger than the limit of {max_bytes / 2**20:,.0f} MB", path=where)
    if not raw:
        raise DataError("the file is empty (0 bytes)", path=where, line=1)
    return raw


def _file_format(p: Path, raw: bytes) -> str:
    """Format from the content's signature when it has one, else from the suffix."""
    suffixes = [s.lower() for s in p.suffixes]
    last = suffixes[-1] if suffixes else ""
    if raw[:2] == b"\x1f\x8b":
        inner = suffixes[-2] if last == ".gz" and len(suffixes) > 1 else ".csv"
        return f"{TEXT_FORMATS.get(inner, 'csv')}.gz"
    if raw[:4] == b"PAR1":
        return "parquet"
    if raw[:4] == b"PK\x03\x04":
        return "xlsx"
    if raw[:4] == b"\xd0\xcf\x11\xe0":
        raise DataError("is an old-style Excel (.xls) or other Office file; save it as .xlsx or CSV", path=str(p))
    if last in EXCEL_SUFFIXES or last in PARQUET_SUFFIXES:
        kind = "an Excel workbook" if last in EXCEL_SUFFIXES else "a Parquet file"
        raise DataError(f"is named like {kind} but its content is not one (damaged or renamed file)", path=str(p))
    if last == ".gz":
        raise DataError("is named .gz but is not gzip-compressed", path=str(p))
    return TEXT_FORMATS.get(last, "csv")


def _text_bytes(raw: bytes, fmt: str, where: str, encoding: str | None, max_bytes: int) -> bytes:
    data = _gunzip(raw, where, max_bytes) if fmt.endswith(".gz") else raw
    data = to_utf8(data, where, encoding)
    if not _NOT_BLANK.search(data):
        raise DataError("the file is empty", path=where, line=1)
    return data


def _reloading_line_lookup(p: Path, fmt: str, encoding: str | None, max_bytes: int, delim: str) -> LineOfRow:
    """Row -> line for error messages; reads the file again (error path only) instead of keeping its bytes."""
    def line_of_row(row: int) -> int | None:
        try:
            return line_of_record(_text_bytes(_read_bytes(p, max_bytes), fmt, str(p), encoding, max_bytes),
                                  delim, row)
        except DataError:
            return None
    return line_of_row


def _gunzip(raw: bytes, where: str, max_bytes: int) -> bytes:
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(raw)) as gz:
            data = gz.read(max_bytes + 1)
    except (OSError, EOFError, zlib.error) as exc:
        raise DataError(f"is not a complete gzip file ({exc})", path=where) from None
    if len(data) > max_bytes:
        raise DataError(f"unpacks to more than the limit of {max_bytes / 2**20:,.0f} MB", path=where)
    return data


def _read_xlsx(raw: bytes, where: str, sheet: str | int | None) -> tuple[pd.DataFrame, LineOfRow, int]:
    """First row = header; Excel row numbers are the 'lines' in messages."""
    import openpyxl  # lazy: only needed for workbooks

    try:
        book = openpyxl.load_workbook(io.BytesIO(raw), read_only=True, data_only=True)
    except Exception as exc:  # openpyxl raises many types for damaged files
        raise DataError(f"cannot be read as an Excel workbook ({type(exc).__name__}: {exc})", path=where) from None
    try:
        names = book.sheetnames
        if sheet is None:
            ws = book[names[0]]
        elif isinstance(sheet, int):
            if not 0 <= sheet < len(names):
                raise DataError(f"has no sheet number {sheet + 1}; its sheets are {names}", path=where)
            ws = book[names[sheet]]
        elif sheet in names:
            ws = book[sheet]
        else:
            raise DataError(f"has no sheet named {sheet!r}; its sheets are {names}", path=where)
        rows = [list(r) for r in ws.iter_rows(values_only=True)]
    except DataError:
        raise
    except Exception as exc:
        raise DataError(f"cannot be read as an Excel workbook ({type(exc).__name__}: {exc})", path=where) from None
    finally:
        book.close()
    filled = [i for i, r in enumerate(rows) if any(v is not None and str(v).strip() != "" for v in r)]
    if not filled:
        raise DataError(f"sheet {ws.title!r} is empty", path=where, line=1)
    first = filled[0]
    width = max(len(r) for r in rows)
    header = rows[first] + [None] * (width - len(rows[first]))
    body = [r + [None] * (width - len(r)) for r in (rows[i] for i in filled[1:])]
    body_lines = [i + 1 for i in filled[1:]]  # Excel row numbers
    if not body:
        raise DataError(f"sheet {ws.title!r} has a header on row {first + 1} but no data rows", path=where,
                        line=first + 2)
    frame = pd.DataFrame(body, columns=range(width), dtype=object)
    keep = [j for j in range(width) if _cell_text(header[j]) or frame[j].notna().any()]
    frame = frame[keep].apply(_excel_text)
    frame.columns = [_cell_text(header[j]) for j in keep]
    return frame, (lambda row: body_lines[row] if 0 <= row < len(body_lines) else first + 1), first + 1


def _cell_text(value) -> str:
    return "" if value is None else _excel_text(pd.Series([value])).iloc[0]


def _excel_text(col: pd.Series) -> pd.Series:
    """Cells as the text a user sees: 39.0 stored by Excel reads as '39', dates as 2020-01-02."""
    def one(v):
        if v is None:
            return None
        if isinstance(v, float) and v.is_integer() and abs(v) < 2**53:
            return str(int(v))
        if hasattr(v, "isoformat"):
            text = v.isoformat(sep=" ") if hasattr(v, "hour") and hasattr(v, "date") else v.isoformat()
            return text[:-9] if text.endswith(" 00:00:00") else text
        return str(v)
    return col.map(one).astype("str")


def _read_parquet(raw: bytes, where: str) -> pd.DataFrame:
    import pyarrow.parquet as pq

    try:
        frame = pq.read_table(io.BytesIO(raw)).to_pandas()
    except Exception as exc:  # pyarrow raises several types for damaged files
        raise DataError(f"cannot be read as a Parquet file ({type(exc).__name__}: {exc})", path=where) from None
    if frame.shape[1] == 0:
        raise DataError("the Parquet file has no columns", path=where)
    if len(frame) == 0:
        raise DataError("the Parquet file has columns but no rows", path=where)
    return frame.reset_index(drop=True)


# ---- typing, missing values, roles -----------------------------------------------------------------------
def _drop_empty_unnamed(frame: pd.DataFrame, header: list[str]) -> pd.DataFrame:
    """Name the columns; drop those with a blank name and no value at all (a trailing delimiter on every line)."""
    frame.columns = header
    blank = [j for j, name in enumerate(header) if not str(name).strip()]
    empty = [j for j in blank if not coltypes.has_text(frame.iloc[:, j])]
    if empty:
        frame = frame.iloc[:, [j for j in range(len(header)) if j not in set(empty)]]
    return frame


def _columns(frame: pd.DataFrame, path: str | None, header_line: int | None) -> dict[str, pd.Series]:
    names = _check_names(list(frame.columns), path, header_line)
    return {name: frame.iloc[:, pos] for pos, name in enumerate(names)}


def _build(cols: dict[str, pd.Series], n: int, *, kinds, roles, taxonomies, na_policy: NAPolicy,
           line_of_row: LineOfRow | None, path: str | None) -> tuple[pd.DataFrame, tuple[ColumnSpec, ...], int]:
    """Missing values, kinds, conversion and roles. Consumes `cols` (replaced column by column, to save memory)."""
    names = list(cols)
    kinds, roles, taxonomies = _check_options(names, kinds, roles, taxonomies, path)
    if na_policy.action not in ("drop", "category"):
        raise DataError(f"unknown missing-value action {na_policy.action!r} (use 'drop' or 'category')")
    tokens = list(na_policy.tokens)
    missing: dict[str, np.ndarray] = {}
    for name in names:
        col = cols[name]
        if isinstance(col.dtype, pd.CategoricalDtype):
            col = col.astype(col.cat.categories.dtype)
        if coltypes.is_text_dtype(col.dtype):
            col = col.astype("str")
            if coltypes.has_outer_space(col):  # strip only when needed: saves a copy of the column
                col = col.str.strip()
            miss = col.isna().to_numpy() | col.isin(tokens).to_numpy()
        else:
            miss = col.isna().to_numpy()
        cols[name], missing[name] = col, miss
    dropped = 0
    if na_policy.action == "drop" and names:
        any_missing = np.logical_or.reduce([missing[c] for c in names])
        dropped = int(any_missing.sum())
        if dropped and dropped == n:
            raise DataError(f"every one of the {n} rows has a missing value ({', '.join(map(repr, tokens))}); "
                            "keep missing values as a category instead", path=path)
        if dropped:
            keep = ~any_missing
            for name in names:
                cols[name] = cols[name][keep]
                missing[name] = missing[name][keep]
    final_kinds: dict[str, str] = {}
    for name in names:
        col, miss = cols[name], missing[name]
        text = coltypes.is_text_dtype(col.dtype)
        present = col[~miss] if miss.any() else col
        kind = kinds.get(name) or (coltypes.infer_text_kind(present) if text else coltypes.infer_typed_kind(present))
        final_kinds[name] = kind
        cols[name] = _convert(col, miss, kind, text, name, na_policy, line_of_row)
    out = pd.DataFrame(cols).reset_index(drop=True) if names else pd.DataFrame(index=range(n - dropped))
    cols.clear()
    guessed = guess_roles(out, final_kinds)
    guessed.update(roles)
    schema = tuple(ColumnSpec(name=c, kind=final_kinds[c], role=guessed[c], taxonomy=taxonomies.get(c))
                   for c in names)
    return out, schema, dropped


def _convert(col: pd.Series, miss: np.ndarray, kind: str, text: bool, name: str, na_policy: NAPolicy,
             line_of_row: LineOfRow | None) -> pd.Series:
    if kind == "numeric":
        if text:
            return coltypes.text_to_numeric(col, miss, name, line_of_row)
        if pd.api.types.is_bool_dtype(col.dtype) or coltypes.is_number_dtype(col.dtype):
            values = (col[~miss] if miss.any() else col).to_numpy(dtype=float)
            if not np.isfinite(values).all():
                raise DataError(f"column {name!r} is set to numeric but holds infinite values", column=name)
            return coltypes.numbers_to_column(values, miss, col.index)
        raise DataError(f"column {name!r} holds {col.dtype} values, which cannot be numeric; make it categorical",
                        column=name)
    out = col if text else coltypes.typed_to_text(col)
    if miss.any():
        out = out.where(~miss, other=na_policy.category_label)
    return out.astype("str")


def _check_names(names: list, path: str | None, header_line: int | None) -> list[str]:
    if not names:
        raise DataError("the table has no columns", path=path, line=header_line)
    clean = [str(n).strip() if n is not None else "" for n in names]
    seen: dict[str, int] = {}
    for j, name in enumerate(clean, start=1):
        if not name or name.lower() == "nan":
            raise DataError(f"column {j} has no name in the header; give every column a name", path=path,
                            line=header_line, column=j)
        if name in seen:
            raise DataError(f"column {j} is named {name!r} like column {seen[name]}; column names must be unique",
                            path=path, line=header_line, column=j)
        seen[name] = j
    return clean


def _check_options(names, kinds, roles, taxonomies, path):
    known = set(names)
    kinds, roles, taxonomies = dict(kinds or {}), dict(roles or {}), dict(taxonomies or {})
    for what, given in (("kind", kinds), ("role", roles), ("taxonomy", taxonomies)):
        for name in given:
            if name not in known:
                raise DataError(f"a {what} is given for column {name!r}, which the table does not have "
                                f"(columns: {', '.join(names)})", path=path, column=str(name))
    for name, kind in kinds.items():
        if kind not in coltypes.KINDS:
            raise DataError(f"kind {kind!r} for column {name!r} is not one of {coltypes.KINDS}", column=name)
    for name, role in roles.items():
        roles[name] = _as_role(role, name)
    return kinds, roles, taxonomies


def _as_role(role, name: str) -> Role:
    if isinstance(role, Role):
        return role
    text = str(role).strip()
    for r in Role:
        if text in (r.value, r.name) or text.lower().replace("_", "-").replace(" ", "-") == r.value:
            return r
    raise DataError(f"role {role!r} for column {name!r} is not one of {[r.value for r in Role]}", column=name)
