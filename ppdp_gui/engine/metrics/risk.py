"""Re-identification risk of a release whose rows fall into equivalence classes of known sizes, and the one
source of a release's group and risk figures (`group_figures`).

Prosecutor model: the attacker knows the target is in the release, so the risk of a record is 1/|its class|.
The other attacker models and population uniqueness, for the input and a release side by side, are in
risk_models.py.
"""

from __future__ import annotations

import numpy as np


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
