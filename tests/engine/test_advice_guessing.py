"""Advice a custodian can follow (issue 26, finding 3): never a value no better than always guessing the most
common class, never a value beyond the ε the table has left, and advice belongs to the table it was worked out on.

On the diabetes extract the simulation advised ε = 3 at 53.9 % accuracy while its own "always guessing" line was
53.91 %, and only ε = 1 was left; on heart it advised h = 1 (age published as the whole range)."""

from __future__ import annotations

import pandas as pd
import pytest

from ppdp_gui.engine.advice import advise, epsilon_cost
from ppdp_gui.engine.errors import ParameterError
from ppdp_gui.engine.mechanisms import registry
from ppdp_gui.engine.pipeline.sweep import SweepResult


def sweep(param: str, values, ca: list[float], guess: float | None, spread: float = 0.0, table: str = "t1"):
    rows = [{param: v, "repeat": r, "seconds": 0.1, "CA %": m + (r - 1) * spread}
            for v, m in zip(values, ca) for r in range(3)]
    reference = {"BA %": 60.0} if guess is None else {"BA %": 60.0, "LA %": guess}
    return SweepResult("DiffGen", [param], pd.DataFrame(rows), reference, 100, 50, table)


def test_diabetes_like_accuracy_at_the_guessing_line_gives_no_advice():
    """Accuracy within the spread of always guessing at every ε: nothing is advised, and the sentence says what
    to try instead, in the window's words."""
    result = sweep("epsilon", [0.1, 0.3, 1, 3], [53.7, 53.85, 53.88, 53.9], guess=53.91, spread=0.2)
    a = advise(result, more_private="lower", label="ε")
    assert a is not None and not a.applicable and a.rule == "guessing"
    assert a.reason.startswith("No value in this range beats guessing")
    assert "53.9 %" in a.reason and "fewer columns" in a.reason and "coarser taxonomies" in a.reason
    assert "Data step" in a.reason and "Taxonomies step" in a.reason
    with pytest.raises(ParameterError):
        a.apply({"epsilon": 1.0}, "t1")


def test_without_the_guessing_line_the_same_curve_is_advised_as_before():
    """The refusal comes from the reference line, not from a flat curve: without it the old rule still speaks."""
    a = advise(sweep("epsilon", [0.1, 0.3, 1, 3], [53.7, 53.85, 53.88, 53.9], guess=None, spread=0.2),
               more_private="lower", label="ε")
    assert a.applicable


def test_a_value_beyond_the_budget_left_is_never_advised():
    mech = registry.create("DiffGen")
    result = sweep("epsilon", [0.1, 0.3, 1, 3, 10], [60, 70, 75, 80, 80.2], guess=55)
    free = advise(result, more_private="lower", label="ε")
    assert free.value == 3  # the plateau, with the whole range affordable
    cost = epsilon_cost(mech, {"h": 4}, "epsilon")
    a = advise(result, more_private="lower", label="ε", budget_left=1.0, cost=cost)
    assert a.applicable and a.value in (0.3, 1)  # the rule on the values the budget still allows
    assert any("ε = 3, ε = 10" in d and "ε = 1 this table has left" in d for d in a.details)


def test_when_every_useful_value_is_beyond_the_budget_nothing_is_advised():
    mech = registry.create("DiffGen")
    result = sweep("epsilon", [0.1, 0.3, 1, 3], [54, 54.1, 54.2, 62], guess=54.0, spread=0.3)
    a = advise(result, more_private="lower", label="ε", budget_left=1.0,
               cost=epsilon_cost(mech, {"h": 4}, "epsilon"))
    assert not a.applicable and a.rule == "budget"
    assert "ε = 3" in a.reason and "only ε = 1 left" in a.reason and "fewer columns" in a.reason


def test_h_sweep_with_epsilon_above_the_budget_is_not_advised():
    """h does not change the cost; with ε = 3 set and ε = 1 left, no h can be released."""
    mech = registry.create("DiffGen")
    result = sweep("h", [2, 4, 8], [60, 70, 71], guess=50)
    a = advise(result, label="h", budget_left=1.0, cost=epsilon_cost(mech, {"epsilon": 3.0}, "h"))
    assert not a.applicable and a.rule == "budget"


def test_h_equal_one_no_better_than_guessing_is_not_advised():
    """h = 1 publishes age as the whole range: accuracy equal to guessing. The rule picked it as the most private
    of a flat curve; it must now take the next value that does better than guessing, or none."""
    flat = sweep("h", [1, 2, 4], [54.0, 54.05, 54.1], guess=54.0)
    a = advise(flat, label="h")
    assert not a.applicable and a.rule == "guessing"
    rising = sweep("h", [1, 2, 4, 8], [54.0, 70, 75, 75.1], guess=54.0)
    b = advise(rising, label="h")
    assert b.applicable and b.value == 4
    assert any("h = 1" in d and "always guessing" in d for d in b.details)


def test_one_value_left_is_advised_with_its_reason():
    result = sweep("h", [1, 2], [54.0, 70.0], guess=54.0)
    a = advise(result, label="h")
    assert a.applicable and a.value == 2 and a.rule == "only"


def test_advice_belongs_to_its_table():
    a = advise(sweep("h", [2, 4, 8], [60, 70, 71], guess=50, table="sha256:heart"), label="h")
    assert a.applicable and a.table == "sha256:heart"
    assert a.apply({"h": 10, "epsilon": 1.0}, "sha256:heart") == {"h": a.value, "epsilon": 1.0}
    with pytest.raises(ParameterError, match="another table"):
        a.apply({"h": 10}, "sha256:breast")
