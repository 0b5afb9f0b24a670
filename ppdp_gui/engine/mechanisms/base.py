"""The one contract every mechanism implements; the GUI and CLI are drawn from it alone.

A mechanism declares its parameters (`ParamSpec`), says what a run will cost before it starts (`cost`), checks
the data and parameters without spending anything (`problems`, its own part in `check`), and runs as a generator
that yields `Progress` and finally one `Release`. Parameters are resolved once, at the entry (the plan; or the
loose-value entries `privacy_cost`, `validate`, `run`); everything after receives them resolved. Cancellation is
the caller closing the generator.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, ClassVar, Generator, Iterator, Literal, Mapping

import pandas as pd

from ppdp_gui.engine.claims import Neighbouring, Unit, dp_claim, epsilon_text, k_text
from ppdp_gui.engine.data.schema import Dataset, Role
from ppdp_gui.engine.errors import ParameterError

ParamKind = Literal["float", "int", "choice", "bool", "column", "columns"]


@dataclass(frozen=True)
class ParamSpec:
    """One parameter, enough to draw a slider / combo / column picker and to validate a value.

    kind "column" / "columns" pick one / several columns of the data; `roles` and `column_kind` restrict
    which columns are offered (e.g. the class column of DiffGen). An empty choice ("") means "none".

    `help` is the one plain sentence a custodian reads under the editor; `formula` the exact rule behind it (shown
    in a tooltip, for whoever checks). `more_private` says which way the parameter buys privacy ("lower" for ε,
    "higher" for k), so a simulation's advice can lean towards privacy when results are as good; None when the
    parameter does not change the guarantee (e.g. DiffGen's h).

    `special` is a value that is no quantity but a switch — 0 for "automatic" (the mechanism picks the width) or
    for "off" (no t-closeness) — with the word shown for it instead of the number: a nurse reads "0.0000" in an
    "Interval width" box as a tiny width, not as "the tool decides". `decimals` is how many decimals a float's
    box shows (None: from its range).
    """

    name: str
    label: str
    kind: ParamKind
    default: Any = None
    low: float | None = None
    high: float | None = None
    log_scale: bool = False
    choices: tuple[str, ...] = ()
    help: str = ""
    roles: tuple[Role, ...] = ()
    column_kind: Literal["numeric", "categorical"] | None = None
    optional: bool = False
    formula: str = ""
    more_private: Literal["lower", "higher"] | None = None
    special: tuple[float, str] | None = None
    decimals: int | None = None

    def coerce(self, value: Any) -> Any:
        """The value in this parameter's type, or ParameterError naming the parameter and the allowed range."""
        if value is None:
            if self.optional:
                return None
            raise ParameterError(f"{self.label}: a value is required")
        try:
            if self.kind == "float":
                v = float(value)
                if not math.isfinite(v):
                    raise ValueError
            elif self.kind == "int":
                if isinstance(value, float) and not value.is_integer():
                    raise ValueError
                v = int(value)
            elif self.kind == "bool":
                if isinstance(value, str):
                    if value.lower() not in {"true", "false", "1", "0", "yes", "no"}:
                        raise ValueError
                    v = value.lower() in {"true", "1", "yes"}
                else:
                    v = bool(value)
            elif self.kind == "choice":
                v = str(value)
                if v not in self.choices:
                    raise ParameterError(f"{self.label}: {v!r} is not one of {', '.join(self.choices)}")
            elif self.kind == "column":
                v = str(value)
            elif self.kind == "columns":
                v = tuple(value.split(",")) if isinstance(value, str) else tuple(str(x) for x in value)
                v = tuple(x.strip() for x in v if x.strip())
            else:  # pragma: no cover - guarded by ParamKind
                raise ParameterError(f"unknown parameter kind {self.kind}")
        except (TypeError, ValueError):
            raise ParameterError(f"{self.label}: {value!r} is not a valid {self.kind}") from None
        problem = self.range_problem(v)
        if problem:
            raise ParameterError(f"{self.label}: {problem}")
        return v

    def range_problem(self, value: Any) -> str:
        """'' when a number lies in this parameter's range, else what is allowed, in the words both the window's
        field (shown under it while typing) and `coerce` (the plan's refusal, `ppdp run`'s message) use."""
        if value is None or self.kind not in ("float", "int"):
            return ""
        fmt = (lambda v: f"{int(v)}") if self.kind == "int" else (lambda v: f"{v:g}")
        if self.low is not None and value < self.low:
            return (f"{fmt(value)} is below the smallest allowed value, {fmt(self.low)}. Nothing can run until you "
                    "change it.")
        if self.high is not None and value > self.high:
            return (f"{fmt(value)} is above the largest allowed value, {fmt(self.high)}. Nothing can run until you "
                    "change it.")
        return ""

    def allowed_columns(self, data: Dataset | None) -> list[str]:
        """The columns a "column" / "columns" parameter may take on `data`: filtered by `roles` and
        `column_kind` (the window's pickers offer these; the plan says when a required one has none)."""
        if data is None:
            return []
        return [c.name for c in data.schema
                if (not self.roles or c.role in self.roles) and (self.column_kind is None or c.kind == self.column_kind)]

    def no_column_problem(self, data: Dataset | None) -> str:
        """'' unless this is a required column parameter with no column of `data` to choose from; then what to do
        about it, naming the Data step."""
        if self.kind not in ("column", "columns") or self.optional or self.allowed_columns(data):
            return ""
        if self.roles:
            return (f"{self.label}: no column has the role {' or '.join(r.label for r in self.roles)}; set one in "
                    f"the Data step (ppdp: --role COLUMN={self.roles[0].value}).")
        return (f"{self.label}: no column is {self.column_kind or 'there to choose'}; set one's kind in the Data step "
                f"(ppdp: --kind COLUMN={self.column_kind or 'categorical'}).")


@dataclass(frozen=True)
class Problem:
    """Something wrong (error: cannot run) or doubtful (warning) found before a run."""

    message: str
    level: Literal["error", "warning"] = "error"
    param: str | None = None
    column: str | None = None


@dataclass(frozen=True)
class PrivacyCost:
    """What a release costs or guarantees, known before it runs. ε and δ are exact fractions for the ledger."""

    epsilon: Fraction | None = None
    delta: Fraction = Fraction(0)
    k: int | None = None
    l: int | None = None
    note: str = ""
    #: the neighbouring relation ε is stated for (the DifferentialPrivacy claim's); the ledger adds up releases of
    #: the two relations soundly (engine/privacy/ledger_types.combined_total)
    neighbouring: Neighbouring = Neighbouring.ADD_REMOVE
    #: whom ε protects: every row of one person (at most c) or one row (the DifferentialPrivacy claim's unit)
    unit: Unit = Unit()

    def __post_init__(self):
        if not isinstance(self.neighbouring, Neighbouring):
            raise TypeError("PrivacyCost.neighbouring must be a Neighbouring, not words")

    @property
    def is_dp(self) -> bool:
        return self.epsilon is not None

    def describe(self, with_note: bool = True) -> str:
        """"ε = 1, k = 5, <note>"; without the note it fits a list row."""
        parts = []
        if self.epsilon is not None:
            per = f" per {self.unit.noun}" if self.unit.person_column else ""
            parts.append(f"ε = {epsilon_text(self.epsilon)}{per}")
            if self.delta:
                parts.append(f"δ = {float(self.delta):.3g}")
        if self.k is not None:
            parts.append(k_text(self.k))
        if self.l:
            parts.append(f"l = {self.l}")
        if self.note and with_note:
            parts.append(self.note)
        return ", ".join(parts) if parts else "no formal guarantee"


def cost_from_claims(claims, note: str = "") -> PrivacyCost:
    """The price of a release derived from the DP claim it declares (one source for the cost shown before the run,
    the ledger's charge and the note): ε, δ, the neighbouring relation and the unit."""
    dp = dp_claim(claims)
    if dp is None:
        return PrivacyCost(note=note)
    return PrivacyCost(epsilon=dp.epsilon, delta=dp.delta, note=note, neighbouring=dp.neighbouring, unit=dp.unit)


@dataclass(frozen=True)
class ReleaseShape:
    """What a release will hold, said before it runs from public facts (parameters, roles, domains) — so the
    window can tell a custodian which columns go out and what one row is, for any mechanism.

    `columns`: the main table's columns, a count column included; `count_column`: set when the table is one row
    per combination of the other columns with a count (not one row per person); `noisy`: the counts (or choices)
    carry random noise, so combinations nobody in the table has can appear and the counts do not add up to the
    table's rows; `per_person`: one row per record of the source table; `sentences`: the mechanism's own plain
    sentences (how to expand counts, what is generalised, …)."""

    columns: tuple[str, ...] = ()
    count_column: str | None = None
    noisy: bool = False
    per_person: bool = False
    sentences: tuple[str, ...] = ()


@dataclass(frozen=True)
class Progress:
    fraction: float  # 0..1
    message: str = ""


@dataclass(frozen=True)
class Release:
    """What a run produced. `table` is what gets exported; `extra_tables` holds further parts (e.g. fragments).

    What a release says is split by who may read it:
    - `claims`: the typed guarantees (engine/claims.py) the independent checker recounts on the written file;
    - `note`: facts for the *release note* that goes out with the file — only public parameters, public domains
      and what the mechanism's noise produced (the cut DiffGen chose, the noise scale), never a figure computed
      from the records;
    - `record`: facts for the *custodian record* that stays on this computer — anything computed from the
      records (how many values were clamped, exact group counts, what measures need);
    - `warnings`: messages for the custodian (they may count records, so they never go into the note).
    `apply_to` generalises unseen data the way the release did (DiffGen's cut on a test set), if meaningful.
    """

    mechanism: str
    table: pd.DataFrame
    cost: PrivacyCost
    params: Mapping[str, Any]
    claims: tuple = ()
    note: Mapping[str, Any] = field(default_factory=dict)
    record: Mapping[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    extra_tables: Mapping[str, pd.DataFrame] = field(default_factory=dict)
    apply_to: Callable[[pd.DataFrame], pd.DataFrame] | None = None
    #: rows too many for memory (engine/bigdata/output.py `SqlRecords`): then `table` has the columns and no rows,
    #: the publish path recounts the claims in SQL and the export writes the rows with DuckDB's COPY
    records: Any = None
    #: positions of the source rows the run used, in the order it used them (None: every row, in order). Set when
    #: the contribution bound per person kept a sample (engine/mechanisms/contribution.py); for the custodian's
    #: figures only, never in the note
    rows_used: Any = None
    #: per released table (by the name claims use), the position in the source table of each of its rows, in the
    #: order they are written — custodian side only, never written. With a person column the publish path takes
    #: the source's person ids at these positions, so the checker can recount persons (engine/checks/persons.py)
    source_rows: Mapping[str, Any] = field(default_factory=dict)

    def tables(self) -> dict[str, pd.DataFrame]:
        """Every released table by the name claims use ("table" for the main one)."""
        return {"table": self.table, **dict(self.extra_tables)}


class Mechanism:
    """Base class implementing the protocol's shared parts; subclasses set the ClassVars and `_run`."""

    name: ClassVar[str]
    guarantee: ClassVar[str]  # "ε-DP", "k-anonymity", "synthetic (no formal DP)"
    summary: ClassVar[str] = ""
    params: ClassVar[tuple[ParamSpec, ...]] = ()
    #: runs on a table larger than memory (engine/bigdata: a LargeDataset, whose frame has no rows); the plan
    #: refuses such a table for any other mechanism
    large_tables: ClassVar[bool] = False

    # -- parameters -----------------------------------------------------------------------------------------
    @classmethod
    def param(cls, name: str) -> ParamSpec:
        for p in cls.params:
            if p.name == name:
                return p
        raise ParameterError(f"{cls.name} has no parameter {name!r}")

    @classmethod
    def resolve_params(cls, **params: Any) -> dict[str, Any]:
        """Defaults filled in, every value coerced and range-checked; unknown names are an error."""
        known = {p.name for p in cls.params}
        unknown = set(params) - known
        if unknown:
            raise ParameterError(f"{cls.name} has no parameter(s) {', '.join(sorted(unknown))}; "
                                 f"it takes {', '.join(sorted(known))}")
        return {p.name: p.coerce(params.get(p.name, p.default)) for p in cls.params}

    # -- protocol -------------------------------------------------------------------------------------------
    # Validated once, at the public entry (scikit-learn's rule): `validate`, `privacy_cost` and `run` take loose
    # values (a script's, a test's) and resolve them; `problems`, `cost` and `execute` take parameters already
    # resolved (`resolve_params`, the Plan's `params`) and never coerce again. The publish path calls only these.
    def validate(self, data: Dataset, **params: Any) -> list[Problem]:
        """Problems of a run with loose `params` on `data` (resolved here once, then `problems`)."""
        try:
            resolved = self.resolve_params(**params)
        except ParameterError as exc:
            return [Problem(str(exc))]
        return self.problems(data, resolved)

    def problems(self, data: Dataset, params: dict[str, Any]) -> list[Problem]:
        """Problems of a run with resolved `params` on `data`: the column parameters, then `check`."""
        resolved = params
        problems = []
        for p in self.params:
            v = resolved[p.name]
            if p.kind in ("column", "columns") and v not in (None, "", ()):
                for col in (v,) if p.kind == "column" else v:
                    if col not in data.frame.columns:
                        problems.append(Problem(f"{p.label}: no column named {col!r}", param=p.name))
                    elif p.column_kind and data.spec(col).kind != p.column_kind:
                        problems.append(Problem(f"{p.label}: column {col!r} is not {p.column_kind}", param=p.name))
        if problems:
            return problems
        return problems + self.check(data, resolved)

    def check(self, data: Dataset, params: dict[str, Any]) -> list[Problem]:
        """Mechanism-specific checks on resolved parameters; override."""
        return []

    def describe_release(self, data: Dataset, params: dict[str, Any]) -> ReleaseShape:
        """What the release will hold (resolved `params`), for the plain words before a run; override. The
        default knows only the mechanism's summary."""
        return ReleaseShape(sentences=(self.summary,) if self.summary else ())

    def privacy_cost(self, **params: Any) -> PrivacyCost:
        """What a run with loose `params` costs (resolved here once, then `cost`)."""
        return self.cost(self.resolve_params(**params))

    def cost(self, params: dict[str, Any]) -> PrivacyCost:  # pragma: no cover - abstract
        """What a run with resolved `params` costs or guarantees, before it runs; override."""
        raise NotImplementedError

    def declared_claims(self, data: Dataset | None, params: dict[str, Any]) -> tuple:
        """The guarantee a run with these resolved parameters will claim, known before it runs (a DP mechanism's
        DifferentialPrivacy claim with its unit and neighbouring relation: contribution.DPMechanism). Default:
        none declared ahead."""
        return ()

    def declared_cost(self, data: Dataset | None, params: dict[str, Any]) -> PrivacyCost:
        """The cost shown before the run on `data` (the plan's); DP mechanisms derive it from `declared_claims`.
        Default: `cost`."""
        return self.cost(params)

    def domain_needs(self, data: Dataset, params: dict[str, Any]) -> list:
        """The columns whose domain must be public for the guarantee to hold (`DomainNeed`s, data/domains.py).
        DP mechanisms override this; the publish path refuses a release whose needs only the data could meet,
        unless the custodian opts in (and the release is then labelled not ε-DP)."""
        return []

    def published_columns(self, data: Dataset, params: dict[str, Any]) -> list[str]:
        """The columns a release would publish with their values unchanged (not generalised, not noised), for
        the publish path's check for identifying columns (pipeline/plan.py). Default: none — right for
        mechanisms that publish only noisy counts or generalised values; record-level mechanisms override it."""
        return []

    def count_noise_per_epsilon(self, data: Dataset, params: dict[str, Any]) -> Fraction | None:
        """c such that each released count carries discrete Laplace noise of scale c/ε — the public error model
        that "ε from accuracy" inverts (engine/mechanisms/target_error.py) and the note's error bars use. From
        public facts only (sensitivity, budget shares, number of tables); None when the mechanism has none."""
        return None

    def run(self, data: Dataset, *, rng, **params: Any) -> Iterator[Progress | Release]:
        """Resolve loose `params` once, check them, then delegate to `_run`. Refuses to start on an error."""
        resolved = self.resolve_params(**params)
        problems = [p for p in self.problems(data, resolved) if p.level == "error"]
        if problems:
            raise ParameterError("; ".join(p.message for p in problems))
        yield from self._run(data, rng=rng, **resolved)

    def execute(self, data: Dataset, *, rng, params: dict[str, Any]) -> Iterator[Progress | Release]:
        """`_run` on parameters the publish path has already resolved and validated (validated once per release)."""
        yield from self._run(data, rng=rng, **params)

    def _run(self, data: Dataset, *, rng, **params: Any) -> Iterator[Progress | Release]:  # pragma: no cover
        raise NotImplementedError

    # -- figures of merit (used by results views and sweeps) -------------------------------------------------
    def measures(self, release: Release, train: Dataset, test: Dataset | None) -> dict[str, float]:
        """Utility / risk figures of one release, e.g. {"CA %": 82.1} or {"NCP %": 11.2}. `train` is what it
        was computed from; `test` is held-out data (when the dataset has a class column) or None."""
        return {}

    def reference_measures(self, train: Dataset, test: Dataset | None) -> dict[str, float]:
        """Reference lines for charts that do not depend on the release (e.g. BA and LA)."""
        return {}

    def noise_estimate(self, data: Dataset, params: dict[str, Any]):
        """How much of a table of noisy counts will be noise, before the run and from public quantities only (a
        `NoiseEstimate`, engine/mechanisms/noise_share.py), for the custodian; None when the release is not a
        table of noisy counts or cannot be planned."""
        return None


def relay_progress(gen: Iterator[Progress | Release], lo: float = 0.0, hi: float = 1.0,
                   prefix: str = "") -> Generator[Progress, None, Release | None]:
    """Re-yield a run's Progress mapped into [lo, hi] (message prefixed); return its Release (None if it had none).

    Closing the outer generator (cancel) closes the run too."""
    release = None
    try:
        for item in gen:
            if isinstance(item, Release):
                release = item
            else:
                yield Progress(lo + (hi - lo) * min(max(item.fraction, 0.0), 1.0), prefix + item.message)
    finally:
        gen.close()
    return release


def run_to_release(gen: Iterator[Progress | Release],
                   on_progress: Callable[[Progress], None] | None = None) -> Release:
    """Drain a run generator; the last item must be the Release."""
    release = None
    for item in gen:
        if isinstance(item, Release):
            release = item
        elif on_progress is not None:
            on_progress(item)
    if release is None:
        raise RuntimeError("mechanism finished without a release")
    return release
