"""Crash safety: kill -9 while writing an export, a project or the ledger never leaves a corrupt file, never
touches the source, and the temporary files it leaves are removed at the next start (tests/crash_kill.py).

A few kills of each here; `scripts/trust_report.py` runs 200 of each.
"""

from __future__ import annotations

import os
import sys

import pytest

from crash_kill import KINDS, run_kills  # tests/ is on sys.path under pytest's rootdir

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
    def as_dead(entry):  # the same entry, as if written by a process that no longer exists
        gone = entry.with_name(f"{2**22 + 12345}-0-{entry.name.split('-', 2)[2]}")
        entry.rename(gone)

    as_dead(leftovers.register(dead))
    leftovers.register(live)
    stranger = tmp_path / f".release.csv.{'0' * 16}.ppdp-tmp"  # right pattern, never registered
    stranger.write_text("user's")
    user = tmp_path / "notes.txt"
    user.write_text("user's")
    as_dead(leftovers.register(tmp_path / "link"))  # registered, but a link to a user's file, not a temporary
    (tmp_path / "link").symlink_to(user)
    torn = leftovers.registry_dir() / "123-0-abc.json"
    torn.write_text("{")  # half an entry (the JSON fallback): no temporary can belong to it
    assert leftovers.clean_leftovers() == [dead]
    assert not dead.exists() and live.exists() and stranger.exists() and user.exists() and (tmp_path / "link").exists()
