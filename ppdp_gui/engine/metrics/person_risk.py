"""Prosecutor risk counted per person: what a patient with several rows faces, for the dossier's initial and
residual risk.

With a person column (`Role.PERSON`) a group of k rows may hold fewer than k patients; the chance of picking out a
patient of the group is one over the number of *distinct persons* in it, and a patient's risk is the largest over
the groups their rows fall in (whoever knows one of the patient's rows faces that row's group). The figures are
then over patients: the highest risk, the average over patients, the share of patients above a cut. Without
person ids every row is its own unit (one over the group's rows, averaged over rows).

The record's other risk figures (metrics/risk.py `group_figures`) count a patient once in each group their rows
fall in; these count each patient once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class UnitRisk:
    units: int  # persons (or rows)
    classes: int
    highest: float  # 0..1
    average: float
    at_risk: float  # share of units whose risk is above `threshold`
    threshold: float


def unit_risk(group: np.ndarray, persons: np.ndarray | None = None, threshold: float = 0.1) -> UnitRisk:
    """Risk per person of rows in groups `group` (integer ids, one per row) with person ids `persons` (None: per
    row)."""
    group = np.asarray(group)
    if group.size == 0:
        return UnitRisk(0, 0, 0.0, 0.0, 0.0, threshold)
    codes, _ = pd.factorize(group)
    if persons is None:
        sizes = np.bincount(codes)
        risk = 1.0 / sizes[codes]
        return UnitRisk(int(risk.size), int(sizes.size), float(risk.max()), float(risk.mean()),
                        float((risk > threshold).mean()), threshold)
    who, _ = pd.factorize(pd.Series(np.asarray(persons)).astype(str))
    pairs = pd.DataFrame({"c": codes, "p": who}).drop_duplicates()
    in_group = np.bincount(pairs["c"].to_numpy())
    per_pair = 1.0 / in_group[pairs["c"].to_numpy()]
    per_person = pd.Series(per_pair).groupby(pairs["p"].to_numpy(), sort=False).max().to_numpy()
    return UnitRisk(int(per_person.size), int((in_group > 0).sum()), float(per_person.max()),
                    float(per_person.mean()), float((per_person > threshold).mean()), threshold)


def unit_risk_figures(risk: UnitRisk) -> dict[str, float]:
    """The figures the custodian record keeps of a release's risk per patient (percentages; its cut is 10 %). The
    highest is not among them: a patient's highest risk is the smallest group's, which `group_figures` already
    gives, counted in persons (one figure, one name)."""
    return {"patients in the release": float(risk.units),
            "average re-identification risk per patient %": 100 * risk.average,
            "share of patients with risk above 10 %": 100 * risk.at_risk}
