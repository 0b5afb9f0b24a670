"""What a loaded table is: typed frame + per-column kind, role and taxonomy + where it came from."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum
from typing import TYPE_CHECKING, Iterable, Literal

import pandas as pd

from ppdp_gui.engine.errors import DataError
from ppdp_gui.engine.taxonomy import labels

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

    from ppdp_gui.engine.data.domains import Domain
    from ppdp_gui.engine.taxonomy import Taxonomy

Kind = Literal["numeric", "categorical"]


class Role(str, Enum):
    """What a column is to the privacy model; decides what mechanisms may do with it."""

    IDENTIFIER = "identifier"  # names, record numbers: removed from every release
    PERSON = "person"  # whose row it is (patient_nbr): never released; the unit of privacy (k counts persons)
    QUASI_IDENTIFIER = "quasi-identifier"  # age, ZIP, sex: linkable, generalised
    SENSITIVE = "sensitive"  # diagnosis: protected by l-diversity
    CLASS = "class"  # the label a data user wants to predict
    INSENSITIVE = "insensitive"  # kept as is

    @property
    def label(self) -> str:
        return self.value.replace("-", " ").capitalize()

    @property
    def never_released(self) -> bool:
        """Identifiers and the person column never leave the machine, whatever the mechanism."""
        return self in (Role.IDENTIFIER, Role.PERSON)


#: what a missing value of a categorical column reads as under the default policy (also part of every stated
#: list of values: data/domains.py); defined below both this package and the tree builders
MISSING_LABEL = labels.MISSING_LABEL


@dataclass(frozen=True)
class NAPolicy:
    """Which tokens mean 'missing' and what to do with rows that have one. By default rows are kept: a missing
    value of a categorical column is the category "(missing)" (a numeric column keeps an empty cell); dropping
    rows is the custodian's explicit choice ("drop"), never the default (data/missing.py says why)."""

    tokens: tuple[str, ...] = ("", "?", "NA", "N/A", "NaN", "nan", "null", "NULL")
    action: Literal["drop", "category"] = "category"
    category_label: str = MISSING_LABEL
    #: columns left out by name (never read into the table)
    leave_out: tuple[str, ...] = ()
    #: when rows with a missing value are dropped, a column missing in more than this share of the rows is left
    #: out instead (data/missing.py says why); None: never
    mostly_missing: float | None = 0.5


@dataclass(frozen=True)
class SourceInfo:
    """Where a table came from, so exports never overwrite it and the ledger can fingerprint it."""

    path: str | None = None
    sha256: str | None = None
    n_rows_read: int = 0
    n_rows_dropped: int = 0
    na_policy: NAPolicy = field(default_factory=NAPolicy)
    delimiter: str | None = None
    file_format: str | None = None
    #: one 64-bit hash per raw row, before any missing-value policy, typing, role or column choice (see
    #: privacy/fingerprint.py): the ledger identifies the people in the file, not this reading of it. In memory only.
    row_hashes: "np.ndarray | None" = field(default=None, compare=False, repr=False)
    #: what the custodian should know about how the file was read (formulas read as their stored values, merged
    #: cells, the sheet chosen among several): shown by the window and `ppdp` when the table is loaded
    notes: tuple[str, ...] = ()
    #: columns left out for missing values (data/missing.py) and the missing cells per column as read
    left_out: tuple[str, ...] = ()
    missing: dict = field(default_factory=dict, compare=False, repr=False)
    #: why each column's role was guessed, {column: (role, reason)}, worked out once by the reader (the window's
    #: Data step and `ppdp inspect` show it; a role given by the custodian does not change the guess)
    role_reasons: dict = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True)
class ColumnSpec:
    """One column: its kind, its role, its taxonomy and its public domain (see data/domains.py)."""

    name: str
    kind: Kind
    role: Role = Role.INSENSITIVE
    taxonomy: "Taxonomy | None" = None
    domain: "Domain | None" = None
    #: what of this column ("role", "kind") the reader read from its values and nobody stated or confirmed; a
    #: differentially private plan refuses such a column (one record can change a guess; pipeline/plan.py)
    guessed: frozenset = frozenset()


@dataclass(frozen=True)
class Dataset:
    """A typed table plus its schema; immutable so a release can always say what it was computed from."""

    frame: pd.DataFrame
    schema: tuple[ColumnSpec, ...]
    source: SourceInfo = field(default_factory=SourceInfo)

    def __post_init__(self) -> None:
        names = [c.name for c in self.schema]
        if names != list(self.frame.columns):
            raise DataError(f"schema columns {names} do not match the table's columns {list(self.frame.columns)}")

    # --- lookups -------------------------------------------------------------------------------------------
    def spec(self, name: str) -> ColumnSpec:
        for c in self.schema:
            if c.name == name:
                return c
        raise DataError(f"no column named {name!r}", column=name)

    def names_with_role(self, *roles: Role) -> list[str]:
        return [c.name for c in self.schema if c.role in roles]

    @property
    def quasi_identifiers(self) -> list[str]:
        return self.names_with_role(Role.QUASI_IDENTIFIER)

    @property
    def person_column(self) -> str | None:
        """The column that says whose row it is (Role.PERSON), or None: then one row is one unit of privacy."""
        names = self.names_with_role(Role.PERSON)
        return names[0] if names else None

    @property
    def class_column(self) -> str | None:
        names = self.names_with_role(Role.CLASS)
        return names[0] if names else None

    @property
    def sensitive_columns(self) -> list[str]:
        return self.names_with_role(Role.SENSITIVE)

    @property
    def n_rows(self) -> int:
        return len(self.frame)

    @property
    def larger_than_memory(self) -> bool:
        """Whether the rows stay in their file (engine/bigdata's LargeDataset says yes): code below the large-table
        engine asks the table, not the engine."""
        return False

    # --- immutable updates ---------------------------------------------------------------------------------
    def with_column(self, name: str, **changes) -> "Dataset":
        """A copy with one column's spec changed (role, kind or taxonomy). A taxonomy is checked as it is attached
        (`Taxonomy.check_labels`), so no mechanism ever starts — or charges ε — with a cyclic or ambiguous one."""
        spec = self.spec(name)
        if changes.get("taxonomy") is not None:
            changes["taxonomy"].check_labels()
        if "guessed" not in changes and ("role" in changes or "kind" in changes):  # set now: stated, not guessed
            changes["guessed"] = spec.guessed - {part for part in ("role", "kind") if part in changes}
        schema = tuple(replace(c, **changes) if c.name == name else c for c in self.schema)
        return replace(self, schema=schema)

    @property
    def guessed_columns(self) -> list[str]:
        """Columns whose role, or (for a column that may be released) kind, was read from the values and never
        stated or confirmed by the custodian: what a differentially private plan refuses."""
        return [c.name for c in self.schema
                if "role" in c.guessed or ("kind" in c.guessed and not Role(c.role).never_released)]

    def confirm_guesses(self, columns: Iterable[str] | None = None) -> "Dataset":
        """A copy in which the custodian confirmed the roles and kinds shown (of `columns`, default all): they
        are no longer guesses (the Data step's "Confirm roles and kinds", `ppdp run --confirm-roles`)."""
        names = None if columns is None else set(columns)
        schema = tuple(replace(c, guessed=frozenset()) if names is None or c.name in names else c
                       for c in self.schema)
        return replace(self, schema=schema)

    def with_roles(self, roles: dict[str, Role]) -> "Dataset":
        ds = self
        for name, role in roles.items():
            ds = ds.with_column(name, role=role)
        return ds

    def with_frame(self, frame: pd.DataFrame, columns: Iterable[ColumnSpec] | None = None) -> "Dataset":
        schema = tuple(columns) if columns is not None else tuple(c for c in self.schema if c.name in frame.columns)
        return Dataset(frame=frame, schema=schema, source=self.source)
