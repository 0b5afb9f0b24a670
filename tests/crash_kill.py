"""Kill -9 at random moments while the app writes an export, a project file or the ledger; then check the files.

Used by tests/test_crash_safety.py (a few kills of each) and scripts/trust_report.py (200 of each). A child
process (forked from this one, so no interpreter start per kill) writes in a loop, alternating between two
versions A and B; the parent kills it with SIGKILL after a random delay and then checks:

- the target is absent, or exactly version A or version B (read back completely), never half a file;
- the source table was not modified (sha256 before and after);
- the ledger passes SQLite's integrity check, its entries are numbered without a gap and the budget spent is
  their sum (no half-written transaction);
- temporary files left by the kill are recognisable, and `clean_leftovers()` (what `ppdp` and the window call at
  start) removes every one of them — and nothing else in the folder.

Linux (and other POSIX systems with fork) only.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import time
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

KINDS = ("export", "project", "ledger")


@dataclass
class KillReport:
    kind: str
    runs: int = 0
    corrupt: list[str] = field(default_factory=list)
    source_changed: int = 0
    leftovers_seen: int = 0  # temporary files found right after the kills
    leftovers_after_clean: int = 0  # still there after clean_leftovers()
    removed_other: int = 0  # files clean_leftovers removed that were not temporaries (must be 0)
    states: dict = field(default_factory=dict)  # how often the target was absent / A / B


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _source(folder: Path, rows: int) -> Path:
    path = folder / "source.csv"
    lines = ["age,sex,zip,diagnosis"] + [f"{20 + i % 60},{'FM'[i % 2]},{10000 + i % 500},{['flu', 'copd', '=1+1'][i % 3]}"
                                          for i in range(rows)]
    path.write_text("\n".join(lines) + "\n")
    return path


def _child(kind: str, folder: Path, ready_fd: int) -> None:
    """Write forever (never returns): export A/B, project A/B, or ledger reservations."""
    try:
        if kind == "export":
            from ppdp_gui.engine.data import read_table
            from ppdp_gui.engine.data.writer import export_table
            data = read_table(folder / "source.csv")
            frames = [data.frame, data.frame.iloc[::-1].reset_index(drop=True)]
            os.write(ready_fd, b"r")
            i = 0
            while True:
                export_table(frames[i % 2], folder / "release.csv", source=data.source)
                i += 1
        elif kind == "project":
            from ppdp_gui.engine.persistence.project import write_recipe
            recipes = [_recipe(folder, v) for v in (0, 1)]
            os.write(ready_fd, b"r")
            i = 0
            while True:
                write_recipe(recipes[i % 2], folder / "study.ppdp.json")
                i += 1
        else:
            from ppdp_gui.engine.privacy import Ledger
            ledger = Ledger(folder / "ledger.sqlite")
            os.write(ready_fd, b"r")
            while True:
                ledger.reserve("fp", "kill-test", {"pad": "x" * 2000}, Fraction(1, 997))
    finally:
        os._exit(0)


def _recipe(folder: Path, variant: int):
    from ppdp_gui.engine.persistence.project import Recipe
    from ppdp_gui.engine.taxonomy.tree import Taxonomy
    rows = [[f"{10000 + i}", f"{(10000 + i) // 10}*", f"{(10000 + i) // 100}**", "*"] for i in range(3000 + variant)]
    tax = Taxonomy.from_paths("zip", rows)
    return Recipe(source=str(folder / "source.csv"), roles={}, taxonomies={"zip": tax}, mechanism="Mondrian",
                  params={"k": 5 + variant})


def _state(kind: str, folder: Path, expected: dict) -> str:
    """'absent', 'A', 'B' or a description of the corruption."""
    if kind == "export":
        target = folder / "release.csv"
        if not target.exists():
            return "absent"
        digest = _sha(target)
        return next((name for name, h in expected.items() if h == digest), f"release.csv is neither A nor B "
                                                                            f"({target.stat().st_size} bytes)")
    if kind == "project":
        target = folder / "study.ppdp.json"
        if not target.exists():
            return "absent"
        try:
            obj = json.loads(target.read_text())
            from ppdp_gui.engine.persistence.project import read_recipe
            recipe = read_recipe(target)
        except Exception as exc:  # noqa: BLE001 - any failure to read back is a corrupt file
            return f"study.ppdp.json cannot be read back: {exc}"
        n = len(recipe.taxonomies["zip"].leaf_values())
        version = {3000: "A", 3001: "B"}.get(n)
        if version is None or obj["mechanism"]["params"]["k"] != (5 if version == "A" else 6):
            return "study.ppdp.json mixes A and B"
        return version
    from ppdp_gui.engine.privacy import Ledger
    ledger = Ledger(folder / "ledger.sqlite")
    if ledger.integrity_check() != "ok":
        return "the ledger fails its integrity check"
    ids = [e.id for e in ledger.entries("fp")]
    if ids != list(range(1, len(ids) + 1)):
        return "the ledger's entries have a gap"
    if ledger.spent("fp") != Fraction(len(ids), 997):
        return "the ledger's spent budget is not the sum of its entries"
    return "ok"


def run_kills(kind: str, runs: int, folder: Path, *, seed: int = 1, source_rows: int = 40_000) -> KillReport:
    """`runs` kills of a child writing `kind` in `folder` (a fresh folder; PPDP_LEDGER is pointed into it)."""
    from ppdp_gui.engine.data.leftovers import clean_leftovers, registry_dir

    folder.mkdir(parents=True, exist_ok=True)
    os.environ["PPDP_LEDGER"] = str(folder / "ledger.sqlite")
    rng = random.Random(seed)
    source = _source(folder, source_rows)
    source_hash = _sha(source)
    expected: dict[str, str] = {}
    if kind == "export":  # the two complete versions, written once the same way
        from ppdp_gui.engine.data import read_table
        from ppdp_gui.engine.data.writer import export_table
        data = read_table(source)
        for name, frame in (("A", data.frame), ("B", data.frame.iloc[::-1].reset_index(drop=True))):
            expected[name] = _sha(export_table(frame, folder / f"expected_{name}.csv"))
    elif kind == "ledger":
        from ppdp_gui.engine.privacy import Ledger
        Ledger(folder / "ledger.sqlite").set_cap("fp", 10**6)
    report = KillReport(kind)
    window = {"export": 0.6, "project": 0.25, "ledger": 0.25}[kind]
    for _ in range(runs):
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child
            os.close(read_fd)
            _child(kind, folder, write_fd)
        os.close(write_fd)
        os.read(read_fd, 1)  # ready: imports and setup done
        os.close(read_fd)
        time.sleep(rng.uniform(0, window))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        report.runs += 1
        state = _state(kind, folder, expected)
        report.states[state if state in ("absent", "A", "B", "ok") else "corrupt"] = \
            report.states.get(state if state in ("absent", "A", "B", "ok") else "corrupt", 0) + 1
        if state not in ("absent", "A", "B", "ok"):
            report.corrupt.append(state)
        if _sha(source) != source_hash:
            report.source_changed += 1
        temporaries = {p for p in folder.iterdir() if p.name.endswith(".ppdp-tmp")}
        report.leftovers_seen += len(temporaries)
        others = set(folder.iterdir()) - temporaries
        clean_leftovers()
        after = set(folder.iterdir())
        report.leftovers_after_clean += len([p for p in after if p.name.endswith(".ppdp-tmp")])
        report.removed_other += len(others - after)
    if registry_dir().exists():
        report.leftovers_after_clean += len(list(registry_dir().iterdir()))  # no registry entry may stay behind
    return report
