"""Plain JSON-able copies of engine values, for the release note, the custodian record and the ledger.

The documents themselves are built in `engine.pipeline.published` (what goes out, what stays local).
"""

from __future__ import annotations

import dataclasses
import enum
import math
from fractions import Fraction
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd

MAX_LIST = 10_000  # longer arrays are summarised, not copied into the report


def jsonable(obj: Any) -> Any:
    """A copy of `obj` made of dict/list/str/int/float/bool/None only (Fractions as "p/q" strings)."""
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, enum.Enum):
        return jsonable(obj.value)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        v = float(obj)
        return v if math.isfinite(v) else None
    if isinstance(obj, Fraction):
        return str(obj)
    if isinstance(obj, Path):
        return str(obj)
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, Mapping):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, pd.DataFrame):
        return {"table": {"rows": len(obj), "columns": [str(c) for c in obj.columns]}}
    if isinstance(obj, (np.ndarray, pd.Series, pd.Index)):
        arr = np.asarray(obj)
        return jsonable(arr.tolist()) if arr.size <= MAX_LIST else {"array": {"size": int(arr.size)}}
    if isinstance(obj, (list, tuple, set, frozenset)):
        items = sorted(obj, key=str) if isinstance(obj, (set, frozenset)) else obj
        return [jsonable(v) for v in items]
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: jsonable(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    return str(obj)
