"""`ppdp run … --target-error E`: proposes the smallest ε whose counts meet ±E (95 %), runs and charges nothing."""

from fractions import Fraction

import pandas as pd

from ppdp_gui.cli import main
from ppdp_gui.engine.mechanisms import registry
from ppdp_gui.engine.mechanisms.target_error import propose_epsilon
from ppdp_gui.engine.noise.intervals import count_interval


def test_target_error_only_plans(tmp_path, capsys):
    table = tmp_path / "t.csv"
    pd.DataFrame({"ward": list("ABAB"), "sex": list("FMMF")}).to_csv(table, index=False)
    ledger, out = tmp_path / "ledger.sqlite", tmp_path / "out.csv"
    code = main(["run", "Laplace histogram", "--input", str(table), "-p", "columns=ward", "--target-error", "5",
                 "--ledger", str(ledger), "--output", str(out)])
    said = capsys.readouterr().out
    assert code == 0 and "ε = 0.539" in said and "Nothing was run or charged" in said
    assert not out.exists() and not ledger.exists()
    assert count_interval(0.539) <= 5 < count_interval(0.538)


def test_each_mechanism_says_its_model_or_that_it_has_none():
    from ppdp_gui.engine.data.schema import ColumnSpec, Dataset, Role
    data = Dataset(pd.DataFrame({"ward": ["A"]}), (ColumnSpec("ward", "categorical", Role.QUASI_IDENTIFIER),))
    diffgen = registry.create("DiffGen")
    p = propose_epsilon(diffgen, data, diffgen.resolve_params(), 6)
    # counts get ε/2 (scale 2/ε): ±6 first holds at ε = 0.914
    assert p.epsilon == Fraction("0.914") and p.half_width == 6
    assert count_interval(0.914, share=Fraction(1, 2)) <= 6 < count_interval(0.913, share=Fraction(1, 2))
    mondrian = registry.create("Mondrian")
    p = propose_epsilon(mondrian, data, mondrian.resolve_params(), 6)
    assert p.epsilon is None and "no public error model" in p.words
