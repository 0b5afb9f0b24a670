"""Which dataset is this? A keyed fingerprint of a table's content (for the ledger) and a plain hash of an output.

The ledger must recognise the same data however it is loaded, otherwise re-saving a file would reset its privacy
budget. So the fingerprint is of a canonical form that ignores what does not change the content:

- row order and column order (rows are sorted, columns taken by name);
- how a value was typed: a cell that reads as a number is written in one canonical way (``39``, ``39.0`` and
  ``" 39 "`` are the same; ``39.5`` is ``39.5``); other text is stripped of surrounding spaces;
- NA is its own marker, distinct from the empty string.

Two tables that differ only in these ways share a budget, which errs on the safe side. A table with a row or a
column removed is different content and gets its own entry: caps guard one exact table, not its subsets.

The hash is HMAC-SHA256 under a secret key kept beside the ledger, so the ledger file alone cannot be used to
test a guess of the data ("is this the table with patient X in it?").
"""

from __future__ import annotations

import hashlib
import hmac

import numpy as np
import pandas as pd

_NA = "\x00NA"


def _escape(text: pd.Series) -> pd.Series:
    return (text.str.replace("\\", "\\\\", regex=False).str.replace("\x1f", "\\u001f", regex=False)
            .str.replace("\x1e", "\\u001e", regex=False))


def _canonical_numbers(nums: pd.Series) -> pd.Series:
    """Numbers as text: integers without a decimal point, others in shortest round-trip form."""
    out = pd.Series(np.full(len(nums), "", dtype=object), index=nums.index)
    finite = np.isfinite(nums.to_numpy(dtype=float, na_value=np.nan))
    values = nums.to_numpy(dtype=float, na_value=np.nan)
    integral = finite & (np.abs(values) < 2.0 ** 53) & (np.floor(np.where(finite, values, 0)) == values)
    if integral.any():
        out[integral] = values[integral].astype(np.int64).astype(str)
    other = ~integral & ~np.isnan(values)
    if other.any():
        out[other] = pd.Series(values[other]).astype(str).to_numpy()
    return out


def canonical_column(series: pd.Series) -> pd.Series:
    """Each cell of one column in the canonical text described in the module docstring."""
    na = series.isna().to_numpy()
    if pd.api.types.is_numeric_dtype(series.dtype) and not pd.api.types.is_bool_dtype(series.dtype):
        nums = series.astype(float)
        text = _canonical_numbers(nums)
    else:
        text = series.astype(str).str.strip()
        nums = pd.to_numeric(text.where(~na), errors="coerce")
        is_num = nums.notna().to_numpy()
        if is_num.any():
            text = text.copy()
            text[is_num] = _canonical_numbers(nums[is_num]).to_numpy()
    text = text.astype(object)
    text[na] = _NA
    return _escape(text.astype(str))


def _dictionary(series: pd.Series) -> tuple[np.ndarray, list[str]]:
    """(rank of each cell's canonical text among the column's distinct canonical texts, those texts sorted).

    Only the distinct values are canonicalised (fast on real tables); two spellings of one number merge here."""
    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    canon = canonical_column(pd.Series(uniques)).tolist() if len(uniques) else []
    if (codes < 0).any():
        canon.append(_escape(pd.Series([_NA], dtype=object)).iloc[0])
        codes = np.where(codes < 0, len(canon) - 1, codes)
    if not canon:
        return np.zeros(len(series), dtype=np.int64), []
    texts, inverse = np.unique(np.array(canon, dtype=object), return_inverse=True)
    return inverse.astype(np.int64)[codes], [str(t) for t in texts]


def keyed_fingerprint(frame: pd.DataFrame, key: bytes) -> str:
    """HMAC-SHA256 (hex) of the canonical content of `frame`: the sorted column names, each column's sorted
    dictionary of canonical texts, and the multiset of rows (rows as dictionary ranks, sorted)."""
    names = [str(c).strip() for c in frame.columns]
    order = sorted(range(len(names)), key=lambda i: names[i])
    mac = hmac.new(key, digestmod=hashlib.sha256)
    mac.update(f"ppdp-fingerprint-v1\x1e{len(names)}x{len(frame)}\x1e".encode())
    ranks = []
    for i in order:
        rank, texts = _dictionary(frame.iloc[:, i])
        ranks.append(rank)
        name = _escape(pd.Series([names[i]], dtype=object)).iloc[0]
        mac.update(f"\x1e{name}\x1e{len(texts)}\x1f".encode("utf-8", "surrogatepass"))
        mac.update("\x1f".join(texts).encode("utf-8", "surrogatepass"))
    if ranks and len(frame):
        matrix = np.column_stack(ranks)
        matrix = matrix[np.lexsort(matrix.T[::-1])]
        mac.update(b"\x1e" + np.ascontiguousarray(matrix, dtype="<i8").tobytes())
    return mac.hexdigest()


def content_hash(frame: pd.DataFrame) -> str:
    """sha256 (hex) of the table exactly as released: CSV, header, rows in order, '\\n' line ends, UTF-8."""
    data = frame.to_csv(index=False, lineterminator="\n").encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest()
