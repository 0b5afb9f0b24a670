"""HIPAA Safe Harbor (45 CFR 164.514(b)(2)) in one step: the 18-kind rules applied to the columns the Safe Harbor
screen flags (`metrics/safe_harbor.screen`), and to the columns the custodian marked identifier or person.

- dates more precise than a year → the year (the year is read from the text, so day/month order does not matter);
- years of birth that make someone older than 89 → one category "<year> or earlier";
- ages over 89 → "90 or older" (exact ages and age bands starting at 90 or above);
- ZIP codes → their first 3 digits where that 3-digit area has more than 20,000 people, else "000" (the restricted
  prefixes ship as package data, `resources/governance/restricted_zip3.csv`, with their source);
- names, places smaller than a state, telephone numbers, e-mail addresses, record and account numbers, any other
  unique code, and every column with the role identifier or person → removed.

What it did is returned step by step (`Step`), and the output is screened again (`remaining`): a free-text column
can hide identifiers no rule sees, which is why Safe Harbor also asks the custodian to attest that she has no actual
knowledge that what remains could identify someone (`ATTESTATION`, recorded in the project's context).
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from functools import lru_cache

import pandas as pd

from ppdp_gui.engine.metrics import safe_harbor

ATTESTATION = ("I have no actual knowledge that the information remaining after Safe Harbor could be used, alone or "
               "in combination with other information, to identify a patient (45 CFR 164.514(b)(2)(ii)).")
OLDEST = "90 or older"
_YEAR = r"((?:1[89]|20)\d{2})"


@lru_cache(maxsize=1)
def restricted_zip3() -> frozenset[str]:
    """The restricted 3-digit ZIP areas, read from the package data file (its header names the source)."""
    from ppdp_gui.engine.package_files import package_folder
    path = package_folder("resources") / "governance" / "restricted_zip3.csv"
    lines = [ln.strip() for ln in path.read_text(encoding="utf-8").splitlines()]
    return frozenset(ln for ln in lines if ln and not ln.startswith("#") and ln != "zip3")


@dataclass(frozen=True)
class Step:
    column: str
    rule: str  # the Safe Harbor kind
    action: str  # what was done, in words
    rows: int  # rows whose value changed (all rows for a removed column)


@dataclass(frozen=True)
class SafeHarborResult:
    frame: pd.DataFrame
    steps: tuple[Step, ...]
    remaining: tuple  # safe_harbor.Finding still found on the output

    def summary(self) -> dict:
        """What the project keeps (context.safe_harbor): the action per column."""
        cols: dict[str, str] = {}
        for s in self.steps:
            cols[s.column] = s.action if s.column not in cols else cols[s.column] + "; " + s.action
        return {"columns": cols, "remaining": [f.reason for f in self.remaining]}


def _changed(before: pd.Series, after: pd.Series) -> int:
    b, a = before.astype("string"), after.astype("string")
    return int((b.fillna("\0") != a.fillna("\0")).sum())


def to_year(series: pd.Series) -> pd.Series:
    if pd.api.types.is_datetime64_any_dtype(series.dtype):
        years = series.dt.year
        return years.astype("Int64").astype("string")
    text = series.astype("string")
    return text.str.extract(_YEAR, expand=False)


def birth_years(series: pd.Series, today: _dt.date) -> pd.Series:
    cut = today.year - 90
    years = pd.to_numeric(series.astype("string").str.strip(), errors="coerce")
    out = series.astype("string")
    return out.mask(years <= cut, f"{cut} or earlier")


def ages(series: pd.Series) -> pd.Series:
    text = series.astype("string").str.strip()
    low = pd.to_numeric(text.str.extract(r"(\d+(?:\.\d+)?)", expand=False), errors="coerce")
    return text.mask(low >= 90, OLDEST)


def zip3(series: pd.Series) -> pd.Series:
    text = series.astype("string").str.strip()
    first = text.str.extract(r"^(\d{3})", expand=False)
    out = first.mask(first.isin(restricted_zip3()), "000")
    return out.where(text.notna())


def apply_safe_harbor(frame: pd.DataFrame, roles: dict | None = None, *,
                      today: _dt.date | None = None) -> SafeHarborResult:
    """The Safe Harbor version of `frame` (see the module docstring). `roles`: {column: Role or role text}."""
    today = today or _dt.date.today()
    roles = {str(k): getattr(v, "value", str(v)) for k, v in (roles or {}).items()}
    findings = safe_harbor.screen(frame, today=today)
    out = frame.copy()
    steps: list[Step] = []
    drop: dict[str, str] = {c: f"role {r}" for c, r in roles.items() if r in ("identifier", "person")
                            and c in frame.columns}
    done: set[tuple[str, str]] = set()
    for f in findings:
        col, kind = f.column, f.identifier
        if col in drop or (col, kind) in done:
            continue
        done.add((col, kind))
        before = out[col]
        if kind == "geographic units smaller than a state" and "ZIP" in f.reason:
            out[col] = zip3(before)
            steps.append(Step(col, kind, "ZIP code cut to its first 3 digits; areas of 20,000 people or fewer "
                                         "written as 000", _changed(before, out[col])))
        elif kind == "dates (except year)" and "years of birth" in f.reason:
            out[col] = birth_years(before, today)
            steps.append(Step(col, kind, "years of birth of people older than 89 put into one category",
                              _changed(before, out[col])))
        elif kind == "dates (except year)":
            out[col] = to_year(before)
            steps.append(Step(col, kind, "dates cut to the year", _changed(before, out[col])))
        elif kind == "ages over 89":
            out[col] = ages(before)
            steps.append(Step(col, kind, f"ages of 90 and over written as “{OLDEST}”", _changed(before, out[col])))
        else:
            drop[col] = kind
    for col, why in drop.items():
        steps.append(Step(col, why.replace("role ", "") if why.startswith("role") else why,
                          "removed" + (f" (its {why})" if why.startswith("role") else ""), int(len(frame))))
    out = out.drop(columns=list(drop))
    remaining = tuple(safe_harbor.screen(out, today=today))
    return SafeHarborResult(out, tuple(steps), remaining)


def record_in_context(context, result: SafeHarborResult, attested_by: str | None):
    """The context with what Safe Harbor did and, when the custodian attested, the attestation."""
    import dataclasses

    from ppdp_gui.engine.persistence.release_context import attest
    ctx = dataclasses.replace(context, safe_harbor=result.summary())
    if attested_by is not None:
        ctx = attest(ctx, "HIPAA Safe Harbor: no actual knowledge", ATTESTATION, attested_by)
    return ctx



def read_for_safe_harbor(path, roles: dict | None = None, kinds: dict | None = None):
    """The table at `path` with every row and every value as written (Safe Harbor changes values, it never drops
    a row for a blank), then `apply_safe_harbor`. Returns (result, the Dataset read). The CLI and the window call
    this one function."""
    from ppdp_gui.engine.data.reader import read_table
    from ppdp_gui.engine.data.schema import NAPolicy
    data = read_table(path, na_policy=NAPolicy(tokens=(), action="category"), kinds=kinds or {}, roles=roles or {})
    return apply_safe_harbor(data.frame, roles), data
