"""Issue 29, Deliver 1 for the k-anonymity family: k lives in one representation, the declared claim.

Before, Mondrian, TDS, global and local recoding and fragmentation made their KAnonymity / LDiversity claims only
after the run, while the plan priced k from the raw parameter and each of three places spelled "k = …" itself. Now
the family's shared base (kanon/family.KAnonMechanism) declares the claims before the run from the resolved
parameters; the plan's cost (the Run step's "Privacy:" line, `ppdp run`'s "cost k = …") reads k and l from them,
the release carries those very objects, and `claims.k_text` spells k."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from ppdp_gui.engine.claims import KAnonymity, LDiversity, k_text
from ppdp_gui.engine.mechanisms import registry
from ppdp_gui.engine.mechanisms.base import PrivacyCost
from ppdp_gui.engine.mechanisms.kanon.family import KAnonMechanism
from ppdp_gui.engine.persistence.project import read_recipe
from ppdp_gui.engine.pipeline import load, plan, run_release

from test_pipeline import adult_like

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from conformance_helpers import ward_recipe  # noqa: E402

PACKAGE = Path(__file__).resolve().parents[2] / "ppdp_gui"
FAMILY = ["Mondrian", "TDS", "Global recoding", "Local recoding", "Fragmentation"]


@pytest.mark.parametrize("name", FAMILY)
def test_the_family_declares_before_the_run_the_claims_its_release_carries(name, tmp_path):
    """On the conformance kit's ward table (a person column, taxonomies built as the window saves them)."""
    recipe = read_recipe(ward_recipe(tmp_path, name))
    planned = plan(load(recipe).dataset, name, {**recipe.params, "k": 5})
    assert not planned.errors, [p.message for p in planned.errors]
    assert isinstance(planned.mechanism, KAnonMechanism)
    declared = planned.claims
    assert any(isinstance(c, KAnonymity) and c.k == 5 for c in declared), declared
    published = list(run_release(planned, seed=3, write_record=False))[-1]
    assert published.release.claims == declared
    assert all(a is b for a, b in zip(published.release.claims, declared))  # made once, not again after the run
    assert published.cost.k == planned.cost.k == 5 and published.release.cost == planned.cost
    assert published.release.note["k"] == 5  # the note's words stay as they were


def test_the_plans_k_and_l_are_read_from_the_declared_claim(monkeypatch):
    """The Privacy line shows the claim's k, not the parameter's: a claim that says otherwise wins."""
    mech = registry.get("Mondrian")

    def claims_for(self, data, params):
        return (KAnonymity(7, tuple(data.quasi_identifiers)), LDiversity(3, "distinct", "salary", ("age",)))
    monkeypatch.setattr(mech, "claims_for", claims_for)
    planned = plan(adult_like(), "Mondrian", {"k": 5})
    assert (planned.cost.k, planned.cost.l) == (7, 3)
    from ppdp_gui.gui.plan_words import cost_words
    assert cost_words(planned.cost).startswith("k = 7: ")


def test_a_new_table_or_new_parameters_declare_again():
    mech = registry.create("Mondrian")
    data = adult_like()
    params = mech.resolve_params(k=5)
    first = mech.declared_claims(data, params)
    assert mech.declared_claims(data, dict(params)) is first
    assert mech.declared_claims(data, {**params, "k": 6})[0].k == 6
    other = adult_like(seed=1)
    assert mech.declared_claims(other, params) is not first


def test_one_k_formatter():
    assert k_text(5) == "k = 5" and PrivacyCost(k=5).describe() == "k = 5"
    assert KAnonymity(5, ("age",)).describe().endswith(f"({'k-anonymity'}, {k_text(5)})")
    # nowhere else is the k of a guarantee (a cost's, a claim's) spelled with its own format
    own = re.compile(r"k = \{(self|cost|claim|c|p)\.k\}")
    found = [f"{p.relative_to(PACKAGE)}:{i}" for p in PACKAGE.rglob("*.py")
             for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if own.search(line)]
    assert found == []
