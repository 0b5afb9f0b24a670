"""The command line on tables the project was not tuned on (nursery, Pima), read as a nurse would: a missing
public domain on nine code-list columns reads as one explanation and a list, and says how to give domains in
`ppdp`; warnings say 'warning' once."""

import sys
from pathlib import Path

from ppdp_gui.cli import main

sys.path.insert(0, str(Path(__file__).parent / "engine"))


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_diffgen_on_nursery_names_each_missing_domain_once_and_says_how(shared_data, tmp_path, capsys):
    table = shared_data / "nursery" / "nursery.csv.gz"
    code, _out, err = run(capsys, "run", "DiffGen", "-i", table, "-o", tmp_path / "r.csv",
                          "--ledger", tmp_path / "l.sqlite", "--confirm-roles")
    assert code == 2 and not (tmp_path / "r.csv").exists()
    columns = ["class", "parents", "has_nurs", "form", "children", "housing", "finance", "social", "health"]
    for column in columns:
        assert f"{column} needs a public list of its values" in err, column
    assert err.count("would reveal the table's own values") == 1  # the reason once, not nine times
    assert "--domain COL=A,B,C" in err and "--allow-data-domains" in err
    assert len(err) < 1300  # it was 3,900 characters


def test_planned_domain_problems_keep_one_per_column_for_the_window(shared_data):
    from ppdp_gui.engine.data import read_table
    from ppdp_gui.engine.pipeline import plan
    data = read_table(shared_data / "pima" / "pima-indians-diabetes.csv").confirm_guesses()
    planned = plan(data, "DiffGen", {})
    by_column = {p.column: p.message for p in planned.errors if p.column}
    assert set(by_column) == {"class", "age"}
    first, second = (by_column[c] for c in ("class", "age")) if next(iter(by_column)) == "class" else \
        (by_column[c] for c in ("age", "class"))
    assert "not ε-differentially private" in first and "would reveal" in first
    assert "too" in second and "would reveal" not in second
