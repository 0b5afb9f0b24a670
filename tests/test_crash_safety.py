"""Crash safety: kill -9 while writing an export, a project or the ledger never leaves a corrupt file, never
touches the source, and the temporary files it leaves are removed at the next start (tests/crash_kill.py).

A few kills of each here; `scripts/trust_report.py` runs 200 of each.
"""

from __future__ import annotations

import os
import sys

import pytest

from crash_kill import KINDS, run_kills  # noqa: E402  (tests/ is on sys.path under pytest's rootdir)

pytestmark = pytest.mark.skipif(not hasattr(os, "fork") or not sys.platform.startswith("linux"),
                                reason="kills forked writers (Linux)")


@pytest.mark.parametrize("kind", KINDS)
def test_kill_minus_nine_never_corrupts_and_leftovers_are_cleaned(tmp_path, monkeypatch, kind):
    monkeypatch.setenv("PPDP_LEDGER", str(tmp_path / "ledger.sqlite"))
    report = run_kills(kind, 8, tmp_path / kind, seed=7, source_rows=20_000)
    assert report.corrupt == [] and report.source_changed == 0
    assert report.leftovers_after_clean == 0 and report.removed_other == 0


def test_clean_leftovers_removes_only_registered_temporaries_of_dead_processes(tmp_path, monkeypatch):
    from ppdp_gui.engine.data import leftovers

    monkeypatch.setenv("PPDP_LEDGER", str(tmp_path / "ledger.sqlite"))
    target = tmp_path / "release.csv"
    # a registered temporary of a process that is gone, one of this (live) process, and look-alikes never registered
    dead, live = leftovers.temporary_name(target), leftovers.temporary_name(target)
    for path in (dead, live):
        path.write_text("partial")
    entry = leftovers.register(dead)
    info = __import__("json").loads(entry.read_text())
    info["pid"] = 2**22 + 12345  # no such process
    entry.write_text(__import__("json").dumps(info))
    leftovers.register(live)
    stranger = tmp_path / f".release.csv.{'0' * 16}.ppdp-tmp"  # right pattern, never registered
    stranger.write_text("user's")
    user = tmp_path / "notes.txt"
    user.write_text("user's")
    link_entry = leftovers.register(tmp_path / "link")
    (tmp_path / "link").symlink_to(user)
    info = __import__("json").loads(link_entry.read_text())
    info["pid"] = 2**22 + 12346
    link_entry.write_text(__import__("json").dumps(info))
    assert leftovers.clean_leftovers() == [dead]
    assert not dead.exists() and live.exists() and stranger.exists() and user.exists() and (tmp_path / "link").exists()
