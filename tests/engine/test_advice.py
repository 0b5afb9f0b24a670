"""Advice from a simulation (engine/advice.py), on constructed SweepResults whose right answer is known: a plateau
is found where the figure stops improving, ties go towards privacy, the spread of repeats is respected, a knee is
taken when the figure still improves, a steadily improving figure gets no single value, and the sentence names the
figures at the advised value."""

from __future__ import annotations

import pandas as pd
import pytest

from ppdp_gui.engine import glossary
from ppdp_gui.engine.advice import Advice, advise, fmt, primary_measure
from ppdp_gui.engine.pipeline.sweep import SweepResult


def sweep(param: str, values, measures: dict[str, list[float]], spread: dict[str, list[float]] | None = None,
          repeats: int = 3) -> SweepResult:
    """Rows whose mean per value is `measures[m][i]` and whose sample std is `spread[m][i]` (3 repeats: m-s, m, m+s)."""
    rows = []
    for i, v in enumerate(values):
        for r in range(repeats):
            row = {param: v, "repeat": r, "seconds": 0.1}
            for m, means in measures.items():
                s = (spread or {}).get(m, [0.0] * len(values))[i]
                row[m] = means[i] + (r - 1) * s if repeats == 3 else means[i]
            rows.append(row)
    return SweepResult("Test", [param], pd.DataFrame(rows))


EPS = [0.01, 0.03, 0.1, 0.3, 1, 3, 10]


def test_epsilon_plateau_takes_the_most_private_value_as_good_as_the_best():
    result = sweep("epsilon", EPS, {"CA %": [64, 70, 75, 78, 80.1, 80.4, 80.9]},
                   {"CA %": [2, 3, 1, 1, 0.3, 0.2, 0.1]})
    a = advise(result, more_private="lower", label="ε")
    assert isinstance(a, Advice) and a.applicable
    assert a.value == 1 and a.rule == "plateau" and a.measure == "CA %"
    assert "stops improving after ε = 1" in a.reason and "80.1 %" in a.reason and "80.9 %" in a.reason
    assert "more private value (smaller ε)" in a.reason


def test_h_plateau_says_how_much_smaller_the_table_is():
    result = sweep("h", [2, 4, 8, 12, 15], {"CA %": [70, 76, 80, 80.3, 80.4],
                                            "rows released": [50, 200, 900, 3000, 4600]})
    a = advise(result, label="h")  # h does not change the guarantee: the smaller value wins ties
    assert a.value == 8 and a.rule == "plateau"
    assert "stops improving after h = 8" in a.reason
    best = advise(sweep("h", [4, 8, 16], {"CA %": [70, 80, 75], "rows released": [100, 900, 9000]}), label="h")
    assert best.value == 8 and "best at h = 8" in best.reason
    assert any("10× smaller there than at h = 16" in d for d in best.details)  # the far end of the grid
    assert any("5× smaller there than at h = 15" in d and "900 against 4,600" in d for d in a.details)


def test_ties_go_towards_privacy_in_either_direction():
    eps = sweep("epsilon", [0.5, 1, 2], {"CA %": [80, 80, 80.0001]})
    assert advise(eps, more_private="lower").value == 0.5
    k = sweep("k", [2, 5, 10], {"NCP %": [10, 10, 10]})
    a = advise(k, more_private="higher", label="k")
    assert a.value == 10 and a.rule == "flat" and "the most private" in a.reason


def test_differences_within_the_spread_of_repeats_do_not_count():
    tight = sweep("epsilon", [1, 10], {"CA %": [78, 80]}, {"CA %": [0.1, 0.1]})
    loose = sweep("epsilon", [1, 10], {"CA %": [78, 80]}, {"CA %": [4, 0.1]})
    assert advise(tight, more_private="lower").value == 10  # 2 points better, beyond any spread
    # 2 points, but the three runs at ε = 1 spread ± 4: their mean is only known to ± 4/√3 = 2.3
    assert advise(loose, more_private="lower").value == 1
    # ± 2.5 over three runs: the mean is known to ± 1.4, so 2 points are a real difference
    assert advise(sweep("epsilon", [1, 10], {"CA %": [78, 80]}, {"CA %": [2.5, 0.1]}), more_private="lower").value == 10
    # three points, tight: still improving at the end, so the knee (most of the gain) is advised
    knee = advise(sweep("epsilon", [0.1, 1, 10], {"CA %": [70, 78, 80]}), more_private="lower")
    assert knee.rule == "knee" and knee.value == 1 and "80% of the improvement" in knee.reason


def test_lower_is_better_figures_are_read_the_right_way_round():
    # error falls with ε; a plateau from ε = 1 on
    result = sweep("epsilon", [0.1, 0.3, 1, 3], {"mean abs error": [10, 3.3, 1.0, 0.99]})
    a = advise(result, more_private="lower")
    assert a.value == 1 and a.rule == "plateau"


def test_knee_when_the_figure_still_improves_at_the_end():
    result = sweep("k", [2, 5, 10, 20, 50], {"NCP %": [8, 12, 15, 20, 28],
                                             "highest re-identification risk %": [50, 20, 10, 5, 2]})
    a = advise(result, more_private="higher", label="k")
    assert a.rule == "knee" and a.value == 10
    assert "65% of the improvement in information loss is reached at k = 10" in a.reason and "15 %" in a.reason
    assert "Highest re-identification risk at k = 10: 10 %." in a.details


def test_steady_improvement_gets_no_single_value():
    result = sweep("k", [2, 4, 6, 8, 10], {"NCP %": [10, 12, 14, 16, 18]})
    a = advise(result, more_private="higher", label="k")
    assert a.value is None and not a.applicable and a.rule == "steady"
    assert "no single value is advised" in a.reason and "more privacy costs information loss" in a.reason


def test_the_measure_shown_is_used_when_it_is_a_utility_figure():
    result = sweep("k", [2, 5, 10], {"NCP %": [10, 18, 25], "F-measure tree %": [80, 79.9, 70],
                                     "highest re-identification risk %": [50, 20, 10]})
    assert primary_measure(result.measure_names) == "NCP %"
    on_loss = advise(result, more_private="higher", label="k")
    assert on_loss.value is None and "keeps improving all the way from k = 10 (25 %) to k = 2 (10 %)" in \
        on_loss.reason
    on_f = advise(result, more_private="higher", measure="F-measure tree %", label="k")
    assert on_f.value == 5 and on_f.measure == "F-measure tree %"
    # a risk figure is not a utility: the advice stays on the primary one
    assert advise(result, more_private="higher", measure="highest re-identification risk %").measure == "NCP %"


def test_no_advice_without_a_utility_figure_or_with_several_parameters():
    assert advise(sweep("k", [2, 5], {"groups": [100, 40]}), more_private="higher") is None
    assert advise(sweep("k", [5], {"NCP %": [10]})) is None
    two = sweep("k", [2, 5], {"NCP %": [10, 12]})
    two.rows["l"] = [0, 0, 0, 2, 2, 2]
    two.param_names = ["k", "l"]
    assert advise(two) is None


def test_parameters_are_named_by_their_symbol():
    from ppdp_gui.engine.advice import short_label
    from ppdp_gui.engine.mechanisms.base import ParamSpec
    assert short_label(ParamSpec("epsilon", "Privacy budget ε", "float")) == "ε"
    assert short_label(ParamSpec("k", "k (smallest group size)", "int")) == "k"
    assert short_label(ParamSpec("rho", "ρ (share of k-anonymous joins)", "float")) == "ρ"
    assert short_label(ParamSpec("bins", "Bins per numeric column", "int")) == "Bins per numeric column"


def test_glossary_directions_and_numbers_for_people():
    assert glossary.better("CA %") == "higher" and glossary.better("NCP %") == "lower"
    assert glossary.better("journalist risk %") == "lower"  # an unknown name: guessed from its words
    assert glossary.label("NCP %") == "Information loss (NCP %)" and glossary.label("odd") == "odd"
    assert fmt(80.123) == "80.1" and fmt(4600) == "4,600" and fmt(0.31623) == "0.316"


@pytest.mark.parametrize("more_private, first", [("lower", 0.01), ("higher", 10), (None, 0.01)])
def test_order_follows_the_privacy_direction(more_private, first):
    flat = sweep("epsilon", EPS, {"CA %": [50] * len(EPS)})
    assert advise(flat, more_private=more_private).value == first


def test_summary_is_kept_and_travels_with_the_result():
    """The window's worker works the summary out; it comes back with the result (pickled) and is not worked out
    again, unless the rows or parameters changed shape."""
    import pickle
    result = sweep("k", [2, 5], {"NCP %": [10, 12]})
    first = result.summary()
    assert result.summary() is first
    back = pickle.loads(pickle.dumps(result))
    assert back._summary is not None
    pd.testing.assert_frame_equal(back.summary(), first)
    back.rows["l"] = [0, 0, 0, 2, 2, 2]
    back.param_names = ["k", "l"]
    assert list(back.summary().index.names) == ["k", "l"]  # worked out again for the new parameters
