"""The value-mapping table for the governance: each column's original value → the value the release shows.

ARX's users ask for it to answer "what did 47677 become?" during a review. It undoes part of the
de-identification, so it is marked, in its first row and by the CLI and window, as custodian-only, never to
publish (like the custodian record).

What can be mapped value by value:
- a full-domain generalisation (global recoding: one level per column, `record.details.levels`): every value of the
  source to its ancestor at that level of the column's taxonomy (rows suppressed as '*' are said apart);
- keyed pseudonyms (with the project's key): every identifier to its pseudonym;
- Safe Harbor's rules (dates to year, 90 or older, ZIP3): stated per column as the rule applied.
A release whose value depends on the group a row fell in (Mondrian, local recoding, TDS), on noise (DP) or on a
model (synthetic) has no value-to-value mapping; the table says so for its columns.
"""

from __future__ import annotations

import pandas as pd

from ppdp_gui.engine.persistence.release_context import of
from ppdp_gui.engine.governance.techniques import released_columns

HEADER = ("column", "original value", "released value", "how")
BANNER = ("(this table)", "custodian only", "NEVER PUBLISH",
          "it maps released values back to the source: keep it with the custodian record")


def value_map(record: dict, recipe) -> pd.DataFrame:
    rows: list[tuple[str, str, str, str]] = [BANNER]
    details = record.get("details") or {}
    ctx = of(recipe)
    kept = set(released_columns(record))
    levels = details.get("levels") or {}
    from ppdp_gui.engine.governance.pseudonyms import treated_in
    pseudo = treated_in(record)[0]  # {released column: identifier}
    data = None
    if levels or pseudo:
        from ppdp_gui.engine.governance.person_risk import source_as_released
        data = source_as_released(recipe, record)
    for col, level in levels.items():
        tax = data.spec(col).taxonomy if data is not None and col in data.frame.columns else None
        if tax is None:
            rows.append((col, "", "", f"level {level}: no taxonomy to map with"))
            continue
        values = pd.Series(pd.unique(data.frame[col].dropna().astype(str)), dtype=object)
        general = tax.generalise(values, tax.nodes_at_level(int(level)))
        marker = details.get("suppression marker") or "*"
        how = f"generalised to level {level} of its taxonomy (rows suppressed show '{marker}' instead)"
        rows += [(col, o, str(g), how) for o, g in zip(values, general.astype(str))]
    if pseudo and data is not None:
        from ppdp_gui.engine.errors import PpdpError
        from ppdp_gui.engine.governance.pseudonyms import SUFFIX, project_key, pseudonyms
        ledger = (record.get("ledger") or {}).get("path")
        for col in pseudo.values():
            try:
                key = project_key(ledger, ctx.project_id, create=False)
            except PpdpError as exc:
                rows.append((col, "", "", f"pseudonyms not mapped: {exc}"))
                continue
            values = pd.Series(pd.unique(data.frame[col].dropna().astype(str)), dtype=object)
            rows += [(col, o, p, f"keyed pseudonym, released as {col}{SUFFIX}")
                     for o, p in zip(values, pseudonyms(values, key).astype(str))]
    for col, rule in (ctx.safe_harbor.get("columns") or {}).items():
        rows.append((col, "(every value)", "(by rule)", f"Safe Harbor: {rule}"))
    mapped = {r[0] for r in rows}
    for col in sorted(kept - mapped):
        rows.append((col, "", "", _why_not(record, col)))
    return pd.DataFrame(rows, columns=list(HEADER))


def _why_not(record: dict, col: str) -> str:
    from ppdp_gui.engine.governance.techniques import is_dp
    mech = str(record.get("mechanism") or "").lower()
    qis = set((record.get("details") or {}).get("quasi_identifiers") or [])
    if is_dp(record):
        return "no value-to-value mapping: values and counts come from random noise"
    if "krimp" in mech or "synthetic" in mech:
        return "no value-to-value mapping: rows are generated from a model"
    if col in qis:
        return "no value-to-value mapping: the released value depends on the group the row fell in"
    return "published unchanged"
