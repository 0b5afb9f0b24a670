"""Re-identification risk of a release whose rows fall into equivalence classes of known sizes.

Prosecutor model: the attacker knows the target is in the release, so the risk of a record is 1/|its class|.
Journalist model: the attacker links from a population table; the risk of a class is 1/(number of population
records matching its published values). With the original table as population (nothing better known) and
non-overlapping classes this equals the prosecutor risk; overlapping published regions (relaxed Mondrian,
grid cells shared by classes) lower it.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np
import pandas as pd


def size_distribution(sizes: np.ndarray) -> pd.DataFrame:
    """Class size -> number of classes and of records with it (for the histogram in results)."""
    sizes = np.asarray(sizes, dtype=np.int64)
    values, counts = np.unique(sizes, return_counts=True)
    return pd.DataFrame({"class size": values, "classes": counts, "records": values * counts})


def prosecutor_risk(sizes: np.ndarray) -> tuple[float, float]:
    """(highest, average over records) prosecutor risk; the average is classes / records."""
    sizes = np.asarray(sizes, dtype=float)
    if sizes.size == 0:
        return 0.0, 0.0
    return float(1.0 / sizes.min()), float(sizes.size / sizes.sum())


def records_at_risk(sizes: np.ndarray, threshold: float = 0.1) -> float:
    """Share of records whose prosecutor risk 1/|class| exceeds `threshold` (0.1: classes under 10 rows)."""
    sizes = np.asarray(sizes, dtype=float)
    if sizes.size == 0:
        return 0.0
    return float(sizes[1.0 / sizes > threshold].sum() / sizes.sum())


GROUPS = "groups"
HIGHEST_RISK = "highest re-identification risk %"
AVERAGE_RISK = "average re-identification risk %"
RECORDS_AT_RISK = "share of records with risk above 10 %"


def smallest_group_name(persons: bool) -> str:
    """The smallest group's figure says what it counts: persons (a person column) or rows."""
    return f"smallest group ({'persons' if persons else 'rows'})"


def group_figures(sizes: np.ndarray | None, persons: bool = False) -> dict[str, float]:
    """The one source of a release's group and risk figures, each under its one name (the glossary's), for the
    custodian record, `ppdp run`, simulations and the window alike. `sizes`: the released groups' sizes, in
    persons when `persons`; suppressed rows are no group. Empty when there are no groups (counts, DP, synthetic)."""
    if sizes is None or np.asarray(sizes).size == 0:
        return {}
    sizes = np.asarray(sizes)
    highest, average = prosecutor_risk(sizes)
    return {smallest_group_name(persons): float(sizes.min()), GROUPS: float(sizes.size),
            HIGHEST_RISK: 100 * highest, AVERAGE_RISK: 100 * average,
            RECORDS_AT_RISK: 100 * records_at_risk(sizes, 0.1)}


def journalist_risk(table: pd.DataFrame, intervals: Mapping, population: Mapping[str, np.ndarray],
                    chunk: int = 2_000_000) -> tuple[float, float]:
    """(highest, average over released records) journalist risk against a population.

    `population[qi]` holds each population record's value in loss units (leaf position or number); a released
    class matches a population record when every QI value lies inside the published bounds. Work is
    classes x population, done in chunks; meant for tables up to some 10^5 rows.
    """
    qis = list(intervals)
    keys = pd.DataFrame({q: table[q].astype(str).to_numpy() for q in qis})
    groups = keys.drop_duplicates().reset_index(drop=True)
    row_group = keys.merge(groups.reset_index(), on=qis, how="left")["index"].to_numpy()
    lo = np.column_stack([groups[q].map(lambda s, q=q: intervals[q][s][0]).to_numpy(float) for q in qis])
    hi = np.column_stack([groups[q].map(lambda s, q=q: intervals[q][s][1]).to_numpy(float) for q in qis])
    pop = np.column_stack([np.asarray(population[q], dtype=float) for q in qis])
    matches = np.zeros(len(groups), dtype=np.int64)
    step = max(1, chunk // max(1, len(pop) * len(qis)))
    for start in range(0, len(groups), step):
        sl = slice(start, start + step)
        inside = np.ones((lo[sl].shape[0], len(pop)), dtype=bool)
        for j in range(len(qis)):
            inside &= (pop[None, :, j] >= lo[sl, j, None]) & (pop[None, :, j] <= hi[sl, j, None])
        matches[sl] = inside.sum(axis=1)
    risk = 1.0 / np.maximum(matches, 1)
    return float(risk.max()), float(risk[row_group].mean())
