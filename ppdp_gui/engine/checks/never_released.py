"""The promise of `Role.never_released`, checked by the publish path itself rather than trusted to each mechanism.

`data/schema.py` promises that identifiers and the person column never leave the machine, whatever the mechanism.
Each mechanism drops them itself; this check is the net under those ten filters. The export calls it once, after
every claim has been recounted on the bytes written and before anything is renamed into place, on every table
the release writes (the main table and the extra ones, such as fragments). A released column is refused when

- its name is the name of an identifier or person column (compared as the file spells it: trimmed, case-folded,
  and also in the neutralised spelling the writer uses for a name starting with a formula character), or
- the release is record-level and its values name the persons one to one, row for row (a person column that a
  mechanism renamed or re-coded): the released rows' person ids are known to the publish path
  (`Release.source_rows`), so this costs one factorisation of each column. Only when persons have several rows
  and there are at least MIN_PERSONS_FOR_VALUES of them (else a column unique per row, or chance, would match).

Identifier values themselves are not kept by the publish path, so a renamed identifier column is not caught; the
name check and the mechanisms' own filters remain the defence there.
"""

from __future__ import annotations

from typing import Iterable, Mapping

import numpy as np
import pandas as pd

from ppdp_gui.engine.errors import CheckError

#: fewer persons than this and a column matching the person ids one to one may be chance
MIN_PERSONS_FOR_VALUES = 10


def _spelling(name) -> str:
    text = str(name).strip().casefold()
    return text[1:] if text[:1] == "'" else text  # the writer's neutralised spelling of '=x' is "'=x"


def never_released_columns(columns: Iterable) -> list[str]:
    """The names of the columns whose role is never released (identifiers and the person column)."""
    return [str(c.name) for c in columns if getattr(c.role, "never_released", False)]


def released_private_columns(tables: Mapping[str, pd.DataFrame], columns: Iterable,
                             person_ids: Mapping[str, np.ndarray] | None = None,
                             pseudonyms: Iterable[str] = ()) -> list[str]:
    """Plain descriptions of every identifier or person column found in `tables` (empty: none). `pseudonyms`:
    columns the release declares as keyed pseudonyms of a person (governance/pseudonyms.py, stated in the note):
    they follow the persons one to one by design, and their raw values are checked there."""
    declared = {_spelling(c) for c in pseudonyms}
    private = {_spelling(n): n for n in never_released_columns(columns)}
    found: list[str] = []
    for table_name, table in tables.items():
        for col in table.columns:
            hit = private.get(_spelling(col))
            if hit is not None:
                found.append(f"{table_name}: column {str(col)!r} is the {hit!r} column, which is never released")
        ids = (person_ids or {}).get(table_name)
        if ids is None or len(ids) != len(table):
            continue
        found += [f"{table_name}: column {str(col)!r} holds the person ids under another name (one value per "
                  f"person, row for row)" for col in table.columns
                  if _spelling(col) not in declared and _follows_persons(table[col], ids)]
    return found


def _follows_persons(values: pd.Series, ids: np.ndarray) -> bool:
    """Whether `values` name the persons one to one, row for row (the person column renamed or re-coded). Only
    when persons have several rows (else any column unique per row would match) and there are enough of them."""
    persons = pd.factorize(pd.Series(ids), use_na_sentinel=False)[0]
    n_persons = int(persons.max()) + 1 if persons.size else 0
    if n_persons < MIN_PERSONS_FOR_VALUES or n_persons == len(persons):
        return False
    codes = pd.factorize(values, use_na_sentinel=False)[0]  # the values as they are: one pass, no text copies
    return bool(np.array_equal(codes, persons))  # first-seen order: equal codes is the same partition


def refuse_private_columns(tables: Mapping[str, pd.DataFrame], columns: Iterable,
                           person_ids: Mapping[str, np.ndarray] | None = None, pseudonyms: Iterable[str] = ()) -> None:
    """Raise CheckError when any released table holds an identifier or the person column (see the module)."""
    found = released_private_columns(tables, columns, person_ids, pseudonyms)
    if found:
        raise CheckError("the release would publish a column that identifies people, so nothing was published: "
                         + "; ".join(found) + ". This is a fault of the mechanism; please report it.")
