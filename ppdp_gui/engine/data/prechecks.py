"""The checks made before a file is read, by every reader: the in-memory one and the large-table engine alike.

Why one module: a check that only one reader makes is a hole in the other (a gzip bomb refused in memory in a
second was still being read by DuckDB ten minutes later; a CSV with a NUL byte refused in memory was released
by the large-table engine). So both engines call these, with the limits of `guards.Limits`:

- **Only regular files** (`open_regular`, `check_regular`): a named pipe (FIFO) opened for reading waits for a
  writer forever, a device may never end, a folder or a socket is not a table. Each is refused *before* it is
  read, without blocking: the file is opened non-blocking and its type read from the open handle (no window
  between the check and the read). Every path the app reads goes through here: tables, hierarchies, projects.
- **Text** (`TextScan`, and `text_blocks` for `delimited.scan_text_file`, the large-table engine's pre-read):
  NUL bytes (a binary file, or UTF-16 text) and UTF-8, block by block, naming the line and column of the first
  bad byte; a gzip is expanded streaming and stopped as soon as it passes `Limits.expanded` (a decompression bomb
  is never expanded); the header's width and names (`guards`).
- **Parquet** (`check_parquet`): from the footer alone, before any data page is read: nested columns, the
  number of columns, the declared shape, and the *declared* uncompressed size of every column chunk (dictionary
  pages included) against `Limits.expanded` — a 130 KB file can declare 2.5 GB of text.
"""

from __future__ import annotations

import errno
import gzip
import os
import stat
import zlib
from pathlib import Path
from typing import BinaryIO

from ppdp_gui.engine.data.guards import Limits, check_cells, check_columns, check_names
from ppdp_gui.engine.errors import DataError

_BLOCK = 8 << 20
_SPECIAL = ((stat.S_ISDIR, "is a folder, not a file; choose a file inside it"),
            (stat.S_ISFIFO, "is a named pipe (FIFO), not a file: reading it could wait forever. Save the data "
                            "to an ordinary file and open that"),
            (stat.S_ISSOCK, "is a socket, not a file; save the data to an ordinary file and open that"),
            (stat.S_ISCHR, "is a device, not a file; save the data to an ordinary file and open that"),
            (stat.S_ISBLK, "is a device, not a file; save the data to an ordinary file and open that"))


def not_regular(mode: int) -> str | None:
    """Why a file of this `st_mode` is not read (None for a regular file)."""
    for test, why in _SPECIAL:
        if test(mode):
            return why
    return None if stat.S_ISREG(mode) else "is not an ordinary file; save the data to one and open that"


def open_regular(path, what: str = "file") -> tuple[BinaryIO, os.stat_result]:
    """(open binary handle, its stat) of a regular file, or a DataError naming the path: missing, unreadable, a
    folder, a FIFO, a device or a socket. Never blocks: the file is opened with O_NONBLOCK (which makes a FIFO's
    open return at once) and its type is read from the handle itself, then blocking reads are restored."""
    where = str(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(where, flags)
    except FileNotFoundError:
        raise DataError(f"no such {what}", path=where) from None
    except OSError as exc:
        why = _special_by_name(where) if exc.errno in (errno.ENXIO, errno.EISDIR, errno.EACCES) else None
        raise DataError(why or f"cannot be opened: {exc.strerror or exc}", path=where) from None
    try:
        st = os.fstat(fd)
        why = not_regular(st.st_mode)
        if why:
            raise DataError(why, path=where)
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        handle = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    return handle, st


def _special_by_name(where: str) -> str | None:
    try:
        return not_regular(os.stat(where).st_mode)
    except OSError:
        return None


def check_regular(path, what: str = "file") -> os.stat_result:
    """`open_regular`'s refusals for a path another library will open (DuckDB, pyarrow): its stat."""
    handle, st = open_regular(path, what)
    handle.close()
    return st


def read_regular(path, max_bytes: int, what: str = "file", *, raise_hint: str = "") -> bytes:
    """The bytes of a regular file of at most `max_bytes` (checked on its size before reading, and while
    reading: a file may grow), or a DataError naming the path. `raise_hint` says how to raise the limit."""
    handle, st = open_regular(path, what)
    where = str(path)
    with handle:
        if st.st_size > max_bytes:
            raise DataError(f"is {st.st_size / 2**20:,.0f} MB, more than the limit of {max_bytes / 2**20:,.0f} MB"
                            f"{raise_hint}", path=where)
        try:
            raw = handle.read(max_bytes + 1)
        except OSError as exc:
            raise DataError(f"cannot be read: {exc.strerror or exc}", path=where) from None
    if len(raw) > max_bytes:
        raise DataError(f"is larger than the limit of {max_bytes / 2**20:,.0f} MB{raise_hint}", path=where)
    return raw


# ---- text ------------------------------------------------------------------------------------------------------
class TextScan:
    """NUL bytes and UTF-8 validity, fed block by block (the blocks of one file, in order): the first problem is a
    DataError naming the file, the line and the column. The in-memory reader feeds it the whole text, the
    large-table engine the file as it streams; both therefore refuse the same files with the same words."""

    def __init__(self, where: str) -> None:
        import codecs
        self.where = where
        self.offset = 0  # bytes fed before the current block
        self.lines = 0  # line breaks fed before the current block
        self.line_start = 0  # offset just after the last line break fed
        self._decoder = codecs.getincrementaldecoder("utf-8")()

    def feed(self, block, final: bool = False) -> None:
        data = block if isinstance(block, bytes) else bytes(block)
        nul = data.find(b"\x00")
        if nul >= 0:
            line, col = self._where(data, nul)
            raise DataError(f"contains a NUL byte at byte offset {self.offset + nul}: this looks like a binary "
                            "file or UTF-16 text, not a CSV/TSV file; save it as a UTF-8 CSV", path=self.where,
                            line=line, column=col)
        pending = len(self._decoder.getstate()[0])  # bytes of a character cut by the previous block
        if pending or final or not data.isascii():
            try:
                self._decoder.decode(data, final=final)
            except UnicodeDecodeError as exc:
                at = max(exc.start - pending, 0)
                line, col = self._where(data, at)
                raise DataError(f"byte 0x{data[at:at + 1].hex()} at byte offset {self.offset + at} is not valid "
                                "UTF-8; save the file as UTF-8, or choose its encoding (e.g. latin-1) when opening "
                                "it", path=self.where, line=line, column=col) from None
        self.lines += data.count(b"\n")
        last = data.rfind(b"\n")
        if last >= 0:
            self.line_start = self.offset + last + 1
        self.offset += len(data)

    def _where(self, data: bytes, at: int) -> tuple[int, int]:
        """(line, column) of byte `at` of the block being fed."""
        last = data.rfind(b"\n", 0, at)
        start = self.offset + last + 1 if last >= 0 else self.line_start
        return self.lines + data.count(b"\n", 0, at) + 1, self.offset + at - start + 1


def text_blocks(path: Path, limits: Limits, gz: bool, block: int = _BLOCK):
    """The file's text in blocks, gunzipped streaming when `gz`; stops with a DataError as soon as the expanded
    text passes `limits.expanded` (never more than one block past it is held)."""
    handle, _st = open_regular(path)
    where = str(path)
    with handle:
        stream = gzip.GzipFile(fileobj=handle) if gz else handle
        total = 0
        try:
            while True:
                chunk = stream.read(block)
                if not chunk:
                    return
                total += len(chunk)
                if gz and total > limits.expanded:
                    raise DataError(limits.too_big("unpacks"), path=where)
                yield chunk
        except (OSError, EOFError, zlib.error) as exc:
            if gz:
                raise DataError(f"is not a complete gzip file ({exc})", path=where) from None
            raise DataError(f"cannot be read: {exc}", path=where) from None


# ---- Parquet ---------------------------------------------------------------------------------------------------
def check_parquet(pf, where: str, limits: Limits, *, in_memory: bool = True) -> None:
    """A Parquet file's footer checked before any data page is read (both engines): columns present and not
    nested, not too many, names as `guards.check_names` wants them; in memory the declared shape (`check_cells`);
    and the declared uncompressed size of every column chunk, dictionary pages included, against
    `limits.expanded`, so that a small file declaring gigabytes of text is never decoded."""
    import pyarrow as pa

    meta, schema = pf.metadata, pf.schema_arrow
    if len(schema) == 0:
        raise DataError("the Parquet file has no columns", path=where)
    check_columns(len(schema), where)
    if in_memory:
        check_cells(meta.num_rows, len(schema), limits, where)
    for pos, fld in enumerate(schema, start=1):
        t = fld.type.value_type if pa.types.is_dictionary(fld.type) else fld.type
        if pa.types.is_nested(t) or pa.types.is_union(t):
            raise DataError(f"column {fld.name!r} holds {t} values (lists or records inside a cell); this app reads "
                            "flat tables: flatten or drop that column", path=where, column=pos)
    if not in_memory:
        check_names(list(schema.names), where, None)
    declared = 0
    for i in range(meta.num_row_groups):
        group = meta.row_group(i)
        for j in range(group.num_columns):
            declared += max(0, int(group.column(j).total_uncompressed_size or 0))
        if declared > limits.expanded:
            raise DataError(limits.too_big(f"its row groups declare that they expand (row group {i + 1} of "
                                           f"{meta.num_row_groups})"), path=where)
