"""The ledger as tables: one row per table (dataset) and one per release — for the window's ledger view, the
CLI's `ppdp ledger --csv`, and the custodian's own spreadsheets.

Budgets are per *group*: a near copy of a table shares its budget (see ledger.py), so the dataset rows say which
group they belong to, and the group rows say how much of its cap is spent.

A group whose releases include one that is ε-DP only for one record *replaced* (DP-PCA, the record baselines) has
its ε in replace-one units (add/remove releases count twice; see ledger_types.combined_total): the column "ε counted
for" says which, in words, and each release row says the relation its own ε is stated for.
"""

from __future__ import annotations

from fractions import Fraction

import pandas as pd

from ppdp_gui.engine.privacy.ledger_types import REPLACE, UNIT_WORDS

#: what a group's ε total is stated for, in the tables' words
COUNTED_FOR = {"add/remove": "one record added or removed",
               REPLACE: "one record replaced (add/remove releases count twice)"}


def _f(value: Fraction | None) -> float | None:
    return None if value is None else float(value)


def dataset_table(ledger) -> pd.DataFrame:
    """One row per known table: label, fingerprint, its budget group, near copy / separate declarations,
    ε it spent itself, and its group's total and cap."""
    rows = []
    for ds in ledger.datasets():
        rows.append({
            "table": ds.label or "(no label)", "fingerprint": ds.fingerprint, "budget group": ds.budget,
            "near copy of": ds.near_copy_of or "", "rows shared %": None if ds.similarity is None
            else round(100 * ds.similarity, 1),
            "declared separate from": ds.separate_from or "", "declared by": ds.separate_by or "",
            "declared on": ds.separate_at or "",
            "releases (this table)": ds.own_releases, "ε spent (this table)": _f(ds.own_spent),
            "releases (group)": ds.releases, "ε spent (group)": _f(ds.spent), "ε cap (group)": _f(ds.cap),
            "ε left (group)": _f(ds.remaining), "first seen": ds.created, "last release": ds.last_release or "",
            "ε counted for (group)": COUNTED_FOR[ds.units]})
    return pd.DataFrame(rows, columns=["table", "fingerprint", "budget group", "near copy of", "rows shared %",
                                       "declared separate from", "declared by", "declared on",
                                       "releases (this table)", "ε spent (this table)", "releases (group)",
                                       "ε spent (group)", "ε cap (group)", "ε left (group)", "first seen",
                                       "last release", "ε counted for (group)"])


def group_table(ledger) -> pd.DataFrame:
    """One row per budget group: its tables, ε spent against its cap (what the ledger view's chart shows)."""
    data = dataset_table(ledger)
    if data.empty:
        return pd.DataFrame(columns=["budget group", "tables", "labels", "releases", "ε spent", "ε cap", "ε left",
                                     "ε counted for"])
    out = data.groupby("budget group", sort=False).agg(
        tables=("fingerprint", "size"), labels=("table", lambda s: "; ".join(dict.fromkeys(s))),
        releases=("releases (group)", "first"), spent=("ε spent (group)", "first"),
        cap=("ε cap (group)", "first"), left=("ε left (group)", "first"),
        units=("ε counted for (group)", "first")).reset_index()
    return out.rename(columns={"spent": "ε spent", "cap": "ε cap", "left": "ε left", "units": "ε counted for"})


def entry_table(ledger) -> pd.DataFrame:
    """One row per release charged: when, which mechanism, ε and δ, which table and group, its release id and
    output hash (what links the ledger to a release note and a custodian record)."""
    labels = {ds.fingerprint: ds.label for ds in ledger.datasets()}
    rows = [{"entry": e.id, "created": e.created, "mechanism": e.mechanism, "ε": float(e.epsilon),
             "ε exact": str(e.epsilon), "δ": float(e.delta), "table": labels.get(e.fingerprint, ""),
             "fingerprint": e.fingerprint, "budget group": e.budget or e.fingerprint, "release id": e.release_id,
             "output sha256": e.output_hash or "", "completed": e.completed or "",
             "not ε-DP because": "; ".join(e.params.get("not ε-DP because", [])) if isinstance(e.params, dict)
             else "", "ε stated for": UNIT_WORDS[e.neighbouring].removeprefix("for ")} for e in ledger.entries()]
    return pd.DataFrame(rows, columns=["entry", "created", "mechanism", "ε", "ε exact", "δ", "table",
                                       "fingerprint", "budget group", "release id", "output sha256", "completed",
                                       "not ε-DP because", "ε stated for"])
