"""DiffGen as a Mechanism: parameters, checks, the exact privacy charge, the release and its utility figures.

Which columns are generalised: the dataset's quasi-identifiers; if none is marked, every column that is not an
identifier or the class column. Only those columns and the class are released (one row per leaf partition ×
class with its noisy count); every other column is left out, since releasing it unchanged would not be DP.
Public domains (the diffprivlib lesson: bounds read from private data leak them): a categorical QI must have a
taxonomy (its leaves are the domain); a numeric QI takes its bounds [lo, hi] from its taxonomy when it has one
(the smallest and largest number in any label), else from the data with a warning; values outside the bounds
are clamped onto them. A numeric QI has an integer domain — split points among the integers, labels like
'[20, 35)' — when its taxonomy gives the bounds and every number in the taxonomy is whole (decided from the
taxonomy alone; without a taxonomy the split points stay real, labels rounded to 4 significant digits). The class domain is the class column's taxonomy leaves if it has one, else the classes
seen in the data, with a warning.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Iterator

import numpy as np
import pandas as pd

from ppdp_gui.engine.data.schema import Dataset, Role
from ppdp_gui.engine.errors import ParameterError, TaxonomyError
from ppdp_gui.engine.mechanisms.base import Mechanism, ParamSpec, PrivacyCost, Problem, Progress, Release
from ppdp_gui.engine.mechanisms.diffgen.algorithm import leaf_cells, noisy_counts, positive_noise_mean, specialise
from ppdp_gui.engine.mechanisms.diffgen.cut import ColumnCut, CutTransform
from ppdp_gui.engine.mechanisms.diffgen.grid import grid_step
from ppdp_gui.engine.mechanisms.diffgen.partition import (CategoricalAttr, NumericAttr, check_values_in_taxonomy,
                                                          numeric_values, taxonomy_bounds, taxonomy_is_integral)
from ppdp_gui.engine.mechanisms.diffgen.scores import UTILITIES, sensitivity
from ppdp_gui.engine.noise.sampler import exact_epsilon

OUTPUTS = ("counts", "records")


def predictor_columns(data: Dataset, class_column: str | None) -> list[str]:
    """The QIs DiffGen generalises: marked quasi-identifiers, else all non-identifier, non-class columns."""
    qis = [c for c in data.quasi_identifiers if c != class_column]
    if qis:
        return qis
    return [c.name for c in data.schema if c.name != class_column and c.role not in (Role.IDENTIFIER, Role.CLASS)]


@dataclass
class Plan:
    """What a run will use, decided from the schema (and, where unavoidable, the data, with a warning)."""

    class_column: str
    classes: list[str]
    columns: list[str]
    bounds: dict[str, tuple[float, float]]
    bound_source: dict[str, str]
    problems: list[Problem]
    integer: set[str] = field(default_factory=set)  # numeric QIs with an integer domain (integer split points)
    steps: dict[str, float] = field(default_factory=dict)  # numeric QIs: public grid step (split points on it)

    @property
    def n_numeric(self) -> int:
        return len(self.bounds)


def make_plan(data: Dataset, params: dict[str, Any]) -> Plan:
    problems: list[Problem] = []
    cls = params.get("class_column") or data.class_column
    if not cls:
        raise ParameterError("DiffGen needs a class column: mark one column's role as Class or choose it")
    if cls not in data.frame.columns:
        raise ParameterError(f"Class column: no column named {cls!r}")
    cls_spec = data.spec(cls)
    labels = data.frame[cls].astype(str)
    if cls_spec.taxonomy is not None:
        classes = cls_spec.taxonomy.leaf_values()
        unknown = sorted(set(labels.unique()) - set(classes))
        if unknown:
            raise ParameterError(f"class column {cls!r} has values not in its taxonomy: {unknown[:5]}")
    else:
        classes = sorted(labels.unique())
        problems.append(Problem(f"the classes of {cls!r} are taken from the data ({len(classes)}); give the class "
                                "column a taxonomy to make its domain public", level="warning", column=cls))
    if len(classes) < 2:
        raise ParameterError(f"class column {cls!r} needs at least two classes")
    columns = predictor_columns(data, cls)
    if not columns:
        raise ParameterError("DiffGen needs at least one quasi-identifier besides the class column")
    no_taxonomy = [c for c in columns if data.spec(c).kind == "categorical" and data.spec(c).taxonomy is None]
    if no_taxonomy:
        raise TaxonomyError(f"categorical quasi-identifier(s) without a taxonomy: {', '.join(no_taxonomy)}; "
                            "DiffGen specialises them along their taxonomy (a flat one is enough)")
    bounds, source, integer = {}, {}, set()
    for col in columns:
        spec, series = data.spec(col), data.frame[col]
        if spec.kind == "categorical":
            missing = check_values_in_taxonomy(spec.taxonomy, series)
            if missing:
                raise TaxonomyError(f"column {col!r} has values not in its taxonomy: {missing[:5]}")
            continue
        x = numeric_values(series)
        public = taxonomy_bounds(spec.taxonomy) if spec.taxonomy is not None else None
        if public is not None:
            bounds[col], source[col] = public, "taxonomy"
            if taxonomy_is_integral(spec.taxonomy):
                integer.add(col)
            outside = int(((x < public[0]) | (x > public[1])).sum())
            if outside:
                problems.append(Problem(f"{outside} value(s) of {col!r} lie outside its public bounds "
                                        f"[{public[0]:g}, {public[1]:g}] and are clamped onto them",
                                        level="warning", column=col))
        else:
            lo, hi = (float(x.min()), float(x.max())) if len(x) else (0.0, 0.0)
            bounds[col], source[col] = (lo, hi), "data"
            problems.append(Problem(f"the bounds of {col!r} are taken from the data ({lo:g} to {hi:g}), which "
                                    "leaks its smallest and largest values; give it a taxonomy with public bounds",
                                    level="warning", column=col))
    steps = {c: 1.0 if c in integer else grid_step(*bounds[c]) for c in bounds}  # from public bounds only
    return Plan(cls, list(classes), columns, bounds, source, problems, integer, steps)


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


class DiffGen(Mechanism):
    name = "DiffGen"
    guarantee = "ε-DP"
    summary = ("Differentially private generalisation for classification (Mohammed et al., KDD 2011): the "
               "quasi-identifiers are specialised top-down h times, each step chosen by the exponential "
               "mechanism, then each group of the generalised table gets a noisy count.")
    params = (
        ParamSpec("epsilon", "Privacy budget ε", "float", default=1.0, low=0.01, high=10.0, log_scale=True,
                  help="Half goes to choosing the generalisation, half to the counts (noise of scale 2/ε)."),
        ParamSpec("h", "Specialisations h", "int", default=10, low=1, high=30,
                  help="How many times a value is split into its children. More: finer groups but smaller "
                       "counts and more noise; around 10 is usually best."),
        ParamSpec("utility", "Utility function", "choice", default="Max", choices=UTILITIES,
                  help="How a split is scored: Max (majority-class count, sensitivity 1) or InfoGain "
                       "(information gain, sensitivity log2 of the number of classes). Max is usually better."),
        ParamSpec("class_column", "Class column", "column", default="", optional=True, roles=(Role.CLASS,),
                  column_kind="categorical",
                  help="The label the released data should predict; empty: the column whose role is Class."),
        ParamSpec("output", "Output", "choice", default="counts", choices=OUTPUTS,
                  help="'counts': one row per group with its noisy count; 'records': each group repeated "
                       "count times."),
    )

    _noise_factor = 1.0  # multiplies every noise scale; only the privacy test changes it (to prove it can fail)

    # -- checks and cost ------------------------------------------------------------------------------------
    def check(self, data: Dataset, params: dict[str, Any]) -> list[Problem]:
        cls = params.get("class_column") or data.class_column
        no_taxonomy = [c for c in predictor_columns(data, cls)
                       if data.spec(c).kind == "categorical" and data.spec(c).taxonomy is None]
        if no_taxonomy:  # one problem per column, so the GUI can offer to build each one
            return [Problem(f"categorical quasi-identifier {c!r} has no taxonomy: DiffGen specialises values "
                            "along it (an automatic flat one is enough)", column=c) for c in no_taxonomy]
        try:
            plan = make_plan(data, params)
        except TaxonomyError as exc:
            return [Problem(str(exc))]
        except ParameterError as exc:
            return [Problem(str(exc), param="class_column")]
        return plan.problems

    def privacy_cost(self, **params: Any) -> PrivacyCost:
        eps = exact_epsilon(self.param("epsilon").coerce(params.get("epsilon", self.param("epsilon").default)))
        return PrivacyCost(epsilon=eps, note="ε/2 for the generalisation (exponential mechanism, ε/(2(|A_num|+2h)) "
                                             "per call), ε/2 for the noisy counts (discrete Laplace 2/ε)")

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
        frame, k = data.frame, len(plan.classes)
        yield Progress(0.0, "coding the quasi-identifiers")
        y = class_codes(frame[plan.class_column], plan.classes)
        attrs = []
        for col in plan.columns:
            if col in plan.bounds:
                attrs.append(NumericAttr.build(col, numeric_values(frame[col]), *plan.bounds[col], y, k,
                                               integer=col in plan.integer, step=plan.steps[col]))
            else:
                attrs.append(CategoricalAttr.build(col, data.spec(col).taxonomy, frame[col], y, k))
        outcome = yield from specialise(attrs, k, epsilon=params["epsilon"], h=params["h"],
                                        utility=params["utility"], rng=rng, noise_factor=self._noise_factor)
        yield Progress(0.95, "noisy counts")
        cells, shape = leaf_cells(attrs)
        n_cells = int(np.prod(shape, dtype=np.int64))
        idx, counts = noisy_counts(cells, y, n_cells, k, epsilon=params["epsilon"], rng=rng,
                                   noise_factor=self._noise_factor)
        del cells, y
        transform = CutTransform(tuple(ColumnCut.of(a) for a in attrs), plan.class_column)
        count_name = "count" if "count" not in plan.columns and plan.class_column != "count" else "noisy count"
        table = groups_frame(transform, plan, shape, idx, counts, count_name)
        extra = {}
        if params["output"] == "records":
            extra["noisy counts"] = table
            table = expand_counts(table, count_name)
        split = self.budget_split(params["epsilon"], plan.n_numeric, params["h"])
        scale = 2.0 / params["epsilon"]
        released_records = int(counts.sum())
        spurious, size_warning = noise_size_warning(n_cells * k, scale, released_records)
        warnings = [p.message for p in plan.problems if p.level == "warning"]
        warnings += [size_warning] if size_warning else []
        metadata = {
            "quasi_identifiers": list(plan.columns), "class_column": plan.class_column,
            "classes": list(plan.classes), "count column": count_name,
            "cut": {a.column: a.describe_cut() for a in attrs},
            "epsilon": str(split["epsilon"]), "epsilon counts": str(split["epsilon counts"]),
            "epsilon generalisation": str(split["epsilon generalisation"]),
            "epsilon prime": str(split["epsilon prime"]), "exponential mechanism calls": split["calls"],
            "utility": params["utility"], "sensitivity": sensitivity(params["utility"], k),
            "specialisations": len(outcome.specialisations), "requested specialisations": params["h"],
            "history": outcome.specialisations, "stopped early": outcome.ran_out,
            "leaf partitions": n_cells, "groups": n_cells * k, "released groups": int(len(idx)),
            "released records": released_records,
            "expected records from noise (at most)": spurious,
            "expected records per empty group": positive_noise_mean(scale),
            "noise": "discrete Laplace (two-sided geometric), integer", "noise scale": scale,
            "negative counts": "rounded to 0 as in the paper; groups with count 0 are left out of the table",
            "neighbouring": "one record added or removed",
            "bounds": {c: list(b) for c, b in plan.bounds.items()}, "bounds source": dict(plan.bound_source),
            "warnings": warnings,
        }
        yield Progress(1.0, "done")
        yield Release(mechanism=self.name, table=table, cost=self.privacy_cost(**params), params=dict(params),
                      metadata=metadata, extra_tables=extra, apply_to=transform)

    # -- figures for simulations (sweeps) -------------------------------------------------------------------
    def measures(self, release: Release, train: Dataset, test: Dataset | None) -> dict[str, float]:
        """CA: a tree trained on the released groups (weights = noisy counts), tested on the generalised test set."""
        if test is None or release.apply_to is None:
            return {}
        from ppdp_gui.engine.metrics.classification import classification_accuracy
        meta = release.metadata
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
