"""Release integrity through the `ppdp` command (findings 6, 7, 9): no output can replace the source table or the
ledger, the budget binds the people in a table rather than one reading of a file, and the command line makes the
same release as the window because both load a table the same way (ARX hierarchies beside it included)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from ppdp_gui.cli import main
from ppdp_gui.engine.package_files import sample_table, taxonomies_folder

SAMPLE = sample_table()
HIERARCHIES = taxonomies_folder() / "adult"


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def small_table(tmp_path, n=3000, name="ward.csv") -> Path:
    """A copy of the first rows of the bundled sample, with a few missing values (so policies differ)."""
    frame = pd.read_csv(SAMPLE, dtype=str, keep_default_na=False).head(n)
    frame.loc[frame.index[:40], "occupation"] = "?"
    path = tmp_path / name
    frame.to_csv(path, index=False)
    return path


def laplace(table, ledger, out, *extra):
    return ["run", "Laplace histogram", "-i", table, "-o", out, "--ledger", ledger, "--domain", "sex=Female,Male",
            "-p", "columns=sex", "-p", "epsilon=0.5", "--confirm-roles", *extra]


# ---- finding 6: nothing may be written over the source, the ledger or its key ------------------------------------
@pytest.mark.parametrize("which", ["source", "ledger", "key", "journal-free ledger by symlink"])
def test_no_output_may_replace_the_source_or_the_ledger(tmp_path, capsys, which):
    table, ledger = small_table(tmp_path), tmp_path / "ledger.sqlite"
    assert run(capsys, *laplace(table, ledger, tmp_path / "first.csv"))[0] == 0
    before = {p: p.read_bytes() for p in (table, ledger, Path(str(ledger) + ".key"))}
    target = {"source": table, "ledger": ledger, "key": Path(str(ledger) + ".key")}.get(which)
    if target is None:
        target = tmp_path / "innocent.json"
        target.symlink_to(ledger)
    for option in ("--report", "--record"):
        code, _, err = run(capsys, *laplace(table, ledger, tmp_path / "second.csv", option, target))
        assert code == 2 and "never overwrite" in err and len(err.strip().splitlines()) == 1
    code, _, err = run(capsys, *laplace(table, ledger, target.with_suffix(".csv") if which == "source" else target))
    assert code == 2
    for path, data in before.items():
        assert path.read_bytes() == data, f"{path.name} was changed"
    assert not (tmp_path / "second.csv").exists()


# ---- finding 7: the budget binds people, not readings ------------------------------------------------------------
def test_another_missing_value_policy_is_the_same_budget(tmp_path, capsys):
    table, ledger = small_table(tmp_path), tmp_path / "ledger.sqlite"
    assert run(capsys, *laplace(table, ledger, tmp_path / "a.csv", "--cap", "1/2"))[0] == 0
    code, _, err = run(capsys, *laplace(table, ledger, tmp_path / "b.csv", "--na", "drop"))
    assert code == 2 and "budget" in err  # the same people: the cap of 1/2 is spent


def test_editing_one_cell_does_not_give_a_fresh_budget(tmp_path, capsys):
    table, ledger = small_table(tmp_path), tmp_path / "ledger.sqlite"
    assert run(capsys, *laplace(table, ledger, tmp_path / "a.csv", "--cap", "1/2"))[0] == 0
    frame = pd.read_csv(table, dtype=str, keep_default_na=False)
    frame.loc[7, "age"] = "41"
    edited = tmp_path / "ward_fixed.csv"
    frame.to_csv(edited, index=False)
    code, _, err = run(capsys, *laplace(edited, ledger, tmp_path / "b.csv"))
    assert code == 2 and "budget" in err
    # the custodian may state, on the record, that it is another table: then it gets its own budget
    code, out, err = run(capsys, *laplace(edited, ledger, tmp_path / "c.csv", "--separate-dataset"))
    assert code == 0, err
    code, out, _ = run(capsys, "ledger", "--ledger", ledger)
    assert "separate" in out


def test_a_missing_ledger_key_refuses_instead_of_starting_a_new_budget(tmp_path, capsys):
    table, ledger = small_table(tmp_path), tmp_path / "ledger.sqlite"
    assert run(capsys, *laplace(table, ledger, tmp_path / "a.csv", "--cap", "1/2"))[0] == 0
    Path(str(ledger) + ".key").unlink()
    code, _, err = run(capsys, *laplace(table, ledger, tmp_path / "b.csv"))
    assert code == 2 and "key" in err and not (tmp_path / "b.csv").exists()


def test_new_tables_get_a_default_cap_that_is_shown(tmp_path, capsys):
    table, ledger = small_table(tmp_path), tmp_path / "ledger.sqlite"
    code, out, _ = run(capsys, *laplace(table, ledger, tmp_path / "a.csv"))
    assert code == 0 and "cap 2" in out and "remaining 1.5" in out


# ---- finding 9: the command line loads a table as the window does -----------------------------------------------
def test_hierarchy_files_beside_the_table_are_used_by_the_cli(tmp_path, capsys):
    table = small_table(tmp_path, name="ward.csv")
    for f in HIERARCHIES.glob("adult_hierarchy_*.csv"):
        shutil.copy(f, tmp_path / f.name.replace("adult_", "ward_"))
    out, note = tmp_path / "dg.csv", tmp_path / "note.json"
    code, text, err = run(capsys, "run", "DiffGen", "-i", table, "-o", out, "--report", note, "--ledger",
                          tmp_path / "l.sqlite", "--role", "salary-class=class", "-p", "epsilon=1", "-p", "h=6",
                          "--confirm-roles", "--na", "drop")
    assert code == 0, err
    doc = json.loads(note.read_text())
    assert doc["guarantee"]["holds"], doc["guarantee"]  # every domain came from the files beside the table
    assert doc["details"]["bounds source"] == {"age": "taxonomy"}


def test_domain_from_the_data_is_refused_then_labelled_when_allowed(tmp_path, capsys):
    table, ledger = small_table(tmp_path), tmp_path / "ledger.sqlite"
    argv = ["run", "Laplace histogram", "-i", table, "-o", tmp_path / "h.csv", "--ledger", ledger,
            "-p", "columns=race", "-p", "epsilon=0.5", "--report", tmp_path / "note.json"]
    code, _, err = run(capsys, *argv)
    assert code == 2 and "race needs a public list of its values" in err
    assert not (tmp_path / "h.csv").exists()
    code, out, err = run(capsys, *argv, "--allow-data-domains")
    assert code == 0, err
    assert "NOT differentially private" in out
    assert json.loads((tmp_path / "note.json").read_text())["guarantee"]["holds"] is False
