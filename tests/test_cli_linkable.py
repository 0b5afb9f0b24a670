"""`ppdp run` says what the window's Run step lists (issue 26, finding 5): columns someone else could know that the
release publishes unchanged, with the reason and the options that protect them — from the same plan."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from ppdp_gui.cli import main

sys.path.insert(0, str(Path(__file__).resolve().parent / "engine"))
from diabetes_shaped import diabetes_shaped  # noqa: E402


def test_run_warns_of_linkable_columns_and_the_options_protect_them(tmp_path, capsys):
    table = tmp_path / "diabetic_data.csv"
    diabetes_shaped(1500).to_csv(table, index=False)
    base = ["run", "Mondrian", "-i", str(table), "--ledger", str(tmp_path / "ledger.sqlite"), "-p", "k=10"]
    assert main(base + ["-o", str(tmp_path / "a.csv")]) == 0
    err = capsys.readouterr().err
    assert "diag_2 holds diagnosis codes" in err and "--role diag_2=quasi-identifier" in err
    assert "--leave-out payer_code" in err
    protected = base + ["--role", "diag_1=quasi-identifier", "--role", "diag_2=quasi-identifier",
                        "--role", "diag_3=quasi-identifier", "--leave-out", "payer_code",
                        "--leave-out", "medical_specialty"]
    assert main(protected + ["-o", str(tmp_path / "b.csv")]) == 0
    err = capsys.readouterr().err
    assert "someone" not in err and "diagnosis codes" not in err
    written = pd.read_csv(tmp_path / "b.csv", dtype=str)
    assert "payer_code" not in written.columns and "medical_specialty" not in written.columns
