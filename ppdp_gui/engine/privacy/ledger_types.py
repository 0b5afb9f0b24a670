"""The values the budget ledger hands out: exact amounts, entries, dataset summaries, identities and budgets.

Kept apart from ledger.py so that callers (pipeline, GUI, reports) can name these types without the storage.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from ppdp_gui.engine.claims import Neighbouring
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


#: the two neighbouring relations a release's ε can be stated for, as the ledger stores them. Entries written
#: before the ledger recorded it count as add/remove (every mechanism released then was add/remove but DP-PCA and
#: the record baselines, which the ledger could not tell apart).
ADD_REMOVE = Neighbouring.ADD_REMOVE  # == "add/remove", the stored text
REPLACE = Neighbouring.REPLACE_ONE  # == "replace"
#: the combined guarantee in words, per unit
UNIT_WORDS = {ADD_REMOVE: "for one record added or removed", REPLACE: "for one record replaced"}


def neighbouring_kind(stored) -> Neighbouring:
    """The relation of a ledger entry: a Neighbouring as it is; stored text read back ('add/remove', 'replace';
    NULL or empty from before the ledger recorded it: add/remove). Only the ledger's own storage is read here:
    mechanisms and claims carry the typed value."""
    if isinstance(stored, Neighbouring):
        return stored
    text = str(stored or "").strip().lower()
    return REPLACE if text.startswith("replace") else ADD_REMOVE


def combined_total(spent, replace_releases: int, epsilon, kind: str) -> Fraction:
    """The sound total ε of a budget group after one more release of `epsilon` under `kind`.

    While every release is add/remove ε-DP the ε add up (sequential composition). A replace-one release is not
    add/remove DP at all (it publishes the row count), but an add/remove ε-DP release is 2ε-DP for one record
    replaced (a replacement is a removal and an addition). So once any replace-one release is in the group, the
    only sound statement is in replace-one units: Σ replace ε + 2·Σ add/remove ε. `spent` is the group's total
    in its current units (add/remove while `replace_releases` is 0)."""
    spent, eps = Fraction(spent), Fraction(epsilon)
    if replace_releases:  # already in replace-one units
        return spent + (eps if kind == REPLACE else 2 * eps)
    return spent + eps if kind != REPLACE else 2 * spent + eps


class Totals:
    """What a set of entries spent, split by neighbouring, and its sound total (ledger_types.combined_total)."""

    __slots__ = ("add_remove", "delta", "last", "n", "n_replace", "replace")

    def __init__(self):
        self.add_remove, self.replace, self.delta = Fraction(0), Fraction(0), Fraction(0)
        self.n_replace, self.n, self.last = 0, 0, None

    def add(self, eps: Fraction, delta: Fraction, kind, created=None) -> None:
        if neighbouring_kind(kind) == REPLACE:
            self.replace += eps
            self.n_replace += 1
        else:
            self.add_remove += eps
        self.delta += delta
        self.n += 1
        self.last = created

    def in_units(self, replace_one: bool) -> Fraction:
        return self.replace + 2 * self.add_remove if replace_one else self.add_remove + self.replace

    @property
    def total(self) -> Fraction:
        return self.in_units(self.n_replace > 0)


def over_cap_message(before: Totals, eps: Fraction, kind: str, cap: Fraction, after: Fraction) -> str:
    """Why a release of `eps` (under `kind`) is refused: the group's releases `before` and it would make `after`,
    above `cap`. In replace-one units (with both sums) once a replace-one release is involved, else as always."""
    if before.n_replace or kind == REPLACE:
        return (f"privacy budget exceeded for this dataset: these releases together would be ε = {fmt(after)} "
                f"{UNIT_WORDS[REPLACE]} (add/remove releases count twice: a replacement is a removal and an "
                f"addition), above the cap {fmt(cap)}; this release needs ε = {fmt(eps)} {UNIT_WORDS[kind]}, the "
                f"releases before it spent ε = {fmt(before.add_remove)} {UNIT_WORDS[ADD_REMOVE]} and ε = "
                f"{fmt(before.replace)} {UNIT_WORDS[REPLACE]}.")
    spent = before.total
    return (f"privacy budget exceeded for this dataset: spent ε = {fmt(spent)} of the cap {fmt(cap)}, this release "
            f"needs ε = {fmt(eps)} but only {fmt(max(cap - spent, Fraction(0)))} is left.")


def units_note(budget) -> str:
    """What a budget's ε total is stated for, to follow the number in a budget line (CLI, window): empty while
    every release is add/remove (the plain sum, worded as always), else " for one record replaced (add/remove
    releases count twice: …)" with the two sums."""
    if not getattr(budget, "replace_releases", 0):
        return ""
    from ppdp_gui.engine.claims import epsilon_text
    return (f" {UNIT_WORDS[REPLACE]} (add/remove releases count twice: {epsilon_text(budget.spent_add_remove)} "
            f"{UNIT_WORDS[ADD_REMOVE]}, {epsilon_text(budget.spent_replace)} {UNIT_WORDS[REPLACE]})")


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
    """ε in the ledger's messages: the one spelling of every document (claims.epsilon_text)."""
    from ppdp_gui.engine.claims import epsilon_text
    return epsilon_text(value)


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
    neighbouring: str = ADD_REMOVE  # ADD_REMOVE or REPLACE: the relation its ε is stated for

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "fingerprint": self.fingerprint, "budget": self.budget or self.fingerprint,
                "mechanism": self.mechanism, "params": self.params, "epsilon": str(self.epsilon),
                "delta": str(self.delta), "created": self.created, "output_hash": self.output_hash,
                "completed": self.completed, "label": self.label, "release_id": self.release_id,
                "neighbouring": self.neighbouring}


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
    #: the group's releases split by neighbouring; `spent` and `own_spent` are in the group's `units`
    spent_add_remove: Fraction = Fraction(0)
    spent_replace: Fraction = Fraction(0)
    replace_releases: int = 0

    @property
    def remaining(self) -> Fraction | None:
        return None if self.cap is None else max(self.cap - self.spent, Fraction(0))

    @property
    def units(self) -> str:
        """REPLACE once the group holds a replace-one release (its total is then Σ replace + 2·Σ add/remove)."""
        return REPLACE if self.replace_releases else ADD_REMOVE


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
    #: the canonical cells (sketches.CellHashes) and keyed person ids, for matching edited copies; in memory only
    cells: Any = field(default=None, repr=False, compare=False)
    persons: "np.ndarray | None" = field(default=None, repr=False, compare=False)

    @property
    def is_near_copy(self) -> bool:
        """Charged to another dataset's budget (a near copy not declared separate)."""
        return self.budget != self.fingerprint


@dataclass(frozen=True)
class CapChange:
    """A budget group's cap set or changed: from `old` (None: no cap before) to `new`, by whom, when and why."""

    budget: str
    old: Fraction | None
    new: Fraction
    who: str
    at: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"budget": self.budget, "old": None if self.old is None else str(self.old), "new": str(self.new),
                "who": self.who, "at": self.at, "reason": self.reason}


@dataclass(frozen=True)
class Budget:
    """The ε budget of a dataset's group. `default_cap_applied`: the group does not exist yet and the cap shown
    is the default it will get at its first release. `remaining` is None only for an uncapped (schema-1) group.

    `spent` is the sound total in the group's `units`: the plain sum while every release is add/remove ε-DP;
    Σ replace ε + 2·Σ add/remove ε (for one record replaced) once a replace-one release is among them, with the
    two sums in `spent_add_remove` and `spent_replace` (see `combined_total`)."""

    cap: Fraction | None
    spent: Fraction
    spent_delta: Fraction
    remaining: Fraction | None
    releases: int
    default_cap_applied: bool
    # the breakdown of `spent` (not compared: `spent` and `replace_releases` already say what binds)
    spent_add_remove: Fraction = field(default=Fraction(0), compare=False)
    spent_replace: Fraction = field(default=Fraction(0), compare=False)
    replace_releases: int = 0
    #: every change of the group's cap (CapChange: who, when, why), oldest first; shown in the custodian record
    cap_changes: tuple = field(default=(), compare=False)

    @property
    def units(self) -> str:
        return REPLACE if self.replace_releases else ADD_REMOVE

