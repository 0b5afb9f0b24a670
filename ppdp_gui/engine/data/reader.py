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
from typing import TYPE_CHECKING, Callable, NamedTuple

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ppdp_gui.engine.data import coltypes
from ppdp_gui.engine.data.delimited import head_text, line_of_record, parse_delimited, sniff_delimiter, to_utf8
from ppdp_gui.engine.data.guards import Limits, check_names
from ppdp_gui.engine.data.missing import (MissingReport, check_leave_out, every_row_missing, left_out_columns,
                                          never_released)
from ppdp_gui.engine.data.prechecks import check_parquet, read_regular
from ppdp_gui.engine.data.roles import guess_roles_with_reasons, guessed_parts
from ppdp_gui.engine.data.schema import ColumnSpec, Dataset, NAPolicy, Role, SourceInfo
from ppdp_gui.engine.data.xlsx import read_xlsx
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
               max_bytes: int = DEFAULT_MAX_BYTES, own_file: bool = False) -> Dataset:
    """Read a table file completely into a Dataset, or raise one DataError.

    The first non-blank line is the header. The delimiter is sniffed among , ; tab | unless given. Text must be
    UTF-8 (a BOM is fine) unless `encoding` names another. Values are stripped of surrounding spaces. Anything
    the custodian should know about the reading (formulas, merged cells, other sheets) is in `source.notes`.
    `own_file`: the file was just written by this app (the export's read-back), so the limits that protect
    against hostile files (guards.py) do not apply to it.
    """
    return _read(path, na_policy=na_policy, kinds=kinds, roles=roles, sheet=sheet, delimiter=delimiter,
                 encoding=encoding, max_bytes=max_bytes, own_file=own_file)[0]


def inspect_table(path, *, na_policy: NAPolicy = NAPolicy(action="category"), **options
                  ) -> tuple[Dataset, list[tuple[int, int]]]:
    """`read_table` plus (distinct values, missing values) per column, counted while typing (`ppdp inspect`),
    so that a table thousands of columns wide is described without touching each column again."""
    return _read(path, na_policy=na_policy, profile=True, **options)


def _read(path, *, na_policy: NAPolicy = NAPolicy(), kinds=None, roles=None, sheet=None, delimiter=None,
          encoding=None, max_bytes: int = DEFAULT_MAX_BYTES, profile: bool = False, own_file: bool = False):
    p = Path(os.path.expanduser(str(path)))
    where = str(p)
    notes: list[str] = []
    try:
        raw = _read_bytes(p, max_bytes)
        sha256 = hashlib.sha256(raw).hexdigest()
        fmt = _file_format(p, raw)
        limits = Limits(len(raw), max_bytes, trusted=own_file)
        delim = None
        if fmt == "xlsx":
            sheet_read = read_xlsx(raw, where, sheet, limits)
            header, arrays, header_line = sheet_read.header, sheet_read.columns, sheet_read.header_row
            excel_rows = sheet_read.row_numbers
            notes += sheet_read.notes
            line_of_row = (lambda row: int(excel_rows[row]) if 0 <= row < len(excel_rows) else header_line)
        elif fmt == "parquet":
            frame = _read_parquet(raw, where, limits)
            header, arrays, header_line, line_of_row = list(frame.columns), None, None, None
        else:
            data = _text_bytes(raw, fmt, where, encoding, limits)
            delim = delimiter or ("\t" if fmt.startswith("tsv") else sniff_delimiter(head_text(data)))
            header, header_line, table = parse_delimited(data, delim, where)
            header, arrays = _drop_empty_unnamed(header, [table.column(i) for i in range(table.num_columns)])
            del table
            line_of_row = _reloading_line_lookup(p, fmt, encoding, max_bytes, delim)
            del data
        del raw  # the bytes are not kept while typing: error messages re-read the file
        names = check_names(header, where, header_line)
        if arrays is None:
            n_read = len(frame)
            cols = {name: frame.iloc[:, pos] for pos, name in enumerate(names)}
            row_hashes = canonical_row_hashes(frame)  # the raw rows, before any policy: what the ledger identifies
            del frame
        else:
            n_read = len(arrays[0]) if arrays else 0
            cols = dict(zip(names, arrays))
            row_hashes = canonical_row_hashes(pa.table(cols))
            del arrays
        built = _build(cols, n_read, kinds=kinds, roles=roles, taxonomies=None, na_policy=na_policy,
                       line_of_row=line_of_row, path=where, profile=profile, mark_guesses=True)
    except MemoryError:
        raise DataError("is too large to load into this computer's memory", path=where) from None
    missing = built.missing
    source = SourceInfo(path=str(p.resolve()), sha256=sha256, n_rows_read=n_read, n_rows_dropped=built.dropped,
                        na_policy=na_policy, delimiter=delim, file_format=fmt, row_hashes=row_hashes,
                        notes=tuple(notes) + tuple(missing.notes(na_policy)), left_out=missing.left_out,
                        missing=missing.missing, role_reasons=built.reasons)
    return Dataset(frame=built.frame, schema=built.schema, source=source), built.counts


def dataset_from_frame(frame: pd.DataFrame, *, roles: dict[str, Role] | None = None,
                       kinds: dict[str, str] | None = None, taxonomies: dict[str, "Taxonomy"] | None = None,
                       na_policy: NAPolicy = NAPolicy(), source: SourceInfo | None = None) -> Dataset:
    """A Dataset from an in-memory frame of strings or typed values, by the same rules as `read_table`.

    The input frame is not modified. Roles not given are guessed; kinds not given are inferred (pass the kinds
    of an existing Dataset to keep them). Categorical columns always hold strings in the result. Unlike a file
    read by `read_table`, nothing is marked as guessed (`ColumnSpec.guessed`): the calling code chose this table
    and how it is read (tests, the audit's own tables, a mechanism's working copy).
    """
    if not isinstance(frame, pd.DataFrame):
        raise DataError(f"expected a pandas DataFrame, got {type(frame).__name__}")
    where = source.path if source else None
    names = check_names(list(frame.columns), where, None)
    cols = {name: frame.iloc[:, pos] for pos, name in enumerate(names)}
    built = _build(cols, len(frame), kinds=kinds, roles=roles, taxonomies=taxonomies, na_policy=na_policy,
                   line_of_row=None, path=where)
    if source is None:
        source = SourceInfo(n_rows_read=len(frame), n_rows_dropped=built.dropped, na_policy=na_policy)
    else:
        source = replace(source, n_rows_dropped=source.n_rows_dropped + built.dropped)
    return Dataset(frame=built.frame, schema=built.schema, source=replace(source, role_reasons=built.reasons))


def dataset_from_columns(names: list[str], columns: list[pa.Array], n_rows: int, *,
                         kinds: dict[str, str] | None = None, na_policy: NAPolicy = NAPolicy()) -> Dataset:
    """`dataset_from_frame` for text columns already in Arrow form, typed by the same rules. A column may be a
    dictionary array (each distinct text once, a code per cell): when all of a batch's columns share one
    dictionary, the cells are typed from their codes without being hashed again (the export's read-back of an
    XLSX it wrote: data/xlsx_sheet.py)."""
    cols = dict(zip(check_names(list(names), None, None), columns))
    built = _build(cols, n_rows, kinds=kinds, roles=None, taxonomies=None, na_policy=na_policy, line_of_row=None,
                   path=None)
    source = SourceInfo(n_rows_read=n_rows, n_rows_dropped=built.dropped, na_policy=na_policy)
    return Dataset(frame=built.frame, schema=built.schema, source=replace(source, role_reasons=built.reasons))


# ---- files -------------------------------------------------------------------------------------------------
def _read_bytes(p: Path, max_bytes: int) -> bytes:
    """The file's bytes: only a regular file (`prechecks.read_regular`: a FIFO, device or folder is refused
    before it is opened for reading), at most `max_bytes`."""
    raw = read_regular(p, max_bytes, raise_hint="; raise the limit or load a smaller extract")
    if not raw:
        raise DataError("the file is empty (0 bytes)", path=str(p), line=1)
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


def _text_bytes(raw: bytes, fmt: str, where: str, encoding: str | None, limits: Limits) -> bytes:
    data = _gunzip(raw, where, limits) if fmt.endswith(".gz") else raw
    data = to_utf8(data, where, encoding)
    if not _NOT_BLANK.search(data):
        raise DataError("the file is empty", path=where, line=1)
    return data


def _reloading_line_lookup(p: Path, fmt: str, encoding: str | None, max_bytes: int, delim: str) -> LineOfRow:
    """Row -> line for error messages; reads the file again (error path only) instead of keeping its bytes."""
    def line_of_row(row: int) -> int | None:
        try:
            raw = _read_bytes(p, max_bytes)
            return line_of_record(_text_bytes(raw, fmt, str(p), encoding, Limits(len(raw), max_bytes)), delim, row)
        except DataError:
            return None
    return line_of_row


def _gunzip(raw: bytes, where: str, limits: Limits) -> bytes:
    """Expand a gzip, streaming, and stop as soon as it passes `limits.expanded` (a bomb is never expanded)."""
    cap = limits.expanded
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(raw)) as gz:
            data = gz.read(cap + 1)
    except (OSError, EOFError, zlib.error) as exc:
        raise DataError(f"is not a complete gzip file ({exc})", path=where) from None
    if len(data) > cap:
        raise DataError(limits.too_big("unpacks"), path=where)
    return data


def _read_parquet(raw: bytes, where: str, limits: Limits) -> pd.DataFrame:
    """A Parquet file's columns, after its footer is checked (`prechecks.check_parquet`: nested columns, shape,
    declared sizes) and with the decoded size of what is read counted row group by row group, so a file that
    understates its sizes is stopped one row group after the limit; binary columns must hold UTF-8 text."""
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(io.BytesIO(raw))
        meta, schema = pf.metadata, pf.schema_arrow
    except Exception as exc:  # pyarrow raises several types for damaged files
        raise DataError(f"cannot be read as a Parquet file ({type(exc).__name__}: {exc})", path=where) from None
    check_parquet(pf, where, limits)
    if meta.num_rows == 0:
        raise DataError("the Parquet file has columns but no rows", path=where)
    text_like = []
    for fld in schema:
        t = fld.type.value_type if pa.types.is_dictionary(fld.type) else fld.type
        if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t) or \
                pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
            text_like.append(fld.name)
    parts, decoded = [], 0
    try:  # text stays dictionary-encoded until its decoded size is known
        reader = pq.ParquetFile(io.BytesIO(raw), read_dictionary=text_like)
        for i in range(meta.num_row_groups):
            part = reader.read_row_group(i, use_pandas_metadata=True)
            for pos, name in enumerate(part.column_names):
                if name in text_like:
                    col = _as_dictionary(part.column(pos).combine_chunks())
                    part = part.set_column(pos, pa.field(name, col.type), col)
                    decoded += _decoded_size(col)
                else:
                    decoded += part.column(pos).nbytes
            if decoded > limits.expanded:
                raise DataError(limits.too_big("its text columns expand"), path=where)
            parts.append(part)
        table = pa.concat_tables(parts) if len(parts) > 1 else parts[0]
    except DataError:
        raise
    except Exception as exc:
        raise DataError(f"cannot be read as a Parquet file ({type(exc).__name__}: {exc})", path=where) from None
    del parts
    for pos, name in enumerate(table.column_names, start=1):
        if name in text_like:
            i = table.column_names.index(name)
            text = _parquet_text(_as_dictionary(table.column(i).combine_chunks()), name, pos, where)
            table = table.set_column(i, pa.field(name, text.type), text)
    try:
        frame = table.to_pandas()
    except Exception as exc:  # an extension or timestamp pandas cannot hold
        raise DataError(f"cannot be read as a Parquet file ({type(exc).__name__}: {exc})", path=where) from None
    return frame.reset_index(drop=True)


def _as_dictionary(col: pa.Array) -> pa.DictionaryArray:
    """A text-like column as a dictionary array (a fixed-size binary column is never read as one)."""
    if isinstance(col, pa.DictionaryArray):
        return col
    if pa.types.is_fixed_size_binary(col.type):
        col = col.cast(pa.binary())
    return col.dictionary_encode()


def _decoded_size(col: pa.DictionaryArray) -> int:
    """Bytes of text the column holds once each cell has its own copy of its value."""
    if not len(col.dictionary):
        return 0
    lengths = pc.binary_length(col.dictionary).fill_null(0).to_numpy(zero_copy_only=False)
    return int(lengths[col.indices.fill_null(0).to_numpy(zero_copy_only=False)].sum())


def _parquet_text(col: pa.DictionaryArray, name: str, pos: int, where: str) -> pa.Array:
    """A string or binary column as text; binary must be UTF-8 (error names the row of the first bad value)."""
    values = col.dictionary
    if not (pa.types.is_string(values.type) or pa.types.is_large_string(values.type)):
        try:
            values = values.cast(pa.large_binary()).cast(pa.large_string())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            bad = next(i for i, v in enumerate(values.to_pylist()) if v is not None and not _is_utf8(v))
            rows = np.flatnonzero(col.indices.fill_null(-1).to_numpy(zero_copy_only=False) == bad)
            raise DataError(f"column {name!r} holds binary data, not text (row {int(rows[0]) + 1 if len(rows) else '?'}"
                            " is not UTF-8); this app reads tables of text and numbers: drop or convert that column",
                            path=where, column=pos) from None
    return values.take(col.indices)


def _is_utf8(value: bytes) -> bool:
    try:
        value.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


# ---- typing, missing values, roles -----------------------------------------------------------------------
def _drop_empty_unnamed(header: list[str], arrays: list) -> tuple[list[str], list]:
    """Drop columns with a blank name and no value at all (a trailing delimiter on every line)."""
    blank = [j for j, name in enumerate(header) if not str(name).strip()]
    empty = {j for j in blank if not pc.any(pc.match_substring_regex(arrays[j], r"\S")).as_py()}
    if not empty:
        return header, arrays
    keep = [j for j in range(len(header)) if j not in empty]
    return [header[j] for j in keep], [arrays[j] for j in keep]


def _batches(names: list[str], n: int) -> list[list[str]]:
    """Consecutive columns holding about `BATCH_CELLS` cells together (at least one column each)."""
    per = max(1, coltypes.BATCH_CELLS // max(n, 1))
    return [names[i:i + per] for i in range(0, len(names), per)]


class Built(NamedTuple):
    """What `_build` makes of the columns read."""

    frame: pd.DataFrame
    schema: tuple
    dropped: int  # rows dropped for missing values
    counts: list | None  # per column (distinct, missing), when profiling
    missing: MissingReport
    reasons: dict  # column -> (guessed role, why): the guess, before any role given


def _build(cols: dict, n: int, *, kinds, roles, taxonomies, na_policy: NAPolicy, line_of_row: LineOfRow | None,
           path: str | None, profile: bool = False, mark_guesses: bool = False):
    """Missing values, kinds, conversion and roles -> a `Built` (frame, schema, rows dropped, per-column counts
    or None, the missing-value report, why each role was guessed).

    Text columns (Arrow arrays, or pandas text Series) are typed in batches (`coltypes.TextBatch`): one
    dictionary encoding per batch, no per-column pandas work, so 20,000 columns cost what 20,000 cells do.
    Already typed columns (Parquet numbers, dates, a frame's numbers) keep their per-column path. Consumes `cols`.
    """
    names = list(cols)
    kinds, roles, taxonomies = _check_options(names, kinds, roles, taxonomies, path)
    kinds = {**coltypes.kinds_by_name(c for c in names if c not in kinds), **kinds}  # ZIP codes: by name
    if na_policy.action not in ("drop", "category"):
        raise DataError(f"unknown missing-value action {na_policy.action!r} (use 'drop' or 'category')")
    tokens = list(na_policy.tokens)
    text: dict[str, pa.Array] = {}
    typed: dict[str, pd.Series] = {}
    for name in names:
        col = cols.pop(name)
        if isinstance(col, (pa.Array, pa.ChunkedArray)):
            text[name] = col
            continue
        if isinstance(col.dtype, pd.CategoricalDtype):
            col = col.astype(col.cat.categories.dtype)
        if coltypes.is_text_dtype(col.dtype):
            text[name] = coltypes.text_array(col)
        else:
            typed[name] = col.reset_index(drop=True)
    batches = [(group, coltypes.TextBatch([text.pop(c) for c in group], n, tokens))
               for group in _batches([c for c in names if c in text], n)]
    text_miss = [b.cell_missing() for _, b in batches]
    typed_miss = {name: col.isna().to_numpy() for name, col in typed.items()}
    missing = {c: int(m.sum()) for (group, _), miss in zip(batches, text_miss) for c, m in zip(group, miss)}
    missing.update({c: int(m.sum()) for c, m in typed_miss.items()})
    check_leave_out(names, na_policy, path)
    left_out = left_out_columns(names, missing, n, na_policy)
    if left_out:  # read as text, never typed: a left-out column cannot fail the load
        kinds = {**kinds, **{c: "categorical" for c in left_out}}
    keep = None
    dropped = 0
    unreleased: set[str] = set()
    if na_policy.action == "drop" and names:
        unreleased = set(left_out) | never_released(names, roles)  # their blanks cost no row
        any_missing = np.zeros(n, dtype=bool)
        for (group, _), miss in zip(batches, text_miss):
            rows = [j for j, c in enumerate(group) if c not in unreleased]
            if rows:
                any_missing |= miss[rows].any(axis=0)
        for c, miss in typed_miss.items():
            if c not in unreleased:
                any_missing |= miss
        dropped = int(any_missing.sum())
        if dropped and dropped == n:
            raise every_row_missing(n, tokens, path)
        if dropped:
            keep = np.flatnonzero(~any_missing)
            text_miss = [m[:, keep] for m in text_miss]
            for (_, batch) in batches:
                batch.keys = batch.keys[:, keep]
            typed = {c: col.iloc[keep].reset_index(drop=True) for c, col in typed.items()}
            typed_miss = {c: m[keep] for c, m in typed_miss.items()}
    m = n - dropped
    final_kinds: dict[str, str] = {}
    out: dict[str, object] = {}
    counts: dict[str, tuple[int, int]] = {}
    for (group, batch), miss in zip(batches, text_miss):
        inferred = batch.kinds(miss) if any(c not in kinds for c in group) else [None] * len(group)
        distinct = batch.distinct_counts(miss).tolist() if profile else None
        n_missing = miss.sum(axis=1).tolist() if profile else None
        texts = None
        for j, name in enumerate(group):
            kind = kinds.get(name) or inferred[j]
            final_kinds[name] = kind
            if kind == "numeric":
                out[name] = _text_numbers(batch, j, miss[j], name, line_of_row, keep)
                if profile:
                    present = out[name].to_numpy()[~miss[j]]
                    counts[name] = (len(np.unique(present)), n_missing[j])
            else:
                if texts is None:
                    texts = batch.texts(na_policy.category_label)
                out[name] = coltypes.str_array(texts[j])
                if profile:
                    counts[name] = (distinct[j], n_missing[j])
        del batch.keys
    for name, col in typed.items():
        miss = typed_miss[name]
        present = col[~miss] if miss.any() else col
        kind = kinds.get(name) or coltypes.infer_typed_kind(present)
        final_kinds[name] = kind
        out[name] = _convert(col, miss, kind, name, na_policy)
        if profile:
            counts[name] = (int(present.nunique()), int(miss.sum()))
    names = [c for c in names if c not in left_out]
    frame = pd.DataFrame({name: out.pop(name) for name in names}, index=pd.RangeIndex(m), copy=False) \
        if names else pd.DataFrame(index=range(m))
    reasons = guess_roles_with_reasons(frame, final_kinds)
    guessed = {**{name: role for name, (role, _why) in reasons.items()}, **roles}
    # what was read from the values (a file read by the publish path; code building a frame states its choice)
    marks = guessed_parts(reasons, names, roles, kinds) if mark_guesses else {}  # by name: not a guess
    schema = tuple(ColumnSpec(name=c, kind=final_kinds[c], role=guessed[c], taxonomy=taxonomies.get(c),
                              guessed=marks.get(c, frozenset()))
                   for c in names)
    blanks_kept = tuple(c for c in names if c in unreleased and missing.get(c))
    report = MissingReport(rows=n, missing=missing, left_out=left_out, dropped=dropped, blanks_kept=blanks_kept)
    return Built(frame, schema, dropped, [counts[c] for c in names] if profile else None, report, reasons)


def _text_numbers(batch: coltypes.TextBatch, j: int, miss: np.ndarray, name: str, line_of_row: LineOfRow | None,
                  keep: np.ndarray | None) -> pd.Series:
    """A text column declared or typed numeric: its numbers; a DataError names the first cell that is not one."""
    values = batch.number[batch.keys[j]]
    present = values[~miss] if miss.any() else values
    if np.isnan(present).any():  # error path: the per-column rule finds the cell and its line
        texts = coltypes.str_array(batch.texts(None)[j])
        series = pd.Series(texts)
        if keep is not None:
            series.index = keep
        return coltypes.text_to_numeric(series, miss, name, line_of_row).reset_index(drop=True)
    return coltypes.numbers_to_column(present, miss, pd.RangeIndex(len(values)))


def _convert(col: pd.Series, miss: np.ndarray, kind: str, name: str, na_policy: NAPolicy) -> pd.Series:
    """An already typed column (numbers, booleans, dates) as numbers or as text."""
    if kind == "numeric":
        if pd.api.types.is_bool_dtype(col.dtype) or coltypes.is_number_dtype(col.dtype):
            values = (col[~miss] if miss.any() else col).to_numpy(dtype=float)
            if not np.isfinite(values).all():
                raise DataError(f"column {name!r} is set to numeric but holds infinite values", column=name)
            return coltypes.numbers_to_column(values, miss, col.index)
        raise DataError(f"column {name!r} holds {col.dtype} values, which cannot be numeric; make it categorical",
                        column=name)
    out = coltypes.typed_to_text(col)
    if miss.any():
        out = out.where(~miss, other=na_policy.category_label)
    return out.astype("str")


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
