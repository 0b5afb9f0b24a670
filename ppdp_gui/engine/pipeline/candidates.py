"""The candidate releases a mechanism searched, and a preview of any one of them — for any mechanism.

A mechanism that chooses its release among candidates (global recoding's lattice of generalisation levels) may
describe the search in `Release.record["lattice"]`, a dict with:

- "dimensions": the names of the coordinates (the quasi-identifiers), "heights": the largest level of each;
- "levels": (nodes x dimensions) integer coordinates of every node described, "size": how many nodes exist;
- "state": one code per node, named by "state_names" (1 = anonymous, 2 = not anonymous, 3 = not anonymous by
  inference, 4 = pruned, 0 = not visited); "score" (NaN when not evaluated), "suppressed" (-1 when not evaluated),
  "bound" (the lower bound that pruned it); "optimum": the index of the node released; "proven_optimal";
  "quality": the model scored.

The window's Search tab draws that dict without knowing the mechanism, and `preview_candidate` asks the mechanism
(`Mechanism.preview_candidate`) what one node would release. Everything here is for the custodian: it is computed
from the records and never published.
"""

from __future__ import annotations

from typing import Any, Iterator

import numpy as np
import pandas as pd

from ppdp_gui.engine.data.schema import Dataset
from ppdp_gui.engine.errors import MechanismError
from ppdp_gui.engine.mechanisms import registry
from ppdp_gui.engine.mechanisms.base import Progress

ANONYMOUS = 1


def search_of(release) -> dict | None:
    """The search description of a Release (or of a Published's release), or None."""
    rel = getattr(release, "release", release)
    record = getattr(rel, "record", None) or {}
    lattice = record.get("lattice")
    return lattice if isinstance(lattice, dict) and "levels" in lattice else None


def node_label(search: dict, index: int) -> str:
    return "/".join(str(int(v)) for v in np.asarray(search["levels"])[index])


def candidates_frame(search: dict, limit: int = 200) -> pd.DataFrame:
    """The anonymous candidates, best first: what a keyboard user picks from (the chart's points in a table)."""
    state = np.asarray(search["state"])
    score = np.asarray(search["score"], dtype=float)
    idx = np.flatnonzero(state == ANONYMOUS)
    idx = idx[np.argsort(score[idx], kind="stable")][:limit]
    dims = list(search["dimensions"])
    levels = np.asarray(search["levels"])
    frame = pd.DataFrame({"node": idx, "levels": [node_label(search, i) for i in idx],
                          "score": np.round(score[idx], 4),
                          "suppressed rows": np.asarray(search["suppressed"])[idx]})
    frame["released"] = np.where(idx == search.get("optimum"), "yes", "")
    for j, d in enumerate(dims):
        frame[d] = levels[idx, j]
    return frame


def summary(search: dict) -> str:
    state = np.asarray(search["state"])
    names = search.get("state_names", {})
    counts = {names.get(s, str(s)): int((state == s).sum()) for s in np.unique(state)}
    parts = [f"{int(search.get('size', len(state))):,} candidates"] + [f"{n:,} {k}" for k, n in counts.items()]
    opt = search.get("optimum")
    if opt is not None:
        parts.append(f"released: {node_label(search, opt)} ({search.get('quality', 'score')} "
                     f"{float(np.asarray(search['score'])[opt]):.4g}, "
                     + ("proven optimal" if search.get("proven_optimal") else "not proven optimal") + ")")
    return "; ".join(parts)


def preview_candidate(mechanism: str, dataset: Dataset, params: dict[str, Any], search: dict,
                      index: int) -> dict:
    """What the candidate `index` of `search` would release: the mechanism's own preview of those coordinates."""
    mech = registry.create(mechanism)
    hook = getattr(mech, "preview_candidate", None)
    if hook is None:
        raise MechanismError(f"{mechanism} cannot preview its candidates")
    levels = [int(v) for v in np.asarray(search["levels"])[int(index)]]
    out = dict(hook(dataset, dict(params), levels))
    out["node"] = int(index)
    out["state"] = search.get("state_names", {}).get(int(np.asarray(search["state"])[int(index)]), "")
    return out


def preview_job(mechanism: str, dataset: Dataset, params: dict[str, Any], search: dict,
                index: int) -> Iterator[Progress | dict]:
    """`preview_candidate` as a job for the window's worker thread."""
    yield Progress(0.1, f"previewing candidate {node_label(search, index)}")
    yield preview_candidate(mechanism, dataset, params, search, index)
