"""Neighbouring tables: D and D' that differ in one person, the pairs a DP guarantee speaks about.

The mechanisms here claim ε-DP for one record *added or removed*; a record *changed* is one removed and one
added, so a changed pair may lose 2ε (group privacy) — `Neighbour.distance` says which. Which record to add
matters: a random one rarely shows a bug. The worst-case builders pick the record that moves what a buggy
mechanism would leak:

- `domain_extreme`: a value at the far end of the column's public domain (or a public category the table does
  not hold) — it moves any domain read from the data, so a mechanism that does so changes its note or cells;
- `class_flip`: a record of the runner-up class in the group with the slimmest majority — it ties or flips that
  group's majority, which moves DiffGen's Max scores and the group's count;
- `gap_record`: a numeric value in the middle of the widest empty stretch between the table's values, of the
  rarer class — it opens a new occupied cell where split points are drawn, so the split distribution moves.

All builders keep the schema (roles, taxonomies, public domains) and the column types; they never touch the
frame of the table they are given.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Mapping, Sequence

import numpy as np
import pandas as pd

from ppdp_gui.engine.data.domains import category_set, numeric_bounds
from ppdp_gui.engine.data.schema import Dataset, SourceInfo
from ppdp_gui.engine.errors import ParameterError

Relation = Literal["add", "remove", "change"]
DISTANCE = {"add": 1, "remove": 1, "change": 2}  # in add/remove steps: what the guarantee multiplies ε by


@dataclass(frozen=True)
class Neighbour:
    """D' and how it differs from D, in words for the report."""

    data: Dataset
    relation: Relation
    words: str

    @property
    def distance(self) -> int:
        return DISTANCE[self.relation]


def _fresh(data: Dataset, frame: pd.DataFrame) -> Dataset:
    """`frame` with `data`'s schema and a source that says nothing about rows (the ledger never sees these)."""
    return Dataset(frame.reset_index(drop=True), data.schema, SourceInfo(path=data.source.path))


def _row(data: Dataset, record: Mapping[str, Any]) -> pd.DataFrame:
    """One row in the column order and types of `data` (a numeric column gets a number)."""
    missing = [c for c in data.frame.columns if c not in record]
    extra = [c for c in record if c not in data.frame.columns]
    if missing or extra:
        raise ParameterError(f"the record must give exactly the table's columns; missing {missing}, extra {extra}")
    cols = {}
    for spec in data.schema:
        value = record[spec.name]
        if spec.kind == "numeric":
            cols[spec.name] = pd.array([value]).astype(data.frame[spec.name].dtype)
        else:
            cols[spec.name] = pd.Series([str(value)], dtype=data.frame[spec.name].dtype)
    return pd.DataFrame(cols)


def add_record(data: Dataset, record: Mapping[str, Any], words: str = "") -> Neighbour:
    frame = pd.concat([data.frame, _row(data, record)], ignore_index=True)
    text = words or "one record added: " + ", ".join(f"{k} = {v}" for k, v in record.items())
    return Neighbour(_fresh(data, frame), "add", text)


def remove_record(data: Dataset, index: int, words: str = "") -> Neighbour:
    if not 0 <= index < data.n_rows:
        raise ParameterError(f"there is no record {index} to remove")
    gone = data.frame.iloc[index]
    frame = data.frame.drop(index=data.frame.index[index])
    text = words or "one record removed: " + ", ".join(f"{k} = {v}" for k, v in gone.items())
    return Neighbour(_fresh(data, frame), "remove", text)


def change_record(data: Dataset, index: int, changes: Mapping[str, Any], words: str = "") -> Neighbour:
    if not 0 <= index < data.n_rows:
        raise ParameterError(f"there is no record {index} to change")
    record = {**data.frame.iloc[index].to_dict(), **changes}
    frame = pd.concat([data.frame.iloc[:index], _row(data, record), data.frame.iloc[index + 1:]], ignore_index=True)
    before = data.frame.iloc[index]
    text = words or "one record changed: " + ", ".join(f"{k} {before[k]} → {v}" for k, v in changes.items())
    return Neighbour(_fresh(data, frame), "change", text)


# ---- worst cases ---------------------------------------------------------------------------------------------
def domain_extreme(data: Dataset, column: str, like: int = 0) -> dict[str, Any]:
    """Record `like` with `column` set to the public bound farthest from the table's values (numeric), or to a
    public category the table does not hold. Adding it moves a domain read from the data, and only that."""
    spec = data.spec(column)
    record = data.frame.iloc[like].to_dict()
    if spec.kind == "numeric":
        bounds = numeric_bounds(spec)
        if bounds is None:
            raise ParameterError(f"{column} has no public bounds to reach for")
        x = pd.to_numeric(data.frame[column]).to_numpy(dtype=float)
        low_gap, high_gap = x.min() - bounds.low, bounds.high - x.max()
        value = bounds.high if high_gap >= low_gap else bounds.low
        record[column] = int(value) if bounds.integer else float(value)
    else:
        cats = category_set(spec)
        unseen = [] if cats is None else [v for v in cats.values if v not in set(data.frame[column].astype(str))]
        if not unseen:
            raise ParameterError(f"every public value of {column} is already in the table")
        record[column] = unseen[0]
    return record


def class_flip(data: Dataset, group_columns: Sequence[str], class_column: str) -> dict[str, Any]:
    """A record of the runner-up class in the group (of `group_columns`) whose majority is slimmest: adding it
    ties or flips that group's majority class."""
    frame = data.frame
    counts = frame.groupby(list(group_columns) + [class_column], observed=True, sort=True).size()
    table = counts.unstack(class_column, fill_value=0)
    ordered = np.sort(table.to_numpy(), axis=1)
    margin = ordered[:, -1] - (ordered[:, -2] if ordered.shape[1] > 1 else 0)
    group = table.index[int(np.argmin(margin))]
    row = table.loc[group]
    runner_up = row.sort_values(kind="stable").index[-2] if len(row) > 1 else row.index[0]
    key = group if isinstance(group, tuple) else (group,)
    mask = np.ones(len(frame), dtype=bool)
    for col, value in zip(group_columns, key):
        mask &= (frame[col] == value).to_numpy()
    record = frame[mask].iloc[0].to_dict()
    record[class_column] = runner_up
    return record


def gap_record(data: Dataset, column: str, class_column: str) -> dict[str, Any]:
    """A record in the middle of the widest gap between the distinct values of `column`, of the rarer class."""
    frame = data.frame
    values = np.unique(pd.to_numeric(frame[column]).to_numpy(dtype=float))
    if values.size < 2:
        raise ParameterError(f"{column} needs two distinct values to have a gap")
    i = int(np.argmax(np.diff(values)))
    middle = (values[i] + values[i + 1]) / 2
    spec = data.spec(column)
    bounds = numeric_bounds(spec)
    if bounds is not None and bounds.integer:
        middle = int(np.floor(middle))
    rarer = frame[class_column].value_counts(sort=True, ascending=True).index[0]
    record = frame.iloc[0].to_dict()
    record[column], record[class_column] = middle, rarer
    return record

