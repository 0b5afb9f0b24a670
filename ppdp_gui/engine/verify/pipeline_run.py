"""One run of the pipeline audit: a CSV file on disk → reader → recipe → plan → scratch ledger → release → export,
and what left the machine read back from disk.

The path is the custodian's own (`engine.pipeline`: load, plan, run_release, export — what `ppdp run … --report`
and the window call), with three differences only: the ledger is a scratch file in the audit's temporary folder
(never the user's; its cap is out of reach so that hundreds of runs can be charged), the noise source is seeded
(`NoiseSource.for_tests`, as in every audit), and the output goes to the temporary folder.

The observable (`Outcome`) is what a recipient of the release gets: the bytes of every table file written and
the release note read back from disk — not the custodian record, which stays on the machine. A plan that refuses,
or a run that stops with a message, publishes nothing: the observable is then "nothing published" (the message
is kept for the report, not compared: the custodian sees it, the public does not).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ppdp_gui.engine.errors import PpdpError
from ppdp_gui.engine.mechanisms.base import Progress
from ppdp_gui.engine.noise import NoiseSource
from ppdp_gui.engine.verify.output import VOLATILE, _note_features, table_features

#: the scratch ledger's cap for a new table: out of reach, so the audit's own runs never exhaust it
SCRATCH_CAP = 10 ** 9
OUTPUT = "release.csv"
NOTE = OUTPUT + ".release-note.json"
REFUSED = "nothing published"


def scratch_folder():
    """A temporary folder for the audit's files and scratch ledgers: in memory (/dev/shm) where there is one, since
    every run writes, syncs and renames several files; else the system's temporary folder."""
    shm = Path("/dev/shm")
    base = str(shm) if shm.is_dir() and os.access(shm, os.W_OK) else None
    return tempfile.TemporaryDirectory(prefix="ppdp-verify-pipeline-", dir=base)


@dataclass
class Outcome:
    """What left the machine in one run: the note (as read from disk) and each table file's bytes."""

    note: dict[str, Any] | None
    files: dict[str, bytes] = field(default_factory=dict)  # table name -> bytes written
    refused: str = ""  # why nothing was published (the custodian's message; not compared)
    crashed: bool = False  # stopped by an error that is not a message for the custodian (a bug)

    def digest(self) -> str:
        h = hashlib.sha256()
        h.update(json.dumps(self.note, sort_keys=True, default=str).encode())
        for name in sorted(self.files):
            h.update(name.encode() + b"\0" + self.files[name])
        return h.hexdigest()


def _drain(gen):
    last = None
    for item in gen:
        if not isinstance(item, Progress):
            last = item
    return last


def _read(path: Path) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


def release_file(source: Path, out_dir: Path, ledger, recipe_parts: dict[str, Any], mechanism: str,
                 seed: int, rng=None) -> Outcome:
    """Release `source` with `mechanism` along the publish path into `out_dir`; the Outcome read back from disk."""
    from ppdp_gui.engine.persistence.project import Recipe
    from ppdp_gui.engine.pipeline import export, plan, run_release
    from ppdp_gui.engine.pipeline.release import check_ready
    from ppdp_gui.engine.pipeline.load import load
    out_dir.mkdir(parents=True, exist_ok=True)
    for old in out_dir.iterdir():  # the previous run's files: each run starts from an empty folder
        if old.is_file():
            old.unlink()
    recipe = Recipe(source=str(source), roles=dict(recipe_parts["roles"]), kinds=dict(recipe_parts["kinds"]),
                    domains=dict(recipe_parts["domains"]), mechanism=mechanism,
                    params=dict(recipe_parts["params"]),
                    taxonomy_builds=dict(recipe_parts.get("taxonomy_builds", {})),
                    publish_as_is=tuple(recipe_parts.get("publish_as_is", ())))
    try:
        data = load(recipe).dataset
        planned = plan(data, mechanism, recipe.params, ledger=ledger, publish_as_is=recipe.publish_as_is)
        try:  # the publish path's one guard (errors, no ledger, over budget), as the window and `ppdp run`
            check_ready(planned, ledger)
        except PpdpError as exc:
            return Outcome(None, refused=str(exc))
        rng = NoiseSource.for_tests(seed) if rng is None else rng
        published = _drain(run_release(planned, ledger=ledger, rng=rng, seed=seed, checked=True))
        exported = export(published, out_dir / OUTPUT, note_path=out_dir / NOTE, ledger=ledger)
    except PpdpError as exc:
        return Outcome(None, refused=f"{type(exc).__name__}: {exc}")
    except Exception as exc:  # noqa: BLE001 - a crash is what the audit reports, not what stops it
        return Outcome(None, refused=f"crash, {type(exc).__name__}: {exc}", crashed=True)
    note = json.loads(_read(Path(exported.note)).decode("utf-8"))
    names = [f.get("table", f"file {i}") for i, f in enumerate(note.get("files", []))]
    files = {name: _read(Path(p)) for name, p in zip(names, exported.files)}
    return Outcome(note, files)


# ---- features of what left the machine ------------------------------------------------------------------------
def _frame(data: bytes) -> pd.DataFrame:
    """A written CSV as a recipient reads it: text, then every column whose cells are all numbers as numbers."""
    frame = pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False)
    for c in frame.columns:
        values = pd.to_numeric(frame[c], errors="coerce")
        if len(frame) and not values.isna().any():
            frame[c] = values.astype(float)
    return frame


def outcome_features(out: Outcome) -> dict[str, Any]:
    """name → value for one run (output.features' names: the note's leaves, per table the rows and sums per key),
    plus each file's header line and whether anything was published at all."""
    feats: dict[str, Any] = {"published": "no" if out.note is None else "yes"}
    if out.note is None:
        return feats
    note = {k: v for k, v in out.note.items() if k not in VOLATILE}
    texts = _note_features(note, feats)
    whole = hashlib.sha256(("\x1e".join(texts)).encode("utf-8", "surrogatepass"))
    for name in sorted(out.files):
        data = out.files[name]
        whole.update(data)
        feats[f"{'released table' if name == 'table' else 'table ' + name}: header"] = \
            data.split(b"\n", 1)[0].decode("utf-8", "replace")
        table_features(name, _frame(data), feats)
    feats["whole output"] = whole.hexdigest()
    return feats


# ---- deterministic differences --------------------------------------------------------------------------------
_NOISY_NAMES = ("sha256", "whole output")  # hashes of noisy bytes: fixed only if everything is; shown last


def fixed_differences(first: list[dict], second: list[dict], minimum: int) -> list[tuple[str, str, str]]:
    """Features with one value in every run on D and another value in every run on D' (absent counts as a value):
    [(feature, value on D, value on D')], the readable ones first. Needs `minimum` runs on each side: a feature
    the noise moves does not stay fixed over that many runs with different seeds."""
    if min(len(first), len(second)) < minimum:
        return []
    names = dict.fromkeys(k for r in first + second for k in r)
    out = []
    for name in names:
        a = {str(r.get(name, "(absent)")) for r in first}
        b = {str(r.get(name, "(absent)")) for r in second}
        if len(a) == 1 and len(b) == 1 and a != b:
            out.append((name, a.pop(), b.pop()))
    out.sort(key=lambda t: (any(s in t[0] for s in _NOISY_NAMES), t[0].count("/"), len(t[0])))
    return out


def shorten(text: str, limit: int = 120) -> str:
    text = str(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


