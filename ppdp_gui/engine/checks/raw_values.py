"""No raw value of a pseudonymised identifier in a released table: the check the export makes on the bytes written.

A keyed pseudonym (governance/pseudonyms.py) replaces an identifier column by `<column>_pseudonym`; the raw column
keeps its role (identifier or person) and is never released. Whatever a mechanism did with the other columns, no
raw value may turn up anywhere in the file: not as the pseudonym (a wrong key path, a column swapped) nor inside
another column (a value copied into a free-text field). The raw values travel with the release in memory only
(`Published.raw_identifiers`), like the person ids, so the export can compare them with the table read back.

A raw value shorter than MIN_CHECKED_LENGTH characters (a ward number "12") is looked for in the pseudonym column
only: in the other columns it would equal unrelated cells (a count of 12).
"""

from __future__ import annotations

from typing import Mapping

import numpy as np
import pandas as pd

from ppdp_gui.engine.errors import CheckError

MIN_CHECKED_LENGTH = 5
PSEUDONYM_SUFFIX = "_pseudonym"


def _cells(frame: pd.DataFrame) -> dict:
    """Each column's cells as the file shows them (text, trimmed), worked out once per table."""
    return {name: frame[name].astype(str).str.strip().to_numpy(dtype=object) for name in frame.columns}


def check_no_raw_values(written: pd.DataFrame, raw, column: str, cells: dict | None = None) -> int:
    """Raise CheckError when a raw value of `column` (at least MIN_CHECKED_LENGTH characters) equals a cell of
    the written table; the pseudonym column is checked for every raw value whatever its length. Returns the number
    of distinct raw values checked. `cells`: the table's `_cells`, when several identifiers are checked. One
    look-up over all the other columns' cells at once (vectorised), one over the pseudonym column."""
    values = pd.Series(pd.Series(raw).dropna().astype(str).str.strip().unique(), dtype=object)
    long = values[values.str.len() >= MIN_CHECKED_LENGTH]
    cells = _cells(written) if cells is None else cells
    pseudo = column + PSEUDONYM_SUFFIX
    for names, wanted in (([n for n in cells if str(n) != pseudo], long), ([n for n in cells if str(n) == pseudo],
                                                                          values)):
        if not names or not len(wanted):
            continue
        stacked = np.concatenate([cells[n] for n in names])
        hits = pd.Series(stacked, dtype=object).isin(pd.Index(wanted)).to_numpy()
        if hits.any():
            first = int(np.argmax(hits))
            ends = np.cumsum([len(cells[n]) for n in names])
            which = int(np.searchsorted(ends, first, side="right"))
            row = first - (int(ends[which - 1]) if which else 0)
            raise CheckError(f"the written file holds a value of the identifier {column} in its column "
                             f"{names[which]} (row {row + 1}); nothing may be published")
    return len(values)


def refuse_raw_values(tables: Mapping[str, pd.DataFrame], raw: Mapping[str, np.ndarray]) -> list[dict]:
    """Check every released table against every pseudonymised column's raw values (CheckError on the first
    found); returns what was checked, as the release note lists its checks on the written file (without the
    number of values looked for: an exact count of the source, which a note may not hold)."""
    done = []
    for table_name, frame in tables.items():
        cells = _cells(frame)
        for column, values in raw.items():
            check_no_raw_values(frame, values, column, cells)
            done.append({"claim": f"no raw value of {column} appears", "table": table_name, "ok": True})
    return done
