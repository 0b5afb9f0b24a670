"""Project files: the whole session as versioned JSON (never pickle), and `migrate` for older files.

A project records where the table came from (path + sha256, so a changed file is noticed), how it was read (NA
policy, kinds), the roles, the taxonomies (as ARX rows, leaf to root), the chosen mechanism and parameters, and
a summary of the releases made (the released tables themselves are the exported files). Qt-free.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from fractions import Fraction
from pathlib import Path
from typing import Any

from ppdp_gui.engine.data.schema import NAPolicy, Role
from ppdp_gui.engine.errors import DataError

SCHEMA_VERSION = 1
SUFFIX = ".ppdp.json"


# ---- migration ---------------------------------------------------------------------------------------------------
def _from_0(obj: dict) -> dict:
    """Version 0 (first drafts, no schema_version): source_path, roles, mechanism name and params at top level."""
    roles = obj.get("roles") or {}
    return {
        "schema_version": 1,
        "source": {"path": obj.get("source_path"), "sha256": obj.get("source_sha256")},
        "na_policy": {},
        "kinds": dict(obj.get("kinds") or {}),
        "roles": dict(roles),
        "taxonomies": dict(obj.get("taxonomies") or {}),
        "mechanism": {"name": obj.get("mechanism"), "params": dict(obj.get("params") or {})},
        "releases": list(obj.get("releases") or []),
    }


_MIGRATIONS = {0: _from_0}


def migrate(obj: dict) -> dict:
    """Bring a project read from disk to the current schema, step by step; refuse files from a newer app."""
    if not isinstance(obj, dict):
        raise DataError("not a project file: the top level is not a JSON object")
    version = obj.get("schema_version", 0)
    if not isinstance(version, int) or version < 0:
        raise DataError(f"not a project file: schema_version {version!r} is not a version number")
    if version > SCHEMA_VERSION:
        raise DataError(f"this project was saved by a newer version of the app (schema {version}; this app "
                        f"reads up to {SCHEMA_VERSION}). Please update the app.")
    while version < SCHEMA_VERSION:
        obj = _MIGRATIONS[version](obj)
        version = obj["schema_version"]
    return obj


# ---- to and from JSON ----------------------------------------------------------------------------------------
def _jsonable(value: Any) -> Any:
    if isinstance(value, (tuple, list)):
        return [_jsonable(v) for v in value]
    if isinstance(value, Fraction):
        return str(value)
    if isinstance(value, Role):
        return value.value
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):  # numpy scalars
        return value.item()
    return value


def release_summary(record) -> dict:
    rel = record.release
    entry = record.ledger_entry
    return {
        "mechanism": rel.mechanism,
        "privacy": rel.cost.describe(),
        "epsilon": None if rel.cost.epsilon is None else str(rel.cost.epsilon),
        "delta": str(rel.cost.delta),
        "k": rel.cost.k, "l": rel.cost.l,
        "params": {k: _jsonable(v) for k, v in dict(rel.params).items()},
        "rows": int(len(rel.table)),
        "measures": dict(record.measures),
        "ledger_entry": getattr(entry, "id", None) if entry is not None else None,
        "exported_to": list(record.exported_to),
    }


def project_dict(session, previous_releases: list[dict] | None = None) -> dict:
    ds = session.dataset
    if ds is None:
        raise DataError("there is no table to save a project for")
    pol = ds.source.na_policy
    return {
        "schema_version": SCHEMA_VERSION,
        "app": "ppdp_gui",
        "saved": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "source": {"path": ds.source.path, "sha256": ds.source.sha256, "format": ds.source.file_format},
        "na_policy": {"tokens": list(pol.tokens), "action": pol.action, "category_label": pol.category_label},
        "kinds": {c.name: c.kind for c in ds.schema},
        "roles": {c.name: c.role.value for c in ds.schema},
        "taxonomies": {c.name: c.taxonomy.to_paths() for c in ds.schema if c.taxonomy is not None},
        "mechanism": {"name": session.mechanism_name,
                      "params": {k: _jsonable(v) for k, v in session.params.items()}},
        "releases": list(previous_releases or []) + [release_summary(r) for r in session.releases],
    }


def save_project(session, path, previous_releases: list[dict] | None = None) -> Path:
    from ppdp_gui.engine.data.writer import write_json_atomic
    return write_json_atomic(project_dict(session, previous_releases), path)


def read_project(path) -> dict:
    """The project at `path`, migrated to the current schema, or a DataError saying what is wrong."""
    p = Path(path)
    try:
        obj = json.loads(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise DataError(f"cannot read the project: {exc.strerror or exc}", path=str(p)) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        line = getattr(exc, "lineno", None)
        col = getattr(exc, "colno", None)
        raise DataError(f"not a valid project file ({getattr(exc, 'msg', exc)})", path=str(p), line=line,
                        column=col) from None
    obj = migrate(obj)
    if not (obj.get("source") or {}).get("path"):
        raise DataError("the project does not say which table it belongs to", path=str(p))
    return obj


def na_policy_of(obj: dict) -> NAPolicy:
    pol = obj.get("na_policy") or {}
    default = NAPolicy()
    return NAPolicy(tokens=tuple(pol.get("tokens", default.tokens)), action=pol.get("action", default.action),
                    category_label=pol.get("category_label", default.category_label))


def roles_of(obj: dict) -> dict[str, Role]:
    return {name: Role(value) for name, value in (obj.get("roles") or {}).items()}


def taxonomies_of(obj: dict) -> dict:
    from ppdp_gui.engine.taxonomy.arx_io import taxonomy_from_rows
    return {name: taxonomy_from_rows(name, [list(map(str, r)) for r in rows], f"project taxonomy of {name}")
            for name, rows in (obj.get("taxonomies") or {}).items()}


def source_changed(obj: dict) -> bool:
    """True when the table file's content is not what the project was saved with."""
    import hashlib
    src = obj.get("source") or {}
    if not src.get("sha256"):
        return False
    h = hashlib.sha256()
    with open(src["path"], "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest() != src["sha256"]
