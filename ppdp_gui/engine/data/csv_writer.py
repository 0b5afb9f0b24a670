"""CSV and TSV of a release, per distinct value: the bytes pandas' `to_csv` writes, in about half its time.

Why not pandas: `to_csv` formats and quote-checks every cell in Python-level code (half of a CSV export's time).
Why not pyarrow's CSV writer: with its "needed" quoting it quotes every text value (`"F"`), and with "none" it
refuses values that need quotes, so it cannot write the bytes a reader expects from this app (the same as
before, and the same as the window's earlier exports). Here each column is factorised, the text of each distinct
value is made once — as pandas makes it, then quoted as Python's csv module does (QUOTE_MINIMAL: a value holding
the delimiter, a double quote, CR or LF is enclosed in double quotes, inner quotes doubled) — and the rows are
joined by C-level iterators.

Covered: text, categorical, integer, float and boolean columns (NumPy dtypes and pandas' text dtype), missing
values as empty fields, CRLF line ends. Anything else (dates, nullable extension types, objects that are not
text, a one-column table, whose empty field the csv module writes as `""`) is written by pandas' `to_csv`, so
the bytes never depend on which path wrote them (tests/engine/test_csv_writer.py compares both).
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd

EOL = "\r\n"
CHUNK_ROWS = 50_000


def write_csv(frame: pd.DataFrame, path, *, sep: str = ",") -> None:
    """Write `frame` (header, then one line per row) as UTF-8 CSV with CRLF line ends."""
    columns = _text_columns(frame, sep)
    if columns is None:
        frame.to_csv(path, sep=sep, index=False, lineterminator=EOL, encoding="utf-8")
        return
    header = sep.join(_quoted([str(c) for c in frame.columns], sep)) + EOL
    n = len(frame)
    with open(Path(path), "wb") as out:
        out.write(header.encode("utf-8"))
        for start in range(0, n, CHUNK_ROWS):
            rows = zip(*(texts[codes[start:start + CHUNK_ROWS]] for codes, texts in columns))
            out.write("".join(map("".join, zip(map(sep.join, rows), itertools.repeat(EOL)))).encode("utf-8"))


def _text_columns(frame: pd.DataFrame, sep: str) -> list[tuple[np.ndarray, np.ndarray]] | None:
    """Per column (code of each row, quoted text of each code; the last code is a missing value's ''), or None
    when a column is of a kind only pandas writes (then pandas writes the whole table)."""
    if frame.shape[1] < 2 or not frame.columns.map(lambda c: isinstance(c, str)).all():
        return None
    out = []
    for pos in range(frame.shape[1]):
        found = _column(frame.iloc[:, pos])
        if found is None:
            return None
        codes, texts = found
        quoted = np.empty(len(texts) + 1, dtype=object)
        quoted[:-1] = _quoted(texts, sep)
        quoted[-1] = ""
        out.append((np.where(codes < 0, len(texts), codes), quoted))
    return out


def _column(col: pd.Series) -> tuple[np.ndarray, list[str]] | None:
    """(codes, text of each distinct value as pandas writes it), missing values coded -1; None: not covered."""
    dtype = col.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        texts = _uniques_text(pd.Series(col.cat.categories))
        return (None if texts is None else (col.cat.codes.to_numpy().astype(np.int64), texts))
    if isinstance(dtype, np.dtype) and dtype.kind == "f":
        # by bit pattern: factorize counts 0.0 and -0.0 as one value, which pandas writes as two texts
        values = col.to_numpy()
        codes, first = pd.factorize(values.view(f"i{dtype.itemsize}"))
        uniques = np.empty(len(first), dtype=dtype)
        uniques[codes] = values
        texts = uniques.astype(str)  # what pandas does: NumPy's shortest round-trip text
        codes = np.where(np.isnan(uniques)[codes], -1, codes) if len(codes) else codes
        return codes.astype(np.int64), texts.tolist()
    codes, uniques = pd.factorize(col, use_na_sentinel=True)
    texts = _uniques_text(pd.Series(uniques, dtype=dtype if len(uniques) else None))
    return None if texts is None else (codes, texts)


def _uniques_text(values: pd.Series) -> list[str] | None:
    """pandas' text of each value (no missing value among them), or None for a kind not covered here."""
    dtype = values.dtype
    if dtype == object or pd.api.types.is_string_dtype(dtype):
        items = values.tolist()
        return items if all(type(v) is str for v in items) else None
    if isinstance(dtype, np.dtype) and dtype.kind in "iub":
        return [str(v) for v in values.tolist()]
    if isinstance(dtype, np.dtype) and dtype.kind == "f":
        return values.to_numpy().astype(str).tolist()  # what pandas does: NumPy's shortest round-trip text
    return None


def _quoted(texts: list[str], sep: str) -> list[str]:
    """Python's csv module, QUOTE_MINIMAL: enclosed in double quotes when holding sep, a quote, CR or LF."""
    special = (sep, '"', "\r", "\n")
    return ['"' + t.replace('"', '""') + '"' if any(s in t for s in special) else t for t in texts]
