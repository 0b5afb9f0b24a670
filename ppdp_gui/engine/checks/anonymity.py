"""Recount k-anonymity and l-diversity (distinct, entropy, recursive) on a released table, by a path that shares no code with the mechanisms.

Deliberately plain: group the exported quasi-identifier columns as text (what a reader of the file sees) with
pandas, count rows, count distinct sensitive values or their entropy. If a mechanism has a bug, this disagrees.

With `persons` (the person id of every released row, taken from the source on the custodian's side: the person
column is never written) a group's size is its distinct persons, and for l-diversity a sensitive value counts the
distinct persons holding it in the group (a person with five rows of one diagnosis weighs as one). A person whose
rows fall into several groups counts in each: whoever knows one of that person's rows still finds it among the
rows of at least k persons.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class CheckResult:
    ok: bool
    min_class: int
    min_l: float
    message: str


def distinct_pairs(group: np.ndarray, persons: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct (group, person) pairs of the rows, as two arrays (group ids, person ids)."""
    pairs = pd.DataFrame({"g": np.asarray(group), "p": np.asarray(persons)}).drop_duplicates()
    return pairs["g"].to_numpy(), pairs["p"].to_numpy()


def check_release(table: pd.DataFrame, quasi_identifiers: list[str], k: int, *, sensitive: str | None = None,
                  l: int | None = None, diversity: str = "distinct", c: float | None = None,
                  persons: np.ndarray | None = None, person: str | None = None) -> CheckResult:
    """Whether every group of rows sharing the released QI values has >= k rows (and is l-diverse).

    Recursive (c, l)-diversity (Machanavajjhala et al.): with a group's value counts sorted r1 >= r2 >= ... >= rm,
    r1 < c (rl + ... + rm); a group with fewer than l distinct values fails. `min_l` is then the smallest
    c (rl + ... + rm) / r1 (above 1 when the group passes). `persons` (one id per row of `table`, the column named
    `person`): count distinct persons instead of rows (module docstring)."""
    missing = [c for c in list(quasi_identifiers) + ([sensitive] if sensitive else []) if c not in table.columns]
    if missing:
        return CheckResult(False, 0, 0.0, f"released table lacks column(s) {missing}")
    if len(table) == 0:
        return CheckResult(True, 0, 0.0, "empty release")
    as_text = pd.DataFrame({c: table[c].astype(str).to_numpy() for c in quasi_identifiers})
    if quasi_identifiers:
        group = as_text.groupby(list(quasi_identifiers), sort=False).ngroup().to_numpy()
    else:
        group = np.zeros(len(table), dtype=np.int64)
    if persons is not None and len(persons) != len(table):
        return CheckResult(False, 0, 0.0, f"the person ids of the released rows ({len(persons):,}) do not line up "
                                          f"with the {len(table):,} rows")
    counts = None
    if sensitive is not None and l is not None and l > 1:
        pairs = pd.DataFrame({"g": group, "s": table[sensitive].astype(str).to_numpy()})
        if persons is not None:  # each value once per person holding it in the group
            pairs["p"] = np.asarray(persons)
            pairs = pairs.drop_duplicates()
        counts = pairs.groupby(["g", "s"]).size()
    if persons is None:
        sizes = np.bincount(group)
    else:
        sizes = np.bincount(distinct_pairs(group, persons)[0])
    return check_counts(sizes, k, counts, sensitive=sensitive, l=l, diversity=diversity, c=c,
                        unit="rows" if persons is None else f"persons ({person or 'person column'})")


def check_counts(sizes: np.ndarray, k: int, counts: pd.Series | None = None, *, sensitive: str | None = None,
                 l: int | None = None, diversity: str = "distinct", c: float | None = None,
                 unit: str = "rows") -> CheckResult:
    """`check_release` from counts already made: the rows of every group (`sizes`) and, for l-diversity, the rows
    per (group "g", sensitive value "s") (`counts`, a Series on that index). A table too large for memory is
    recounted this way from a SQL GROUP BY on the written file (bigdata/recount.py)."""
    if len(sizes) == 0:
        return CheckResult(True, 0, 0.0, "empty release")
    min_class = int(sizes.min())
    problems = []
    if min_class < k:
        n_bad = int((sizes < k).sum())
        problems.append(f"{n_bad} group(s) have fewer than k = {k} {unit} (smallest {min_class})")
    min_l = float("inf")
    if sensitive is not None and l is not None and l > 1:
        if diversity == "distinct":
            per_group = counts.groupby(level="g").size()
            min_l = float(per_group.min())
            if min_l < l:
                problems.append(f"a group has only {int(min_l)} distinct {sensitive!r} value(s), fewer than l = {l}")
        elif diversity == "entropy":
            totals = counts.groupby(level="g").transform("sum")
            p = counts / totals
            entropy = (-(p * np.log(p))).groupby(level="g").sum()
            min_l = float(np.exp(entropy.min()))
            if entropy.min() < math.log(l) - 1e-9:
                problems.append(f"a group's entropy of {sensitive!r} is below log(l) (effective l {min_l:.3g} < {l})")
        elif diversity == "recursive":
            if c is None or not c > 0:
                problems.append("recursive (c, l)-diversity needs c > 0")
            else:
                ranked = counts.sort_values(ascending=False, kind="stable")
                rank = ranked.groupby(level="g").cumcount().to_numpy() + 1  # 1 = most frequent, same order
                r1 = counts.groupby(level="g").max()
                tail = ranked[rank >= l].groupby(level="g").sum().reindex(r1.index, fill_value=0)
                margin = c * tail.to_numpy(dtype=float) / r1.to_numpy(dtype=float)
                min_l = float(margin.min())
                if not (margin > 1).all():
                    n_bad = int((margin <= 1).sum())
                    problems.append(f"{n_bad} group(s) are not recursive ({c:g}, {l})-diverse on {sensitive!r}: "
                                    f"the most frequent value is not below c times the rest from the {l}th on")
        else:
            problems.append(f"unknown diversity {diversity!r}")
    if problems:
        return CheckResult(False, min_class, min_l, "; ".join(problems))
    msg = f"k-anonymous: every group has at least {k} {unit} (smallest {min_class})"
    if sensitive is not None and l is not None and l > 1:
        kind = f"recursive ({c:g}, {l})" if diversity == "recursive" else f"{diversity} {l}"
        msg += f"; {kind}-diverse on {sensitive!r}"
    return CheckResult(True, min_class, min_l, msg)
