"""The k-anonymity family's share of the mechanism contract: its guarantee is declared before the run.

Mondrian, TDS, global and local recoding and fragmentation promise syntactic claims (k-anonymity, l-diversity,
t-closeness, risk bounds, suppression: engine/claims.py) that follow from the resolved parameters and public facts
of the table (its quasi-identifiers, sensitive and person columns, taxonomies) — not from the run. So they are made
once, before the run, by `declared_claims`; the plan's cost (the Run step's "Privacy:" line, `ppdp run`'s words)
reads k and l from those claims, and the release carries the same claim objects, which the checker recounts on the
written bytes. k then lives in one place, the claim, instead of the parameter, a claim made after the run and a
separately formatted cost.
"""

from __future__ import annotations

import weakref
from dataclasses import replace
from typing import Any

from ppdp_gui.engine.claims import MAIN_TABLE, KAnonymity, LDiversity
from ppdp_gui.engine.data.schema import Dataset
from ppdp_gui.engine.mechanisms.base import Mechanism, PrivacyCost


class KAnonMechanism(Mechanism):
    """A mechanism of the k-anonymity family: subclasses say their claims in `claims_for` (from resolved params
    and the table's public facts only); the plan and the run read them through `declared_claims`."""

    guarantee = "k-anonymity"

    def claims_for(self, data: Dataset, params: dict[str, Any]) -> tuple:  # pragma: no cover - abstract
        """The claims a run with resolved `params` on `data` makes; override. Must not read the values."""
        raise NotImplementedError

    def declared_claims(self, data: Dataset | None, params: dict[str, Any]) -> tuple:
        """The claims of a run with these resolved parameters on `data`, made once per plan: the plan shows them
        and the run releases these very objects (a new table or new parameters make them again)."""
        if data is None:
            return ()
        key = tuple(sorted(params.items()))
        made = self.__dict__.get("_declared")
        if made is None or made[0]() is not data or made[1] != key:
            made = (weakref.ref(data), key, tuple(self.claims_for(data, params)))
            self._declared = made
        return made[2]

    def declared_cost(self, data: Dataset | None, params: dict[str, Any]) -> PrivacyCost:
        """`cost` with k and l read from the declared claims on the main table (what the plan shows)."""
        cost = self.cost(params)
        if data is None:
            return cost
        claims = self.declared_claims(data, params)
        k = next((c.k for c in claims if isinstance(c, KAnonymity) and c.table == MAIN_TABLE), None)
        l = next((c.l for c in claims if isinstance(c, LDiversity) and c.table == MAIN_TABLE), cost.l)
        return replace(cost, k=k, l=l)

    def __getstate__(self) -> dict:
        """Pickled for the worker without the caches (`_declared…`: they hold a weak reference to the table);
        made again there."""
        return {key: value for key, value in self.__dict__.items() if not key.startswith("_declared")}
