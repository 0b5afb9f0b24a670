"""The values the budget ledger hands out: exact amounts, entries, dataset summaries, identities and budgets.

Kept apart from ledger.py so that callers (pipeline, GUI, reports) can name these types without the storage.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from ppdp_gui.engine.errors import ParameterError

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np

#: the ε cap a new budget group gets unless the ledger was opened with another default (see `Ledger.set_cap`)
DEFAULT_CAP = Fraction(2)
#: a table sharing at least this share of its distinct rows with a known one (or containing at least this share
#: of the known one's) is a near copy and charged to the known one's budget. One half: a table that is mostly
#: the same people is the same people, whatever else was edited, added or sampled; two real tables about
#: different people share (almost) no rows, so they stay far below it.
NEAR_COPY_CONTAINMENT = 0.5


def exact(value, name: str = "ε") -> Fraction:
    """A budget amount as an exact, finite, non-negative Fraction (a float is taken as the decimal it prints)."""
    try:
        if isinstance(value, Fraction):
            out = value
        elif isinstance(value, float):
            out = Fraction(str(value))
        else:
            out = Fraction(value)
    except (TypeError, ValueError, OverflowError):
        raise ParameterError(f"{name} must be a finite number, got {value!r}") from None
    if out < 0:
        raise ParameterError(f"{name} cannot be negative, got {value!r}")
    return out


def fmt(value: Fraction) -> str:
    return f"{float(value):.6g}" if value.denominator != 1 else str(value.numerator)


@dataclass(frozen=True)
class LedgerEntry:
    """One release charged to a dataset (output_hash/completed are None until the release finished).

    `fingerprint` is the exact dataset released from, `budget` the root of the budget group it was charged to."""

    id: int
    fingerprint: str
    mechanism: str
    params: dict
    epsilon: Fraction
    delta: Fraction
    created: str
    output_hash: str | None
    completed: str | None
    label: str
    release_id: str = ""
    budget: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "fingerprint": self.fingerprint, "budget": self.budget or self.fingerprint,
                "mechanism": self.mechanism, "params": self.params, "epsilon": str(self.epsilon),
                "delta": str(self.delta), "created": self.created, "output_hash": self.output_hash,
                "completed": self.completed, "label": self.label, "release_id": self.release_id}


@dataclass(frozen=True)
class DatasetSummary:
    """One known dataset. cap, spent, spent_delta and releases are those of its budget group (what binds);
    own_spent and own_releases are what was charged while releasing from this exact dataset."""

    fingerprint: str
    label: str
    cap: Fraction | None
    spent: Fraction
    spent_delta: Fraction
    releases: int
    created: str
    last_release: str | None
    budget: str = ""
    origin: str = "rows"
    n_rows: int | None = None
    near_copy_of: str | None = None
    similarity: float | None = None
    separate_from: str | None = None
    separate_similarity: float | None = None
    separate_by: str | None = None
    separate_at: str | None = None
    own_spent: Fraction = Fraction(0)
    own_releases: int = 0

    @property
    def remaining(self) -> Fraction | None:
        return None if self.cap is None else max(self.cap - self.spent, Fraction(0))

    @property
    def is_root(self) -> bool:
        """True for the dataset whose budget group this is (its cap is the group's cap)."""
        return not self.budget or self.budget == self.fingerprint


@dataclass(frozen=True)
class DatasetIdentity:
    """What the ledger knows of a table, from `Ledger.identify` (which writes nothing).

    fingerprint: the exact identity (keyed hash of the source rows before any policy, role or column choice);
    budget: the root fingerprint of the budget group it is (or would be) charged to; known: this exact table is
    recorded; near_copy_of/similarity: the known dataset it resembles and the larger containment estimated
    (None when it resembles none). With `separate` the user declared a near copy a separate dataset: it gets
    its own group and the confirmation is recorded when it is first charged.

    The remaining fields are for `Ledger.reserve`, which re-checks everything under its write lock; `keyed`
    (8 bytes per distinct row) stays in memory and is never written."""

    fingerprint: str
    budget: str
    known: bool
    near_copy_of: str | None
    similarity: float | None
    label: str = ""
    separate: bool = False
    n_rows: int = 0
    n_distinct: int = field(default=0, repr=False)
    keyed: "np.ndarray | None" = field(default=None, repr=False, compare=False)  # all distinct keyed row hashes
    legacy_fingerprint: str | None = field(default=None, repr=False, compare=False)
    key_check: str = field(default="", repr=False, compare=False)

    @property
    def is_near_copy(self) -> bool:
        """Charged to another dataset's budget (a near copy not declared separate)."""
        return self.budget != self.fingerprint


@dataclass(frozen=True)
class Budget:
    """The ε budget of a dataset's group. `default_cap_applied`: the group does not exist yet and the cap shown
    is the default it will get at its first release. `remaining` is None only for an uncapped (schema-1) group."""

    cap: Fraction | None
    spent: Fraction
    spent_delta: Fraction
    remaining: Fraction | None
    releases: int
    default_cap_applied: bool
