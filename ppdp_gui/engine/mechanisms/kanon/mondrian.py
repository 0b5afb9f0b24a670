"""Mondrian multidimensional k-anonymity (LeFevre et al. 2006) as a mechanism, with optional l-diversity.

Rows are partitioned by `mondrian_core.partition` on coded quasi-identifiers (`qi_coding`), then every class
publishes, per QI, the smallest taxonomy node or the union of public grid cells covering its values: a group's raw
minimum or maximum is never shown. Identifier columns are dropped; sensitive, class and insensitive columns pass
through unchanged. Rows are returned grouped by class, in random order inside a class, so the release's row order
says nothing about the original's.
"""

from __future__ import annotations

from typing import Any, Iterator

import numpy as np
import pandas as pd

from ppdp_gui.engine.bigdata.large_dataset import is_large

from ppdp_gui.engine.claims import KAnonymity, LDiversity
from ppdp_gui.engine.data.schema import Dataset, Role
from ppdp_gui.engine.mechanisms.base import (ParamSpec, PrivacyCost, Problem, Progress, Release,
                                             ReleaseShape)
from ppdp_gui.engine.mechanisms.kanon.common import (GRID_PARAM, K_PARAM, kanon_problems, kanon_shape, n_published_classes,
                                                    passed_through, release_frame,
                                                    unit_note, resolve_sensitive)
from ppdp_gui.engine.mechanisms.kanon import common
from ppdp_gui.engine.mechanisms.kanon.family import KAnonMechanism
from ppdp_gui.engine.mechanisms.kanon.mondrian_core import is_l_diverse, partition
from ppdp_gui.engine.data.qi_coding import code_quasi_identifier, publish_groups


class Mondrian(KAnonMechanism):
    name = "Mondrian"
    summary = ("Groups similar records into boxes of at least k and publishes each box's ranges/groups, so any "
               "record matches at least k-1 others on the quasi-identifiers.")
    params = (
        K_PARAM,
        ParamSpec("mode", "Partitioning", "choice", default="strict", choices=("strict", "relaxed"),
                  help="strict: equal values stay together (boxes never overlap); relaxed: ties may be split, "
                       "usually smaller boxes."),
        ParamSpec("l", "l (sensitive values per group, 0 = off)", "int", default=0, low=0, high=100, special=(0, "off"),
                  help="Also require l well-represented sensitive values in every group (l-diversity).",
                  formula="distinct: ≥ l different sensitive values per group; entropy: entropy of the group's "
                          "sensitive values ≥ log(l)", more_private="higher"),
        ParamSpec("diversity", "l-diversity kind", "choice", default="distinct", choices=("distinct", "entropy"),
                  help="distinct: at least l different values; entropy: entropy of the values at least log(l)."),
        ParamSpec("sensitive", "Sensitive column", "column", default=None, roles=(Role.SENSITIVE,), optional=True,
                  help="The column l-diversity protects (needed when l > 0 and the data has several)."),
        GRID_PARAM,
    )

    large_tables = True  # strict, k only: the distinct QI tuples weighted by their counts (kanon/mondrian_sql.py)

    def check(self, data: Dataset, params: dict[str, Any]) -> list[Problem]:
        problems = kanon_problems(data, params["k"], params["grid_width"], blanks_ok=True)  # blanks: "(missing)"
        if is_large(data) and (params["mode"] != "strict" or (params["l"] and params["l"] > 1)):
            problems.append(Problem("a table read by the large-table engine is partitioned in strict mode with k "
                                    "only (relaxed mode and l-diversity need the in-memory engine)", param="mode"))
        if params["l"] and params["l"] > 1:
            sens = resolve_sensitive(data, params)
            if sens is None:
                problems.append(Problem("choose the sensitive column for l-diversity", param="sensitive"))
            elif sens in data.quasi_identifiers:
                problems.append(Problem(f"{sens!r} is a quasi-identifier; it cannot also be the sensitive column",
                                        param="sensitive"))
            elif not is_l_diverse(data.frame[sens].astype(str).to_numpy(), params["l"], params["diversity"],
                                  common.person_codes(data)):
                problems.append(Problem(f"the whole table is not {params['l']}-diverse on {sens!r}; lower l",
                                        param="l"))
        return problems

    def describe_release(self, data: Dataset, params: dict[str, Any]) -> ReleaseShape:
        sens = resolve_sensitive(data, params) if params.get("l", 0) > 1 else None
        extra = (f"Every group also holds at least {params['l']} different values of {sens}.",) if sens else ()
        return kanon_shape(data, params["k"], extra)

    def published_columns(self, data: Dataset, params: dict[str, Any]) -> list[str]:
        """The columns published as they are (the identifying-column check looks at these)."""
        return passed_through(data)

    def cost(self, params: dict[str, Any]) -> PrivacyCost:
        p = params
        l = p["l"] if p["l"] and p["l"] > 1 else None
        note = f"{p['diversity']} l-diversity" if l else ""
        return PrivacyCost(k=p["k"], l=l, note=note)

    def claims_for(self, data: Dataset, params: dict[str, Any]) -> tuple:
        names = tuple(data.quasi_identifiers)
        person = data.person_column
        l = params["l"]
        sens = resolve_sensitive(data, params)
        claims = [KAnonymity(params["k"], names, person=person)]
        if l and l > 1 and sens:
            claims.append(LDiversity(l, params["diversity"], sens, names, person=person))
        return tuple(claims)

    def _run(self, data: Dataset, *, rng, k: int, mode: str, l: int, diversity: str, sensitive: str | None,
             grid_width: float) -> Iterator[Progress | Release]:
        yield Progress(0.05, "coding quasi-identifiers")
        params = {"k": k, "mode": mode, "l": l, "diversity": diversity, "sensitive": sensitive,
                  "grid_width": grid_width}
        declared, cost = self.declared_claims(data, params), self.declared_cost(data, params)
        if is_large(data):
            yield self._release_large(data, k, mode, grid_width, declared, cost)
            return
        qis = [code_quasi_identifier(data, name, grid_width) for name in data.quasi_identifiers]
        sens = resolve_sensitive(data, {"l": l, "sensitive": sensitive})
        use_l = bool(l and l > 1 and sens)
        yield Progress(0.2, "partitioning")
        person = data.person_column
        labels = partition(np.column_stack([q.codes for q in qis]), k, mode=mode,
                           sensitive=data.frame[sens].astype(str).to_numpy() if use_l else None,
                           l=l if use_l else None, diversity=diversity, hierarchies=[q.hierarchy for q in qis],
                           persons=common.person_codes(data))
        yield Progress(0.8, "generalising")
        published, intervals, sizes = publish_groups(qis, labels)
        perm = rng.permutation(len(labels))
        order = perm[np.argsort(labels[perm], kind="stable")]
        table = release_frame(data, published, order)
        names = [q.name for q in qis]
        note = {"quasi_identifiers": names, "k": k, **unit_note(person), "l": l if use_l else None,
                "sensitive": sens if use_l else None, "diversity": diversity if use_l else None, "mode": mode,
                "generalisation": {q.name: q.how for q in qis},
                "groups": n_published_classes(table, names)}
        record = {**note, "n_partitions": int(sizes.size), "intervals": intervals,
                  "domains": {q.name: list(q.domain) for q in qis}}
        yield Release(mechanism=self.name, table=table, cost=cost,
                      params={"k": k, "mode": mode, "l": l, "diversity": diversity, "sensitive": sens,
                              "grid_width": grid_width}, claims=declared, note=note, record=record,
                      source_rows={"table": order})

    def _release_large(self, data: Dataset, k: int, mode: str, grid_width: float, claims: tuple,
                       cost: PrivacyCost) -> Release:
        """Strict Mondrian on the weighted QI tuples of a large table; the rows are a SQL query."""
        from ppdp_gui.engine.mechanisms.kanon.mondrian_sql import run_large
        qis, published, intervals, sizes, records, figures = run_large(data, k, grid_width)
        names = [q.name for q in qis]
        table = pd.DataFrame({c: pd.Series([], dtype=object) for c in records.columns})
        note = {"quasi_identifiers": names, "k": k, **unit_note(data.person_column), "l": None, "sensitive": None,
                "diversity": None,
                "mode": mode, "generalisation": {q.name: q.how for q in qis}, "groups": n_published_classes(pd.DataFrame(published), names)}
        record = {**note, "n_partitions": int(sizes.size), "intervals": intervals,
                  "domains": {q.name: list(q.domain) for q in qis}, "figures": figures}
        return Release(mechanism=self.name, table=table, cost=cost,
                       params={"k": k, "mode": mode, "l": 0, "diversity": "distinct", "sensitive": None,
                               "grid_width": grid_width}, claims=claims, note=note,
                       record=record, records=records)

    def measures(self, release: Release, train: Dataset, test: Dataset | None) -> dict[str, float]:
        if release.records is not None:  # a large table: figures from the weighted tuples
            return dict(release.record["figures"])
        from ppdp_gui.engine.metrics.information_loss import kanon_measures
        return kanon_measures(release, train, test)
