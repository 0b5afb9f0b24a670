"""The person id of every released row, for recounting persons (custodian side only; never written).

The person column (Role.PERSON) never leaves the machine, so the written file cannot say whose row each row is. A
mechanism says instead which source row every released row comes from (`Release.source_rows`: per table, the
source positions in the order the rows are written); here the source's own person column is read at those
positions. The export reads the staged file back row for row in the order it was written (CSV, TSV, XLSX and
Parquet keep it; the row count is compared first), so the i-th row read back is the i-th id. Suppressed rows
(shown '*') are rows like the others here; the checker leaves them out of the recount itself. The alignment is
checked before it is used: the columns published as they are (sensitive, insensitive) must match the source rows.

A missing person id is one person (every such row together): the side on which fewer persons are counted.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np
import pandas as pd


def person_codes(values: pd.Series | np.ndarray) -> np.ndarray:
    """Dense ids 0..P-1 of a person column (missing values: one person)."""
    return pd.factorize(pd.Series(values), use_na_sentinel=False)[0].astype(np.int64)


def released_person_ids(values: pd.Series | np.ndarray, source_rows: Mapping[str, np.ndarray],
                        tables: Mapping[str, pd.DataFrame], source: pd.DataFrame | None = None,
                        unchanged: tuple[str, ...] = ()) -> dict[str, np.ndarray]:
    """Per released table, the person id of each of its rows. A table whose source rows are not given, or do not
    line up with its rows or with the source, gets none: the checker then refuses its per-person claims.

    `source` and `unchanged` (columns a mechanism publishes as they are): the alignment is checked, not trusted —
    each such column of a released row must hold its source row's value, else the table gets no ids either."""
    codes = person_codes(values)
    out: dict[str, np.ndarray] = {}
    for name, table in tables.items():
        rows = source_rows.get(name)
        if rows is None:
            continue
        rows = np.asarray(rows)
        if rows.ndim != 1 or len(rows) != len(table) or not np.issubdtype(rows.dtype, np.integer):
            continue
        if rows.size and (rows.min() < 0 or rows.max() >= codes.size):
            continue
        if source is not None and not _same_values(table, source, rows, unchanged):
            continue
        out[name] = codes[rows]
    return out


def _same_values(table: pd.DataFrame, source: pd.DataFrame, rows: np.ndarray, columns: tuple[str, ...]) -> bool:
    """Whether every column of `columns` that `table` holds equals the source's at `rows` (as text)."""
    for col in columns:
        if col not in table.columns or col not in source.columns:
            continue
        released = table[col].astype(str).to_numpy()
        original = source[col].iloc[rows].astype(str).to_numpy()
        if released.shape != original.shape or not (released == original).all():
            return False
    return True
