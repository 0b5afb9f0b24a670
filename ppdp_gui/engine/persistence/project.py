"""Project files: a release *recipe* as versioned JSON (never pickle), read back strictly, migrated from old files.

A recipe is everything needed to make the same release again: the table (path + sha256, so a changed file is
noticed), how it is read (missing-value policy, kinds), the roles (and which roles and kinds are still guesses
read from the values, not confirmed: `guessed`), the taxonomies (as ARX rows, leaf to root,
with their origin), the public column domains, the mechanism and its parameters, and whether the custodian opted
into domains read from the data. The window saves its session as one; `ppdp run --recipe FILE` runs one; both
go through `engine.pipeline.load`, so they make the same release.

Reading is strict: every field is checked and anything malformed (deep nesting, a 4,300-digit number, an unknown
role, a bad missing-value policy, a bad taxonomy) is one DataError naming the file and the field — never a
traceback in the window.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from fractions import Fraction
from pathlib import Path
from typing import Any

from ppdp_gui.engine.data.domains import Domain
from ppdp_gui.engine.data.schema import NAPolicy, Role
from ppdp_gui.engine.errors import DataError, PpdpError

SCHEMA_VERSION = 2
SUFFIX = ".ppdp.json"
MAX_BYTES = 64 << 20  # a project holds taxonomies, not data: anything larger is not one
MAX_DEPTH = 12
_ROLE_ALIASES = {"qi": "quasi-identifier", "quasi": "quasi-identifier", "id": "identifier", "sa": "sensitive",
                 "label": "class", "target": "class", "other": "insensitive"}


@dataclass
class Recipe:
    """What a release is made from and how (see the module docstring). Taxonomies are Taxonomy objects."""

    source: str
    source_sha256: str | None = None
    na_policy: NAPolicy = field(default_factory=NAPolicy)
    kinds: dict[str, str] = field(default_factory=dict)
    roles: dict[str, Role] = field(default_factory=dict)
    taxonomies: dict[str, Any] = field(default_factory=dict)
    taxonomy_files: dict[str, str] = field(default_factory=dict)  # ARX files named on the command line
    bundled: str | None = None  # "adult": the bundled ARX Adult hierarchies, by column name
    #: taxonomies to build from the table when it is loaded ({column: build spec such as "dates" or
    #: "intervals:5"}, see taxonomy/from_spec.py); `load` builds each, puts the tree in `taxonomies` (so a saved
    #: project holds its rows and origin, like a tree built in the window) and removes the spec from here
    taxonomy_builds: dict[str, str] = field(default_factory=dict)
    domains: dict[str, Domain] = field(default_factory=dict)
    mechanism: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    allow_data_domains: bool = False
    #: the custodian's confirmation that a table the ledger sees as a near copy of a known one is about other
    #: people (`plan(separate_dataset=…)`, `ppdp run --separate-dataset`, the Mechanism step's tick): kept so a
    #: reopened project charges the same budget and makes the same release
    separate_dataset: bool = False
    #: nearly unique columns the custodian confirmed may be published as is (the plan's `publish_as_is`)
    publish_as_is: tuple[str, ...] = ()
    #: {column: ("kind", "role")}: what of a column is still the reader's guess from its values, neither stated
    #: nor confirmed (`ColumnSpec.guessed`; a DP plan refuses it). The window saves every role and kind in
    #: `roles` / `kinds` so a project reopens as it was left; this says which of them were only guesses. Empty
    #: once the custodian pressed "Confirm roles and kinds" — the confirmation the project keeps.
    guessed: dict[str, tuple[str, ...]] = field(default_factory=dict)
    releases: list[dict] = field(default_factory=list)  # summaries of releases made (history only)
    #: the release context of the governance (engine/persistence/release_context.py): optional, checked there
    context: dict = field(default_factory=dict)


# ---- parsing helpers: every failure names the field -----------------------------------------------------------
def parse_role(text, where: str = "role") -> Role:
    if isinstance(text, Role):
        return text
    if not isinstance(text, str):
        raise DataError(f"{where}: {text!r} is not a role")
    key = _ROLE_ALIASES.get(text.strip().lower(), text.strip().lower().replace("_", "-").replace(" ", "-"))
    for role in Role:
        if key in (role.value, role.name.lower().replace("_", "-")):
            return role
    raise DataError(f"{where}: unknown role {text!r}; use one of {', '.join(r.value for r in Role)}")


def _obj(value, where: str) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise DataError(f"{where} must be a JSON object")
    return value


def _str_map(value, where: str) -> dict[str, str]:
    out = {}
    for k, v in _obj(value, where).items():
        if not isinstance(v, str):
            raise DataError(f"{where}[{k!r}] must be text")
        out[str(k)] = v
    return out


def _depth(obj, limit: int = MAX_DEPTH, level: int = 0) -> None:
    if level > limit:
        raise DataError(f"is nested more than {limit} levels deep; not a project file")
    if isinstance(obj, dict):
        for v in obj.values():
            _depth(v, limit, level + 1)
    elif isinstance(obj, list):
        for v in obj:
            _depth(v, limit, level + 1)


def _scalar(value, where: str):
    """A parameter value: text, a sensible number, a bool, null, or a list of text (column lists)."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        if abs(value) > 10 ** 18:
            raise DataError(f"{where}: the number has {len(str(abs(value)))} digits; not a parameter value")
        return value
    if isinstance(value, float):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise DataError(f"{where}: {value!r} is not a parameter value")


def na_policy_from(obj, where: str = "na_policy") -> NAPolicy:
    pol = _obj(obj, where)
    default = NAPolicy()
    tokens = pol.get("tokens", list(default.tokens))
    if not isinstance(tokens, list) or not all(isinstance(t, str) for t in tokens):
        raise DataError(f"{where}.tokens must be a list of text")
    action = pol.get("action", default.action)
    if action not in ("drop", "category"):
        raise DataError(f"{where}.action must be 'drop' or 'category', not {action!r}")
    label = pol.get("category_label", default.category_label)
    if not isinstance(label, str):
        raise DataError(f"{where}.category_label must be text")
    leave_out = pol.get("leave_out", [])
    if not isinstance(leave_out, list) or not all(isinstance(t, str) for t in leave_out):
        raise DataError(f"{where}.leave_out must be a list of column names")
    mostly = pol.get("mostly_missing", default.mostly_missing)
    if mostly is not None and (isinstance(mostly, bool) or not isinstance(mostly, (int, float))
                               or not 0 < mostly <= 1):
        raise DataError(f"{where}.mostly_missing must be a share between 0 and 1, or null")
    return NAPolicy(tokens=tuple(tokens), action=action, category_label=label, leave_out=tuple(leave_out),
                    mostly_missing=None if mostly is None else float(mostly))


def _taxonomies_from(obj) -> dict:
    from ppdp_gui.engine.taxonomy.arx_io import taxonomy_from_rows
    out = {}
    for name, entry in _obj(obj, "taxonomies").items():
        origin = "public"
        if isinstance(entry, dict):
            rows, origin = entry.get("rows"), entry.get("origin", "public")
            if origin not in ("public", "data"):
                raise DataError(f"taxonomies[{name!r}].origin must be 'public' or 'data'")
        else:
            rows = entry
        if not isinstance(rows, list) or not all(isinstance(r, list) and r and all(isinstance(c, (str, int, float))
                                                                                    for c in r) for r in rows):
            raise DataError(f"taxonomies[{name!r}] must be a list of rows of labels (leaf to root)")
        try:
            tax = taxonomy_from_rows(name, [[str(c) for c in r] for r in rows], f"project taxonomy of {name}")
        except PpdpError as exc:
            raise DataError(f"taxonomies[{name!r}]: {exc}") from None
        tax.origin = origin
        out[str(name)] = tax
    return out


def _domains_from(obj) -> dict[str, Domain]:
    out = {}
    for name, entry in _obj(obj, "domains").items():
        try:
            out[str(name)] = Domain.from_json(entry)
        except (PpdpError, TypeError, ValueError) as exc:
            raise DataError(f"domains[{name!r}]: {exc}") from None
    return out


# ---- migration -------------------------------------------------------------------------------------------------
def _from_0(obj: dict) -> dict:
    """Version 0 (first drafts, no schema_version): source_path, roles, mechanism name and params at top level."""
    return {"schema_version": 1, "source": {"path": obj.get("source_path"), "sha256": obj.get("source_sha256")},
            "na_policy": {}, "kinds": dict(_obj(obj.get("kinds"), "kinds")),
            "roles": dict(_obj(obj.get("roles"), "roles")), "taxonomies": dict(_obj(obj.get("taxonomies"), "taxonomies")),
            "mechanism": {"name": obj.get("mechanism"), "params": dict(_obj(obj.get("params"), "params"))},
            "releases": list(obj.get("releases") or [])}


def _from_1(obj: dict) -> dict:
    """Version 1 stored taxonomies as bare rows and had no domains. Whether a v1 tree was imported from a file
    or built from the table's own values is not known, so it is marked "data" (the safe side): a DP release
    then asks the custodian to confirm its values are public before it may be labelled ε-DP."""
    out = dict(obj)
    out["schema_version"] = 2
    out["taxonomies"] = {k: {"rows": v, "origin": "data"} for k, v in _obj(obj.get("taxonomies"), "taxonomies").items()}
    out["domains"] = {}
    mech = dict(_obj(obj.get("mechanism"), "mechanism"))
    mech.setdefault("allow_data_domains", False)
    out["mechanism"] = mech
    return out


_MIGRATIONS = {0: _from_0, 1: _from_1}


def migrate(obj) -> dict:
    """Bring a project read from disk to the current schema, step by step; refuse files from a newer app."""
    if not isinstance(obj, dict):
        raise DataError("not a project file: the top level is not a JSON object")
    version = obj.get("schema_version", 0)
    if not isinstance(version, int) or isinstance(version, bool) or version < 0:
        raise DataError(f"not a project file: schema_version {version!r} is not a version number")
    if version > SCHEMA_VERSION:
        raise DataError(f"this project was saved by a newer version of the app (schema {version}; this app "
                        f"reads up to {SCHEMA_VERSION}). Please update the app.")
    while version < SCHEMA_VERSION:
        obj = _MIGRATIONS[version](obj)
        version = obj["schema_version"]
    return obj


# ---- recipe <-> JSON ------------------------------------------------------------------------------------------
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


def recipe_to_json(recipe: Recipe) -> dict:
    pol = recipe.na_policy
    return {
        "schema_version": SCHEMA_VERSION,
        "app": "ppdp_gui",
        "saved": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "source": {"path": recipe.source, "sha256": recipe.source_sha256},
        "na_policy": {"tokens": list(pol.tokens), "action": pol.action, "category_label": pol.category_label,
                      "leave_out": list(pol.leave_out), "mostly_missing": pol.mostly_missing},
        "kinds": dict(recipe.kinds),
        "guessed": {k: sorted(v) for k, v in recipe.guessed.items() if v},
        "roles": {k: Role(v).value for k, v in recipe.roles.items()},
        "taxonomies": {k: {"rows": t.to_paths(), "origin": getattr(t, "origin", "public")}
                       for k, t in recipe.taxonomies.items()},
        "taxonomy_files": dict(recipe.taxonomy_files),
        "bundled": recipe.bundled,
        "domains": {k: d.to_json() for k, d in recipe.domains.items()},
        "mechanism": {"name": recipe.mechanism, "params": {k: _jsonable(v) for k, v in recipe.params.items()},
                      "allow_data_domains": bool(recipe.allow_data_domains),
                      **({"separate_dataset": True} if recipe.separate_dataset else {}),
                      "publish_as_is": sorted(recipe.publish_as_is)},
        "releases": list(recipe.releases),
        **({"context": dict(recipe.context)} if recipe.context else {}),
    }


def recipe_from_json(obj, base: Path | None = None) -> Recipe:
    """A Recipe from a parsed project (any version), checked field by field. Relative paths are taken from
    `base` (the project file's folder)."""
    _depth(obj)
    obj = migrate(obj)
    src = _obj(obj.get("source"), "source")
    path = src.get("path")
    if not isinstance(path, str) or not path.strip():
        raise DataError("the project does not say which table it belongs to")
    if base is not None and not Path(path).expanduser().is_absolute():
        path = str(base / path)
    sha = src.get("sha256")
    if sha is not None and not isinstance(sha, str):
        raise DataError("source.sha256 must be text")
    kinds = _str_map(obj.get("kinds"), "kinds")
    for name, kind in kinds.items():
        if kind not in ("numeric", "categorical"):
            raise DataError(f"kinds[{name!r}] must be 'numeric' or 'categorical', not {kind!r}")
    roles = {k: parse_role(v, f"roles[{k!r}]") for k, v in _obj(obj.get("roles"), "roles").items()}
    guessed = {}
    for name, parts in _obj(obj.get("guessed"), "guessed").items():
        if not isinstance(parts, list) or not set(parts) <= {"role", "kind"}:
            raise DataError(f"guessed[{name!r}] must be a list of 'role' and/or 'kind'")
        guessed[str(name)] = tuple(sorted(set(parts)))
    mech = _obj(obj.get("mechanism"), "mechanism")
    name = mech.get("name")
    if name is not None and not isinstance(name, str):
        raise DataError("mechanism.name must be text")
    params = {str(k): _scalar(v, f"mechanism.params[{k!r}]") for k, v in _obj(mech.get("params"), "mechanism.params").items()}
    bundled = obj.get("bundled")
    if bundled not in (None, "adult"):
        raise DataError(f"bundled must be 'adult' or absent, not {bundled!r}")
    files = _str_map(obj.get("taxonomy_files"), "taxonomy_files")
    if base is not None:
        files = {k: (v if Path(v).expanduser().is_absolute() else str(base / v)) for k, v in files.items()}
    separate = mech.get("separate_dataset", False)
    if not isinstance(separate, bool):
        raise DataError("mechanism.separate_dataset must be true or false")
    as_is = mech.get("publish_as_is") or []
    if not isinstance(as_is, list) or not all(isinstance(c, str) for c in as_is):
        raise DataError("mechanism.publish_as_is must be a list of column names")
    releases = obj.get("releases") or []
    if not isinstance(releases, list):
        raise DataError("releases must be a list")
    return Recipe(source=path, source_sha256=sha, na_policy=na_policy_from(obj.get("na_policy")), kinds=kinds,
                  roles=roles, taxonomies=_taxonomies_from(obj.get("taxonomies")), taxonomy_files=files,
                  bundled=bundled, domains=_domains_from(obj.get("domains")), mechanism=name, params=params,
                  allow_data_domains=bool(mech.get("allow_data_domains", False)), publish_as_is=tuple(as_is),
                  separate_dataset=separate,
                  releases=list(releases), context=_context_from(obj.get("context")), guessed=guessed)


def _context_from(obj) -> dict:
    """The optional `context` section, checked by the governance package (absent in older projects)."""
    from ppdp_gui.engine.persistence.release_context import context_from_json
    return context_from_json(obj).to_json() if obj else {}


def read_recipe(path) -> Recipe:
    """The project at `path` as a Recipe, or one DataError saying what is wrong (with line and column for bad
    JSON, the field otherwise)."""
    p = Path(path)
    from ppdp_gui.engine.data.prechecks import read_regular
    raw = read_regular(p, MAX_BYTES, "project file", raise_hint="; a project file is far smaller")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise DataError("not a project file (not UTF-8 text)", path=str(p)) from None
    del raw
    depth = _nesting(text)
    if depth > MAX_DEPTH + 1:  # checked before parsing: a deep file is never built (the top object is level 1)
        raise DataError(f"is nested {depth:,} levels deep, more than the {MAX_DEPTH + 1} a project file has; "
                        "not a project file", path=str(p))
    try:
        obj = json.loads(text, parse_int=_bounded_int, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise DataError(f"not a valid project file ({exc.msg})", path=str(p), line=exc.lineno,
                        column=exc.colno) from None
    except (ValueError, RecursionError) as exc:
        raise DataError(f"not a valid project file ({exc})", path=str(p)) from None
    try:
        return recipe_from_json(obj, base=p.resolve().parent)
    except DataError as exc:
        raise DataError(exc.reason, path=str(p)) from None


_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


def _nesting(text: str) -> int:
    """The deepest nesting of JSON arrays and objects in `text`, outside strings, found without parsing it (two
    linear regular-expression passes and one running sum over the brackets alone)."""
    import numpy as np
    brackets = _NOT_BRACKET.sub("", _STRING.sub('""', text)).encode("ascii")
    if not brackets:
        return 0
    codes = np.frombuffer(brackets, dtype=np.uint8)
    steps = np.where((codes == ord("[")) | (codes == ord("{")), 1, -1).astype(np.int32)
    return int(np.cumsum(steps, dtype=np.int32).max())


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > 18:
        raise ValueError(f"a number with {len(text)} digits")
    return int(text)


def _no_constant(text: str):
    raise ValueError(f"{text} is not allowed")


def write_recipe(recipe: Recipe, path, *, protected=()) -> Path:
    from ppdp_gui.engine.data.writer import write_json_atomic
    return write_json_atomic(recipe_to_json(recipe), path, protected=protected)


def source_changed(recipe: Recipe) -> bool:
    """True when the table file's content is not what the recipe was saved with (False when unknown)."""
    if not recipe.source_sha256:
        return False
    from ppdp_gui.engine.data.prechecks import open_regular
    h = hashlib.sha256()
    try:
        handle, _st = open_regular(recipe.source)  # a FIFO put where the table was is refused, not waited on
        with handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                h.update(block)
    except (OSError, PpdpError):
        return True
    return h.hexdigest() != recipe.source_sha256
