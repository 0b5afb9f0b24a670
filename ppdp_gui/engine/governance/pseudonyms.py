"""Keyed pseudonyms and per-person date shifts: treatments for identifier columns besides leaving them out.

- **Pseudonym**: HMAC-SHA-256 of the value under a per-project key, the first 20 hex digits (80 bits: for a
  million distinct values the chance of any collision is below 10⁻¹²). The same value gets the same pseudonym in
  every release of the same project (the key is the project's), so a recipient can follow a patient across
  releases and across rows, but nobody without the key can go back to the number — nor recompute it from a guess,
  which a plain hash would allow for short numbers.
- **Date shift**: every date of one person moves by the same number of days, drawn uniformly from the public window
  [−W, +W]; intervals between a patient's dates are kept exactly. The shift is a keyed function of the person
  (HMAC of the person's value), not a fresh draw per release: fresh shifts would let a recipient of several
  releases average them away. It is not differential privacy and is not drawn from `engine/noise` for that reason;
  its window W is public and stated in the release note.

The key is 32 random bytes in ``<ledger folder>/pseudonym-keys/<project id>.key`` (mode 0600), beside the ledger's
own key: never in the release, never in the project file. The ledger package is only read (its folder).

Wiring: the treatments are applied to the table before the release is made (`apply_treatments`, called by
treatments.py for the window and `ppdp run` alike), adding `<column>_pseudonym` as an insensitive column the
custodian confirmed for publication, and shifting date columns in place; the original identifier keeps its role
and is never released. The release note states it under "pseudonyms and date shifts", from which the dossier and
the value map read it; `checks/raw_values.py` verifies, in memory before writing and on the written file (in the
export), that no raw identifier value appears in the release.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import os
import secrets
from pathlib import Path

import numpy as np
import pandas as pd

from ppdp_gui.engine.checks.raw_values import MIN_CHECKED_LENGTH, check_no_raw_values  # noqa: F401 (re-exported)
from ppdp_gui.engine.checks.raw_values import PSEUDONYM_SUFFIX as SUFFIX
from ppdp_gui.engine.data.schema import MISSING_LABEL, ColumnSpec, Dataset, Role
from ppdp_gui.engine.errors import DataError, ParameterError

HEX_DIGITS = 20


def key_path(ledger_path, project_id: str) -> Path:
    if not project_id or not all(c in "0123456789abcdef" for c in project_id):
        raise ParameterError("the project has no id for its pseudonym key (save the project's release context)")
    return Path(ledger_path).expanduser().parent / "pseudonym-keys" / f"{project_id}.key"


def project_key(ledger_path, project_id: str, *, create: bool = True) -> bytes:
    """The project's pseudonym key (created once, race-safe, readable by the owner only)."""
    path = key_path(ledger_path, project_id)
    if not path.exists():
        if not create:
            raise DataError("the project's pseudonym key is missing; pseudonyms of earlier releases cannot be "
                            "matched without it", path=str(path))
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass  # another process made it first: use theirs
        else:
            with os.fdopen(fd, "wb") as f:
                f.write(secrets.token_bytes(32))
    key = path.read_bytes()
    if len(key) != 32:
        raise DataError("the project's pseudonym key is damaged (not 32 bytes)", path=str(path))
    return key


def _keyed(key: bytes, label: bytes, values: pd.Series) -> tuple[np.ndarray, list[bytes]]:
    """(codes of each row's distinct value, HMAC digest of each distinct value): one HMAC per distinct value."""
    codes, uniques = pd.factorize(values.astype("string").fillna(""), sort=False)
    digests = [hmac.new(key, label + str(u).encode("utf-8"), hashlib.sha256).digest() for u in uniques]
    return codes, digests


def pseudonyms(values: pd.Series, key: bytes) -> pd.Series:
    """Each value's pseudonym; a missing value (empty, or the "(missing)" category) stays missing rather than
    giving every patient without a number one shared pseudonym."""
    codes, digests = _keyed(key, b"pseudonym|", values)
    table = np.asarray([d.hex()[:HEX_DIGITS] for d in digests], dtype=object)
    out = pd.Series(table[codes] if len(codes) else [], index=values.index, dtype="string")
    return out.where(values.notna() & (values.astype("string") != MISSING_LABEL))


def person_shifts(persons: pd.Series, key: bytes, window_days: int) -> np.ndarray:
    """Each row's shift in days: the same for all rows of one person, uniform on [−W, W] (a keyed function)."""
    codes, digests = _keyed(key, b"date-shift|", persons)
    span = 2 * int(window_days) + 1
    per_person = np.asarray([int.from_bytes(d[:8], "big") % span - window_days for d in digests], dtype=np.int64)
    return per_person[codes] if len(codes) else np.zeros(0, dtype=np.int64)


def shift_dates(values: pd.Series, shifts: np.ndarray, column: str) -> pd.Series:
    """Each date moved by its row's shift; a missing date (empty, or the "(missing)" category a blank reads as
    when missing values are kept) stays as it is."""
    text = values.astype("string")
    missing = text.isna() | (text == MISSING_LABEL)
    text = text.mask(missing)
    dates = pd.to_datetime(text, format="%Y-%m-%d", errors="coerce")
    bad = text.notna() & dates.isna()
    if bad.any():
        raise DataError(f"{text[bad].iloc[0]!r} is not a date written as 2020-03-07; only such dates can be "
                        "shifted", column=column)
    moved = dates + pd.to_timedelta(shifts, unit="D")
    return moved.dt.strftime("%Y-%m-%d").astype("string").where(text.notna(), values.astype("string"))


def apply_treatments(dataset: Dataset, *, pseudonym_columns=(), shift_columns=(), window_days: int = 0,
                     key: bytes) -> tuple[Dataset, tuple[str, ...], dict]:
    """The dataset with a `<column>_pseudonym` column per pseudonymised column (insensitive, to be confirmed for
    publication) and the date columns shifted per person. Returns (dataset, columns to confirm, public note)."""
    frame = dataset.frame.copy()
    schema = list(dataset.schema)
    added: list[str] = []
    note: dict = {}
    for col in pseudonym_columns:
        if col not in frame.columns:
            raise DataError(f"there is no column {col!r} to pseudonymise", column=col)
        name = col + SUFFIX
        frame[name] = pseudonyms(frame[col], key)
        schema.append(ColumnSpec(name, "categorical", Role.INSENSITIVE))
        added.append(name)
        note[name] = (f"a keyed pseudonym of {col} (HMAC-SHA-256 under the custodian's secret key, "
                      f"{HEX_DIGITS} hex digits): the same patient has the same pseudonym in every release of "
                      "this project; it cannot be turned back into the number without the key")
    if shift_columns:
        person = dataset.person_column
        if person is None:
            raise ParameterError("shifting dates per person needs the column that says whose row it is: give it "
                                 "the role person (in ppdp: --role patient_nbr=person)")
        if not 1 <= int(window_days) <= 3650:
            raise ParameterError("the date-shift window is a whole number of days from 1 to 3650")
        shifts = person_shifts(frame[person], key, int(window_days))
        for col in shift_columns:
            if col not in frame.columns:
                raise DataError(f"there is no column {col!r} to shift", column=col)
            if dataset.spec(col).taxonomy is not None:
                raise ParameterError(f"{col} already has a taxonomy built from its dates; shift the dates without "
                                     "a taxonomy (or build it after the shift)")
            frame[col] = shift_dates(frame[col], shifts, col)
            schema = [dataclasses.replace(c, kind="categorical") if c.name == col else c for c in schema]
        note["date shift"] = {"columns": list(shift_columns), "window days": int(window_days),
                              "how": f"every date of one patient moved by the same number of days, drawn uniformly "
                                     f"between -{window_days} and +{window_days}; intervals between one patient's "
                                     "dates are exact, calendar dates are not"}
    return Dataset(frame, tuple(schema), dataset.source), tuple(added), note


NOTE_KEY = "pseudonyms and date shifts"


def treated_in(record: dict) -> tuple[dict[str, str], list[str], int | None]:
    """What a release's note says was treated: ({released pseudonym column: identifier it replaces}, shifted date
    columns, the shift window in days). The dossier and the value map read it from there, so they describe what
    the release did, whatever made it."""
    details = ((record.get("release note") or {}).get("details") or {}).get(NOTE_KEY) or {}
    names = {k: k[: -len(SUFFIX)] for k in details if str(k).endswith(SUFFIX)}
    shift = details.get("date shift") or {}
    return names, list(shift.get("columns") or []), shift.get("window days")
