"""Issue 29, Deliver 1: a parameter is validated once, at the public entry (scikit-learn's rule).

Before, one release checked ε in `resolve_params` twice in the plan (and again in the window's worker), the
window's field had its own range rule with other words, and ε was spelled by five functions. Now the plan holds
the resolved parameters and the cost, the checks and the run receive them; one `ParamSpec.range_problem` words a
value out of range for the field and for the plan; one `claims.epsilon_text` spells ε."""

from __future__ import annotations

import re
from collections import Counter
from fractions import Fraction
from pathlib import Path

import pytest

from ppdp_gui.engine.claims import epsilon_text
from ppdp_gui.engine.errors import ParameterError
from ppdp_gui.engine.mechanisms import base, registry
from ppdp_gui.engine.mechanisms.base import ParamSpec
from ppdp_gui.engine.pipeline import plan, run_release
from ppdp_gui.engine.privacy.ledger import Ledger

from test_pipeline import PARAMS, adult_like

PACKAGE = Path(__file__).resolve().parents[2] / "ppdp_gui"


@pytest.fixture
def coerced(monkeypatch) -> Counter:
    """How often each parameter is coerced (ParamSpec.coerce), by name."""
    calls: Counter = Counter()
    real = ParamSpec.coerce

    def counting(self, value):
        calls[self.name] += 1
        return real(self, value)
    monkeypatch.setattr(base.ParamSpec, "coerce", counting)
    return calls


@pytest.mark.parametrize("name, params", [("Laplace histogram", PARAMS), ("Mondrian", {"k": 5})])
def test_one_release_coerces_each_parameter_once(coerced, tmp_path, name, params):
    ledger = Ledger(tmp_path / "ledger.sqlite")
    planned = plan(adult_like(), name, params, ledger=ledger, allow_data_domains=True)
    assert not planned.errors, planned.errors
    items = list(run_release(planned, ledger=ledger, seed=3))
    assert items[-1].params == planned.params
    every = {spec.name for spec in registry.get(name).params}
    assert coerced == Counter({n: 1 for n in every}), coerced  # the plan's one resolve, nothing after it


def test_the_field_and_the_plan_word_a_value_out_of_range_alike():
    spec = registry.get("Laplace histogram").param("epsilon")
    words = spec.range_problem(0)
    assert words.startswith("0 is below the smallest allowed value") and "Nothing can run" in words
    with pytest.raises(ParameterError) as refused:
        spec.coerce(0)
    assert str(refused.value) == f"{spec.label}: {words}"
    planned = plan(adult_like(), "Laplace histogram", {**PARAMS, "epsilon": 0})
    assert [p.message for p in planned.errors] == [f"{spec.label}: {words}"]
    assert spec.range_problem(spec.default) == "" and ParamSpec("k", "k", "int", low=2).range_problem(1) == (
        "1 is below the smallest allowed value, 2. Nothing can run until you change it.")


def test_one_epsilon_formatter():
    assert epsilon_text(Fraction(1, 3)) == epsilon_text("1/3") == epsilon_text(1 / 3) == "0.3333"
    assert epsilon_text(Fraction(5, 4)) == "1.25" and epsilon_text(2) == "2"
    # nowhere else is an ε, a budget spent, a cap or what is left spelled with its own format
    own = re.compile(r"float\([^)]*(eps|spent|cap|remaining)[^)]*\)\s*:\s*\.4g")
    found = [f"{p.relative_to(PACKAGE)}:{i}" for p in PACKAGE.rglob("*.py")
             for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if own.search(line)]
    assert found == []
    defined = [f"{p.relative_to(PACKAGE)}" for p in PACKAGE.rglob("*.py")
               if re.search(r"^def (fmt_eps|_eps_text|_eps)\(value", p.read_text(encoding="utf-8"), re.M)]
    assert defined == []


def test_epsilon_is_made_exact_once_and_the_claim_priced_is_the_claim_released(monkeypatch, tmp_path):
    """The Laplace histogram made ε an exact fraction for the plan's price, then again for the release's cost, its
    claim and the note's words; the declaration is now made once and the release carries that very claim."""
    from ppdp_gui.engine.mechanisms import contribution
    from ppdp_gui.engine.claims import dp_claim
    made = []
    real = contribution.exact_epsilon
    monkeypatch.setattr(contribution, "exact_epsilon", lambda v: made.append(v) or real(v))
    ledger = Ledger(tmp_path / "ledger.sqlite")
    planned = plan(adult_like(), "Laplace histogram", PARAMS, ledger=ledger, allow_data_domains=True)
    published = list(run_release(planned, ledger=ledger, seed=3))[-1]
    assert made == [PARAMS["epsilon"]]
    assert dp_claim(published.release.claims) is dp_claim(planned.mechanism.declared_claims(planned.dataset,
                                                                                            planned.params))
    assert published.cost.epsilon == planned.cost.epsilon == Fraction(1, 2)
