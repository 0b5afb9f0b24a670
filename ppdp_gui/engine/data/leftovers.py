"""Temporary files of interrupted writes: recognisable names, a registry while in flight, removal at next start.

Every file the app writes (a release, a project, a note, a record, a hierarchy) is first written to a temporary
file beside its target and renamed over it (writer.py). A kill -9 or a power cut between the two leaves the
temporary file behind — a partial copy of a release, perhaps. So each temporary file

- has a name no user file has: ``.<target name>.<16 hex digits>.ppdp-tmp``;
- is registered *before* it is created, by an entry in ``<app data folder>/in-flight/`` (the folder of the
  budget ledger, `default_ledger_path`) naming its path and the writing process (a symbolic link made in one
  system call, so a kill never leaves half an entry), and unregistered once renamed or removed.

`clean_leftovers()` — called by `ppdp` and by the window at start — removes the temporary files of entries whose
process is gone. It never deletes anything that is not such a registered file with such a name (a regular file,
not a link), so a user's file can never be hit, and it leaves the entries of a process still running alone. The
ledger's own SQLite journal is never touched (SQLite needs it to roll back an interrupted transaction).
Registering is best effort: if the data folder cannot be written, writes still happen, only unregistered.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import sys
import time
from pathlib import Path

SUFFIX = ".ppdp-tmp"
_NAME = re.compile(r"^\..+\.[0-9a-f]{16}\.ppdp-tmp$")
#: where no process identity can be checked (Windows), an entry older than this is taken as left over
_STALE_SECONDS = 12 * 3600


def registry_dir() -> Path:
    from ppdp_gui.engine.privacy.ledger import default_ledger_path
    return default_ledger_path().parent / "in-flight"


def temporary_name(target: Path) -> Path:
    """A fresh, recognisable temporary path beside `target` (not created)."""
    return target.parent / f".{target.name}.{secrets.token_hex(8)}{SUFFIX}"


def _process_start(pid: int) -> str | None:
    """When process `pid` started (Linux: clock ticks since boot), to tell it from a later process with the same
    id; None where it cannot be known."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        return fields[19].decode()
    except (OSError, IndexError):
        return None


def _alive(pid: int, started: str | None, written: float) -> bool:
    if pid == os.getpid():
        return _process_start(pid) == started
    if sys.platform.startswith("linux"):
        now = _process_start(pid)
        return now is not None and (started is None or now == started)
    if os.name == "nt":
        return time.time() - written < _STALE_SECONDS
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def register(tmp: Path) -> Path | None:
    """Record that this process is about to create `tmp`; the entry's path, or None if it cannot be recorded.

    On POSIX the entry is a symbolic link to `tmp` whose name holds the process id and start time: made by one
    system call, so a kill can never leave half an entry. Elsewhere it is a small JSON file."""
    try:
        folder = registry_dir()
        folder.mkdir(parents=True, exist_ok=True)
        pid, started = os.getpid(), _process_start(os.getpid()) or "0"
        target = str(Path(tmp).absolute())
        if os.name == "posix":
            entry = folder / f"{pid}-{started}-{secrets.token_hex(8)}.link"
            os.symlink(target, entry)
            return entry
        entry = folder / f"{pid}-{started}-{secrets.token_hex(8)}.json"
        fd = os.open(entry, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, json.dumps({"path": target}).encode())
        finally:
            os.close(fd)
        return entry
    except OSError:
        return None


def _entry(entry: Path) -> tuple[int, str | None, Path]:
    """(process id, its start time or None, temporary path) of a registry entry; ValueError if unreadable."""
    pid_text, started, _token = entry.stem.split("-", 2)
    if entry.is_symlink():
        path = Path(os.readlink(entry))
    else:
        path = Path(json.loads(entry.read_text())["path"])
    return int(pid_text), (None if started == "0" else started), path


def unregister(entry: Path | None) -> None:
    if entry is not None:
        try:
            entry.unlink()
        except OSError:
            pass


def is_temporary(path: Path) -> bool:
    """A name this module gives (``.<name>.<16 hex>.ppdp-tmp``) on a regular file that is not a link."""
    try:
        return bool(_NAME.match(path.name)) and path.is_file() and not path.is_symlink()
    except OSError:
        return False


def clean_leftovers() -> list[Path]:
    """Remove the temporary files that interrupted writes left behind; return those removed (see the module
    docstring for what is, and is never, removed). Never raises: a start must not fail because of this."""
    removed: list[Path] = []
    try:
        entries = sorted(registry_dir().glob("*-*-*.*"))
    except OSError:
        return removed
    for entry in entries:
        try:
            pid, started, path = _entry(entry)
            written = entry.lstat().st_mtime
        except (OSError, ValueError, KeyError, TypeError):
            # a torn entry: written by a process killed while writing it, before its temporary file existed
            try:
                if time.time() - entry.lstat().st_mtime > 60:
                    entry.unlink()
            except OSError:
                pass
            continue
        if _alive(pid, started, written):
            continue
        try:
            if is_temporary(path):
                path.unlink()
                removed.append(path)
        except OSError:
            continue  # cannot remove it now: keep the entry, try again next start
        unregister(entry)
    return removed
