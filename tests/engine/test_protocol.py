"""The Mechanism protocol's shared parts: parameter coercion and range checks, registry lookups."""

from fractions import Fraction

import pytest

from ppdp_gui.engine.errors import ParameterError
from ppdp_gui.engine.mechanisms import ParamSpec, PrivacyCost
from ppdp_gui.engine.mechanisms import registry


def test_float_param_range_and_type():
    p = ParamSpec("epsilon", "ε", "float", default=1.0, low=0.01, high=10, log_scale=True)
    assert p.coerce("0.5") == 0.5
    with pytest.raises(ParameterError, match="below the minimum"):
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
