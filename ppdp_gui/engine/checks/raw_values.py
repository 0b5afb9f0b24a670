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


def check_no_raw_values(written: pd.DataFrame, raw, column: str) -> int:
    """Raise CheckError when a raw value of `column` (at least MIN_CHECKED_LENGTH characters) equals a cell of
    the written table; the pseudonym column is checked for every raw value whatever its length. Returns the number
    of distinct raw values checked."""
    values = pd.Series(pd.Series(raw).dropna().astype(str).str.strip().unique(), dtype=object)
    long = set(values[values.str.len() >= MIN_CHECKED_LENGTH])
    everything = set(values)
    for name in written.columns:
        cells = written[name].astype(str).str.strip()
        hits = cells.isin(everything if str(name) == column + PSEUDONYM_SUFFIX else long)
        if hits.any():
            raise CheckError(f"the written file holds a value of the identifier {column} in its column {name} "
                             f"(row {int(np.argmax(hits.to_numpy())) + 1}); nothing may be published")
    return len(everything)


def refuse_raw_values(tables: Mapping[str, pd.DataFrame], raw: Mapping[str, np.ndarray]) -> list[dict]:
    """Check every released table against every pseudonymised column's raw values (CheckError on the first
    found); returns what was checked, as the release note lists its checks on the written file (without the
    number of values looked for: an exact count of the source, which a note may not hold)."""
    done = []
    for table_name, frame in tables.items():
        for column, values in raw.items():
            check_no_raw_values(frame, values, column)
            done.append({"claim": f"no raw value of {column} appears", "table": table_name, "ok": True})
    return done
