"""`ppdp` and the ledger a custodian can defend (issue 27): caps, tamper check, outputs over inputs, release ids.

On main before issue 27: `--cap 10` lifted a spent cap silently, `--record` and `-o` wrote over the hierarchy
file, `ppdp ledger --csv` over the source table (all exit 0), and an earlier note whose release id held a '/' or
a NUL crashed the run after ε was charged.
"""

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from ppdp_gui.cli import main
from ppdp_gui.engine.package_files import sample_table, taxonomies_folder
from ppdp_gui.engine.privacy import Ledger

SAMPLE = sample_table()
HIERARCHY = taxonomies_folder() / "adult" / "adult_hierarchy_race.csv"


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def _argv(tmp_path, *extra):
    return ["run", "Laplace histogram", "-i", tmp_path / "adult.csv", "--ledger", tmp_path / "ledger.sqlite",
            "-p", "columns=sex,salary-class", "-p", "epsilon=0.5", "--bundled-taxonomies", "adult", "--confirm-roles",
            *extra]


@pytest.fixture
def table(tmp_path):
    shutil.copy(SAMPLE, tmp_path / "adult.csv")
    return tmp_path / "adult.csv"


def _spent(tmp_path) -> float:
    ledger = Ledger(tmp_path / "ledger.sqlite")
    return float(sum(e.epsilon for e in ledger.entries()))


def test_a_run_cannot_raise_a_cap_and_ppdp_ledger_cap_records_why(tmp_path, table, capsys):
    assert run(capsys, *_argv(tmp_path, "-o", tmp_path / "a.csv", "--cap", "1/2"))[0] == 0
    code, _, err = run(capsys, *_argv(tmp_path, "-o", tmp_path / "b.csv", "--cap", "10"))
    assert code == 2 and "deliberate" in err and not (tmp_path / "b.csv").exists() and _spent(tmp_path) == 0.5
    code, _, err = run(capsys, "ledger", "--ledger", tmp_path / "ledger.sqlite", "cap", "adult.csv", "3")
    assert code == 2 and "--reason" in err
    code, out, _ = run(capsys, "ledger", "--ledger", tmp_path / "ledger.sqlite", "cap", "adult.csv", "3",
                       "--reason", "second study approved")
    assert code == 0 and "changed from 1/2 to 3" in out
    code, out, _ = run(capsys, "ledger", "--ledger", tmp_path / "ledger.sqlite", "--entries")
    assert "second study approved" in out and "cap 1/2 -> 3" in out
    assert run(capsys, *_argv(tmp_path, "-o", tmp_path / "b.csv", "--record", tmp_path / "r.json"))[0] == 0
    record = json.loads((tmp_path / "r.json").read_text())
    reasons = [c["reason"] for c in record["budget after this release"]["cap_changes"]]
    assert "second study approved" in reasons


def test_ppdp_ledger_check_and_acknowledge(tmp_path, table, capsys):
    assert run(capsys, *_argv(tmp_path, "-o", tmp_path / "a.csv"))[0] == 0
    assert run(capsys, *_argv(tmp_path, "-o", tmp_path / "b.csv"))[0] == 0
    code, out, _ = run(capsys, "ledger", "--ledger", tmp_path / "ledger.sqlite", "--check")
    assert code == 0 and "intact" in out
    with sqlite3.connect(tmp_path / "ledger.sqlite") as db:
        db.execute("DELETE FROM entries WHERE id = 2")  # a budget reset by hand
    code, out, _ = run(capsys, "ledger", "--ledger", tmp_path / "ledger.sqlite", "--check")
    assert code == 1 and "changed outside" in out
    code, _, err = run(capsys, *_argv(tmp_path, "-o", tmp_path / "c.csv"))
    assert code == 2 and "acknowledge" in err and not (tmp_path / "c.csv").exists()
    code, out, _ = run(capsys, "ledger", "--ledger", tmp_path / "ledger.sqlite", "acknowledge", "--reason",
                       "I deleted a test release by mistake")
    assert code == 0 and "acknowledged" in out
    assert run(capsys, "ledger", "--ledger", tmp_path / "ledger.sqlite", "--check")[0] == 0
    assert run(capsys, *_argv(tmp_path, "-o", tmp_path / "c.csv"))[0] == 0


@pytest.mark.parametrize("where", ["record", "output", "report"])
def test_no_output_over_a_hierarchy_given_with_taxonomy(tmp_path, table, capsys, where):
    hierarchy = tmp_path / "race.csv"
    shutil.copy(HIERARCHY, hierarchy)
    before = hierarchy.read_bytes()
    outputs = {"output": ["-o", hierarchy] if where == "output" else ["-o", tmp_path / "out.csv"],
               "record": ["--record", hierarchy] if where == "record" else [],
               "report": ["--report", hierarchy] if where == "report" else []}
    code, _, err = run(capsys, *_argv(tmp_path, "--taxonomy", f"race={hierarchy}", *sum(outputs.values(), [])))
    assert code == 2 and "input" in err
    assert hierarchy.read_bytes() == before
    assert not (tmp_path / "ledger.sqlite").exists() or _spent(tmp_path) == 0


def test_record_never_replaces_an_existing_file_unless_asked(tmp_path, table, capsys):
    (tmp_path / "notes.txt").write_text("my notes")
    code, _, err = run(capsys, *_argv(tmp_path, "-o", tmp_path / "a.csv", "--record", tmp_path / "notes.txt"))
    assert code == 2 and "already exists" in err and (tmp_path / "notes.txt").read_text() == "my notes"
    assert not (tmp_path / "a.csv").exists()


def test_ppdp_ledger_exports_never_replace_the_source_table_or_an_existing_file(tmp_path, table, capsys):
    assert run(capsys, *_argv(tmp_path, "-o", tmp_path / "a.csv"))[0] == 0
    before = table.read_bytes()
    for option in ("--csv", "--tables-csv"):
        code, _, err = run(capsys, "ledger", "--ledger", tmp_path / "ledger.sqlite", option, table, "--overwrite")
        assert code == 2 and "input" in err and table.read_bytes() == before
    link = tmp_path / "sub" / ".." / "adult.csv"
    (tmp_path / "sub").mkdir()
    code, _, _ = run(capsys, "ledger", "--ledger", tmp_path / "ledger.sqlite", "--csv", link, "--overwrite")
    assert code == 2 and table.read_bytes() == before
    code, _, err = run(capsys, "ledger", "--ledger", tmp_path / "ledger.sqlite", "--csv", tmp_path / "a.csv")
    assert code == 2 and "already exists" in err
    assert run(capsys, "ledger", "--ledger", tmp_path / "ledger.sqlite", "--csv", tmp_path / "e.csv")[0] == 0


@pytest.mark.parametrize("release_id", ["../../etc/x", "a\x00b", "r" * 5000])
def test_an_earlier_note_with_a_strange_release_id_is_kept_aside_safely(tmp_path, table, capsys, release_id):
    note = tmp_path / "note.json"
    note.write_text(json.dumps({"document": "release note", "release_id": release_id}))
    code, out, err = run(capsys, *_argv(tmp_path, "-o", tmp_path / "a.csv", "--report", note))
    assert code == 0, err
    kept = [p for p in tmp_path.iterdir() if p.name.startswith("note.") and p.name != "note.json"]
    assert len(kept) == 1 and len(kept[0].name) < 100 and kept[0].parent == tmp_path
    assert json.loads(note.read_text())["document"] == "release note" and _spent(tmp_path) == 0.5
