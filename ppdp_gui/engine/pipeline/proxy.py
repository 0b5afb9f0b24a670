"""What a simulation (and the advice drawn from it) runs on, so that tuning does not leak.

A value of h or ε chosen by simulating on the private table is itself a release: the published table then depends
on the records through the choice, and no ε accounts for it. The advice therefore runs on a stand-in:

- DP_COPY: a synthetic copy of the table released by the Marginal synthesizer under a small ε (PROXY_EPSILON by
  default), planned and charged like any release — reserved in the budget ledger before the copy is drawn, the
  charge shown before running. Everything after reads only the copy (post-processing), so the advice costs
  exactly that ε;
- PUBLIC: a public table of the same columns the custodian gives (last year's published extract, a public
  sample): nothing charged;
- OWN: the private table itself, as before: nothing charged but nothing accounted either — the window and the
  CLI say that a value chosen from it is itself a release.

The copy keeps the columns a release may contain (never the identifiers or the person column) with the private
table's specs (kinds, roles, taxonomies, public domains), so every mechanism sees the same schema.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Iterator

from ppdp_gui.engine.data.schema import Dataset, SourceInfo
from ppdp_gui.engine.errors import ParameterError
from ppdp_gui.engine.mechanisms.base import Progress

DP_COPY, PUBLIC, OWN = "DP copy", "public table", "your own table"
BASES = (DP_COPY, PUBLIC, OWN)
PROXY_EPSILON = Fraction(1, 10)
SYNTHESIZER = "Marginal synthesizer"


@dataclass(frozen=True)
class Basis:
    """What a simulation ran on, what it cost (ε charged to the ledger) and the sentence that says both."""

    kind: str
    epsilon: Fraction = Fraction(0)
    words: str = ""
    ledger_entry: int | None = None

    @property
    def accounted(self) -> bool:
        """True when a value advised from this simulation may be released without a hidden cost."""
        return self.kind in (DP_COPY, PUBLIC)


def default_basis(mechanism: str, public_table: bool = False) -> str:
    """What a simulation reads unless the custodian says otherwise, in the window and in `ppdp sweep` alike: a
    public table when one is given; for an ε-DP mechanism a DP copy (its ε would otherwise be chosen from the
    patients, unaccounted); for a syntactic one (k-anonymity …, no ε to protect) the custodian's own table."""
    from ppdp_gui.engine.mechanisms import registry
    if public_table:
        return PUBLIC
    try:
        dp = str(getattr(registry.get(mechanism), "guarantee", "")).startswith("ε-DP")
    except Exception:  # noqa: BLE001 - an unknown name is reported where the mechanism is planned
        dp = False
    return DP_COPY if dp else OWN


def cost_words(kind: str, epsilon=PROXY_EPSILON) -> str:
    """The sentence shown before a simulation runs: what it will run on and what that costs."""
    if kind == DP_COPY:
        return (f"The simulation runs on a synthetic copy of your table made by the {SYNTHESIZER} with "
                f"ε = {float(epsilon):g}. That ε is charged to the budget ledger of this table before the copy is "
                "drawn (in the window: when you press Run simulation); the advice then reads only the copy, so it "
                "costs nothing more.")
    if kind == PUBLIC:
        return ("The simulation runs on the public table you gave (same columns): nothing is charged, and the "
                "advice says nothing about your patients.")
    return ("The simulation runs on your own table: nothing is charged, but a value chosen from it depends on your "
            "patients and is not accounted for by any ε. Use a DP copy or a public table for advice you follow.")


def proxy_dataset(data: Dataset, frame, origin: str) -> Dataset:
    """`frame` (a copy's or a public table's rows) under `data`'s specs for the columns a release may contain."""
    keep = [s for s in data.schema if not s.role.never_released]
    missing = [s.name for s in keep if s.name not in frame.columns]
    if missing:
        raise ParameterError(f"the {origin} lacks column(s) {', '.join(map(repr, missing))} of your table: the "
                             "simulation needs the same columns")
    names = [s.name for s in keep]
    return Dataset(frame[names].reset_index(drop=True), tuple(keep), source=SourceInfo(path=f"({origin})"))


def copy_plan(data: Dataset, epsilon=PROXY_EPSILON, ledger=None):
    """The plan of the DP copy (the Marginal synthesizer on every column a release may contain): its problems
    (a column without a public domain, the budget left) and its cost, shown before anything is charged."""
    from ppdp_gui.engine.pipeline.plan import plan
    params = {"epsilon": float(epsilon)}
    if data.class_column is None:
        params["structure"] = "tree"
    return plan(data, SYNTHESIZER, params, ledger=ledger)


def dp_copy(data: Dataset, epsilon=PROXY_EPSILON, *, ledger, seed: int | None = None
            ) -> Iterator[Progress | tuple[Dataset, Basis]]:
    """Yield Progress, then (the copy, its Basis). The ε is reserved in `ledger` before the copy is drawn (as for
    every release: run_release); without a ledger nothing may be charged, so nothing is made."""
    if ledger is None:
        raise ParameterError("a DP copy is charged to the budget ledger, and none is open: open the ledger, or "
                             "simulate on a public table")
    planned = copy_plan(data, epsilon, ledger)
    if planned.errors:
        raise ParameterError("A DP copy of your table cannot be made: "
                             + "; ".join(p.message.rstrip(".") for p in planned.errors)
                             + ". Fix that in the Data step, or give a public table of the same columns.")
    from ppdp_gui.engine.pipeline.release import run_release
    published = None
    for item in run_release(planned, ledger=ledger, seed=seed, write_record=False):
        if isinstance(item, Progress):
            yield Progress(item.fraction, "DP copy: " + item.message)
        else:
            published = item
    entry = published.ledger_entry
    eps = Fraction(published.cost.epsilon)
    basis = Basis(DP_COPY, eps, (f"Simulated on a synthetic copy of your table ({SYNTHESIZER}, ε = {float(eps):g}, "
                                 f"charged to the budget ledger{'' if entry is None else f' as entry {entry.id}'}); "
                                 "the advice read only the copy."), None if entry is None else entry.id)
    yield proxy_dataset(data, published.release.table, "DP copy"), basis


def public_copy(data: Dataset, public: Dataset) -> tuple[Dataset, Basis]:
    """A public table of the same columns under the private table's specs; nothing charged."""
    return proxy_dataset(data, public.frame, "public table"), Basis(
        PUBLIC, Fraction(0), "Simulated on the public table you gave: nothing charged.")


def own_table() -> Basis:
    return Basis(OWN, Fraction(0), "Simulated on your own table: not charged, but a value chosen from it is "
                                   "itself a release that no ε accounts for.")
