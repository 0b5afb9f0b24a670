"""Does a taxonomy fit a column? Values in the data but not in the tree, and leaves of the tree never used."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from ppdp_gui.engine.taxonomy.tree import Taxonomy


@dataclass(frozen=True)
class Coverage:
    """`missing` must be fixed before the taxonomy can be used; `unused` is harmless (and often wanted: a public
    domain larger than the data). `missing_rows` counts the rows whose value is missing from the tree."""

    missing: list[str]
    unused: list[str]
    missing_rows: int = 0
    na_rows: int = 0
    counts: dict[str, int] = field(default_factory=dict, repr=False)

    @property
    def ok(self) -> bool:
        return not self.missing


def _order(values) -> list[str]:
    """Numbers in numeric order, otherwise text order."""
    values = list(values)
    nums = pd.to_numeric(pd.Series(values, dtype=object), errors="coerce")
    if values and nums.notna().all():
        return [v for _, v in sorted(zip(nums, values))]
    return sorted(values)


def check_coverage(tax: Taxonomy, series: pd.Series) -> Coverage:
    """Compare the column's distinct values (as text, the way the tree spells them) with the tree's leaves.
    Missing values (NA) are counted apart: they are a missing-value policy question, not a taxonomy one."""
    series = pd.Series(series)
    na = series.isna()
    counts = series[~na].astype(str).value_counts(sort=False)
    leaves = tax.leaf_values()
    leaf_set = set(leaves)
    in_data = set(counts.index)
    missing = _order(v for v in counts.index if v not in leaf_set)
    unused = [v for v in leaves if v not in in_data]
    missing_rows = int(counts[missing].sum()) if missing else 0
    return Coverage(missing, unused, missing_rows, int(na.sum()), {str(k): int(v) for k, v in counts.items()})
