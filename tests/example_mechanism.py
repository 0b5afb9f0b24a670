"""The example of docs/adding_a_mechanism.md: a new ε-DP mechanism added by following the checklist alone.

"Example: noisy number of patients" releases one number — how many persons the table holds (rows, when it has no
person column) — with integer noise. It is kept in the tests and registered only in the test process
(`registered`), where it must pass the conformance kit (tests/test_conformance.py) like every real mechanism.
Each numbered comment is the checklist step it shows.
"""

from __future__ import annotations

import contextlib
from typing import Any

import pandas as pd

from ppdp_gui.engine.claims import DifferentialPrivacy, PublicSchema
from ppdp_gui.engine.data.schema import ColumnSpec, Dataset, Role
from ppdp_gui.engine.mechanisms import registry
from ppdp_gui.engine.mechanisms.base import Mechanism, ParamSpec, PrivacyCost, Progress, Release, ReleaseShape
from ppdp_gui.engine.noise.sampler import exact_epsilon

EXAMPLE = "Example: noisy number of patients"
COUNT = "patients"


# 1. the module: a Mechanism subclass with a name, a guarantee label and its ParamSpecs
class NoisyPatients(Mechanism):
    name = EXAMPLE
    guarantee = "ε-DP"
    summary = "How many patients the table holds, with integer noise added."
    params = (
        # 3. ParamSpecs: the window's panel and `ppdp run -p` are drawn from these alone
        ParamSpec("epsilon", "Privacy budget ε", "float", default=1.0, low=0.01, high=10.0, log_scale=True,
                  help="Smaller ε: more privacy, more noise. The number is off by about 1/ε on average.",
                  formula="number of persons + integer noise X, P(X = x) ∝ e^(−ε|x|)", more_private="lower"),
    )

    # 4. the price, known before the run from the parameters alone (the ledger reserves it first)
    def privacy_cost(self, **params: Any) -> PrivacyCost:
        eps = self.param("epsilon").coerce(params.get("epsilon", self.param("epsilon").default))
        return PrivacyCost(epsilon=exact_epsilon(eps),
                           note="discrete Laplace noise, sensitivity 1 (one person added or removed)")

    # 4. the claims the release will make, said before the run
    def declared_claims(self, data: Dataset, params: dict[str, Any]) -> tuple:
        cost = self.privacy_cost(**params)
        return (DifferentialPrivacy(cost.epsilon, cost.delta), PublicSchema((COUNT,), {}, (COUNT,)))

    # 7. the plain words before a run
    def describe_release(self, data: Dataset, params: dict[str, Any]) -> ReleaseShape:
        return ReleaseShape(columns=(COUNT,), count_column=COUNT, noisy=True,
                            sentences=("One number: how many patients the table holds, with noise added.",))

    def _run(self, data: Dataset, *, rng, epsilon: float) -> Any:
        yield Progress(0.1, "counting the patients")
        person = data.person_column
        true = int(data.frame[person].nunique(dropna=False)) if person else int(len(data.frame))
        # DP randomness only from engine/noise (the publish path passes `rng`), integer noise for a count
        noisy = max(0, true + int(rng.discrete_laplace(1 / float(exact_epsilon(epsilon)))))
        cost = self.privacy_cost(epsilon=epsilon)
        yield Release(self.name, pd.DataFrame({COUNT: [noisy]}), cost, {"epsilon": epsilon},
                      claims=self.declared_claims(data, {"epsilon": epsilon}),
                      note={"noise": f"discrete Laplace, scale 1/ε = {1 / epsilon:g}"},
                      record={"true count": true})  # the exact count stays with the custodian

    # 8. figures for the results view, each with a glossary entry (engine/glossary.py: "total error" is there)
    def measures(self, release: Release, train: Dataset, test: Dataset | None) -> dict[str, float]:
        return {"total error": abs(float(release.table[COUNT].iloc[0]) - float(release.record["true count"]))}


# 5. the verifier's audit tables (engine/verify): one patient added to a small ward
def example_scenarios() -> list:
    from ppdp_gui.engine.verify.neighbours import add_record
    from ppdp_gui.engine.verify.scenarios import Scenario
    ward = Dataset(pd.DataFrame({"ward": ["A"] * 5 + ["B"] * 3}),
                   (ColumnSpec("ward", "categorical", Role.QUASI_IDENTIFIER),))
    return [Scenario("one patient added", "the number moves by one", ward,
                     add_record(ward, {"ward": "B"}, "one patient added"), {"epsilon": 1.0},
                     {"smoke": 60, "quick": 600, "full": 6000})]


# 2. the registry lines (in the product: one line in `_ENTRIES`, one in `_AUDITS` of engine/mechanisms/registry.py)
@contextlib.contextmanager
def registered(monkeypatch):
    monkeypatch.setitem(registry._ENTRIES, EXAMPLE, f"{__name__}:NoisyPatients")
    monkeypatch.setitem(registry._AUDITS, EXAMPLE, f"{__name__}:example_scenarios")
    yield
