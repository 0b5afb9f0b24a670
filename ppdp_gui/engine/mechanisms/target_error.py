"""ε from accuracy: the smallest ε whose released counts meet the error a custodian can accept, before any run.

The mechanism declares its public error model (`Mechanism.count_noise_per_epsilon`: each count's discrete
Laplace noise has scale c/ε); `engine/noise/intervals.py` inverts the noise's 95 % interval. The proposal reads
no record — only the mechanism's sensitivity, its budget shares and the public schema — so it costs no budget
and nothing is charged; the custodian then runs with the proposed ε (or another) as usual.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ppdp_gui.engine.claims import epsilon_text
from ppdp_gui.engine.data.schema import Dataset
from ppdp_gui.engine.errors import ParameterError
from ppdp_gui.engine.noise.intervals import LEVEL, epsilon_for_half_width, half_width


@dataclass(frozen=True)
class Proposal:
    """The proposed ε (None when the mechanism has no public error model) and the sentence that explains it."""

    epsilon: Fraction | None
    target: float
    half_width: int | None
    words: str


def propose_epsilon(mech, data: Dataset, params: dict[str, Any], target: float) -> Proposal:
    """The smallest ε (3 significant digits, rounded up) whose counts are within ±target 95 % of the time."""
    if not (target >= 0):
        raise ParameterError(f"the target error must be a number of records ≥ 0, got {target}")
    c = mech.count_noise_per_epsilon(data, params)
    if c is None:
        return Proposal(None, target, None, f"{mech.name} has no public error model to choose ε from: try a few "
                        "values of ε in Results → Simulate instead (on a DP copy of your table by default: its small "
                        "ε is charged, and the advice then costs nothing more).")
    eps = epsilon_for_half_width(target, c)
    k = half_width(Fraction(c) / eps)
    return Proposal(eps, target, k, (
        f"ε = {epsilon_text(eps)} is the smallest ε for which each released count of {mech.name} is within ±{k} of "
        f"the true count {LEVEL * 100:g} % of the time (noise scale {float(c):.4g}/ε, target ±{target:g}). "
        "Nothing was run or charged: this reads only public facts (the mechanism's sensitivity and shares of ε)."))
