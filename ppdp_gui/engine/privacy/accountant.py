"""In-memory budget accounting inside one release: sequential composition of the ε a mechanism splits.

A mechanism such as DiffGen gives part of its ε to choosing splits and part to the final counts; it makes a
BudgetAccountant for its total, spends each part through it, and the accountant refuses (BudgetError) any step
that would exceed the total. All amounts are exact Fractions, so "spent == total" is an exact statement.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Sequence

from ppdp_gui.engine.errors import BudgetError, ParameterError
from ppdp_gui.engine.privacy.records import exact


def split_budget(total, weights: Sequence) -> list[Fraction]:
    """`total` divided in proportion to `weights`, exactly (the parts sum to `total`)."""
    total = exact(total, "ε")
    w = [exact(x, "weight") for x in weights]
    if not w or sum(w) == 0:
        raise ParameterError("a budget split needs at least one positive weight")
    return [total * x / sum(w) for x in w]


class BudgetAccountant:
    """Sequential composition: the ε (and δ) of the steps add up, and may not exceed the totals."""

    def __init__(self, epsilon, delta=Fraction(0)):
        self.total = exact(epsilon, "ε")
        self.total_delta = exact(delta, "δ")
        self.steps: list[tuple[str, Fraction, Fraction]] = []

    @property
    def spent(self) -> Fraction:
        return sum((s[1] for s in self.steps), Fraction(0))

    @property
    def spent_delta(self) -> Fraction:
        return sum((s[2] for s in self.steps), Fraction(0))

    @property
    def remaining(self) -> Fraction:
        return self.total - self.spent

    def check(self, epsilon, delta=Fraction(0)) -> None:
        eps, dlt = exact(epsilon, "ε"), exact(delta, "δ")
        if self.spent + eps > self.total or self.spent_delta + dlt > self.total_delta:
            raise BudgetError(f"step needs ε = {float(eps):.6g}, δ = {float(dlt):.3g} but only "
                              f"ε = {float(self.remaining):.6g}, δ = {float(self.total_delta - self.spent_delta):.3g}"
                              f" of this release's budget is left")

    def spend(self, epsilon, delta=Fraction(0), what: str = "") -> Fraction:
        """Record a step (after checking it fits); returns its ε as a Fraction for the sampler."""
        self.check(epsilon, delta)
        eps, dlt = exact(epsilon, "ε"), exact(delta, "δ")
        self.steps.append((what, eps, dlt))
        return eps

    def spend_rest(self, what: str = "") -> Fraction:
        """Spend all that is left (typically the last step), so nothing is wasted and nothing overdrawn."""
        return self.spend(self.remaining, self.total_delta - self.spent_delta, what)
