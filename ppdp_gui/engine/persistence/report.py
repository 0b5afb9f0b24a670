"""The release report: what was published, from what, with which guarantee — as plain JSON-able data.

A custodian must be able to show, years later, what a file is: the mechanism and its parameters, the exact
privacy cost (ε as a fraction, as the ledger stores it), the source file's hash and the ledger's keyed
fingerprint, row counts, the released table's hash, the independent check and the software version.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import enum
import math
import platform
from fractions import Fraction
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd

REPORT_VERSION = 1
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


def _software() -> dict:
    from ppdp_gui import __version__
    return {"ppdp_gui": __version__, "python": platform.python_version(), "numpy": np.__version__,
            "pandas": pd.__version__}


def _guarantee(name: str) -> str | None:
    from ppdp_gui.engine.errors import PpdpError
    from ppdp_gui.engine.mechanisms import registry
    try:
        return registry.get(name).guarantee
    except (PpdpError, ImportError, AttributeError):
        return None


def _cost(cost) -> dict:
    eps = cost.epsilon
    return {"epsilon": None if eps is None else str(Fraction(eps)),
            "epsilon_float": None if eps is None else float(eps),
            "delta": str(Fraction(cost.delta)), "delta_float": float(cost.delta),
            "k": cost.k, "l": cost.l, "note": cost.note, "description": cost.describe()}


def _ledger(entry: Any) -> dict | None:
    if entry is None:
        return None
    if isinstance(entry, (int, np.integer)):
        return {"id": int(entry)}
    out = jsonable(entry)
    return out if isinstance(out, dict) else {"entry": out}


def release_report(release, data, *, ledger_entry: Any = None, measures: Mapping[str, float] | None = None,
                   fingerprint: str | None = None, output_path: str | Path | None = None,
                   created: _dt.datetime | None = None) -> dict:
    """JSON-able description of one release of `data` (a Dataset). `ledger_entry` is an entry id or object."""
    meta = dict(release.metadata)
    ledger = _ledger(ledger_entry if ledger_entry is not None else meta.get("ledger_entry"))
    if fingerprint is None and ledger:
        fingerprint = ledger.get("fingerprint")
    digest = meta.get("output_hash")
    if digest is None:
        from ppdp_gui.engine.privacy.fingerprint import content_hash
        digest = content_hash(release.table)
    src = data.source
    created = created or _dt.datetime.now(_dt.timezone.utc)
    return {
        "report_version": REPORT_VERSION,
        "created": created.isoformat(timespec="seconds"),
        "software": _software(),
        "mechanism": {"name": release.mechanism, "guarantee": _guarantee(release.mechanism)},
        "params": jsonable(dict(release.params)),
        "cost": _cost(release.cost),
        "dataset": {
            "source_path": src.path, "source_sha256": src.sha256, "fingerprint": fingerprint,
            "rows_read": int(src.n_rows_read), "rows_dropped": int(src.n_rows_dropped), "rows_used": data.n_rows,
            "missing_values": jsonable(src.na_policy),
            "columns": [{"name": c.name, "kind": c.kind, "role": c.role.value,
                         "taxonomy": c.taxonomy is not None} for c in data.schema],
        },
        "release": {
            "rows": len(release.table), "columns": [str(c) for c in release.table.columns],
            "output_sha256": digest, "output_path": None if output_path is None else str(output_path),
            "extra_tables": {str(k): len(v) for k, v in release.extra_tables.items()},
        },
        "ledger": ledger,
        "check": jsonable(meta.get("check")),
        "warnings": jsonable(meta.get("warnings", [])),
        "measures": None if measures is None else jsonable(dict(measures)),
        "metadata": jsonable({k: v for k, v in meta.items()
                              if k not in ("check", "warnings", "output_hash", "ledger_entry")}),
    }
