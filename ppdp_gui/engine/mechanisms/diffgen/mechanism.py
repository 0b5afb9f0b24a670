"""DiffGen as a Mechanism: parameters, checks, the exact privacy charge, the release and its utility figures.

Which columns are generalised: the dataset's quasi-identifiers; if none is marked, every column that is not an
identifier or the class column. Only those columns and the class are released (one row per leaf partition ×
class with its noisy count); every other column is left out, since releasing it unchanged would not be DP.

Public domains only (the diffprivlib lesson: bounds read from private data leak them). DiffGen never reads a
domain from the records; `domain_needs` tells the publish path what must be public, and the plan below takes:
- a numeric QI's bounds [lo, hi] (and whole-number grid) from its domain, else from its taxonomy's labels
  (data/domains.py); values outside are clamped onto the bounds (how many: a warning for the custodian only);
- a categorical QI's taxonomy (it is specialised along it); its leaves are its domain, unless the column's domain
  lists the public values, in which case the taxonomy must cover exactly those (a tree built from the data is
  then acceptable: its structure is the custodian's, its values are the public list);
- the class values from the class column's domain, else its taxonomy's leaves.
Whatever comes from a taxonomy or domain marked as read from the data makes the release "not ε-DP" (the
publish path adds that caveat to the claim).

Per person (a column marked Person): at most c rows of each person are used (`max_rows_per_person`, drawn by the
noise source: engine/mechanisms/contribution.py) and the whole algorithm runs by *group privacy* at ε/c per row —
every exponential-mechanism call and the noisy counts — so the c rows of one person lose at most ε together, the ε
charged. Without a person column c plays no part and ε is per row. On a large table the c rows are kept in SQL by
the same rule and draws (bigdata/persons.py) and both counting passes count only them.
"""

from __future__ import annotations

from contextlib import nullcontext
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Iterator

import numpy as np
import pandas as pd

from ppdp_gui.engine.claims import PublicSchema
from ppdp_gui.engine.data.domains import (DomainNeed, category_set, numeric_bounds, spelled_outside,
                                          with_missing)
from ppdp_gui.engine.data.schema import MISSING_LABEL, Dataset, Role
from ppdp_gui.engine.errors import ParameterError, TaxonomyError
from ppdp_gui.engine.mechanisms.base import ParamSpec, Problem, Progress, Release, ReleaseShape
from ppdp_gui.engine.mechanisms.contribution import (GROUP_PRIVACY, MAX_ROWS, DPMechanism, bound_record,
                                                     bound_warnings)
from ppdp_gui.engine.bigdata.large_dataset import distinct_typed, is_large
from ppdp_gui.engine.mechanisms.diffgen.algorithm import (add_count_noise, leaf_cells, noisy_counts,
                                                          positive_noise_mean, specialise)
from ppdp_gui.engine.mechanisms.diffgen.cut import ColumnCut, CutTransform
from ppdp_gui.engine.mechanisms.diffgen.grid import grid_step
from ppdp_gui.engine.mechanisms.diffgen.partition import (CategoricalAttr, NumericAttr, check_values_in_taxonomy,
                                                          numeric_values)
from ppdp_gui.engine.mechanisms.diffgen.scores import UTILITIES, sensitivity
from ppdp_gui.engine.noise.intervals import count_note
from ppdp_gui.engine.noise.sampler import exact_epsilon
from ppdp_gui.engine.taxonomy.icd import categories_version
from ppdp_gui.engine.taxonomy.tree import Taxonomy

OUTPUTS = ("counts", "records")


def predictor_columns(data: Dataset, class_column: str | None) -> list[str]:
    """The QIs DiffGen generalises: marked quasi-identifiers, else all non-identifier, non-class columns."""
    qis = [c for c in data.quasi_identifiers if c != class_column]
    if qis:
        return qis
    return [c.name for c in data.schema
            if c.name != class_column and not c.role.never_released and c.role != Role.CLASS]


@dataclass
class Plan:
    """What a run will use, decided from the schema's public domains and taxonomies alone."""

    class_column: str
    classes: list[str]
    columns: list[str]
    bounds: dict[str, tuple[float, float]]
    bound_source: dict[str, str]
    problems: list[Problem]
    integer: set[str] = field(default_factory=set)  # numeric QIs with an integer domain (integer split points)
    steps: dict[str, float] = field(default_factory=dict)  # numeric QIs: public grid step (split points on it)
    taxonomies: dict[str, Taxonomy] = field(default_factory=dict)  # categorical QIs: the tree specialised along

    @property
    def n_numeric(self) -> int:
        return len(self.bounds)


def _class_column(data: Dataset, params: dict[str, Any]) -> str:
    cls = params.get("class_column") or data.class_column
    if not cls:
        raise ParameterError("DiffGen needs a class column (the outcome the counts should predict, e.g. "
                             "readmitted): choose it under Class column above, or set that column's role to Class "
                             "in the Data step")
    if cls not in data.frame.columns:
        raise ParameterError(f"Class column: no column named {cls!r}")
    return cls


def categorical_taxonomy(data: Dataset, col: str) -> Taxonomy:
    """The tree a categorical QI is specialised along (see the module docstring for the rules)."""
    spec = data.spec(col)
    tax, dom = spec.taxonomy, spec.domain
    public_values = (dom.categories if spec.role == Role.CLASS else with_missing(dom.categories)) \
        if dom is not None and dom.categories is not None else None
    if tax is not None and public_values is not None and MISSING_LABEL not in tax.leaf_values():
        public_values = tuple(v for v in public_values if v != MISSING_LABEL)  # the tree says where blanks go
    if tax is None:
        if public_values is None:
            raise TaxonomyError(f"categorical quasi-identifier {col!r} has neither a taxonomy nor a list of values")
        return Taxonomy.flat(col, public_values, origin=dom.origin)
    if public_values is not None:
        leaves = set(tax.leaf_values())
        if leaves != set(public_values):
            extra, lacking = sorted(leaves - set(public_values)), sorted(set(public_values) - leaves)
            exc = TaxonomyError(f"the taxonomy of {col!r} does not hold exactly the values of its domain"
                                + (f"; not in the domain: {len(extra)} value(s): {spelled_outside(extra, public_values)}"
                                   if extra else "")
                                + (f"; missing from the taxonomy: {lacking[:5]} (in the window: Taxonomies step, "
                                   "select the column, Add missing values)" if lacking else ""))
            exc.column = col  # the window offers to set this column's domain
            raise exc
        if getattr(tax, "origin", "public") == "data" and dom.origin == "public":
            tax = Taxonomy.from_paths(col, tax.to_paths())  # its values are the public list now
    return tax


def outside_taxonomy_message(col: str, tax: Taxonomy, outside: list[str]) -> str:
    """Which values of `col` its tree (or public list) lacks, spelled as the table has them, and what to do in the
    window. Full diagnosis codes ('J18.9') against the shipped ICD list of 3-character categories are the usual
    case: adding them to the list would be wrong (it is the public classification); the ICD builder at the level
    'categories' writes them as their category. For the custodian only (it names values of the table)."""
    shown = spelled_outside(sorted(map(str, outside)), tax.leaf_values())
    head = f"{len(outside)} value(s) of {col} are not in its taxonomy or public list: {shown}"
    version = categories_version(tax)
    if version is not None:
        from ppdp_gui.engine.taxonomy.registry import builder
        label = builder(version).label  # as the Taxonomies step lists it: 'ICD-10 diagnoses'
        return (f"{head}. They are full diagnosis codes, and the list holds 3-character categories: in the "
                f"Taxonomies step select {col}, choose '{label}' with leaves 'categories' and press Build — the "
                "codes are then written as their category (J18.9 → J18)")
    return (f"{head}. If they belong to the public list, add them to it (Set the domain of {col}…), then to the "
            f"tree (Taxonomies step, select {col}, Add missing values)")


def make_plan(data: Dataset, params: dict[str, Any]) -> Plan:
    problems: list[Problem] = []
    cls = _class_column(data, params)
    found = category_set(data.spec(cls))
    if found is None:
        raise ParameterError(f"the class column {cls!r} has no public list of classes: set its domain (e.g. "
                             "'<=50K, >50K') or give it a taxonomy")
    classes = list(found.values)
    large = is_large(data)
    if large:
        from ppdp_gui.engine.mechanisms.diffgen.sql import plan_checks
    seen = distinct_typed(data, cls) if large else data.frame[cls]
    if not set(seen.astype(str).unique()) <= set(classes):
        stray = spelled_outside(sorted(set(seen.astype(str).unique()) - set(classes)), classes)
        exc = ParameterError(f"class column {cls!r} has values outside its list of classes: {stray}; add them to "
                             "its domain, spelled exactly so")
        exc.column = cls  # the window offers to set this column's domain
        raise exc
    if len(classes) < 2:
        raise ParameterError(f"class column {cls!r} needs at least two classes")
    columns = predictor_columns(data, cls)
    if not columns:
        raise ParameterError("DiffGen needs at least one quasi-identifier besides the class column")
    bounds, source, integer, steps, taxonomies = {}, {}, set(), {}, {}
    for col in columns:
        spec = data.spec(col)
        if spec.kind == "categorical":
            tax = categorical_taxonomy(data, col)
            outside = plan_checks(data, col, tax=tax)[0] if large else check_values_in_taxonomy(tax, data.frame[col])
            if outside:
                exc = TaxonomyError(outside_taxonomy_message(col, tax, outside))
                if categories_version(tax) is None:  # the fix is the list: the window offers its dialog
                    exc.column = col  # (for full ICD codes it is the Taxonomies step's builder, not the list)
                raise exc
            taxonomies[col] = tax
            continue
        b = numeric_bounds(spec)
        if b is None:
            raise ParameterError(f"numeric column {col!r} has no public bounds: set its domain (e.g. 0 to 120 for "
                                 "an age) or give it a taxonomy whose labels state the range")
        bounds[col], source[col] = (b.low, b.high), (b.source if b.is_public else "data")
        if b.integer:
            integer.add(col)
        # the grid of split points: the domain's step, else 1 on whole numbers, else a round step from the bounds
        steps[col] = float(b.step) if b.step else (1.0 if b.integer else grid_step(b.low, b.high))
        if large:  # counted in SQL (diffgen/sql.py); the file was checked to hold numbers when opened
            if data.table.nulls.get(col):  # as numeric_values in memory
                raise TaxonomyError(f"numeric column {col!r} has missing or non-numeric values")
            outside = plan_checks(data, col, bounds=(b.low, b.high))[1]
        else:
            x = numeric_values(data.frame[col])
            outside = int(((x < b.low) | (x > b.high)).sum())
        if outside:
            problems.append(Problem(f"{outside} value(s) of {col!r} lie outside its public bounds "
                                    f"[{b.low:g}, {b.high:g}] and are clamped onto them", level="warning",
                                    column=col))
    return Plan(cls, classes, columns, bounds, source, problems, integer, steps, taxonomies)


def noise_size_warning(n_groups: int, scale: float, released_records: int) -> tuple[float, str | None]:
    """Expected records the noise alone adds (an upper bound, from public figures: the number of groups and the
    noise scale) and a warning when they make up about 90 % or more of the released records, i.e. when the
    table expanded to records is about ten times larger than the data it stands for."""
    spurious = n_groups * positive_noise_mean(scale)
    if released_records and spurious >= 0.9 * released_records:
        return spurious, (f"most of the {released_records:,} released records are expected to come from noise "
                          f"alone: about {spurious:,.0f} from the noisy counts of {n_groups:,} groups, every group "
                          "getting one, empty ones too (as in the paper); a smaller h or a larger ε gives fewer, "
                          "truer groups")
    return spurious, None


def class_codes(values: pd.Series, classes: list[str]) -> np.ndarray:
    codes = pd.Categorical(values.astype(str), categories=classes).codes.astype(np.int64)
    if (codes < 0).any():
        raise ParameterError(f"class column {values.name!r} has values outside its domain")
    return codes


class DiffGen(DPMechanism):
    name = "DiffGen"
    per_person = GROUP_PRIVACY
    cost_note = ("ε/2 for the generalisation (exponential mechanism, ε/(2(|A_num|+2h)) per call), ε/2 for the noisy "
                 "counts (discrete Laplace 2/ε); per row ε/c with a person column (group privacy)")
    large_tables = True  # both counting passes run as SQL on a large table (mechanisms/diffgen/sql.py)
    summary = ("A table of noisy counts that stays useful for predicting the class: the quasi-identifiers are "
               "made coarser (ages to ranges, values to groups of their taxonomy), refined h times at random with "
               "half of ε, then every group gets a noisy count (DiffGen: Mohammed et al., KDD 2011).")
    params = (
        ParamSpec("epsilon", "Privacy budget ε", "float", default=1.0, low=0.01, high=10.0, log_scale=True,
                  help="Smaller ε: more privacy, noisier counts and a rougher choice of groups. Half of it chooses "
                       "the groups, half goes to the counts.",
                  formula="ε/2 for the generalisation: h + |A_num| choices by the exponential mechanism, each "
                          "ε/(2(|A_num| + 2h)) (|A_num| = numeric quasi-identifiers); ε/2 for the counts: integer "
                          "Laplace noise of scale 2/ε on every group",
                  more_private="lower"),
        ParamSpec("h", "Specialisations h", "int", default=10, low=1, high=30,
                  help="How many times a value is split into its children. More: finer groups but smaller "
                       "counts and more noise; around 10 is usually best.",
                  formula="h specialisations, each chosen with ε/(2(|A_num| + 2h)); at most 2^h-fold more groups"),
        ParamSpec("utility", "Utility function", "choice", default="Max", choices=UTILITIES,
                  help="How the next refinement is chosen: Max (how well the groups predict the class; usually "
                       "better) or InfoGain (information gain).",
                  formula="Max: score = Σ over children of the majority-class count (Δ = 1); InfoGain: "
                          "information gain of the split (Δ = log2 |classes|)"),
        ParamSpec("class_column", "Class column", "column", default="", optional=True, roles=(Role.CLASS,),
                  column_kind="categorical",
                  help="The label the released data should predict; empty: the column whose role is Class."),
        ParamSpec("output", "Output", "choice", default="counts", choices=OUTPUTS,
                  help="'counts': one row per group with its noisy count; 'records': each group repeated "
                       "count times."),
        MAX_ROWS,
    )

    # -- checks and cost ------------------------------------------------------------------------------------
    def check(self, data: Dataset, params: dict[str, Any]) -> list[Problem]:
        try:
            cls = _class_column(data, params)
        except ParameterError as exc:
            return [Problem(str(exc), param="class_column")]
        no_taxonomy = [c for c in predictor_columns(data, cls) if data.spec(c).kind == "categorical"
                       and data.spec(c).taxonomy is None and category_set(data.spec(c)) is None]
        if no_taxonomy:  # one problem per column, so the GUI can offer to build each one
            return [Problem(f"categorical quasi-identifier {c!r} has no taxonomy: DiffGen specialises values "
                            "along it (a flat one over its public list of values is enough)", column=c)
                    for c in no_taxonomy]
        try:
            plan = make_plan(data, params)
        except TaxonomyError as exc:
            return [Problem(str(exc), column=getattr(exc, "column", None))]
        except ParameterError as exc:
            return [Problem(str(exc), param="class_column")]
        return plan.problems + self.contribution_problems(data, params)

    def describe_release(self, data: Dataset, params: dict[str, Any]) -> ReleaseShape:
        try:
            cls = _class_column(data, params)
        except ParameterError:
            return super().describe_release(data, params)
        qis = tuple(predictor_columns(data, cls))
        count = "count" if "count" not in qis and cls != "count" else "noisy count"
        generalised = (f"The values of {', '.join(qis)} are generalised to ranges or groups chosen at random with "
                       f"half of ε; {cls} is kept as it is.")
        if params.get("output") == "records":
            return ReleaseShape(columns=qis + (cls,), noisy=True, sentences=(
                generalised, "Each group is repeated as many times as its noisy count; the table of counts is "
                             "exported beside it."))
        return ReleaseShape(columns=qis + (cls, count), count_column=count, noisy=True, sentences=(
            generalised, "Groups whose noisy count is 0 are left out.",
            f"To turn it into one row per (synthetic) record, repeat each row as many times as its {count}, "
            "or choose the output 'records'."))

    def domain_needs(self, data: Dataset, params: dict[str, Any]) -> list[DomainNeed]:
        """The class values, each numeric QI's bounds and each categorical QI's values must be public."""
        try:
            cls = _class_column(data, params)
        except ParameterError:
            return []
        needs = [DomainNeed(cls, "categories")]
        for col in predictor_columns(data, cls):
            needs.append(DomainNeed(col, "bounds" if data.spec(col).kind == "numeric" else "categories"))
        return needs

    def count_noise_per_epsilon(self, data: Dataset, params: dict[str, Any]) -> Fraction | None:
        """The counts get ε/(2c) (ε/2 of the ε/c per row; c = 1 without a person column): scale 2c/ε. The cut's
        error has no such model."""
        return Fraction(2 * self.unit(data, params).max_rows)

    def noise_estimate(self, data: Dataset, params: dict[str, Any]):
        """The most cells the release can have and the records noise adds to empty ones (diffgen/noise_estimate.py:
        public plan only — taxonomies, bounds, classes, h, ε; with a person column ε/c per row). `params`:
        resolved (the plan's), never coerced again here."""
        from ppdp_gui.engine.mechanisms.diffgen.noise_estimate import estimate
        try:
            per_row = {**params, "epsilon": float(self.row_epsilon(params, self.unit(data, params)))}
            return estimate(make_plan(data, params), per_row)
        except (ParameterError, TaxonomyError):
            return None

    @staticmethod
    def budget_split(epsilon, n_numeric: int, h: int) -> dict[str, Fraction]:
        """The exact shares: ε' per exponential-mechanism call, ε/2 for counts, the rest for the cut."""
        eps = exact_epsilon(epsilon)
        parts = n_numeric + 2 * h
        return {"epsilon": eps, "epsilon counts": eps / 2, "epsilon generalisation": eps / 2,
                "epsilon prime": eps / (2 * parts) if parts else Fraction(0), "calls": parts}

    # -- the run --------------------------------------------------------------------------------------------
    def _run(self, data: Dataset, *, rng, **params: Any) -> Iterator[Progress | Release]:
        plan = make_plan(data, params)
        source = data
        bounded, unit = self.bounded(data, params, rng)  # at most c rows per person (none without a person column)
        data = bounded.data
        eps = self.row_epsilon(params, unit)  # ε/c per row: group privacy (ε itself without a person column)
        frame, k = data.frame, len(plan.classes)
        yield Progress(0.0, "coding the quasi-identifiers")
        large = is_large(data)
        y = None if large else class_codes(frame[plan.class_column], plan.classes)
        attrs = []
        if large:  # the first counting pass as SQL GROUP BYs (mechanisms/diffgen/sql.py), over the bounded rows
            from ppdp_gui.engine.mechanisms.diffgen.sql import build_attrs
            with data.table.file_order() if bounded.rows is not None else nullcontext():
                attrs = build_attrs(data, plan, bounded.rows)
        for col in ([] if large else plan.columns):
            if col in plan.bounds:
                attrs.append(NumericAttr.build(col, numeric_values(frame[col]), *plan.bounds[col], y, k,
                                               integer=col in plan.integer, step=plan.steps[col]))
            else:
                attrs.append(CategoricalAttr.build(col, plan.taxonomies[col], frame[col], y, k))
        outcome = yield from specialise(attrs, k, epsilon=eps, h=params["h"],
                                        utility=params["utility"], rng=rng)
        yield Progress(0.95, "noisy counts")
        if large:  # the second counting pass: GROUP BY cut position × class in SQL, then the same noise
            from ppdp_gui.engine.mechanisms.diffgen.sql import leaf_class_counts
            shape = tuple(len(a.labels()) for a in attrs)
            n_cells = int(np.prod(shape, dtype=np.int64))
            with data.table.file_order() if bounded.rows is not None else nullcontext():
                true = leaf_class_counts(data, plan, attrs, shape, bounded.rows)
            idx, counts = add_count_noise(true, epsilon=eps, rng=rng)
            del true
        else:
            cells, shape = leaf_cells(attrs)
            n_cells = int(np.prod(shape, dtype=np.int64))
            idx, counts = noisy_counts(cells, y, n_cells, k, epsilon=eps, rng=rng)
            del cells, y
        transform = CutTransform(tuple(ColumnCut.of(a) for a in attrs), plan.class_column)
        count_name = "count" if "count" not in plan.columns and plan.class_column != "count" else "noisy count"
        table = groups_frame(transform, plan, shape, idx, counts, count_name)
        labels = {c.column: tuple(c.labels) for c in transform.columns}
        labels[plan.class_column] = tuple(plan.classes)
        cost = self.declared_cost(source, params)
        schema = PublicSchema(tuple(plan.columns) + (plan.class_column, count_name), labels, (count_name,))
        claims = [*self.declared_claims(source, params), schema]
        extra = {}
        if params["output"] == "records":
            extra["noisy counts"] = table
            table = expand_counts(table, count_name)
            claims = [claims[0], PublicSchema(tuple(plan.columns) + (plan.class_column,), labels),
                      PublicSchema(schema.columns, labels, (count_name,), table="noisy counts")]
        split = self.budget_split(eps, plan.n_numeric, params["h"])
        scale = 2.0 / eps
        released_records = int(counts.sum())  # a sum of noisy counts: part of the noisy output
        spurious, size_warning = noise_size_warning(n_cells * k, scale, released_records)
        note = {  # the cut chosen by the exponential mechanism, public domains, budget shares, noise
            "quasi_identifiers": list(plan.columns), "class_column": plan.class_column,
            "classes": list(plan.classes), "count column": count_name,
            "cut": {a.column: a.describe_cut() for a in attrs},
            "epsilon": str(cost.epsilon), "epsilon per row": str(split["epsilon"]),
            "epsilon counts": str(split["epsilon counts"]),
            "epsilon generalisation": str(split["epsilon generalisation"]),
            "epsilon prime": str(split["epsilon prime"]), "exponential mechanism calls": split["calls"],
            "utility": params["utility"], "sensitivity": sensitivity(params["utility"], k),
            "specialisations": len(outcome.specialisations), "requested specialisations": params["h"],
            "history": outcome.specialisations, "stopped early": outcome.ran_out,
            "leaf partitions": n_cells, "groups": n_cells * k, "released groups": int(len(idx)),
            "released records": released_records,
            "expected records from noise (at most)": spurious,
            "expected records per empty group": positive_noise_mean(scale),
            "noise": "discrete Laplace (two-sided geometric), integer, sampled exactly", "noise scale": scale,
            **count_note(eps, 1, Fraction(1, 2)),  # the counts get ε/2 of the ε per row
            "negative counts": "rounded to 0 as in the paper; groups with count 0 are left out of the table",
            **self.unit_note(source, params),
            "bounds": {c: list(b) for c, b in plan.bounds.items()}, "bounds source": dict(plan.bound_source),
        }
        record = {"quasi_identifiers": list(plan.columns), "class_column": plan.class_column,
                  "count column": count_name, **bound_record(bounded)}
        warnings = [p.message for p in plan.problems if p.level == "warning"]
        warnings += [size_warning] if size_warning else []
        warnings += bound_warnings(bounded, unit)
        yield Progress(1.0, "done")
        yield Release(mechanism=self.name, table=table, cost=cost, params=dict(params), claims=tuple(claims),
                      note=note, record=record, warnings=tuple(warnings), extra_tables=extra, apply_to=transform,
                      rows_used=bounded.kept)

    # -- figures for the custodian and simulations (computed from the records: never in the release note) -------------------------------------------------------------------
    def measures(self, release: Release, train: Dataset, test: Dataset | None) -> dict[str, float]:
        """CA: a tree trained on the released groups (weights = noisy counts), tested on the generalised test set."""
        if test is None or release.apply_to is None:
            return {}
        from ppdp_gui.engine.metrics.classification import classification_accuracy
        meta = release.record
        groups = release.extra_tables.get("noisy counts", release.table)
        ca = classification_accuracy(groups, release.apply_to(test.frame), meta["class_column"],
                                     features=meta["quasi_identifiers"], weight_column=meta["count column"])
        return {"CA %": 100.0 * ca}

    def reference_measures(self, train: Dataset, test: Dataset | None) -> dict[str, float]:
        """BA (tree on the raw training data) and LA (majority class), the paper's two dotted lines."""
        cls = train.class_column
        if test is None or not cls:
            return {}
        from ppdp_gui.engine.metrics.classification import baseline_accuracy, lower_bound_accuracy
        features = predictor_columns(train, cls)
        return {"BA %": 100.0 * baseline_accuracy(train.frame, test.frame, cls, features=features),
                "LA %": 100.0 * lower_bound_accuracy(train.frame, test.frame, cls)}


def groups_frame(transform: CutTransform, plan: Plan, shape: tuple[int, ...], idx: np.ndarray,
                 counts: np.ndarray, count_name: str) -> pd.DataFrame:
    """One row per released group: the cut labels of its leaf partition, its class, its noisy count."""
    k = len(plan.classes)
    cell, cls = np.divmod(idx, k)
    codes = np.unravel_index(cell, shape) if shape else ()
    cols = {c.column: pd.Categorical.from_codes(code, categories=list(c.labels))
            for c, code in zip(transform.columns, codes)}
    cols[plan.class_column] = pd.Categorical.from_codes(cls, categories=plan.classes)
    cols[count_name] = counts
    return pd.DataFrame(cols)


def expand_counts(table: pd.DataFrame, count_column: str) -> pd.DataFrame:
    """Each group repeated `count` times (counts are already non-negative), without the count column."""
    reps = np.repeat(np.arange(len(table)), table[count_column].to_numpy(dtype=np.int64))
    return table.drop(columns=[count_column]).iloc[reps].reset_index(drop=True)
