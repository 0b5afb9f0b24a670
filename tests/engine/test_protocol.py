"""The Mechanism protocol's shared parts: parameter coercion and range checks, registry lookups."""

from fractions import Fraction

import pytest

from ppdp_gui.engine.errors import ParameterError
from ppdp_gui.engine.mechanisms import ParamSpec, PrivacyCost
from ppdp_gui.engine.mechanisms import registry


def test_float_param_range_and_type():
    p = ParamSpec("epsilon", "ε", "float", default=1.0, low=0.01, high=10, log_scale=True)
    assert p.coerce("0.5") == 0.5
    with pytest.raises(ParameterError, match="below the smallest allowed value"):
        p.coerce(0.001)
    with pytest.raises(ParameterError, match="not a valid float"):
        p.coerce("abc")
    with pytest.raises(ParameterError):
        p.coerce(float("nan"))


def test_int_choice_bool_columns():
    assert ParamSpec("h", "h", "int", low=1, high=30).coerce("7") == 7
    with pytest.raises(ParameterError):
        ParamSpec("h", "h", "int").coerce(2.5)
    with pytest.raises(ParameterError, match="not one of"):
        ParamSpec("u", "Utility", "choice", choices=("Max", "InfoGain")).coerce("Gini")
    assert ParamSpec("b", "b", "bool").coerce("no") is False
    assert ParamSpec("c", "c", "columns").coerce("age, sex") == ("age", "sex")


def test_privacy_cost_describes_itself():
    assert PrivacyCost(epsilon=Fraction(1, 2)).describe() == "ε = 0.5"
    assert PrivacyCost(k=10, l=2).describe() == "k = 10, l = 2"
    assert not PrivacyCost(k=5).is_dp
    noted = PrivacyCost(k=5, l=0, note="per fragment")
    assert noted.describe() == "k = 5, per fragment" and noted.describe(with_note=False) == "k = 5"


def test_unknown_mechanism_is_a_clear_error():
    with pytest.raises(ParameterError, match="unknown mechanism"):
        registry.get("No such thing")


def test_relay_progress_rescales_returns_the_release_and_closes_the_run():
    from ppdp_gui.engine.mechanisms.base import Progress, Release, relay_progress
    closed = []

    def run():
        try:
            yield Progress(0.5, "half")
            yield Progress(2.0, "over")
            yield Release("m", None, PrivacyCost(k=2), {})
        finally:
            closed.append(True)

    outer = relay_progress(run(), 0.2, 0.6, "x: ")
    items = []
    try:
        while True:
            items.append(next(outer))
    except StopIteration as stop:
        release = stop.value
    assert [(round(p.fraction, 6), p.message) for p in items] == [(0.4, "x: half"), (0.6, "x: over")]
    assert release.mechanism == "m" and closed == [True]
    cancelled = relay_progress(run())
    next(cancelled)
    cancelled.close()  # the user cancels: the inner run is closed too
    assert closed == [True, True]
