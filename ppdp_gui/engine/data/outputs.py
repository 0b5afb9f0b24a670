"""One output guard for every writer: where a file may be written, decided once, before anything is charged.

Issue 27 found outputs landing on inputs, all with exit code 0: ``--record`` over any existing file (the hierarchy
given with ``--taxonomy``, the project given with ``--recipe``), ``ppdp ledger --csv`` over the source table,
``-o`` over the hierarchy file. Each writer had its own partial check. Now every output of a command or a window
action goes through an `OutputPlan`:

- never the source table, any input named on the command line or in the recipe (hierarchies, the project), the
  ledger, its key or journal — compared by resolved path (symlinks and ``..`` resolved) and by inode (hard links);
- never an existing file unless the custodian explicitly asked to replace it (``--overwrite``; the window's save
  dialog asks) — and an input never, even then;
- no two outputs the same file.

`OutputPlan.check` raises one DataError naming the file and the button or option to use; the publish path calls
it before planning, so a refused output costs no ε.

Writers that are not part of a command with named inputs (a chart's PNG, a hierarchy saved from the editor, a
project, the ledger window's export) still may not replace what this process read: `pipeline.load` remembers the
table and hierarchy files of every recipe it loads (`remember_inputs`), and the atomic writer refuses them and the
default ledger's files (`refuse_protected`) at the lowest level, whoever calls it. `guard` is the list the atomic writer (writer.py) checks
again at the moment it renames each file into place. `safe_release_id` makes a release id (read back from an
earlier release note, so possibly anything) safe to use in a file name.
"""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path

from ppdp_gui.engine.errors import DataError

_UNSAFE = re.compile(r"[^0-9A-Za-z_-]+")
_REMEMBERED: set[str] = set()
_LOCK = threading.Lock()


def remember_inputs(*paths) -> None:
    """Files this process read as a table or a hierarchy: no writer may replace them (see the module docstring)."""
    with _LOCK:
        _REMEMBERED.update(str(_real(p)) for p in paths if p)


def remembered_inputs() -> list[Path]:
    with _LOCK:
        return [Path(p) for p in sorted(_REMEMBERED)]


def _default_ledger_files() -> list[Path]:
    from ppdp_gui.engine.privacy.ledger import default_ledger_path
    db = default_ledger_path()
    return [db, db.with_name(db.name + ".key"), db.with_name(db.name + "-journal")]


def refuse_protected(target) -> None:
    """The last check of every atomic write: never a file this process read as an input, nor the default ledger."""
    for inp in remembered_inputs():
        if same_file(target, inp):
            raise DataError("is a table or hierarchy this app read as an input; it must never overwrite it, so "
                            "choose another name", path=str(target))
    for led in _default_ledger_files():
        if same_file(target, led):
            raise DataError("is the privacy budget ledger or its key; this app must never overwrite it, so choose "
                            "another name", path=str(target))


def check_output(path, what: str, *, overwrite: bool = True, inputs=(), ledger=None) -> Path:
    """One output outside a command (a chart, a hierarchy, a project): the plan's rules for that one file.
    `overwrite` defaults to True because a window's save dialog has already asked before replacing a file."""
    plan = OutputPlan(inputs=inputs, ledger=ledger, overwrite=overwrite)
    p = plan.add(path, what)
    plan.check()
    return p
_ID_LENGTH = 64


def safe_release_id(text) -> str:
    """A release id as a file-name part: letters, digits, '-' and '_' only, at most 64 characters, never empty."""
    clean = _UNSAFE.sub("_", str(text or "")).strip("_")[:_ID_LENGTH]
    return clean or "unknown"


def _real(path) -> Path:
    return Path(os.path.realpath(os.path.expanduser(os.fspath(path))))


def same_file(a, b) -> bool:
    """Same file after resolving symlinks and '..', or another name (hard link) for the same inode."""
    ra, rb = _real(a), _real(b)
    if ra == rb:
        return True
    try:
        return ra.exists() and rb.exists() and os.path.samefile(ra, rb)
    except OSError:
        return False


class OutputPlan:
    """The outputs of one action and what they must never replace (see the module docstring)."""

    def __init__(self, *, source=None, inputs=(), ledger=None, overwrite: bool = False, protected=()):
        self.overwrite = bool(overwrite)
        self.inputs: list[Path] = []
        src = getattr(source, "path", source)
        for p in [src, *inputs, *remembered_inputs()]:
            if p:
                self.inputs.append(Path(os.path.expanduser(os.fspath(p))))
        self.ledger_files: list[Path] = list(ledger.protected_paths()) if ledger is not None else []
        self.ledger_files += _default_ledger_files()
        self.ledger_files += [Path(p) for p in protected if p]
        self.outputs: list[tuple[Path, str, bool]] = []

    def add(self, path, what: str, *, replaceable: bool = False) -> Path | None:
        """An output (None is skipped). `replaceable`: an existing file there is handled by its writer (a release
        note kept aside under its release id), so only the input and ledger rules apply."""
        if not path:
            return None
        p = Path(os.path.expanduser(os.fspath(path)))
        self.outputs.append((p, what, replaceable))
        return p

    @property
    def guard(self) -> list[Path]:
        """What no writer may ever replace: the inputs and the ledger's files."""
        return self.inputs + self.ledger_files

    def check(self) -> None:
        seen: list[Path] = []
        for p, what, replaceable in self.outputs:
            if _real(p).is_dir():
                raise DataError(f"is a folder; choose a file name for {what}", path=str(p))
            for inp in self.inputs:
                if same_file(p, inp):
                    raise DataError(f"is an input of this release (the table, a hierarchy or the project); this app "
                                    f"must never overwrite it with {what}, so choose another name. Nothing was run "
                                    "or charged", path=str(p))
            for led in self.ledger_files:
                if same_file(p, led):
                    raise DataError(f"is the privacy budget ledger or its key; this app must never overwrite it "
                                    f"with {what}, so choose another name. Nothing was run or charged", path=str(p))
            for other in seen:
                if same_file(p, other):
                    raise DataError("two outputs of this action would be the same file; choose another name",
                                    path=str(p))
            if not replaceable and not self.overwrite and (p.exists() or p.is_symlink()):
                raise DataError(f"already exists; {what} will not replace it unless you ask (in ppdp: "
                                "--overwrite; in the window, confirm Replace in the save dialog). Nothing was run "
                                "or charged", path=str(p))
            seen.append(p)
