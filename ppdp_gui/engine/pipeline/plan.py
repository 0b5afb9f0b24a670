"""Step 2 of the publish path: what a release would do, known before anything is spent.

`plan` resolves the parameters once (`Plan.params`: the resolved values that the mechanism's `problems`, `cost`
and `execute` then receive, never coercing again), validates them, prices the release, checks that every domain
the guarantee relies on is public, and looks up the budget of the dataset (a near copy of a known table shares
that table's budget). A required column parameter with no column to choose from is a problem here, so the window
and `ppdp run` see it alike. The window shows a Plan as its preview and sends that very Plan to its worker;
`charged_release` (pipeline/release.py) refuses or runs one. Nothing here writes anything.

Domains: a DP mechanism lists the domains it needs (`Mechanism.domain_needs`). A need met only by the data (no
domain, or a domain / taxonomy built from the records) is an error naming the column — unless the custodian opts
in (`allow_data_domains`), in which case the plan fills those domains from the records and the release is
labelled "not ε-DP: domain of C taken from the data" in the window, the note, the record and the ledger.

Roles and kinds: a DP plan refuses, naming each, the columns whose role or kind is still the reader's guess from
the values (`ColumnSpec.guessed`: a code column with half its values distinct is guessed an identifier, a column
with more than 10 distinct numbers numeric — one record can flip either, and with it the released columns). The
custodian states them (`--role`, `--kind`, the Data step's combos) or confirms the guesses shown (the Data step's
"Confirm roles and kinds", `--confirm-roles`). A guess from the column's name alone stands (`Reason.from_values`),
and a never-released column's kind does not matter. With the data-domain opt-in the release is labelled instead.
k-anonymity releases are not affected (their guarantee is recounted on the released groups themselves).

Row counts: a mechanism that is ε-DP for one record *replaced* (DP-PCA, Laplace / Exponential on records)
publishes n as public, so it refuses a table read with "drop rows with a missing value" (`replace_one_drop_message`):
under that policy n depends on the data. Missing values are kept as a category by default, so n is the number of
rows in the file, and columns never released cost no row under any policy.

Identifying columns: a record-level release (Mondrian, TDS, Fragmentation) publishes every column that is neither
an identifier nor a quasi-identifier with its values unchanged (`Mechanism.published_columns`). One of those with
a different value in nearly every row (a patient number guessed insensitive) would identify patients while the
release still says "k-anonymous", so it is an error naming the column — unless the custodian confirmed that the
column may be published (`publish_as_is`; the custodian record keeps the confirmation as a warning).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import pandas as pd

from ppdp_gui.engine.claims import epsilon_text
from ppdp_gui.engine.data.domains import fill_from_data, need_status
from ppdp_gui.engine.data.linkable import unprotected
from ppdp_gui.engine.data.missing import impute_public, left_out_by_the_data
from ppdp_gui.engine.data.schema import Dataset, Role
from ppdp_gui.engine.errors import ParameterError, PpdpError
from ppdp_gui.engine.mechanisms import registry
from ppdp_gui.engine.mechanisms.base import Mechanism, PrivacyCost, Problem
from ppdp_gui.engine.privacy.ledger_types import ADD_REMOVE, REPLACE, UNIT_WORDS, combined_total


def resolve_mechanism(mechanism) -> Mechanism:
    """A mechanism instance from a registry name, a class or an instance."""
    if isinstance(mechanism, str):
        return registry.create(mechanism)
    if isinstance(mechanism, type):
        return mechanism()
    return mechanism


@dataclass(frozen=True)
class NeedState:
    column: str
    what: str  # "bounds" | "categories"
    status: str  # "public" | "data" | "missing"


@dataclass
class Plan:
    """A release about to be made: the mechanism, resolved parameters, the dataset as it will run (with any
    opted-in data domains), its cost, every problem found, the caveats, and the budget it will be charged to."""

    mechanism: Mechanism
    params: dict[str, Any]
    dataset: Dataset
    cost: PrivacyCost | None = None
    problems: list[Problem] = field(default_factory=list)
    needs: list[NeedState] = field(default_factory=list)
    caveats: list[str] = field(default_factory=list)
    allow_data_domains: bool = False
    separate_dataset: bool = False
    identity: Any = None  # ledger DatasetIdentity (DP releases with a ledger)
    budget: Any = None  # ledger Budget of that identity
    publish_as_is: tuple[str, ...] = ()  # published as is although nearly unique: the custodian said so
    #: published columns that are unique or nearly unique per row (confirmed or not): the window lists them
    identifying_columns: tuple[str, ...] = ()
    #: a DP plan's columns whose role or kind is still a guess read from the values (Dataset.guessed_columns)
    unconfirmed_columns: tuple[str, ...] = ()
    #: columns someone else can know (data/linkable.Linkable, with the reason) published unchanged: a warning the
    #: Run step lists with its buttons and `ppdp run` prints; not an error
    linkable: tuple = ()

    @property
    def name(self) -> str:
        return self.mechanism.name

    @property
    def claims(self) -> tuple:
        """The guarantee the release will carry, declared before the run from the resolved parameters (the same
        objects the release holds; its cost's k, l and ε are read from them)."""
        if self.cost is None:
            return ()
        return tuple(self.mechanism.declared_claims(self.dataset, self.params))

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.level == "error"]

    @property
    def warnings(self) -> list[str]:
        return [p.message for p in self.problems if p.level == "warning"]

    @property
    def is_dp(self) -> bool:
        return bool(self.cost is not None and self.cost.is_dp)

    @property
    def data_domain_columns(self) -> list[str]:
        return [n.column for n in self.needs if n.status != "public"]

    @property
    def replace_one_total(self) -> Fraction | None:
        """The budget group's sound total with this release, in replace-one units, when this release or one
        before it is ε-DP only for one record replaced (add/remove releases then count twice); None otherwise,
        when the total is the plain sum of ε (see engine/privacy/ledger_types.combined_total)."""
        b = self.budget
        if not self.is_dp or b is None:
            return None
        kind = self.cost.neighbouring
        before = getattr(b, "replace_releases", 0)
        if kind != REPLACE and not before:
            return None
        return combined_total(b.spent, before, self.cost.epsilon, kind)

    @property
    def over_budget(self) -> bool:
        b = self.budget
        if not (self.is_dp and b is not None and b.remaining is not None):
            return False
        total = self.replace_one_total
        if total is not None:
            return total > Fraction(b.cap)
        return Fraction(self.cost.epsilon) > Fraction(b.remaining)

    @property
    def ok(self) -> bool:
        return not self.errors and not self.over_budget

    def budget_text(self) -> str:
        """The budget line of the preview, in words."""
        if self.cost is None:
            return ""
        if not self.is_dp:
            if self.cost.k is None and not self.cost.l:
                return ("Not charged to the ε budget: this mechanism gives no formal privacy guarantee; check the "
                        "risk figures in Results before you publish.")
            return ("Not charged to the ε budget: this mechanism's guarantee is about the groups in the released "
                    f"table ({self.cost.describe(with_note=False)}), so it spends no ε.")
        eps = epsilon_text(self.cost.epsilon)
        b, ident = self.budget, self.identity
        if b is None:
            return f"This run will spend ε = {eps}."
        text = ""
        if ident is not None and getattr(ident, "near_copy_of", None):
            sim = getattr(ident, "similarity", None)
            text = ("This table is a near copy of one released before"
                    + (f" (about {100 * sim:.0f} % of its rows are shared)" if sim is not None else "")
                    + ", so it shares that table's budget. ")
        total = self.replace_one_total
        if total is not None:
            return text + self._replace_one_text(total)
        if b.remaining is None:
            return text + (f"This run will spend ε = {eps}. No budget cap is set for this table; ε spent on it so "
                           f"far: {epsilon_text(b.spent)}.")
        text += (f"This run will spend ε = {eps} of the {epsilon_text(b.remaining)} left for this table (cap "
                 f"{epsilon_text(b.cap)}, spent so far {epsilon_text(b.spent)}).")
        if getattr(b, "default_cap_applied", False):
            text += " The cap is the default for a new table; you can change it."
        if self.over_budget:
            text += (" That is more than is left of this table's privacy budget: lower ε or raise the cap "
                     "deliberately.")
        return text

    def _replace_one_text(self, total: Fraction) -> str:
        """The budget line when a replace-one release is involved: the sound total in replace-one units."""
        b, kind = self.budget, self.cost.neighbouring
        text = (f"This run will spend ε = {epsilon_text(self.cost.epsilon)} {UNIT_WORDS[kind]}. These releases "
                f"together: ε = {epsilon_text(total)} {UNIT_WORDS[REPLACE]} (add/remove releases count twice: a "
                "replacement is a removal and an addition; a replace-one release gives no guarantee for one "
                "record added or removed).")
        if b.cap is None:
            return text + " No budget cap is set for this table."
        units = UNIT_WORDS[REPLACE if getattr(b, "replace_releases", 0) else ADD_REMOVE]
        text += f" The cap is ε = {epsilon_text(b.cap)}; spent so far ε = {epsilon_text(b.spent)} {units}."
        if getattr(b, "default_cap_applied", False):
            text += " The cap is the default for a new table; you can change it."
        if total > Fraction(b.cap):
            text += (" That is more than this table's privacy budget allows: lower ε or raise the cap "
                     "deliberately.")
        return text


def _domain_problems(needs: list[NeedState]) -> list[Problem]:
    """One problem per column whose domain is missing (the window offers to set each); the first says why in
    full, the others briefly, so nine code-list columns read as a list rather than nine copies of a paragraph."""
    problems = []
    for n in needs:
        if n.status == "public":
            continue
        what, example = (("public lower and upper bounds", "a range everyone knows, such as 0 to 120 for an age")
                          if n.what == "bounds" else
                          ("a public list of its values", "the values of a published code list"))
        why = ("its only domain was built from the table's own values" if n.status == "data"
               else "it has no domain")
        if problems:
            message = f"{n.column} needs {what} too ({why})."
        else:
            message = (f"{n.column} needs {what} for a differentially private release, but {why}. Reading it from "
                       f"the data would reveal the table's own values. Set the domain of {n.column} ({example}), or "
                       "explicitly allow domains from the data — the release is then not ε-differentially private.")
        problems.append(Problem(message, column=n.column))
    return problems


CONFIRM_BUTTON = "Confirm roles and kinds"
KEEP_MISSING = "Keep missing as its own category"


def replace_one_drop_message(name: str) -> str:
    """Why a replace-one mechanism refuses a table read with "drop rows with a missing value": it states n as
    public, and under that policy n depends on the data (one record with a blank more or less changes it)."""
    return (f"{name} is differentially private for one record replaced: it treats the number of rows as public. "
            "Rows with a missing value are being dropped, so that number depends on the data (replacing one "
            "patient by one with a blank changes it) and the release would not be private. In the Data step, "
            f"choose “{KEEP_MISSING}” under Missing values and press “Reload with this policy” (ppdp: --na "
            "category), or choose a mechanism that is private for one record added or removed (Laplace "
            "histogram, DiffGen, DP-LDA).")


def guessed_caveat(columns) -> str:
    """The caveat of a release made with roles or kinds read from the values (explicit opt-in only)."""
    return f"roles or kinds of {', '.join(columns)} guessed from the data, not confirmed"


def guessed_problem(columns) -> Problem:
    """The refusal of a DP plan whose columns' roles or kinds are guesses read from the values, naming each."""
    one = len(columns) == 1
    names = ", ".join(columns)
    return Problem(
        f"The role or kind of {names} {'was' if one else 'were'} guessed from the table's values (how many "
        "different values a column has, whether they look like numbers), and one patient more or less can change "
        "such a guess — and with it what the release contains. A differentially private release must not depend "
        f"on that. Check {'its' if one else 'each'} role and kind in the Data step, then press “{CONFIRM_BUTTON}” "
        "(ppdp: --confirm-roles, or --role COLUMN=ROLE and --kind COLUMN=numeric|categorical for each); or "
        "explicitly allow domains from the data — the release is then not ε-differentially private.")


#: a published column is identifying when this share of its rows hold distinct values …
DISTINCT_SHARE = 0.9
#: … or when this share of rows hold a value no other row has
UNIQUE_ROW_SHARE = 0.5
#: tables smaller than this are not checked (in a few dozen rows most numbers are unique by chance)
IDENTIFYING_MIN_ROWS = 50


def uniqueness(values: pd.Series) -> tuple[float, float]:
    """(share of rows holding distinct values, share of rows whose value no other row has), missing values
    counted as a value. A strided sample of 5,000 rows decides first: a column far from unique there (most
    columns) is not counted in full, so the preview stays quick on large tables."""
    n = len(values)
    if n == 0:
        return 0.0, 0.0
    if n > 20_000:
        sample = values.iloc[:: n // 5_000]
        if sample.nunique(dropna=False) < 0.5 * len(sample):
            return float(sample.nunique(dropna=False)) / len(sample), 0.0
    counts = values.value_counts(dropna=False, sort=False).to_numpy()
    return float(counts.size) / n, float((counts == 1).sum()) / n


def identifying_problems(data: Dataset, columns: list[str], confirmed=()) -> list[Problem]:
    """An error per column the release would publish unchanged that is unique or nearly unique per row (see the
    module docstring); a warning for each such column the custodian confirmed."""
    if data.n_rows < IDENTIFYING_MIN_ROWS:
        return []
    confirmed = set(confirmed or ())
    problems = []
    from ppdp_gui.engine.bigdata.large_dataset import is_large
    large = is_large(data)
    for name in columns:
        if name not in data.frame.columns:
            continue
        if large:  # counted in SQL on the whole file (engine/bigdata)
            from ppdp_gui.engine.bigdata.large_dataset import uniqueness_sql
            distinct, unique = uniqueness_sql(data.table, name)
        else:
            distinct, unique = uniqueness(data.frame[name])
        if distinct < DISTINCT_SHARE and unique < UNIQUE_ROW_SHARE:
            continue
        fact = (f"{name} has a different value in {100 * distinct:.0f} % of rows" if distinct >= DISTINCT_SHARE
                else f"in {100 * unique:.0f} % of rows, {name} has a value no other row has")
        if name in confirmed:
            problems.append(Problem(f"{fact}; it is published as is because you confirmed it may be published.",
                                    level="warning", column=name))
        else:
            problems.append(Problem(
                f"{fact}: publishing it would identify patients. Mark it as an identifier (it is then left out), "
                "as a quasi-identifier (it is then generalised), or confirm it may be published.", column=name))
    return problems


def plan(data: Dataset, mechanism, params: dict[str, Any] | None = None, *, ledger=None,
         allow_data_domains: bool = False, separate_dataset: bool = False,
         publish_as_is=()) -> Plan:
    """The Plan of releasing `data` with `mechanism` and `params` (nothing is charged or written).
    `publish_as_is`: columns the custodian confirmed may be published as is although nearly unique."""
    mech = resolve_mechanism(mechanism)
    params = dict(params or {})
    out = Plan(mech, {}, data, allow_data_domains=allow_data_domains, separate_dataset=separate_dataset,
               publish_as_is=tuple(publish_as_is or ()))
    from ppdp_gui.engine.data.roles import person_columns_problem
    if (two := person_columns_problem(data.names_with_role(Role.PERSON))) is not None:  # for every mechanism
        out.problems.append(Problem(two, column=data.names_with_role(Role.PERSON)[1]))
    # a required column parameter with nothing to choose from, said with the step that fixes it
    out.problems += [Problem(text, param=spec.name) for spec in mech.params
                     if (text := spec.no_column_problem(data))]
    from ppdp_gui.engine.bigdata.large_dataset import is_large
    if is_large(data) and not getattr(mech, "large_tables", False):
        out.problems.append(Problem(f"{mech.name} needs the whole table in memory; the large-table engine "
                                    "(DuckDB) runs DiffGen, Global recoding and Mondrian"))
        return out
    try:
        out.params = mech.resolve_params(**params)
        out.cost = mech.declared_cost(data, out.params)  # from the claims it declares: ε per person or per row
    except ParameterError as exc:
        out.problems.append(Problem(str(exc)))
        return out
    check_data = data
    if out.cost.is_dp:
        try:
            needs = mech.domain_needs(data, out.params)
        except PpdpError as exc:
            needs = []
            out.problems.append(Problem(str(exc)))
        out.needs = [NeedState(n.column, n.what, need_status(data, n)) for n in needs]
        unmet = [n for n, s in zip(needs, out.needs) if s.status != "public"]
        if unmet and is_large(data):  # its frame has no rows to read a domain from: state them, always
            out.problems += _domain_problems(out.needs)
            if allow_data_domains:
                out.problems.append(Problem("domains are not read from the data of a table opened with the "
                                            "large-table engine: state them (--domain)"))
            unmet = []
        if unmet:
            try:
                check_data, caveats = fill_from_data(data, unmet)
            except PpdpError as exc:
                out.problems.append(Problem(str(exc)))
                caveats = []
            if allow_data_domains:
                out.dataset, out.caveats = check_data, caveats
            else:
                out.problems += _domain_problems(out.needs)
        # rows are kept: an empty number cell gets the middle of its public range (per record; see missing.py)
        filled, notes = impute_public(check_data)
        if notes:
            if out.dataset is data and check_data is not data:  # domains filled only to check: not released
                out.dataset = impute_public(data)[0]
            else:
                out.dataset = filled
            check_data = filled
            out.problems += [Problem(n, level="warning") for n in notes]
        if out.cost.neighbouring == REPLACE and (data.source.na_policy.action == "drop"
                                                                   or data.source.n_rows_dropped):
            out.problems.append(Problem(replace_one_drop_message(mech.name)))
        out.unconfirmed_columns = tuple(data.guessed_columns)
        if out.unconfirmed_columns and allow_data_domains:
            out.caveats = list(out.caveats) + [guessed_caveat(out.unconfirmed_columns)]
        elif out.unconfirmed_columns:
            out.problems.append(guessed_problem(out.unconfirmed_columns))
        by_data = left_out_by_the_data(data.source)
        if by_data and allow_data_domains:
            out.caveats = list(out.caveats) + [f"column {c} left out because the data has it mostly missing"
                                               for c in by_data]
        elif by_data:
            one = len(by_data) == 1
            out.problems.append(Problem(
                f"{', '.join(by_data)} {'was' if one else 'were'} left out because most of "
                f"{'its' if one else 'their'} values are missing — a choice read from the data, which a "
                f"differentially private release must not depend on. Leave {'it' if one else 'them'} out by name "
                f"(Data step: “Leave out by name”; ppdp: --leave-out {by_data[0]}), or keep missing values as "
                "their own category.", column=by_data[0]))
    try:
        found = mech.problems(check_data, out.params)  # resolved above, once: never coerced again
    except PpdpError as exc:
        found = [Problem(str(exc))]
    seen = {p.message for p in out.problems}
    out.problems += [p for p in found if p.message not in seen]
    try:
        published = mech.published_columns(data, out.params)
        found_identifying = identifying_problems(data, published, out.publish_as_is)
        out.identifying_columns = tuple(p.column for p in found_identifying if p.column)
        out.problems += found_identifying
        out.linkable = tuple(f for f in unprotected(data, published) if f.column not in out.identifying_columns)
    except PpdpError as exc:
        out.problems.append(Problem(str(exc)))
    if out.cost.is_dp and ledger is not None:
        try:
            out.identity = ledger.identify(data, label=data.source.path or "", separate=separate_dataset)
            out.budget = ledger.budget(out.identity)
        except PpdpError as exc:
            out.problems.append(Problem(f"the privacy budget ledger cannot be used: {exc}"))
    return out


def runnable(mechanism, data: Dataset) -> bool:
    """Whether `mechanism` with its default parameters has no error-level problem on `data` (the Mechanism step's
    first choice): every required column parameter has a column to choose from, and its own checks pass."""
    try:
        mech = resolve_mechanism(mechanism)
        if any(spec.no_column_problem(data) for spec in mech.params):
            return False
        return not [p for p in mech.validate(data) if p.level == "error"]
    except Exception:  # noqa: BLE001 - a mechanism that cannot even be checked is not a good default
        return False
