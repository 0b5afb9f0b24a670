"""The `ppdp` command: one-line errors with exit code 2, generic mechanism listing, charged releases with a
report, the ledger listing and the demo on the bundled Adult sample."""

from fractions import Fraction

import json
import subprocess
import sys

import pandas as pd
import pytest

from ppdp_gui.cli import main, parse_pairs, parse_role
from ppdp_gui.engine.errors import ParameterError
from ppdp_gui.engine.mechanisms import registry
from ppdp_gui.engine.package_files import sample_table

SAMPLE = sample_table()


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_bad_file_is_one_line_and_exit_2(tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text('a,b\n1,"unclosed\n2,3\n')
    code, out, err = run(capsys, "inspect", str(bad))
    assert code == 2 and err.startswith("ppdp: error: ") and "bad.csv" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    code, _, err = run(capsys, "inspect", str(tmp_path / "missing.csv"))
    assert code == 2 and len(err.strip().splitlines()) == 1


def test_entry_point_in_a_subprocess(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "ppdp_gui.cli", "inspect", str(tmp_path / "nope.csv")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("ppdp: error:")


def test_usage_errors_exit_2(capsys):
    assert run(capsys, "run")[0] == 2
    assert run(capsys, "no-such-command")[0] == 2
    assert run(capsys)[0] == 2


def test_inspect_shows_kinds_roles_and_missing(tmp_path, capsys):
    path = tmp_path / "t.csv"
    path.write_text("patient_id,age,sex,diagnosis\n" + "".join(
        f"{i},{20 + i % 50},{'F' if i % 2 else 'M'},{'?' if i % 10 == 0 else 'flu'}\n" for i in range(200)))
    code, out, _ = run(capsys, "inspect", str(path))
    assert code == 0
    lines = {line.split()[0]: line.split() for line in out.splitlines()[2:6]}
    assert lines["age"][1:3] == ["numeric", "quasi-identifier"]
    assert lines["patient_id"][2] == "identifier" and lines["diagnosis"][2] == "sensitive"
    assert lines["diagnosis"][-1] == "20" and lines["age"][-1] == "0"  # 20 missing diagnoses
    assert "rows with a missing value: 20, kept by default" in out and "dropped: 20" in out
    assert "A column is numeric when" in out and "--confirm-roles" in out
    assert "  patient_id: its name mentions" in out and "diagnosis: its name mentions 'diagnosis'" in out


def test_inspect_counts_the_rows_the_drop_policy_really_drops(tmp_path, capsys):
    """Rows are kept by default; under --na drop a column missing in most rows is left out (not a reason to drop
    those rows): inspect says so and counts only the rows that reading drops."""
    path = tmp_path / "t.csv"
    path.write_text("age,weight,sex\n" + "".join(
        f"{20 + i % 50},{'?' if i % 10 else 70},{'?' if i % 25 == 0 else 'F'}\n" for i in range(200)))
    code, out, _ = run(capsys, "inspect", str(path))
    assert code == 0
    assert "with --na drop, left out (missing in more than half the rows): weight" in out
    assert "with --na drop (the window: “Drop rows that have a missing value”), dropped: 8" in out


def test_mechanisms_lists_every_registered_one_with_its_params(capsys):
    code, out, _ = run(capsys, "mechanisms")
    assert code == 0
    for name in registry.names():
        assert name in out
        for p in registry.get(name).params:
            assert f"--param {p.name} = " in out


def test_small_parsers():
    assert parse_pairs(["a=1", "b = x=y"], "param") == {"a": "1", "b": "x=y"}
    with pytest.raises(ParameterError, match="NAME=VALUE"):
        parse_pairs(["oops"], "param")
    assert parse_role("qi").value == "quasi-identifier" and parse_role("CLASS").value == "class"
    with pytest.raises(ParameterError, match="unknown role"):
        parse_role("boss")


def test_bad_parameter_is_one_line(tmp_path, capsys):
    code, _, err = run(capsys, "run", "Laplace histogram", "-i", str(SAMPLE), "-o", str(tmp_path / "o.csv"),
                       "--ledger", str(tmp_path / "l.sqlite"), "-p", "epsilon=abc", "-p", "columns=age")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "ε" in err
    assert not (tmp_path / "o.csv").exists()


def test_run_writes_release_note_and_record_and_charges_the_ledger(tmp_path, capsys):
    ledger, out, note = tmp_path / "ledger.sqlite", tmp_path / "hist.csv", tmp_path / "note.json"
    record = tmp_path / "record.json"
    argv = ["run", "Laplace histogram", "-i", str(SAMPLE), "-o", str(out), "--report", str(note),
            "--record", str(record), "--overwrite", "--ledger", str(ledger), "--cap", "1", "--bundled-taxonomies",
            "adult", "-p", "columns=sex,salary-class", "-p", "epsilon=0.5", "--confirm-roles"]
    code, text, err = run(capsys, *argv)
    assert code == 0, err
    assert "ε = 0.5" in text and "spent on this table so far: 0.5" in text and "remaining 0.5" in text
    assert "release note (publish it with the file)" in text and "custodian record (keep it" in text
    table = pd.read_csv(out)
    assert list(table.columns) == ["sex", "salary-class", "count"] and len(table) == 4
    assert abs(table["count"].sum() - 30_162) < 100  # four cells of noise of scale 2
    doc = json.loads(note.read_text())
    assert doc["document"] == "release note" and doc["privacy cost"]["epsilon"] == "1/2"
    assert doc["guarantee"]["holds"] and doc["files"][0]["file"] == "hist.csv"
    assert all(c["ok"] for c in doc["checked on the written file"])
    rec = json.loads(record.read_text())
    assert rec["source"]["rows used"] == 30_162 and rec["ledger"]["entry"]["output_hash"] == doc["output sha256"]
    assert rec["release_id"] == doc["release_id"] and rec["warnings"] == []  # taxonomies: public domains
    # a second release of 0.5 fits the cap exactly; a third is refused before anything is written
    assert run(capsys, *argv)[0] == 0
    out.unlink()
    code, _, err = run(capsys, *argv)
    assert code == 2 and "budget" in err and len(err.strip().splitlines()) == 1
    assert not out.exists()
    code, text, _ = run(capsys, "ledger", "--ledger", str(ledger), "--entries")
    assert code == 0 and "spent ε = 1 (1)" in text and "2 release(s)" in text and text.count("Laplace") == 2


def test_demo_releases_the_bundled_sample(tmp_path, capsys):
    code, text, err = run(capsys, "demo", "--out", str(tmp_path))
    assert code == 0, err
    assert (tmp_path / "release.csv").stat().st_size > 0 and (tmp_path / "ledger.sqlite").exists()
    note = json.loads((tmp_path / "release-note.json").read_text())
    record = json.loads((tmp_path / "custodian-record.json").read_text())
    assert note["privacy cost"]["epsilon"] == "1" and record["source"]["rows used"] == 30_162
    name = note["mechanism"]["name"]
    assert name == ("DiffGen" if "DiffGen" in registry.names() else "Laplace histogram")
    if name == "DiffGen":
        assert note["parameters"]["h"] == 10 and note["parameters"]["class_column"] == "salary-class"
        assert note["guarantee"]["holds"], note["guarantee"]  # the bundled hierarchies state every domain
        assert "CA %" in text and "BA %" in text
    assert "spent on this table so far: 1" in text


def test_sweep_is_a_simulation_that_charges_nothing(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PPDP_LEDGER", str(tmp_path / "never.sqlite"))
    rows = tmp_path / "rows.csv"
    code, text, err = run(capsys, "sweep", "Laplace histogram", "-i", str(SAMPLE), "--bundled-taxonomies", "adult",
                          "-p", "columns=sex,race", "-g", "epsilon=0.1,1", "--repeats", "2", "--holdout", "0",
                          "--seed", "3", "-o", str(rows), "--on", "own")
    assert code == 0, err
    assert "nothing charged" in text and "mean abs error" in text
    figures = pd.read_csv(rows)
    assert len(figures) == 4 and set(figures["epsilon"]) == {0.1, 1.0}
    assert not (tmp_path / "never.sqlite").exists()


def test_sweep_on_a_dp_copy_says_what_it_cost_and_charges_the_ledger(tmp_path, capsys):
    """--on dp-copy: the simulation reads a synthetic copy released with ε = 0.1, charged to the ledger first."""
    from ppdp_gui.engine.privacy.ledger import Ledger
    ledger = tmp_path / "ledger.sqlite"
    code, text, err = run(capsys, "sweep", "Laplace histogram", "-i", str(SAMPLE), "--bundled-taxonomies", "adult",
                          "--confirm-roles", "-p", "columns=sex,race", "-g", "epsilon=0.1,1", "--repeats", "1",
                          "--holdout", "0", "--seed", "3", "--on", "dp-copy", "--ledger", str(ledger))
    assert code == 0, err
    assert "simulation on DP copy: ε = 0.1 charged" in text and "charged to the budget ledger" in text
    assert "ε spent on this table so far: 0.1" in text
    (entry,) = Ledger(ledger).entries()
    assert entry.mechanism == "Marginal synthesizer" and entry.epsilon == Fraction(1, 10)


def test_sweep_of_a_dp_mechanism_reads_a_dp_copy_by_default_as_the_window_does(tmp_path, capsys):
    """Without --on, `ppdp sweep` of an ε-DP mechanism simulates on a charged DP copy (the window's default), so
    advice read from it is accounted; without confirmed roles that copy is refused, and nothing is charged."""
    from ppdp_gui.engine.pipeline.proxy import DP_COPY, OWN, default_basis
    from ppdp_gui.engine.privacy.ledger import Ledger
    assert default_basis("Laplace histogram") == DP_COPY and default_basis("Mondrian") == OWN
    ledger = tmp_path / "ledger.sqlite"
    args = ("sweep", "Laplace histogram", "-i", str(SAMPLE), "--bundled-taxonomies", "adult", "-p", "columns=sex,race",
            "-g", "epsilon=0.1,1", "--repeats", "1", "--holdout", "0", "--seed", "3", "--ledger", str(ledger))
    code, text, err = run(capsys, *args)
    assert code != 0 and "confirm" in (text + err).lower()
    assert not ledger.exists() or not Ledger(ledger).entries()
    code, text, err = run(capsys, *args, "--confirm-roles")
    assert code == 0, err
    assert "simulation on DP copy: ε = 0.1 charged" in text
    assert len(Ledger(ledger).entries()) == 1


def test_sweep_on_a_public_table_charges_nothing_and_says_so(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PPDP_LEDGER", str(tmp_path / "never.sqlite"))
    public = tmp_path / "public.csv"
    pd.read_csv(SAMPLE).head(3000).to_csv(public, index=False)  # a public extract of the same columns
    code, text, err = run(capsys, "sweep", "Laplace histogram", "-i", str(SAMPLE), "--bundled-taxonomies", "adult",
                          "-p", "columns=sex,race", "-g", "epsilon=0.1,1", "--repeats", "1", "--holdout", "0",
                          "--public-table", str(public))
    assert code == 0, err
    assert "simulation on public table: nothing charged" in text and "3,000 rows used" in text
    assert not (tmp_path / "never.sqlite").exists()


def test_a_demo_run_again_goes_to_a_new_folder_with_its_own_ledger(tmp_path, capsys):
    """The README's start command may be run any number of times: the third demo must not hit the cap."""
    from ppdp_gui import cli
    (tmp_path / "ledger.sqlite").write_bytes(b"")  # an earlier demo's ledger: never touched
    (tmp_path / "demo-2").mkdir()
    folder = cli.demo_folder(tmp_path)
    assert folder == tmp_path / "demo-3" and folder.is_dir()
    assert (tmp_path / "ledger.sqlite").read_bytes() == b""
    out, err = capsys.readouterr()
    assert "holds an earlier demo" in out + err and "demo-3" in out + err
    fresh = tmp_path / "fresh"
    assert cli.demo_folder(fresh) == fresh
