"""The example of docs/adding_a_mechanism.md: a new ε-DP mechanism added by following the checklist alone.

"Example: noisy number of records" releases one number — how many records the table holds, at most c per patient
when it has a person column — with integer noise. It is kept in the tests and registered only in the test process
(`registered`), where it must pass the conformance kit (tests/test_conformance.py) like every real mechanism.
Each numbered comment is the checklist step it shows.
"""

from __future__ import annotations

import contextlib
from fractions import Fraction
from typing import Any

import pandas as pd

from ppdp_gui.engine.claims import PublicSchema
from ppdp_gui.engine.data.schema import ColumnSpec, Dataset, Role
from ppdp_gui.engine.mechanisms import registry
from ppdp_gui.engine.mechanisms.base import ParamSpec, Progress, Release, ReleaseShape
from ppdp_gui.engine.mechanisms.contribution import (MAX_ROWS, SCALED_SENSITIVITY, DPMechanism, bound_record,
                                                     bound_warnings)
from ppdp_gui.engine.noise.sampler import exact_epsilon

EXAMPLE = "Example: noisy number of records"
COUNT = "records"


# 1. the module: a Mechanism subclass (a DP one: contribution.DPMechanism, which states the unit of privacy —
#    the person when the table has a person column — and keeps at most c rows of each person)
class NoisyRecords(DPMechanism):
    name = EXAMPLE
    summary = "How many records the table holds (at most c per patient), with integer noise added."
    per_person = SCALED_SENSITIVITY  # one person's c rows move the count by c: the noise is scaled by c
    cost_note = "discrete Laplace noise, sensitivity c (one person's at most c rows added or removed)"
    params = (
        # 3. ParamSpecs: the window's panel and `ppdp run -p` are drawn from these alone
        ParamSpec("epsilon", "Privacy budget ε", "float", default=1.0, low=0.01, high=10.0, log_scale=True,
                  help="Smaller ε: more privacy, more noise. The number is off by about c/ε on average.",
                  formula="records + integer noise X, P(X = x) ∝ e^(−ε|x|/c)", more_private="lower"),
        MAX_ROWS,
    )

    # 4. the price and the claim come from DPMechanism: `declared_claims` (the DifferentialPrivacy claim, per
    #    person), `declared_cost` / `cost` derived from it; checks before the run (resolved parameters):
    def check(self, data: Dataset, params: dict[str, Any]) -> list:
        return self.contribution_problems(data, params)

    # 7. the plain words before a run
    def describe_release(self, data: Dataset, params: dict[str, Any]) -> ReleaseShape:
        return ReleaseShape(columns=(COUNT,), count_column=COUNT, noisy=True,
                            sentences=("One number: how many records the table holds, with noise added.",))

    def _run(self, data: Dataset, *, rng, **params: Any) -> Any:
        yield Progress(0.1, "counting the records")
        bounded, unit = self.bounded(data, params, rng)  # at most c rows per person, drawn by `rng`
        true = int(len(bounded.data.frame))
        # DP randomness only from engine/noise (the publish path passes `rng`), integer noise for a count
        scale = Fraction(unit.max_rows) / exact_epsilon(params["epsilon"])
        noisy = max(0, true + int(rng.discrete_laplace(scale)))
        claims = (*self.declared_claims(data, params), PublicSchema((COUNT,), {}, (COUNT,)))
        yield Release(self.name, pd.DataFrame({COUNT: [noisy]}), self.declared_cost(data, params), dict(params),
                      claims=claims, note={"noise": f"discrete Laplace, scale c/ε = {float(scale):g}",
                                           **self.unit_note(data, params)},
                      record={"true count": true, **bound_record(bounded)},  # exact counts: custodian only
                      warnings=bound_warnings(bounded, unit))

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
    monkeypatch.setitem(registry._ENTRIES, EXAMPLE, f"{__name__}:NoisyRecords")
    monkeypatch.setitem(registry._AUDITS, EXAMPLE, f"{__name__}:example_scenarios")
    yield
