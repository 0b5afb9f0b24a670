"""The lines of a CSV file put together as bytes by NumPy, from each column's codes and each code's cell bytes.

Why: joining the cells of every row in Python (or with pyarrow's element-wise join) costs some 20 ns a cell, more
than writing them; here each column is placed for a block of rows with a handful of whole-array operations.

How: every distinct value's cell — its text, quoted if needed, then the separator (or the line end for the last
column) — is cut into 8-byte windows. A cell starts where the one before it ends (a running sum of cell lengths),
and each window is stored as one unaligned 64-bit word at its byte position in a zeroed buffer. A window holds its
cell's bytes and zeros after them, so every byte in the buffer is always either right or zero. Columns are stored
left to right; a window may zero the start of the next cell, which is stored later and so repairs it, except at a
row's first 8 bytes, which the last cells of the row before may zero after they were written: the columns that
can start there are then stored once more by OR-ing their windows in, which restores the zeros and changes
nothing else. Within one store no two windows overlap (rows are stored in interleaved passes when a row is shorter
than 8 bytes), so no result depends on the order in which NumPy writes the elements of one store. Neighbouring
columns whose cells together fit one window (and have few combinations) are placed as one column: storing is the
costliest step. About 0.5-0.7x pyarrow's CSV writer's CPU on the export benchmark (benchmarks/bench_export.py).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

WORD = 8
CHUNK_BYTES = 1 << 20  # about this many bytes of lines per buffer written
MOST_PAIRS = 1 << 12  # neighbouring columns are merged into one cell while they have at most this many pairs


@dataclasses.dataclass
class Cells:
    """One column's cell bytes, per code: `length[c]` bytes, of which bytes [start[k][c], start[k][c] + 8) are
    `word[k][c]` (the bytes as they lie in memory, zero past the cell's end). Code -1 takes the last entry."""

    length: np.ndarray
    word: list[np.ndarray]
    start: list[np.ndarray]  # start[0] is all zeros: the first window is the cell's start


def line_cells(codes: list[np.ndarray], texts: list[pa.Array], sep: str,
               eol: str) -> tuple[list[np.ndarray], list[Cells]]:
    """The codes and cells to place, one pair per column or per run of neighbouring columns merged into one cell
    (`_merged`). `codes[j]` is each row's code in column j (-1: missing), `texts[j]` the text of each code."""
    cells = _cell_texts(texts, sep, eol)
    placed_codes, placed = [codes[0]], [cells[0]]
    for k, cell in zip(codes[1:], cells[1:]):
        merged = _merged(placed_codes[-1], placed[-1], k, cell)
        if merged is None:
            placed_codes.append(k)
            placed.append(cell)
        else:
            placed_codes[-1], placed[-1] = merged
    return placed_codes, [_cells(cell) for cell in placed]


def _merged(left_codes: np.ndarray, left: pa.Array, right_codes: np.ndarray,
            right: pa.Array) -> tuple[np.ndarray, pa.Array] | None:
    """Two neighbouring columns as one, when their cells together fit one 8-byte window and their pairs are
    few: one store per row instead of two (storing is the costliest step), for three operations on the codes.
    The code of a pair is (left + 1) * len(right) + (right + 1), so that a missing value (-1) needs no test:
    the cells are reordered to put the missing value's cell (the last) first."""
    if _longest(left) + _longest(right) > WORD or len(left) * len(right) > MOST_PAIRS:
        return None
    if left_codes.min(initial=0) < 0:  # a column not merged before: its codes still use -1
        left_codes = np.add(left_codes, 1, dtype=np.intp)
        left = left.take(np.roll(np.arange(len(left)), 1))
    codes = np.multiply(left_codes, len(right), dtype=np.intp) + np.add(right_codes, 1, dtype=np.intp)
    right = right.take(np.roll(np.arange(len(right)), 1))
    pairs = pc.binary_join_element_wise(left.take(np.repeat(np.arange(len(left)), len(right))),
                                        right.take(np.tile(np.arange(len(right)), len(left))), _nothing())
    return codes, pairs


def _nothing() -> pa.Scalar:
    return pa.scalar("", pa.large_string())  # made when needed: the window imports pyarrow after its first paint


def _longest(cells: pa.Array) -> int:
    return pc.max(pc.binary_length(cells)).as_py()


def _cell_texts(texts: list[pa.Array], sep: str, eol: str) -> list[pa.Array]:
    """Per column, the cells of its distinct texts (one block per column, missing value appended as ''):
    quoted as Python's csv module does with QUOTE_MINIMAL (a text holding `sep`, a double quote, CR or LF is
    enclosed in double quotes, inner double quotes doubled), followed by `sep`, or `eol` in the last column."""
    sizes = [len(t) + 1 for t in texts]
    blocks = []
    for t in texts:
        blocks.extend((t.cast(pa.large_string()), pa.array([""], pa.large_string())))
    every = pa.concat_arrays(blocks)
    needs = pc.match_substring(every, sep)
    for special in ('"', "\r", "\n"):
        needs = pc.or_(needs, pc.match_substring(every, special))
    quote, nothing = pa.scalar('"', pa.large_string()), _nothing()
    quoted = pc.binary_join_element_wise(quote, pc.replace_substring(every, '"', '""'), quote, nothing)
    last = np.zeros(len(every), dtype=bool)
    last[len(every) - sizes[-1]:] = True
    ends = pc.if_else(pa.array(last), pa.scalar(eol, pa.large_string()), pa.scalar(sep, pa.large_string()))
    cells = pc.binary_join_element_wise(pc.if_else(needs, quoted, every), ends, nothing)
    bounds = np.cumsum([0] + sizes)
    return [cells.slice(lo, hi - lo) for lo, hi in zip(bounds[:-1], bounds[1:])]


def _cells(cells: pa.Array) -> Cells:
    """The 8-byte windows of each cell's bytes. Window k starts at byte 8k, or earlier so as to end at the cell's
    end: every window then starts inside its cell, so a short cell in a wide column never writes past the row."""
    offsets = np.frombuffer(cells.buffers()[1], np.int64, count=len(cells) + 1, offset=cells.offset * 8)
    first, length = offsets[:-1] - offsets[0], np.diff(offsets)
    data = np.zeros(-(-int(offsets[-1] - offsets[0]) // WORD) + 1, dtype=np.uint64)  # a word of zeros past the end
    data.view(np.uint8)[:offsets[-1] - offsets[0]] = np.frombuffer(cells.buffers()[2], np.uint8,
                                                                   count=offsets[-1] - offsets[0], offset=offsets[0])
    words = _every_byte(data)
    word, start = [], []
    for k in range(max(1, -(-int(length.max()) // WORD))):
        at = np.minimum(k * WORD, np.maximum(length - WORD, 0))
        kept = _keep()[np.minimum(length - at, WORD)]  # the bytes of this window inside the cell
        word.append(words[first + at] & kept)
        start.append(at)
    return Cells(length, word, start)


def _every_byte(words: np.ndarray) -> np.ndarray:
    """A 64-bit word starting at every byte of `words` (unaligned; NumPy reads and writes them one by one)."""
    return np.lib.stride_tricks.as_strided(words, shape=(len(words) * WORD - WORD + 1,), strides=(1,))


@functools.cache
def _keep() -> np.ndarray:
    """[n]: a word whose first n bytes (in memory order) are all ones, the others zero."""
    return np.tril(np.full((WORD + 1, WORD), 0xFF, dtype=np.uint8), -1).view(np.uint64).ravel()


def byte_lines(codes: list[np.ndarray], cells: list[Cells]) -> Iterator[np.ndarray]:
    """The lines of all rows, as uint8 arrays of about CHUNK_BYTES; `codes[j][i]` is row i's code in column j."""
    n = len(codes[0])
    widest = sum(int(c.length.max()) for c in cells)
    rows = max(1, CHUNK_BYTES // max(widest, 1))
    least = np.cumsum([0] + [int(c.length.min()) for c in cells])
    repaired = int(np.searchsorted(least, WORD, side="left"))  # columns that may start in a row's first 8 bytes
    for lo in range(0, n, rows):
        yield _lines([c[lo:lo + rows] for c in codes], cells, repaired)


def row_layout(codes: list[np.ndarray], cells) -> tuple[list[np.ndarray], np.ndarray, np.ndarray, int]:
    """Where each row goes in a block of rows put end to end: (each column's cell lengths per row, each row's
    length, each row's first byte, the block's size). `cells[j].length[code]` is a cell's length in bytes (the CSV
    and the XLSX row builders both place per-value cells this way)."""
    lengths = [c.length.take(k) for k, c in zip(codes, cells)]
    row = lengths[0].copy()
    for length in lengths[1:]:
        row += length
    starts = np.cumsum(row) - row
    return lengths, row, starts, int(starts[-1] + row[-1])


def _lines(codes: list[np.ndarray], cells: list[Cells], repaired: int) -> np.ndarray:
    lengths, row, starts, size = row_layout(codes, cells)
    words = np.zeros(size // WORD + 2, dtype=np.uint64)
    at = _every_byte(words)
    step = -(-WORD // int(row.min()))  # rows apart so that one store's windows never overlap
    parts = [slice(None)] if step == 1 else [slice(p, None, step) for p in range(step)]
    position, placed = starts, []
    for k, c, length in zip(codes, cells, lengths):
        placed.append(position)
        for part in parts:
            p, kp = position[part], k[part]
            at[p] = c.word[0].take(kp)
            for word, start in zip(c.word[1:], c.start[1:]):
                at[p + start.take(kp)] = word.take(kp)
        position = position + length
    for k, c, position in zip(codes[:repaired], cells[:repaired], placed[:repaired]):
        for part in parts:
            p = position[part]
            at[p] |= c.word[0].take(k[part])
    return words.view(np.uint8)[:size]
