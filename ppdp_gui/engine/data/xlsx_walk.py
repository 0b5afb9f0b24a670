"""Whole rows of the sheet XML data/xlsx_stream.py writes, checked byte for byte and cut into cells by NumPy.

Why: the export reads back every file it writes; a 100,000 x 50 sheet is 100 MB of XML, which a per-cell parser
turns into five million Python objects. Here the cells are walked column by column for all the rows of a block at
once: the cells of column j start where those of column j - 1 end, so each step is a few gathers of 8 bytes per
row, and nothing in Python is done per cell or per row.

The shape read (and nothing else): rows `<row>` … `</row>`, one after the other, without attributes; in each row
cells, one after the other, each one of `<c/>` (empty), `<c><v>number</v></c>`, `<c t="s"><v>index</v></c>`
(shared text), `<c t="b"><v>0|1</v></c>`. A row's last cell must end where its `</row>` begins, so every row
holds as many cells as the header. Each cell's value ends at the first `<` after its start, which must begin
`</v></c>`; so every byte of the block is one of these tokens or a value's bytes, and each distinct value is then
checked by its kind (data/xlsx_sheet.py). Anything else raises `NotPlain`: the caller then reads the file with
the general reader. The rows are found by their letter `w`, which no other token and no value holds.

Each cell is keyed by (kind, length, bytes): a value of up to 7 bytes (nearly all: shared-string indices, whole
numbers) in one 64-bit word with its kind and length, a longer one (up to 32 bytes: a float's shortest text has at
most 24) by its kind and length and four words.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

EMPTY, NUMBER, SHARED, BOOL = 0, 1, 2, 3  # kinds of cell
KIND_BYTES = (b"e", b"n", b"s", b"b")
LONGEST = 32  # bytes of the longest value read; longer: not the writer's sheet
MAX_WIDTH = 16_384  # Excel's columns
PADDING = bytes(LONGEST + 40)  # bytes after a block's rows: every gather stays inside the buffer
_MASK = np.array([(1 << (8 * k)) - 1 for k in range(8)] + [(1 << 64) - 1], dtype=np.uint64)
_LONG = np.uint64(0xFF << 56)  # every long value's key until they are told apart (a short key's top byte < 32)
_ONE, _ONES, _HIGHS = np.uint64(1), np.uint64(0x0101010101010101), np.uint64(0x8080808080808080)
_LTS = np.uint64(0x3C3C3C3C3C3C3C3C)


def _word(token: bytes) -> np.uint64:
    return np.uint64(int.from_bytes(token[:8].ljust(8, b"\0"), "little"))


_T_EMPTY, _T_NUMBER, _T_SHARED, _T_BOOL = _word(b"<c/>"), _word(b"<c><v>"), _word(b'<c t="s"'), _word(b'<c t="b"')
_T_OPEN, _T_CLOSE = _word(b"><v>"), _word(b"</v></c>")
_T_ROW, _T_END = _word(b"<row>"), _word(b"</row>")


class NotPlain(Exception):
    """The XML is not in the writer's plain shape."""


class Block:
    """Whole rows: `codes[j, i]` is the key of row i's cell in column j, an index into `keys` (the kind's byte
    then the value's bytes, each distinct cell once)."""

    def __init__(self, data: bytes, size: int, width: int | None) -> None:
        """The rows are `data[:size]`; at least len(PADDING) bytes follow them, whatever they are (the walk
        reads up to 60 bytes past a cell's start, and every cell must end where the next begins, the last row where
        the block ends). `width`: the cells every row must hold; None for the header (one row, its cells
        counted)."""
        if len(data) < size + len(PADDING):
            raise ValueError("a block needs PADDING bytes after its rows")
        self.data, self.size = data, size
        # the 8 bytes starting at every position, as one little-endian number (a view, no copy)
        self.words = np.ndarray((len(data) - 7,), dtype="<u8", buffer=data, strides=(1,))
        opens, closes = self._rows(np.frombuffer(data, np.uint8, count=size))
        self.long: list[tuple] = []  # values of 8 bytes or more: (column, rows, start, length, kind)
        rows = []
        p = opens + 5
        while (len(rows) < width) if width is not None else (p[0] < closes[0] and len(rows) < MAX_WIDTH):
            key, p = self._cells(p, len(rows))
            rows.append(key)
        if not rows or np.any(p != closes):
            raise NotPlain
        self.width, self.n_rows = len(rows), len(opens)
        self.codes, self.keys = self._codes(np.stack(rows))

    def _rows(self, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Where each row's `<row>` and `</row>` begin; the rows must fill the block, one after the other."""
        at = np.flatnonzero(u == ord("w"))
        if len(at) == 0 or len(at) % 2:
            raise NotPlain
        opens, closes = at[0::2] - 3, at[1::2] - 4
        if opens[0] != 0 or closes[-1] + 6 != len(u) or np.any(opens[1:] != closes[:-1] + 6):
            raise NotPlain
        _expect(self.words, opens, _T_ROW, 5)
        _expect(self.words, closes, _T_END, 6)
        return opens, closes

    def _cells(self, p: np.ndarray, column: int) -> tuple[np.ndarray, np.ndarray]:
        """(key, next cell's start) of the cells starting at `p`, one per row. A column holds one kind of cell
        but for its empty cells, so the kind is first tried as one for the whole column."""
        w = self.words
        if p.max() >= self.size:  # every cell starts inside the block (then every gather stays in the buffer)
            raise NotPlain
        first = w[p]
        head = int(first[0])
        empty = None
        if (head == _T_SHARED or head == _T_BOOL) and np.all(first == head):
            kind, start = (SHARED if head == _T_SHARED else BOOL), p + 12
            if not np.all((w[p + 8] & _MASK[4]) == _T_OPEN):
                raise NotPlain
        elif (head & _MASK[6]) == _T_NUMBER and np.all((first & _MASK[6]) == _T_NUMBER):
            kind, start = NUMBER, p + 6
        else:
            empty = (first & _MASK[4]) == _T_EMPTY
            number = (first & _MASK[6]) == _T_NUMBER
            shared = first == _T_SHARED
            typed = (shared | (first == _T_BOOL)) & ((w[p + 8] & _MASK[4]) == _T_OPEN)
            if not np.all(empty | number | typed):
                raise NotPlain
            kind = np.where(number, NUMBER, np.where(shared, SHARED, np.where(empty, EMPTY, BOOL)))
            start = p + np.where(empty, 4, np.where(number, 6, 12))
        value = w[start]
        length = _lt_index(value)  # a value ends at the next '<', which must begin `</v></c>`
        long = np.flatnonzero(length == 8)
        if len(long):
            length[long] = self._long_lengths(start[long])
        stop = start + length
        closed = w[stop] == _T_CLOSE
        if empty is None:
            if not np.all(closed):
                raise NotPlain
            top = np.uint64(kind << 59)
            after = stop + 8
        else:
            if not np.all(closed | empty):
                raise NotPlain
            length[empty] = 0
            top = kind.astype(np.uint64) << np.uint64(59)
            after = np.where(empty, p + 4, stop + 8)
        key = (value & _MASK[np.minimum(length, 7)]) | top | (length.astype(np.uint64) << np.uint64(56))
        long = np.flatnonzero(length >= 8) if len(long) else long
        if len(long):
            key[long] = _LONG
            self.long.append((column, long, start[long], length[long],
                              kind[long] if empty is not None else np.full(len(long), kind)))
        return key, after

    def _long_lengths(self, start: np.ndarray) -> np.ndarray:
        """The lengths of values of 8 bytes or more (up to LONGEST; longer: NotPlain)."""
        length = np.full(len(start), 8, dtype=np.int64)
        todo = np.arange(len(start))
        while len(todo):
            if length[todo].max() > LONGEST:
                raise NotPlain
            step = _lt_index(self.words[start[todo] + length[todo]])
            length[todo] += step
            todo = todo[step == 8]
        if length.max() > LONGEST:
            raise NotPlain
        return length

    def _codes(self, key: np.ndarray) -> tuple[np.ndarray, list[bytes]]:
        """Codes of the (column, row) keys, in one space for the block, and the kind and bytes of each."""
        codes, uniques = pd.factorize(key.ravel())
        keys = [_short_key(int(k)) for k in uniques.tolist()]
        codes = codes.reshape(key.shape)
        if self.long:  # values of 8 bytes or more: told apart by kind, length and four words
            columns = np.concatenate([np.full(len(part[1]), part[0]) for part in self.long])
            rows, start, n, kind = (np.concatenate([part[k] for part in self.long]) for k in range(1, 5))
            sub, _ = pd.factorize(kind * (LONGEST + 1) + n)
            for k in range(0, LONGEST, 8):
                part, found = pd.factorize(self.words[start + k] & _MASK[np.clip(n - k, 0, 8)])
                sub, _ = pd.factorize(sub.astype(np.int64) * (len(found) + 1) + part)
            # codes come in order of first appearance: each value's first cell is where their running maximum grows
            grows = np.flatnonzero(np.r_[True, sub[1:] > np.maximum.accumulate(sub)[:-1]])
            keys += [KIND_BYTES[int(kind[i])] + self.data[int(start[i]):int(start[i] + n[i])] for i in grows.tolist()]
            codes[columns, rows] = len(uniques) + sub
        placeholder = [i for i, k in enumerate(keys) if k is None]
        if placeholder:  # the long values' common key: no cell keeps it
            del keys[placeholder[0]]
            codes = codes - (codes > placeholder[0])
        return codes, keys


def _short_key(key: int) -> bytes | None:
    """The kind's byte and the value's bytes of a short value's key (None: the long values' placeholder)."""
    top = key >> 56
    if top >= 32:
        return None
    return KIND_BYTES[top >> 3] + (key & ((1 << 56) - 1)).to_bytes(7, "little")[:top & 7]


def _lt_index(words: np.ndarray) -> np.ndarray:
    """The index (0-7) of the first '<' byte in each word, 8 where none is. The sheet is ASCII, so a byte is
    zero after the XOR exactly where a '<' was; a byte of 0x80 or more may be taken for one, which the check of
    `</v></c>` at that place then refuses."""
    zero = ((words ^ _LTS) - _ONES) & _HIGHS  # the high bit of each '<' byte (exact up to the first one)
    low = zero & np.negative(zero)  # the first one alone; 0 where none
    return (((((low >> np.uint64(7)) - _ONE) & _ONES) * _ONES) >> np.uint64(56)).astype(np.int64)


def _expect(words: np.ndarray, positions: np.ndarray, token: np.uint64, size: int) -> None:
    """NotPlain unless the `size` bytes of `token` are at every one of `positions`."""
    if positions.min() < 0 or positions.max() >= len(words):
        raise NotPlain
    if not np.all((words[positions] & _MASK[size]) == token):
        raise NotPlain
