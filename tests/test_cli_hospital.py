"""`ppdp run` on a hospital-shaped table (issue 18): the default roles leave the patient number out; a patient number
forced to 'insensitive' stops the release with its name; `--publish-as-is` confirms it, and the custodian record
keeps the confirmation."""

import json
import sys
from pathlib import Path

import pandas as pd

from ppdp_gui.cli import main

sys.path.insert(0, str(Path(__file__).resolve().parent / "engine"))
from clinical_helpers import diabetes_like  # noqa: E402


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_patient_numbers_are_left_out_or_stop_the_release(tmp_path, capsys):
    table = tmp_path / "encounters.csv"
    diabetes_like(1200).to_csv(table, index=False)
    ledger = tmp_path / "ledger.sqlite"
    base = ["run", "Mondrian", "-i", str(table), "--ledger", str(ledger), "-p", "k=10"]

    code, _, err = run(capsys, *base, "-o", str(tmp_path / "default.csv"))
    assert code == 0, err
    assert "patient_nbr" not in pd.read_csv(tmp_path / "default.csv").columns

    forced = base + ["--role", "patient_nbr=insensitive"]
    code, _, err = run(capsys, *forced, "-o", str(tmp_path / "forced.csv"))
    assert code == 2 and "patient_nbr has a value no other row has" in err and "identify patients" in err
    assert not (tmp_path / "forced.csv").exists()

    record = tmp_path / "record.json"
    code, _, err = run(capsys, *forced, "--publish-as-is", "patient_nbr", "-o", str(tmp_path / "confirmed.csv"),
                       "--record", str(record))
    assert code == 0, err
    assert "patient_nbr" in pd.read_csv(tmp_path / "confirmed.csv").columns
    warnings = json.loads(record.read_text())["warnings"]
    assert any("patient_nbr" in w and "you confirmed it may be published" in w for w in warnings)


def test_a_project_confirming_the_column_runs_like_the_window(tmp_path, capsys):
    """A project saved by the window with "publish as is" ticked runs from `ppdp run --recipe` without the flag."""
    from ppdp_gui.engine.data.schema import Role
    from ppdp_gui.engine.persistence.project import Recipe, write_recipe
    table = tmp_path / "encounters.csv"
    diabetes_like(1200).to_csv(table, index=False)
    recipe = write_recipe(Recipe(source=str(table), roles={"patient_nbr": Role.INSENSITIVE}, mechanism="Mondrian",
                                 params={"k": 10}, publish_as_is=("patient_nbr",)), tmp_path / "p.ppdp.json")
    code, _, err = run(capsys, "run", "--recipe", str(recipe), "--ledger", str(tmp_path / "l.sqlite"),
                       "-o", str(tmp_path / "out.csv"))
    assert code == 0, err
    assert "patient_nbr" in pd.read_csv(tmp_path / "out.csv").columns
