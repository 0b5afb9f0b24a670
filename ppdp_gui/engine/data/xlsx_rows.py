"""The rows of an XLSX sheet put together as bytes by NumPy, from each column's codes and each code's `<c>` bytes.

Why: joining a sheet's ~100 MB of cell XML as Python strings (then encoding it) took half of the writer's time
before compression; here each column is placed for a block of rows with a few whole-array operations, about 4x
faster. The XML of each distinct value is made once by the writer (data/xlsx_stream.py); this module only places
those bytes.

How (the technique of data/csv_rows.py, with wider stores): every distinct cell's bytes are cut into windows of
16 bytes, stored as one unaligned 16-byte item (NumPy's raw-bytes type `V16`, copied, never interpreted) at the
cell's byte position in a zeroed buffer; a cell starts where the one before it in its row ends (a running sum of
cell lengths). Window k starts at byte 16k, or earlier so as to end at the cell's end: only a cell shorter than
its window writes past its end, and what it writes there is zeros. Columns are stored left to right, so those
zeros fall on later cells of the same row, which are stored afterwards. A column whose cells could write past
the row's end (into the next row, already stored) uses 8-byte windows instead, and every cell of the last column
(which ends with `</row>`, 10 bytes at least) is at least 8 bytes long, so no store ever reaches the next row. No
two windows of one store overlap, so no result depends on the order in which NumPy writes a store's elements.
"""

from __future__ import annotations

import dataclasses
from typing import Iterator

import numpy as np
import pyarrow as pa

WIDE, NARROW = 16, 8
CHUNK_BYTES = 1 << 22  # about this many bytes of rows per buffer: stays in the processor's cache
MIN_ROWS = 512  # but at least this many rows (a wide sheet): NumPy's cost per call is paid per column and buffer


@dataclasses.dataclass
class Cells:
    """One column's cell bytes, per code: `length[c]` bytes, of which bytes [start[k][c], start[k][c] + width)
    are `window[k][c]` (zero past the cell's end). Code -1 takes the last entry (NumPy's `take` wraps it)."""

    length: np.ndarray
    width: int
    window: list[np.ndarray]
    start: list[np.ndarray]


def column_cells(cells: list[pa.Array]) -> list[Cells]:
    """The windows of each column's cells (`cells[j]`: the bytes of each code of column j, the empty cell last),
    each column as wide as it may be: its shortest cell may write zeros past its end only as far as the
    shortest cells of the columns after it reach."""
    shortest = [_lengths(c).min() if len(c) else 0 for c in cells]
    after = np.cumsum(shortest[::-1])[::-1] - shortest  # the least bytes after each column in its row
    out = []
    for cell, least, rest in zip(cells, shortest, after):
        width = WIDE if WIDE - least <= rest else NARROW
        if NARROW - least > rest:
            raise ValueError("a sheet row's last cells are too short to be placed")  # never: see the docstring
        out.append(_windows(cell, width))
    return out


def _lengths(cells: pa.Array) -> np.ndarray:
    offsets = np.frombuffer(cells.buffers()[1], np.int64, count=len(cells) + 1, offset=cells.offset * 8)
    return np.diff(offsets)


def _windows(cells: pa.Array, width: int) -> Cells:
    """The `width`-byte windows of each cell's bytes (a large_binary array)."""
    offsets = np.frombuffer(cells.buffers()[1], np.int64, count=len(cells) + 1, offset=cells.offset * 8)
    first, length = offsets[:-1] - offsets[0], np.diff(offsets)
    size = int(offsets[-1] - offsets[0])
    data = np.zeros(size + width, dtype=np.uint8)  # zeros past the last cell's end
    data[:size] = np.frombuffer(cells.buffers()[2], np.uint8, count=size, offset=int(offsets[0]))
    every = _items(data, width)
    ramp = np.arange(width)
    window, start = [], []
    for k in range(max(1, -(-int(length.max(initial=1)) // width))):
        at = np.minimum(k * width, np.maximum(length - width, 0))
        inside = ramp[None, :] < (length - at)[:, None]  # the window's bytes that lie in its cell
        raw = every[first + at].view(np.uint8).reshape(len(length), width) * inside
        window.append(np.ascontiguousarray(raw).view(f"V{width}").ravel())
        start.append(at)
    return Cells(length, width, window, start)


def _items(buffer: np.ndarray, width: int) -> np.ndarray:
    """A `width`-byte raw item starting at every byte of `buffer` (unaligned; NumPy copies them byte-wise)."""
    return np.ndarray((len(buffer) - width + 1,), dtype=f"V{width}", buffer=buffer, strides=(1,))


def sheet_rows(codes: list[np.ndarray], cells: list[Cells], rows: int) -> Iterator[tuple[int, np.ndarray]]:
    """(rows done, bytes) for blocks of at most `rows` rows (fewer when a block would pass CHUNK_BYTES, but at
    least MIN_ROWS); `codes[j][i]` is row i's code in column j."""
    n = len(codes[0]) if codes else 0
    widest = sum(int(c.length.max(initial=0)) for c in cells)
    step = max(1, min(rows, max(CHUNK_BYTES // max(widest, 1), MIN_ROWS)))
    for lo in range(0, n, step):
        hi = min(n, lo + step)
        yield hi, _rows([c[lo:hi] for c in codes], cells)


def _rows(codes: list[np.ndarray], cells: list[Cells]) -> np.ndarray:
    from ppdp_gui.engine.data.csv_rows import row_layout
    lengths, _row, starts, size = row_layout(codes, cells)
    buffer = np.zeros(size + WIDE, dtype=np.uint8)
    views = {w: _items(buffer[:size + w], w) for w in (WIDE, NARROW)}
    position = starts
    for k, c, length in zip(codes, cells, lengths):
        at = views[c.width]
        at[position] = c.window[0].take(k)
        for window, start in zip(c.window[1:], c.start[1:]):
            at[position + start.take(k)] = window.take(k)
        position = position + length
    return buffer[:size]
