"""The custodian's treatments of identifier and date columns, as the project states them, applied before a release.

Two treatments besides "leave out" (pseudonyms.py says how each works):

- an identifier column (or the person column) replaced by a keyed pseudonym, released as `<column>_pseudonym`;
- the date columns of a table with a person column shifted per patient, within a public window of ± N days.

The choice is part of the project (the release context's `pseudonyms` and `date_shift`, context.py), so the window
(Data step, "Released as") and `ppdp run --recipe` read the same statement and call the same two functions:
`prepare` before the plan (the treated table, and the columns the custodian thereby confirmed for publication)
and `finish` on the release (its note says what each column is; no raw identifier value may be in it; the raw
values travel with the release, in memory only, so the export checks the bytes written as well).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ppdp_gui.engine.data.schema import MISSING_LABEL, Dataset, Role
from ppdp_gui.engine.errors import ParameterError

#: roles whose column may be replaced by a keyed pseudonym: the columns that are never released
PSEUDONYM_ROLES = (Role.IDENTIFIER, Role.PERSON)
DEFAULT_WINDOW_DAYS = 30
LEAVE_OUT = "Leave out"
PSEUDONYM = "Replace with a keyed pseudonym"
KEEP_DATES = "Keep the dates as they are"
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def shift_words(days: int) -> str:
    return f"Shift dates per patient (within ± {int(days)} days)"


@dataclass(frozen=True)
class Treatments:
    """What the project asks: columns to pseudonymise, date columns to shift, the public shift window."""

    pseudonyms: tuple[str, ...] = ()
    shift_columns: tuple[str, ...] = ()
    window_days: int = DEFAULT_WINDOW_DAYS

    @property
    def any(self) -> bool:
        return bool(self.pseudonyms or self.shift_columns)

    def choose(self, column: str, *, pseudonym: bool | None = None, shift: bool | None = None) -> "Treatments":
        """The same treatments with `column` pseudonymised (or not) and / or shifted (or not)."""
        pseudo, shifted = list(self.pseudonyms), list(self.shift_columns)
        for wanted, names in ((pseudonym, pseudo), (shift, shifted)):
            if wanted is True and column not in names:
                names.append(column)
            elif wanted is False and column in names:
                names.remove(column)
        return dataclasses.replace(self, pseudonyms=tuple(pseudo), shift_columns=tuple(shifted))

    def with_window(self, days: int) -> "Treatments":
        if isinstance(days, bool) or not 1 <= int(days) <= 3650:
            raise ParameterError("the date-shift window is a whole number of days from 1 to 3650")
        return dataclasses.replace(self, window_days=int(days))


def of_context(context) -> Treatments:
    """The treatments a release context (context.ReleaseContext) states."""
    shift = dict(context.date_shift or {})
    return Treatments(tuple(context.pseudonyms), tuple(shift.get("columns") or ()),
                      int(shift.get("window_days") or DEFAULT_WINDOW_DAYS))


def in_context(context, treatments: Treatments):
    """`context` stating `treatments` (with a project id, which names the project's pseudonym key)."""
    shift = ({"columns": list(treatments.shift_columns), "window_days": int(treatments.window_days)}
             if treatments.shift_columns or treatments.window_days != DEFAULT_WINDOW_DAYS else {})
    out = dataclasses.replace(context, pseudonyms=tuple(treatments.pseudonyms), date_shift=shift)
    return out.with_project_id() if treatments.any else out


def with_options(treatments: Treatments, pseudonyms=(), shift_columns=(), window_days: int | None = None
                 ) -> Treatments:
    """The project's treatments plus those of `ppdp run --pseudonym/--shift-dates` (the options' window wins)."""
    out = treatments
    for col in pseudonyms:
        out = out.choose(col, pseudonym=True)
    for col in shift_columns:
        out = out.choose(col, shift=True)
    return out.with_window(window_days) if window_days is not None else out


def date_columns(dataset: Dataset) -> list[str]:
    """Text columns whose every value is a date written 2020-03-07 (what a date shift can move), whatever their
    role (the window works it out once per table read, in its worker; `options` filters by role)."""
    out = []
    for spec in dataset.schema:
        if spec.kind != "categorical":
            continue
        values = pd.Series(dataset.frame[spec.name].dropna().unique()).astype(str)
        values = values[~values.isin(["(missing)", ""])]
        if len(values) and values.str.fullmatch(_DATE).all() and pd.to_datetime(
                values, format="%Y-%m-%d", errors="coerce").notna().all():
            out.append(spec.name)
    return out


def options(dataset: Dataset, treatments: Treatments, dates=()) -> dict[str, tuple[list[str], int]]:
    """For each column that can be treated: (the choices in words, the index of the one the project states).
    An identifier or person column: leave out / keyed pseudonym; a date column of a table with a person column:
    keep / shift per patient. `dates`: date_columns(dataset), worked out once when the table was read."""
    out: dict[str, tuple[list[str], int]] = {}
    for spec in dataset.schema:
        if spec.role in PSEUDONYM_ROLES:
            out[spec.name] = ([LEAVE_OUT, PSEUDONYM], int(spec.name in treatments.pseudonyms))
        elif spec.name in dates and dataset.person_column is not None:
            out[spec.name] = ([KEEP_DATES, shift_words(treatments.window_days)],
                              int(spec.name in treatments.shift_columns))
    return out


def applicable(dataset: Dataset, treatments: Treatments) -> Treatments:
    """`treatments` without the choices the table's roles no longer allow (a pseudonymised identifier made a
    quasi-identifier, a shifted date column made an identifier, no person column left to shift by)."""
    out = treatments
    for col in treatments.pseudonyms:
        if col in dataset.frame.columns and dataset.spec(col).role not in PSEUDONYM_ROLES:
            out = out.choose(col, pseudonym=False)
    for col in treatments.shift_columns:
        if col in dataset.frame.columns and (dataset.spec(col).role.never_released or dataset.person_column is None):
            out = out.choose(col, shift=False)
    return out


def sentences(treatments: Treatments) -> list[str]:
    """What the treatments do to the release, in the words the Run step shows before anything runs."""
    from ppdp_gui.engine.governance.pseudonyms import SUFFIX
    out = [f"{c} goes out only as {c}{SUFFIX}, a keyed pseudonym: the same patient gets the same pseudonym in "
           "every row and every release of this project; it cannot be turned back into the number without the "
           "project's key (kept beside the budget ledger, never published)" for c in treatments.pseudonyms]
    if treatments.shift_columns:
        out.append(f"the dates of {', '.join(treatments.shift_columns)} are shifted per patient by the same number "
                   f"of days, within ± {treatments.window_days} days (the release note states the window)")
    return out


@dataclass
class Treated:
    """What `prepare` did: columns it confirmed for publication, the note's statement, raw identifier values."""

    confirmed: tuple[str, ...] = ()
    note: dict = field(default_factory=dict)
    raw: dict = field(default_factory=dict)  # {identifier column: its distinct raw values}, in memory only


def _check(dataset: Dataset, treatments: Treatments) -> None:
    for col in treatments.pseudonyms:
        if col in dataset.frame.columns and dataset.spec(col).role not in PSEUDONYM_ROLES:
            raise ParameterError(f"{col} is a {dataset.spec(col).role.label.lower()} now: a keyed pseudonym replaces "
                                 "an identifier or the person column only. In the Data step give it the role "
                                 "identifier again, or choose “Leave out” (in ppdp: --role COL=identifier)")
    for col in treatments.shift_columns:
        if col in dataset.frame.columns and dataset.spec(col).role.never_released:
            raise ParameterError(f"{col} is never released (its role is {dataset.spec(col).role.label.lower()}): "
                                 "there is nothing of it to shift")


def prepare(dataset: Dataset, treatments: Treatments, *, ledger_path, project_id: str) -> tuple[Dataset, Treated]:
    """The table the release is made from: pseudonyms added, dates shifted (pseudonyms.apply_treatments), under the
    project's key kept beside the ledger at `ledger_path`."""
    if not treatments.any:
        return dataset, Treated()
    from ppdp_gui.engine.governance.pseudonyms import apply_treatments, project_key
    _check(dataset, treatments)
    key = project_key(ledger_path, project_id)
    treated, added, note = apply_treatments(dataset, pseudonym_columns=treatments.pseudonyms,
                                            shift_columns=treatments.shift_columns,
                                            window_days=treatments.window_days if treatments.shift_columns else 0,
                                            key=key)
    raw = {c: _as_written(dataset.frame[c]) for c in treatments.pseudonyms}
    return treated, Treated(added, note, raw)


def _as_written(values: pd.Series) -> np.ndarray:
    """The distinct raw values as a file shows them: a number column with blanks is read as floats, but its
    numbers are written 12997332, not 12997332.0 (the check compares text)."""
    values = values.dropna()
    values = values[values.astype(str) != MISSING_LABEL]  # a blank is nobody's number (and "(missing)" is in
    # other columns too)
    if pd.api.types.is_float_dtype(values) and len(values) and (values == values.round()).all():
        values = values.astype("int64")
    return np.asarray(values.astype(str).unique(), dtype=object)


def finish(published, treated: Treated):
    """The release with its note stating the treatments, after checking in memory that no raw identifier value
    is in any released table (CheckError otherwise); the raw values go with it for the export's own check."""
    if not treated.note:
        return published
    from ppdp_gui.engine.checks.raw_values import refuse_raw_values
    from ppdp_gui.engine.governance.pseudonyms import NOTE_KEY
    refuse_raw_values(published.release.tables(), treated.raw)
    published.release.note.setdefault(NOTE_KEY, {}).update(treated.note)
    return dataclasses.replace(published, raw_identifiers=dict(treated.raw))
