"""Laplace histogram (Dwork & McSherry): ε-DP noisy counts over the full public domain of chosen columns.

Each record falls in exactly one cell of the cross product of the columns' categories / numeric bins, so adding
or removing one record changes one count by 1 (L1 sensitivity 1). Every cell of the domain — empty ones too —
gets independent integer noise P(x) ∝ exp(-ε|x|) (discrete Laplace, the integer analogue of the slides' scaled
symmetric exponential with R = 1/ε), so the release is ε-DP. Releasing only the observed cells would reveal
which cells are non-empty, so the domain must come from public information: the column's domain (data/domains.py),
its taxonomy (its leaves, or for a numeric column the smallest and largest number in its labels) or the bounds
given as parameters. The mechanism never reads a domain from the records (`domain_needs` tells the publish path
what must be public; diffprivlib's PrivacyLeakWarning is the same lesson).

Post-processing (free: it only reads the noisy counts): clamp at 0, and optionally rescale the clamped counts
so that they sum to the (unbiased) sum of the unclamped noisy counts, rounding by largest remainder.

Per person (a column marked Person): at most c rows of each person are counted (`max_rows_per_person`, drawn by
the noise source: engine/mechanisms/contribution.py), and the *sensitivity is scaled by c*: one person's rows
change the counts by at most c in L1, so the noise has scale c/ε and ε holds per person. Without a person column
c plays no part and ε is per row.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Iterator

import numpy as np
import pandas as pd

from ppdp_gui.engine.claims import PublicSchema
from ppdp_gui.engine.data.domains import DomainNeed, category_set, numeric_bounds, spelled_outside
from ppdp_gui.engine.data.missing import numeric_blanks_fix
from ppdp_gui.engine.data.schema import Dataset
from ppdp_gui.engine.errors import ParameterError
from ppdp_gui.engine.mechanisms.base import ParamSpec, Problem, Progress, Release, ReleaseShape
from ppdp_gui.engine.mechanisms.contribution import (MAX_ROWS, SCALED_SENSITIVITY, DPMechanism, bound_record,
                                                     bound_warnings)
from ppdp_gui.engine.noise.intervals import count_note

SENSITIVITY = 1  # add/remove one row changes one cell by one (one person's c rows: c)
MAX_CELLS = 10_000_000  # a larger domain would not fit a desktop's memory as a table
MAX_RECORDS = 20_000_000  # expected size of an expanded release above which we refuse
KEEP_TOTAL = "keep noisy total"
CONSISTENCY = ("none", KEEP_TOTAL)
OUTPUTS = ("counts", "records")


def expected_abs_noise(epsilon: float) -> float:
    """E|X| of the discrete Laplace noise of scale 1/ε: 2α/(1-α²), α = e^{-ε} (continuous Laplace: 1/ε)."""
    a = math.exp(-float(epsilon))
    return 2 * a / (1 - a * a)


# ---- the domain of one column ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Axis:
    """One column's cells: labels in order, numeric bin edges (None for categories), and where they came from."""

    column: str
    labels: tuple[str, ...]
    edges: np.ndarray | None = None
    source: str = "parameters"  # "taxonomy" | "parameters" | "data"

    @property
    def size(self) -> int:
        return len(self.labels)

    def codes(self, values: pd.Series) -> np.ndarray:
        """Cell index of every value (numeric values outside the bounds go to the end bins)."""
        if self.edges is not None:
            x = np.asarray(values, dtype=float)
            width = self.edges[1] - self.edges[0]
            return np.clip(np.floor((x - self.edges[0]) / width), 0, self.size - 1).astype(np.int64)
        codes = pd.Categorical(values.astype(str), categories=list(self.labels)).codes.astype(np.int64)
        if (codes < 0).any():
            raise ParameterError(f"column {self.column!r} has values outside its domain")
        return codes


def _fmt(v: float) -> str:
    return f"{v:.6g}"


def numeric_axis(column: str, low: float, high: float, *, bins: int | None = None, width: float | None = None,
                 integer: bool = False, source: str = "parameters") -> Axis:
    """Equal-width bins over [low, high]; `width` wins over `bins`. For whole numbers (`integer`) with whole
    bounds the upper bound is a value of its own (ages 17..90 with width 1 are 74 bins)."""
    if not (math.isfinite(low) and math.isfinite(high)) or high < low:
        raise ParameterError(f"{column}: bounds [{low}, {high}] are not a valid range")
    whole = integer and float(low).is_integer() and float(high).is_integer()
    span = (high - low + 1) if whole else (high - low)
    if width is not None:
        if width <= 0:
            raise ParameterError(f"{column}: the bin width must be positive")
        n = max(1, math.ceil(span / width - 1e-9))
    else:
        n = max(1, int(bins or 1))
        width = span / n if span > 0 else 1.0
    if n > MAX_CELLS:
        raise ParameterError(f"{column}: {n} bins is too many")
    edges = low + width * np.arange(n + 1, dtype=float)
    if whole and float(width).is_integer():
        w = int(width)
        starts = [int(low) + i * w for i in range(n)]
        labels = [str(s) if w == 1 else f"{s}-{min(s + w - 1, int(high))}" for s in starts]
    else:
        labels = [f"[{_fmt(edges[i])}, {_fmt(edges[i + 1])})" for i in range(n)]
        labels[-1] = f"[{_fmt(edges[n - 1])}, {_fmt(high if not whole else edges[n])}]"
    return Axis(column, tuple(labels), edges, source)


def _refuse(column: str, message: str) -> ParameterError:
    """A ParameterError that names its column (the window offers to set that column's domain)."""
    exc = ParameterError(message)
    exc.column = column
    return exc


def build_axes(data: Dataset, params: dict[str, Any]) -> tuple[list[Axis], list[Problem]]:
    """Every chosen column's domain from public inputs only — the lower/upper bound parameters, the column's
    domain or its taxonomy — and warnings for the custodian (they count records: never for the release note).
    A column with no such domain is an error here; the publish path fills one from the data only when the
    custodian opts in, and the release is then labelled not ε-DP."""
    axes, problems = [], []
    for col in params["columns"]:
        spec, series = data.spec(col), data.frame[col]
        if spec.kind == "numeric":
            x = pd.to_numeric(series, errors="coerce")
            if x.isna().any():
                raise ParameterError(f"numeric column {col!r} has missing values (empty cells). "
                                     + numeric_blanks_fix(col) + ".")
            if params.get("low") is not None and params.get("high") is not None:
                lo, hi, integer, source = float(params["low"]), float(params["high"]), False, "parameters"
                found = numeric_bounds(spec)
                integer = bool(found and found.integer and lo.is_integer() and hi.is_integer())
            else:
                found = numeric_bounds(spec)
                if found is None:
                    raise _refuse(col, f"column {col!r} has no public bounds: set its domain (e.g. 0 to 120 for an "
                                       "age) or give the lower and upper bound parameters")
                lo, hi, integer = found.low, found.high, found.integer
                lo = float(params["low"]) if params.get("low") is not None else lo
                hi = float(params["high"]) if params.get("high") is not None else hi
                source = found.source if found.is_public else "data"
            axis = numeric_axis(col, lo, hi, bins=params.get("bins"), width=params.get("bin_width"),
                                integer=integer, source=source)
            outside = int(((x < lo) | (x > hi)).sum())
            if outside:
                problems.append(Problem(f"{outside} value(s) of {col!r} lie outside [{_fmt(lo)}, {_fmt(hi)}] and are "
                                        "counted in the end bins", level="warning", column=col))
        else:
            found = category_set(spec)
            if found is None:
                raise _refuse(col, f"column {col!r} has no public list of values: set its domain (or give it a "
                                   "taxonomy from a public code list)")
            axis = Axis(col, tuple(found.values), None, found.source if found.is_public else "data")
            unknown = set(series.astype(str).unique()) - set(axis.labels)
            if unknown:
                raise _refuse(col, f"column {col!r} has {len(unknown)} value(s) outside its domain: "
                                   f"{spelled_outside(sorted(unknown), axis.labels)}; add them to the domain, "
                                   "spelled exactly so (or to its taxonomy)")
        axes.append(axis)
    return axes, problems


# ---- counting, noise and post-processing ------------------------------------------------------------------
def true_counts(frame: pd.DataFrame, axes: list[Axis]) -> np.ndarray:
    """Exact count of every cell of the domain, flattened in C order over the axes."""
    shape = tuple(a.size for a in axes)
    codes = [a.codes(frame[a.column]) for a in axes]
    flat = np.ravel_multi_index(codes, shape) if len(codes) > 1 else codes[0]
    return np.bincount(flat, minlength=int(np.prod(shape, dtype=np.int64))).astype(np.int64)


def scale_to_total(counts: np.ndarray, total: int) -> np.ndarray:
    """Non-negative integers proportional to `counts` that sum exactly to `total` (largest remainder)."""
    counts = np.asarray(counts, dtype=np.int64)
    s = int(counts.sum())
    total = max(int(total), 0)
    if s == 0 or total == s:
        return counts.copy()
    exact = counts.astype(float) * (total / s)
    out = np.floor(exact).astype(np.int64)
    short = total - int(out.sum())
    if short > 0:
        order = np.argsort(-(exact - out), kind="stable")[:short]
        out[order] += 1
    return out


def post_process(noisy: np.ndarray, *, non_negative: bool, consistency: str) -> np.ndarray:
    """Clamp at 0 and/or keep the noisy total; reads only the noisy counts, so it costs no budget."""
    out = np.maximum(noisy, 0) if non_negative else np.asarray(noisy).copy()
    if consistency == KEEP_TOTAL and non_negative:
        out = scale_to_total(out, int(noisy.sum()))
    return out


def cells_frame(axes: list[Axis], counts: np.ndarray, count_name: str) -> pd.DataFrame:
    """One row per cell: the columns' labels (categorical) and the count."""
    shape = tuple(a.size for a in axes)
    idx = np.unravel_index(np.arange(counts.size), shape)
    cols = {a.column: pd.Categorical.from_codes(c, categories=list(a.labels)) for a, c in zip(axes, idx)}
    cols[count_name] = counts
    return pd.DataFrame(cols)


def records_frame(axes: list[Axis], counts: np.ndarray) -> pd.DataFrame:
    """Each cell repeated (its count) times; counts must be non-negative."""
    flat = np.repeat(np.arange(counts.size), counts)
    idx = np.unravel_index(flat, tuple(a.size for a in axes))
    return pd.DataFrame({a.column: pd.Categorical.from_codes(c, categories=list(a.labels))
                         for a, c in zip(axes, idx)})


# ---- the mechanism -----------------------------------------------------------------------------------------
class LaplaceHistogram(DPMechanism):
    name = "Laplace histogram"
    per_person = SCALED_SENSITIVITY
    cost_note = "discrete Laplace noise, sensitivity 1 per row (c per person: the noise scale is c/ε)"
    summary = ("Noisy counts of every combination of the chosen columns (a histogram or contingency table). "
               "Each count gets integer Laplace noise of scale 1/ε; empty combinations are noised too.")
    params = (
        ParamSpec("epsilon", "Privacy budget ε", "float", default=1.0, low=0.001, high=10.0, log_scale=True,
                  help="Smaller ε: more privacy, more noise. Each count is off by about 1/ε on average.",
                  formula="each count + integer noise X, P(X = x) ∝ e^(−ε|x|) (one person changes one count "
                          "by 1); mean |X| = 2e^(−ε)/(1 − e^(−2ε)) ≈ 1/ε",
                  more_private="lower"),
        ParamSpec("columns", "Columns to count", "columns", default=(),
                  help="One column gives a histogram, several a contingency table over all combinations."),
        ParamSpec("bins", "Bins per numeric column", "int", default=10, low=1, high=100_000,
                  help="Number of equal-width bins between the bounds (ignored when a bin width is given)."),
        ParamSpec("bin_width", "Bin width (numeric)", "float", default=None, low=0.0, optional=True,
                  help="Width of each numeric bin; overrides the number of bins."),
        ParamSpec("low", "Lower bound (numeric)", "float", default=None, optional=True,
                  help="Public lower bound of the numeric columns (overrides their domains). Never take it from "
                       "the data: the smallest value is itself private."),
        ParamSpec("high", "Upper bound (numeric)", "float", default=None, optional=True,
                  help="Public upper bound of the numeric columns (see lower bound)."),
        ParamSpec("non_negative", "No negative counts", "bool", default=True,
                  help="Replace negative noisy counts by 0 (halves the error of empty cells, raises the total)."),
        ParamSpec("consistency", "Consistency", "choice", default="none", choices=CONSISTENCY,
                  help="'keep noisy total': after clamping, rescale so the counts add up to the noisy total."),
        ParamSpec("output", "Output", "choice", default="counts", choices=OUTPUTS,
                  help="'counts': one row per cell with its count; 'records': each cell repeated count times "
                       "(negative counts give no record)."),
        MAX_ROWS,
    )

    # -- checks and cost ------------------------------------------------------------------------------------
    def check(self, data: Dataset, params: dict[str, Any]) -> list[Problem]:
        if not params["columns"]:
            return [Problem("choose at least one column to count", param="columns")]
        if len(set(params["columns"])) != len(params["columns"]):
            return [Problem("a column is chosen twice", param="columns")]
        hidden = [c for c in params["columns"] if c in data.frame.columns and data.spec(c).role.never_released]
        if hidden:
            return [Problem(f"{c!r} is an identifier or the person column: it is never released", param="columns",
                            column=c) for c in hidden]
        if params.get("bin_width") is not None and params["bin_width"] <= 0:
            return [Problem("the bin width must be positive", param="bin_width")]
        if params.get("low") is not None and params.get("high") is not None and params["high"] < params["low"]:
            return [Problem("the upper bound is below the lower bound", param="high")]
        try:
            axes, problems = build_axes(data, params)
        except ParameterError as exc:
            return [Problem(str(exc), param="columns", column=getattr(exc, "column", None))]
        problems += self.contribution_problems(data, params)
        cells = math.prod(a.size for a in axes)
        if cells > MAX_CELLS:
            return [Problem(f"{cells:,} combinations is too many (at most {MAX_CELLS:,}): use fewer columns, "
                            "fewer bins or coarser taxonomies", param="columns")]
        if params["output"] == "records":
            expected = data.n_rows + cells * expected_abs_noise(params["epsilon"]) / 2
            if expected > MAX_RECORDS:
                problems.append(Problem(f"about {expected:,.0f} records would be produced: choose 'counts' "
                                        "output, a larger ε or fewer cells", param="output"))
        return problems

    def describe_release(self, data: Dataset, params: dict[str, Any]) -> ReleaseShape:
        cols = tuple(params.get("columns") or ())
        count = "count" if "count" not in cols else "noisy count"
        if params.get("output") == "records":
            return ReleaseShape(columns=cols, noisy=True, sentences=(
                "Each combination of values is repeated as many times as its noisy count: the rows are synthetic "
                "records, not the people of your table; the table of counts is exported beside it.",))
        return ReleaseShape(columns=cols + (count,), count_column=count, noisy=True, sentences=(
            "Every combination of the public domains gets a row, also combinations nobody in your table has, so "
            "that the table does not reveal which combinations exist.",
            f"To turn it into one row per (synthetic) record, repeat each row as many times as its {count}, "
            "or choose the output 'records'."))

    def domain_needs(self, data: Dataset, params: dict[str, Any]) -> list[DomainNeed]:
        """Every counted column's domain: bounds for numbers (unless both bound parameters are given), the list
        of values for categories."""
        both = params.get("low") is not None and params.get("high") is not None
        needs = []
        for col in params.get("columns") or ():
            if col not in data.frame.columns:
                continue
            if data.spec(col).kind == "numeric":
                if not both:
                    needs.append(DomainNeed(col, "bounds"))
            else:
                needs.append(DomainNeed(col, "categories"))
        return needs

    def count_noise_per_epsilon(self, data: Dataset, params: dict[str, Any]) -> Fraction | None:
        return Fraction(SENSITIVITY * self.unit(data, params).max_rows)  # every count: scale c·Δ/ε

    def noise_estimate(self, data: Dataset, params: dict[str, Any]):
        """Every cell of the public domain gets noise of scale c/ε (c = 1 without a person column): the cells are
        known exactly before the run. `params`: resolved (the plan's), never coerced again here."""
        from ppdp_gui.engine.mechanisms.noise_share import NoiseEstimate, positive_noise_mean
        try:
            axes, _problems = build_axes(data, params)
        except ParameterError:
            return None
        if not axes:
            return None
        scale = SENSITIVITY * self.unit(data, params).max_rows / float(params["epsilon"])
        return NoiseEstimate(cells=int(np.prod([a.size for a in axes], dtype=np.int64)),
                             per_empty_cell=positive_noise_mean(scale), scale=scale,
                             columns=tuple((a.column, a.size) for a in axes), exact=True,
                             fixes=("wider bins or fewer bins (Mechanism step)", "fewer columns to count",
                                    "a larger ε"))

    # -- the run --------------------------------------------------------------------------------------------
    def _run(self, data: Dataset, *, rng, **params: Any) -> Iterator[Progress | Release]:
        yield Progress(0.05, "building the domain")
        axes, problems = build_axes(data, params)
        bounded, unit = self.bounded(data, params, rng)  # at most c rows per person (none without a person column)
        sensitivity = SENSITIVITY * unit.max_rows
        yield Progress(0.2, "counting")
        true = true_counts(bounded.data.frame, axes)
        yield Progress(0.5, f"adding noise to {true.size:,} cells")
        # integer noise of scale Δ/ε on every cell; a wrong scale is planted by wrapping `rng` (engine.verify)
        noisy = rng.geometric_noise_counts(true, params["epsilon"], sensitivity=sensitivity)
        del true  # nothing below may depend on the exact counts
        released = post_process(noisy, non_negative=params["non_negative"], consistency=params["consistency"])
        count_name = "count" if "count" not in params["columns"] else "noisy count"
        cells = cells_frame(axes, released, count_name)
        yield Progress(0.8, "building the table")
        labels = {a.column: a.labels for a in axes}
        cost = self.declared_cost(data, params)
        claims = [*self.declared_claims(data, params),
                  PublicSchema(tuple(a.column for a in axes) + (count_name,), labels, (count_name,))]
        extra = {}
        if params["output"] == "records":
            table = records_frame(axes, np.maximum(released, 0))
            extra["noisy counts"] = cells
            claims = [claims[0], PublicSchema(tuple(a.column for a in axes), labels),
                      PublicSchema(claims[1].columns, labels, (count_name,), table="noisy counts")]
        else:
            table = cells
        eps = float(params["epsilon"])
        note = {  # public parameters and public domains only
            "columns": list(params["columns"]),
            "domain sizes": {a.column: a.size for a in axes},
            "domain source": {a.column: a.source for a in axes},
            "numeric bins": {a.column: [float(a.edges[0]), float(a.edges[-1]), a.size] for a in axes
                             if a.edges is not None},
            "cells": int(released.size),
            "noise": "discrete Laplace (two-sided geometric), integer, sampled exactly",
            "noise scale": sensitivity / eps,
            "sensitivity": sensitivity,
            **self.unit_note(data, params),
            "expected |noise| per cell": expected_abs_noise(eps / sensitivity),
            "post-processing": ("negative counts set to 0" if params["non_negative"] else "none")
            + ("; rescaled to the noisy total" if params["consistency"] == KEEP_TOTAL else ""),
            "count column": count_name,
        }
        if params["consistency"] != KEEP_TOTAL:  # rescaling to the total moves counts beyond the noise's interval
            note.update(count_note(params["epsilon"], sensitivity))
        yield Progress(1.0, "done")
        yield Release(mechanism=self.name, table=table, cost=cost, params=dict(params), claims=tuple(claims),
                      note=note, record={"count column": count_name, **bound_record(bounded)},
                      warnings=tuple(p.message for p in problems if p.level == "warning")
                      + bound_warnings(bounded, unit), extra_tables=extra,
                      rows_used=bounded.kept)

    # -- figures for the custodian (computed against the true counts: never for the release note) -------------
    def measures(self, release: Release, train: Dataset, test: Dataset | None) -> dict[str, float]:
        """Error per cell against the exact counts of `train`: for the custodian's own view only."""
        cells = release.extra_tables.get("noisy counts", release.table)
        noisy = cells[release.record["count column"]].to_numpy(dtype=np.int64)
        axes, _ = build_axes(train, dict(release.params))
        err = np.abs(noisy - true_counts(train.frame, axes))
        return {"mean abs error": float(err.mean()), "max abs error": float(err.max()),
                "total error": float(abs(int(noisy.sum()) - train.n_rows))}


__all__ = ["LaplaceHistogram", "Axis", "numeric_axis", "build_axes", "true_counts", "post_process",
           "scale_to_total", "expected_abs_noise", "cells_frame", "records_frame"]
