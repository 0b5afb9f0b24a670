"""What the k-anonymity mechanisms share: the k and grid parameters, the checks on quasi-identifiers, the
sensitive column for l-diversity, and the released frame (identifiers dropped, QIs replaced by their labels).

Mondrian, TDS, global recoding and fragmentation all publish through `release_frame`, so a release of any of them
has the same columns in the same order as the input minus its identifiers.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ppdp_gui.engine.bigdata.source import has_missing
from ppdp_gui.engine.data.schema import Dataset, Role
from ppdp_gui.engine.errors import TaxonomyError
from ppdp_gui.engine.mechanisms.base import ParamSpec, Problem, ReleaseShape

K_PARAM = ParamSpec("k", "k (smallest group size)", "int", default=10, low=2, high=1000,
                    help="Every published combination of quasi-identifier values is shared by at least k rows.",
                    formula="every group of rows with the same published quasi-identifiers has ≥ k rows: "
                            "highest re-identification risk (someone known to be in the table) ≤ 1/k",
                    more_private="higher")
GRID_PARAM = ParamSpec("grid_width", "Interval width for numbers without taxonomy", "float", default=0.0, low=0.0,
                       help="Numeric quasi-identifiers without a taxonomy are published as unions of intervals "
                            "[m·w, (m+1)·w). 0 = automatic: a round width of about a tenth of the column's range.")


def resolve_sensitive(data: Dataset, params: dict[str, Any]) -> str | None:
    """The sensitive column for l-diversity: the chosen one, else the only one the data has, else None."""
    if not params.get("l"):
        return None
    chosen = params.get("sensitive")
    if chosen:
        return chosen
    sens = data.sensitive_columns
    return sens[0] if len(sens) == 1 else None


def kanon_problems(data: Dataset, k: int, grid_width: float) -> list[Problem]:
    """Checks shared by Mondrian and TDS: quasi-identifiers exist, have no gaps and fit their taxonomies."""
    problems: list[Problem] = []
    qis = data.quasi_identifiers
    if not qis:
        return [Problem("mark at least one column as a quasi-identifier (the columns an attacker could link on)")]
    if data.n_rows < k:
        problems.append(Problem(f"the table has {data.n_rows} rows, fewer than k = {k}", param="k"))
    for name in qis:
        spec = data.spec(name)
        col = data.frame[name]
        if has_missing(data, name):
            problems.append(Problem(f"quasi-identifier {name!r} has missing values; choose a missing-value policy",
                                    column=name))
            continue
        if spec.taxonomy is not None:
            try:
                from ppdp_gui.engine.bigdata.source import distinct_typed, is_large
                spec.taxonomy.node_codes(distinct_typed(data, name) if is_large(data) else col)
            except TaxonomyError as exc:
                problems.append(Problem(str(exc), column=name))
        elif spec.kind == "numeric":
            how = f"width {grid_width:g}" if grid_width > 0 else "an automatic round width"
            problems.append(Problem(f"{name!r} has no taxonomy: its ranges are snapped to intervals of {how} "
                                    f"(the automatic width is derived from the column's range)",
                                    level="warning", column=name))
    return problems


def passed_through(data: Dataset) -> list[str]:
    """The columns `release_frame` publishes as they are: everything but identifiers and quasi-identifiers."""
    return [c.name for c in data.schema if c.role not in (Role.IDENTIFIER, Role.QUASI_IDENTIFIER)]


def release_frame(data: Dataset, published: dict[str, pd.Categorical], order: np.ndarray) -> pd.DataFrame:
    """The table to export: identifiers dropped, QIs replaced by their published labels, rows in `order`."""
    cols = {}
    for spec in data.schema:
        if spec.role == Role.IDENTIFIER:
            continue
        if spec.name in published:
            cols[spec.name] = pd.Series(published[spec.name][order])
        else:
            cols[spec.name] = data.frame[spec.name].iloc[order].reset_index(drop=True)
    return pd.DataFrame(cols)


def n_published_classes(table: pd.DataFrame, qis: list[str]) -> int:
    """Distinct published QI combinations (partitions whose ranges snap to the same cells merge)."""
    key = np.zeros(len(table), dtype=np.int64)
    for q in qis:
        codes = table[q].cat.codes.to_numpy().astype(np.int64)
        key = key * (int(codes.max(initial=0)) + 1) + codes
        key = pd.factorize(key)[0].astype(np.int64)  # stay dense: no overflow however many QIs
    return int(key.max(initial=-1)) + 1


def kanon_shape(data: Dataset, k: int, extra: tuple[str, ...] = ()) -> ReleaseShape:
    """What a k-anonymity release of `data` holds: every column but the identifiers, one row per row."""
    qis = data.quasi_identifiers
    kept = tuple(c.name for c in data.schema if c.role != Role.IDENTIFIER)
    raw = [c for c in kept if c not in qis]
    return ReleaseShape(columns=kept, per_person=True, sentences=(
        f"One row per row of your table, in a shuffled order: {', '.join(qis) or 'the quasi-identifiers'} are "
        f"replaced by ranges or groups so that every combination is shared by at least {k} rows.",
        (f"{raw[0]} is published as it is." if len(raw) == 1 else
         f"{', '.join(raw)} are published as they are." if raw else
         "No other column is published."),) + extra)
