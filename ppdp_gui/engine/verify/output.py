"""What leaves the machine, as the verifier sees it: the released tables and the release note, made into features.

One audited run is `release_note(published)` (the real builder of the public note) plus every released table,
minus what is not a function of the data and the noise: the release id, the time and the "seeded for a test"
flag. `publish_once` builds the `Published` the way `run_release` does, without the two steps that add nothing
to the note and cost most of the time of a small run (the recount of the claims and the custodian's utility
figures); `tests/engine/test_verify.py` holds its note to run_release's, so the two cannot drift apart.

Features (`features`) flatten an audited run into name → value, so that events ("the cut of x is …", "the count
of row ward=C is ≥ 3", "the note's bounds are …") are simple comparisons that numpy evaluates for thousands of
runs at once:
- each table: per distinct key (its non-numeric columns), the number of rows and the sum of each numeric
  column (a count table gives its counts, a records table the multiplicity of each record), and its row count;
- the note: every leaf under its JSON path (a list also as its whole JSON text, so a cut is one value);
- the whole output: one hash, so "exactly this release" is an event too.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import numpy as np
import pandas as pd

from ppdp_gui.engine.claims import with_caveats
from ppdp_gui.engine.mechanisms.base import run_to_release
from ppdp_gui.engine.pipeline.plan import Plan
from ppdp_gui.engine.pipeline.published import Published, release_note
from ppdp_gui.engine.privacy.fingerprint import content_hash

VOLATILE = ("release_id", "created", "seeded for a test")  # not functions of the data and the noise
WHOLE = "whole output"
MAX_LIST = 64  # longer lists are kept as their JSON text only


def publish_once(plan: Plan, rng) -> Published:
    """One release of `plan` with `rng`, as `run_release` makes it (no ledger, no record, nothing charged)."""
    mech, data = plan.mechanism, plan.dataset
    release = run_to_release(mech.execute(data, rng=rng, params=plan.params))
    return Published(
        release_id="", created="", mechanism=mech.name, guarantee=mech.guarantee,
        summary=getattr(mech, "summary", ""), release=release, claims=with_caveats(release.claims, plan.caveats),
        params=dict(plan.params), cost=plan.cost, output_hash=content_hash(release.table), source=data.source,
        columns=tuple(data.schema), caveats=tuple(plan.caveats))


def audited(published: Published) -> dict[str, Any]:
    """The public part of one release: {"note": the note without VOLATILE, "frames": {name: table}, "tables":
    {name: CSV text} of the tables other than the main one}. The main table's CSV is not repeated: the note holds
    its sha256 ("output sha256", the hash of exactly that text)."""
    note = {k: v for k, v in release_note(published).items() if k not in VOLATILE}
    frames = published.release.tables()
    tables = {name: t.to_csv(index=False, lineterminator="\n") for name, t in frames.items() if name != "table"}
    return {"tables": tables, "note": note, "frames": frames}


def _text(obj) -> str:
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, default=str)


def output_digest(out: dict[str, Any]) -> str:
    """sha256 of the canonical text of an audited run (note, with the main table's hash, and the other tables):
    equal iff the outputs are equal."""
    text = _text({"tables": out["tables"], "note": out["note"]})
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


# ---- features ------------------------------------------------------------------------------------------------
def _scalar(value) -> Any:
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, (int, float, np.integer, np.floating)):
        return float(value)
    return str(value)


def _flatten(obj, path: str, out: dict[str, Any]) -> None:
    if isinstance(obj, dict):
        for k, v in obj.items():
            _flatten(v, f"{path}/{k}", out)
    elif isinstance(obj, (list, tuple)):
        out[path] = json.dumps(obj, sort_keys=True, ensure_ascii=False, default=str)
        if len(obj) <= MAX_LIST:
            for i, v in enumerate(obj):
                _flatten(v, f"{path}/{i}", out)
    else:
        out[path] = _scalar(obj)


def _as_text(series: pd.Series) -> np.ndarray:
    """The values as text; a categorical column through its codes (much cheaper than converting every value)."""
    if isinstance(series.dtype, pd.CategoricalDtype):
        cat = series.array
        labels = np.append(np.asarray(cat.categories, dtype=object).astype(str), "nan")
        return labels[cat.codes]
    return series.to_numpy(dtype=str)


def table_features(name: str, frame: pd.DataFrame, out: dict[str, Any]) -> None:
    """Per distinct key of the non-numeric columns: row count and numeric sums (vectorised over the rows). The main
    table (named 'table') reads 'released table', not 'table table', in the verdict's events."""
    prefix = "released table" if name == "table" else f"table {name}"
    out[f"{prefix}: rows"] = float(len(frame))
    if not len(frame):
        return
    numeric, text = {}, None
    for c, series in frame.items():
        t = series.dtype
        if pd.api.types.is_numeric_dtype(t) and not pd.api.types.is_bool_dtype(t):
            numeric[c] = series.to_numpy(dtype=float)
        else:
            part = np.char.add(f"{c}=", _as_text(series))
            text = part if text is None else np.char.add(np.char.add(text, ", "), part)
    if text is not None:
        labels, inverse = np.unique(text, return_inverse=True)
    else:
        labels, inverse = np.array(["(all rows)"]), np.zeros(len(frame), dtype=np.int64)
    rows = np.bincount(inverse, minlength=len(labels))
    sums = {c: np.bincount(inverse, weights=x, minlength=len(labels)) for c, x in numeric.items()}
    for i, label in enumerate(labels):
        if not numeric or rows[i] != 1:
            out[f"{prefix} [{label}]: rows"] = float(rows[i])
        for c, sm in sums.items():
            out[f"{prefix} [{label}]: {c}"] = float(sm[i])


_FLAT_CACHE: dict[tuple[str, str], dict[str, Any]] = {}
_CACHE_SIZE = 256


def _note_features(note: dict[str, Any], feats: dict[str, Any]) -> list[str]:
    """Flatten the note part by part; most parts (the guarantee's words, the mechanism's summary) are the same
    text run after run, so their flattening is looked up by that text. Returns the parts' texts."""
    texts = []
    for key in sorted(note):
        text = _text(note[key])
        texts.append(f"{json.dumps(key)}:{text}")
        flat = _FLAT_CACHE.get((key, text))
        if flat is None:
            flat = {}
            _flatten(json.loads(text), f"note/{key}", flat)
            if len(_FLAT_CACHE) >= _CACHE_SIZE:
                _FLAT_CACHE.pop(next(iter(_FLAT_CACHE)))
            _FLAT_CACHE[(key, text)] = flat
        feats.update(flat)
    return texts


def features(out: dict[str, Any]) -> dict[str, Any]:
    """Every feature of one audited run (see the module docstring)."""
    feats: dict[str, Any] = {}
    texts = _note_features(out["note"], feats)
    whole = "\x1e".join(texts + [_text(out["tables"])])
    feats[WHOLE] = hashlib.sha256(whole.encode("utf-8", "surrogatepass")).hexdigest()
    for name, frame in out["frames"].items():
        table_features(name, frame, feats)
    return feats


