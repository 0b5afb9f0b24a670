"""CSV and TSV of a release, per distinct value: the bytes pandas' `to_csv` writes, faster than pyarrow's writer.

Why not pandas: `to_csv` formats and quote-checks every cell in Python-level code (half of a CSV export's time).
Why not pyarrow's CSV writer: with its "needed" quoting it quotes every text value (`"F"`), and with "none" it
refuses values that need quotes, so it cannot write the bytes a reader expects from this app (the same as
before, and the same as the window's earlier exports). Here each column is coded (one code per distinct value),
the text of each distinct value is made once, as pandas makes it, then quoted as Python's csv module does
(data/csv_rows.py), and the lines are put together as bytes by NumPy, without a Python loop over rows.

Covered: text, categorical, integer, float and boolean columns (NumPy dtypes and pandas' text dtype), missing
values as empty fields, CRLF line ends. Anything else (dates, nullable extension types, objects that are not
text, a one-column table, whose empty field the csv module writes as `""`) is written by pandas' `to_csv`, so
the bytes never depend on which path wrote them (tests/engine/test_csv_writer.py compares both).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from ppdp_gui.engine.data.csv_rows import byte_lines, line_cells

EOL = "\r\n"
SMALL_RANGE = 1 << 16  # integers spanning fewer values are coded by subtraction, not hashed


def write_csv(frame: pd.DataFrame, path, *, sep: str = ",") -> None:
    """Write `frame` (header, then one line per row) as UTF-8 CSV with CRLF line ends."""
    coded = coded_columns(frame)
    if coded is None:
        frame.to_csv(path, sep=sep, index=False, lineterminator=EOL, encoding="utf-8")
        return
    header = sep.join(_quoted(str(c), sep) for c in frame.columns) + EOL
    codes = [c for c, _texts in coded]
    with open(Path(path), "wb") as out:
        out.write(header.encode("utf-8"))
        if len(frame):
            for lines in byte_lines(*line_cells(codes, [t for _c, t in coded], sep, EOL)):
                out.write(lines)


def coded_columns(frame: pd.DataFrame) -> list[tuple[np.ndarray, pa.Array]] | None:
    """Per column (code of each row, -1 for a missing value; pandas' text of each code), or None when a column
    is of a kind only pandas writes (then pandas writes the whole table)."""
    if frame.shape[1] < 2 or not frame.columns.map(lambda c: isinstance(c, str)).all():
        return None
    out = []
    for pos in range(frame.shape[1]):
        found = _column(frame.iloc[:, pos])
        if found is None:
            return None
        out.append(found)
    return out


def _column(col: pd.Series) -> tuple[np.ndarray, pa.Array] | None:
    """(codes, text of each distinct value as pandas writes it), missing values coded -1; None: not covered."""
    dtype = col.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        texts = _uniques_text(pd.Series(col.cat.categories))
        return None if texts is None else (col.cat.codes.to_numpy(), texts)
    if isinstance(dtype, np.dtype) and dtype.kind == "b":
        return col.to_numpy().view(np.int8), pa.array(["False", "True"])
    if isinstance(dtype, np.dtype) and dtype.kind in "iu":
        return _integers(col.to_numpy())
    if isinstance(dtype, np.dtype) and dtype.kind == "f":
        # by bit pattern: factorize counts 0.0 and -0.0 as one value, which pandas writes as two texts
        values = col.to_numpy()
        codes, first = pd.factorize(values.view(f"i{dtype.itemsize}"))
        uniques = np.empty(len(first), dtype=dtype)
        uniques[codes] = values
        if len(codes):
            codes[np.isnan(uniques)[codes]] = -1
        return codes, _float_texts(uniques)
    if dtype == object:
        codes, uniques = factorize_objects(col.to_numpy())
    else:
        codes, uniques = pd.factorize(col, use_na_sentinel=True)
    texts = _uniques_text(pd.Series(uniques, dtype=dtype if len(uniques) else None))
    return None if texts is None else (codes, texts)


def factorize_objects(values: np.ndarray, factorize=pd.factorize) -> tuple[np.ndarray, object]:
    """`factorize` (by default `pd.factorize`) of an object array, about 5x faster when, as in a released table,
    the same few text objects fill the column: first by the objects' addresses (64-bit integers, hashed without
    looking at the text; the same object is the same value), then by value over one cell of each object. The
    codes and uniques are those `factorize(values)` gives (uniques in order of first appearance)."""
    try:
        address = np.frombuffer(np.ascontiguousarray(values), np.intp)  # the addresses, read only as numbers
    except (TypeError, ValueError, BufferError):
        return factorize(values)
    by_object, objects = pd.factorize(address)
    if len(objects) > len(values) // 2:
        return factorize(values)  # mostly distinct objects: nothing to gain
    cell = np.empty(len(objects), dtype=np.intp)
    cell[by_object] = np.arange(len(values))  # a cell of each object (whichever: they hold the same object)
    by_value, uniques = factorize(values[cell])
    return by_value[by_object], uniques


def _integers(values: np.ndarray) -> tuple[np.ndarray, pa.Array]:
    """Integers over a small range are coded by their distance from the least (no hashing); others factorised."""
    if len(values):
        lo, hi = int(values.min()), int(values.max())
        if hi - lo < SMALL_RANGE:
            wide = np.uint64 if values.dtype.kind == "u" else np.int64
            codes = values if lo == 0 else np.subtract(values, wide(lo), dtype=wide)  # widened: no wrap-around
            return codes.astype(np.intp, copy=False), _int_texts(np.arange(hi - lo + 1, dtype=wide) + wide(lo))
    codes, uniques = pd.factorize(values)
    return codes, _int_texts(uniques)


def _int_texts(values: np.ndarray) -> pa.Array:
    """Decimal text of integers, as Python's str (pyarrow's cast writes the same digits, in C)."""
    return pa.array(values).cast(pa.string())


def _uniques_text(values: pd.Series) -> pa.Array | None:
    """pandas' text of each value (no missing value among them), or None for a kind not covered here."""
    dtype = values.dtype
    if dtype == object or pd.api.types.is_string_dtype(dtype):
        items = values.tolist()
        return pa.array(items, pa.string()) if all(type(v) is str for v in items) else None
    if isinstance(dtype, np.dtype) and dtype.kind in "iu":
        return _int_texts(values.to_numpy())
    if isinstance(dtype, np.dtype) and dtype.kind == "b":
        return pa.array([str(v) for v in values.tolist()])
    if isinstance(dtype, np.dtype) and dtype.kind == "f":
        return _float_texts(values.to_numpy())
    return None


def _float_texts(values: np.ndarray) -> pa.Array:
    """What pandas writes: NumPy's shortest round-trip text (`astype(str)`), made as ASCII bytes (the same
    characters, without the round trip through 4-byte characters)."""
    return pa.array(values.astype("S")).cast(pa.string())


def _quoted(text: str, sep: str) -> str:
    """Python's csv module, QUOTE_MINIMAL: enclosed in double quotes when holding sep, a quote, CR or LF."""
    return '"' + text.replace('"', '""') + '"' if any(s in text for s in (sep, '"', "\r", "\n")) else text
