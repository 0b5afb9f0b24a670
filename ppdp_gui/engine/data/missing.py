"""Missing values per column: which columns to leave out, and what to tell the custodian.

By default no row is dropped: a blank in a categorical column is the category "(missing)" (part of every stated
list of values, data/domains.py), a blank in a numeric column an empty cell — for a DP release given the middle of
the column's public range (`impute_public`, a per-record rule); Mondrian, TDS and global / local recoding code it
as "(missing)" under the root of the column's tree (qi_coding.blank_cells_ok), while fragmentation and the large-
table engines, which need a number there, say so (the custodian makes the column categorical or drops rows). On a clinical extract dropping
rows would cost most of the table (diabetes: payer_code 40 % and medical_specialty 49 % missing drop 74 % of the
encounters), and under it the number of rows depends on the data, which the mechanisms private for one record
replaced must not publish (pipeline/plan.py refuses them). Dropping is the custodian's explicit choice. When
rows with a missing value are dropped, a column missing in more than
`NAPolicy.mostly_missing` of the rows (half, by default) is left out instead, and the custodian is told; columns
can also be left out by name (`NAPolicy.leave_out`). When more than `WARN_SHARE` of the rows would still go, the
notes say so and say how to keep them. These notes are for the custodian only (they count rows of the private
table): they are shown when the table is loaded and kept in the custodian record, never in a release note.
A column left out by the threshold is a choice read from the data, so an ε-DP plan asks for it to be named
(`left_out_by_the_data`), as it asks for public domains.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ppdp_gui.engine.data.roles import identifier_by_name
from ppdp_gui.engine.data.schema import NAPolicy, Role
from ppdp_gui.engine.errors import DataError

WARN_SHARE = 0.05


@dataclass(frozen=True)
class MissingReport:
    """Per column, how many cells were missing (before any row was dropped); what was left out and dropped."""

    rows: int
    missing: dict[str, int] = field(default_factory=dict)
    left_out: tuple[str, ...] = ()
    dropped: int = 0
    #: identifier columns (never released) whose blanks did not drop their rows
    blanks_kept: tuple[str, ...] = ()

    def notes(self, policy: NAPolicy) -> list[str]:
        out = []
        auto = [c for c in self.left_out if c not in policy.leave_out]
        for c in auto:
            share = self.missing.get(c, 0) / max(self.rows, 1)
            out.append(f"Column '{c}' is missing in {100 * share:.0f} % of the rows ({self.missing[c]:,} of "
                       f"{self.rows:,}), so it is left out: dropping those rows instead would lose most of the "
                       "table. To keep the column, choose “Keep missing as its own category” under Missing values "
                       "and press “Reload with this policy” (in the ppdp command: --na category).")
        named = [c for c in self.left_out if c in policy.leave_out]
        if named:
            out.append(f"Left out as asked: {', '.join(repr(c) for c in named)}.")
        if self.blanks_kept:
            which = ", ".join(f"'{c}' ({self.missing.get(c, 0):,})" for c in self.blanks_kept)
            out.append(f"Rows whose only blank is in {which} are kept: "
                       + ("that column is an identifier" if len(self.blanks_kept) == 1 else
                          "those columns are identifiers")
                       + ", left out of every release (its blanks read “(missing)”).")
        if self.rows and self.dropped / self.rows > WARN_SHARE:
            worst = sorted(((n, c) for c, n in self.missing.items()
                            if n and c not in self.left_out and c not in self.blanks_kept), reverse=True)[:3]
            which = ", ".join(f"'{c}' ({n:,})" for n, c in worst)
            out.append(f"Warning: {self.dropped:,} of {self.rows:,} rows ({100 * self.dropped / self.rows:.0f} %) "
                       f"have a missing value and are dropped (most missing: {which}). To keep them, choose "
                       "“Keep missing as its own category” under Missing values and press “Reload with this "
                       "policy” (in the ppdp command: --na category), or leave those columns out (ppdp: "
                       "--leave-out).")
        return out


def numeric_blanks_fix(column: str) -> str:
    """What to do about a number column with empty cells (kept so by default), in the window's words and the
    command's: the mechanisms that need a number in every row say it after naming the column."""
    return (f"In the Data step set the kind of {column} to categorical (its blanks then read “(missing)”), then "
            f"build “Numeric intervals” for {column} in the Taxonomies step to keep its ranges; or choose “Drop "
            "rows that have a missing value” and press “Reload with this policy” — it drops every row with a "
            f"blank in any released column, not only in {column} (ppdp: --kind {column}=categorical "
            f"--build-taxonomy {column}=intervals, or --na drop)")


def impute_public(data) -> tuple[object, list[str]]:
    """For a differentially private release: each empty cell of a number column (rows are kept by default) gets
    the middle of that column's *public* range — a rule read from nothing but the stated bounds and the record
    itself, so one record's blank changes only that record, and the row count stays the file's. Columns never
    released, and columns without public bounds (a DP plan refuses those anyway), are left alone. Returns the
    dataset to release and, for the custodian only, what was filled (counts)."""
    import numpy as np

    from ppdp_gui.engine.data.domains import numeric_bounds
    if data.larger_than_memory:
        return data, []
    frame, notes = None, []
    for spec in data.schema:
        if spec.kind != "numeric" or Role(spec.role).never_released:
            continue
        col = data.frame[spec.name]
        miss = col.isna().to_numpy()
        if not miss.any():
            continue
        b = numeric_bounds(spec)
        if b is None:
            continue
        value = (b.low + b.high) / 2
        value = float(np.floor(value)) if b.integer else value
        frame = data.frame.copy() if frame is None else frame
        filled = col.fillna(value)
        if b.integer and np.all(np.floor(filled.to_numpy(dtype=float)) == filled.to_numpy(dtype=float)):
            filled = filled.astype(np.int64)
        frame[spec.name] = filled
        notes.append(f"{spec.name}: {int(miss.sum()):,} empty cell(s) given {value:g}, the middle of its public "
                     "range, for this release (for you only; the note says the rule, not the count).")
    if frame is None:
        return data, []
    return data.with_frame(frame, data.schema), notes


def left_out_columns(names: list[str], missing: dict[str, int], n: int, policy: NAPolicy) -> tuple[str, ...]:
    """The columns named in the policy, and (when rows with a missing value are dropped) the mostly-missing
    ones — never every column."""
    named = set(policy.leave_out)
    out = [c for c in names if c in named]
    if policy.action == "drop" and policy.mostly_missing is not None and n:
        limit = float(policy.mostly_missing) * n
        out += [c for c in names if c not in named and missing.get(c, 0) > limit]
    if names and len(set(out)) == len(names):  # never every column: then only the ones named
        out = [c for c in names if c in named]
        if len(out) == len(names):
            raise DataError("every column of the table is named to be left out: keep at least one")
    return tuple(c for c in names if c in set(out))


def every_row_missing(n: int, tokens, path: str | None) -> DataError:
    """The error when the 'drop' policy would drop every row (both engines say the same)."""
    return DataError(f"every one of the {n} rows has a missing value ({', '.join(map(repr, tokens))}); "
                     "keep missing values as a category instead", path=path)


def check_leave_out(names: list[str], policy: NAPolicy, path: str | None) -> None:
    """Refuse columns named to be left out that the table does not have (both engines say the same)."""
    unknown = [c for c in policy.leave_out if c not in set(names)]
    if unknown:
        raise DataError(f"the columns to leave out are not in the table: {', '.join(map(repr, unknown))}", path=path)


def never_released(names: list[str], roles: dict) -> set[str]:
    """Columns no release publishes, whose blanks therefore cost no row under 'drop': identifiers and the person
    column, set so or (with no role given) by their name alone, such as nurse_notes or patient_name. Both engines
    use this rule."""
    return {c for c in names
            if (c in roles and Role(roles[c]).never_released) or (c not in roles and identifier_by_name(c))}


def left_out_by_the_data(source) -> list[str]:
    """Columns left out because the table has them mostly missing, not because the custodian named them: a
    choice read from the data, which a differentially private release must not silently depend on (one record
    can tip a column over the threshold and so change the released columns and the rows kept). The plan asks for
    them to be named (`NAPolicy.leave_out`), as it asks for public domains."""
    named = set(source.na_policy.leave_out)
    return [c for c in source.left_out if c not in named]
