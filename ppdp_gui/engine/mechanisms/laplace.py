"""Laplace histogram (Dwork & McSherry): ε-DP noisy counts over the full public domain of chosen columns.

Each record falls in exactly one cell of the cross product of the columns' categories / numeric bins, so adding
or removing one record changes one count by 1 (L1 sensitivity 1). Every cell of the domain — empty ones too —
gets independent integer noise P(x) ∝ exp(-ε|x|) (discrete Laplace, the integer analogue of the slides' scaled
symmetric exponential with R = 1/ε), so the release is ε-DP. Releasing only the observed cells would reveal
which cells are non-empty, so the domain must come from public information: a column's taxonomy (its leaves, or
for a numeric column the range of its numeric leaves) or the bounds given as parameters. When the domain has to
be read from the data the check says so with a warning, as diffprivlib's PrivacyLeakWarning does.

Post-processing (free: it only reads the noisy counts): clamp at 0, and optionally rescale the clamped counts
so that they sum to the (unbiased) sum of the unclamped noisy counts, rounding by largest remainder.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterator

import numpy as np
import pandas as pd

from ppdp_gui.engine.data.schema import Dataset
from ppdp_gui.engine.errors import ParameterError
from ppdp_gui.engine.mechanisms.base import Mechanism, ParamSpec, PrivacyCost, Problem, Progress, Release
from ppdp_gui.engine.noise.sampler import exact_epsilon

SENSITIVITY = 1  # add/remove one record changes one cell by one
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


def _numeric_leaves(tax) -> np.ndarray | None:
    try:
        return np.array([float(v) for v in tax.leaf_values()], dtype=float)
    except ValueError:
        return None


def build_axes(data: Dataset, params: dict[str, Any]) -> tuple[list[Axis], list[Problem]]:
    """Every chosen column's domain, plus warnings about domains read from the data (which leaks them)."""
    axes, problems = [], []
    for col in params["columns"]:
        spec, series = data.spec(col), data.frame[col]
        tax = spec.taxonomy
        if spec.kind == "numeric":
            leaves = _numeric_leaves(tax) if tax is not None else None
            x = pd.to_numeric(series, errors="coerce")
            if x.isna().any():
                raise ParameterError(f"numeric column {col!r} has missing values: drop them (missing-value "
                                     "policy) or make the column categorical")
            bounds, sources = [], []
            for name, pick in (("low", np.min), ("high", np.max)):
                if params.get(name) is not None:
                    bounds.append(float(params[name]))
                    sources.append("parameters")
                elif leaves is not None and leaves.size:
                    bounds.append(float(pick(leaves)))
                    sources.append("taxonomy")
                else:
                    bounds.append(float(pick(x.to_numpy())) if len(x) else 0.0)
                    sources.append("data")
            source = "data" if "data" in sources else ("taxonomy" if "taxonomy" in sources else "parameters")
            if source == "data":
                problems.append(Problem(
                    f"the bounds of {col!r} are taken from the data ({_fmt(bounds[0])} to {_fmt(bounds[1])}): "
                    "this leaks the smallest and largest values. Give public bounds (lower/upper bound, or a "
                    "taxonomy) instead", level="warning", param="columns", column=col))
            integer = pd.api.types.is_integer_dtype(series.dtype)  # the schema's type, not the values
            axis = numeric_axis(col, bounds[0], bounds[1], bins=params.get("bins"),
                                width=params.get("bin_width"), integer=integer, source=source)
            outside = int(((x < bounds[0]) | (x > bounds[1])).sum())
            if outside:
                problems.append(Problem(f"{outside} value(s) of {col!r} lie outside [{_fmt(bounds[0])}, "
                                        f"{_fmt(bounds[1])}] and are counted in the end bins",
                                        level="warning", column=col))
        elif tax is not None:
            axis = Axis(col, tuple(tax.leaf_values()), None, "taxonomy")
            unknown = set(series.astype(str).unique()) - set(axis.labels)
            if unknown:
                raise ParameterError(f"column {col!r} has values not in its taxonomy: {sorted(unknown)[:5]}")
        else:
            axis = Axis(col, tuple(sorted(series.astype(str).unique())), None, "data")
            problems.append(Problem(
                f"the categories of {col!r} are taken from the data: a category held by one person reveals that "
                "person. Give the column a taxonomy (or list of values) for a public domain",
                level="warning", param="columns", column=col))
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
class LaplaceHistogram(Mechanism):
    name = "Laplace histogram"
    guarantee = "ε-DP"
    summary = ("Noisy counts of every combination of the chosen columns (a histogram or contingency table). "
               "Each count gets integer Laplace noise of scale 1/ε; empty combinations are noised too.")
    params = (
        ParamSpec("epsilon", "Privacy budget ε", "float", default=1.0, low=0.001, high=10.0, log_scale=True,
                  help="Smaller ε: more privacy, more noise. Each count is off by about 1/ε on average."),
        ParamSpec("columns", "Columns to count", "columns", default=(),
                  help="One column gives a histogram, several a contingency table over all combinations."),
        ParamSpec("bins", "Bins per numeric column", "int", default=10, low=1, high=100_000,
                  help="Number of equal-width bins between the bounds (ignored when a bin width is given)."),
        ParamSpec("bin_width", "Bin width (numeric)", "float", default=None, low=0.0, optional=True,
                  help="Width of each numeric bin; overrides the number of bins."),
        ParamSpec("low", "Lower bound (numeric)", "float", default=None, optional=True,
                  help="Public lower bound of the numeric columns. Without it (and without a taxonomy) the "
                       "smallest value in the data is used, which leaks it."),
        ParamSpec("high", "Upper bound (numeric)", "float", default=None, optional=True,
                  help="Public upper bound of the numeric columns (see lower bound)."),
        ParamSpec("non_negative", "No negative counts", "bool", default=True,
                  help="Replace negative noisy counts by 0 (halves the error of empty cells, raises the total)."),
        ParamSpec("consistency", "Consistency", "choice", default="none", choices=CONSISTENCY,
                  help="'keep noisy total': after clamping, rescale so the counts add up to the noisy total."),
        ParamSpec("output", "Output", "choice", default="counts", choices=OUTPUTS,
                  help="'counts': one row per cell with its count; 'records': each cell repeated count times "
                       "(negative counts give no record)."),
    )

    # -- checks and cost ------------------------------------------------------------------------------------
    def check(self, data: Dataset, params: dict[str, Any]) -> list[Problem]:
        if not params["columns"]:
            return [Problem("choose at least one column to count", param="columns")]
        if len(set(params["columns"])) != len(params["columns"]):
            return [Problem("a column is chosen twice", param="columns")]
        if params.get("bin_width") is not None and params["bin_width"] <= 0:
            return [Problem("the bin width must be positive", param="bin_width")]
        if params.get("low") is not None and params.get("high") is not None and params["high"] < params["low"]:
            return [Problem("the upper bound is below the lower bound", param="high")]
        try:
            axes, problems = build_axes(data, params)
        except ParameterError as exc:
            return [Problem(str(exc), param="columns")]
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

    def privacy_cost(self, **params: Any) -> PrivacyCost:
        eps = self.param("epsilon").coerce(params.get("epsilon", self.param("epsilon").default))
        return PrivacyCost(epsilon=exact_epsilon(eps),
                           note="discrete Laplace noise, sensitivity 1 (one record added or removed)")

    # -- the run --------------------------------------------------------------------------------------------
    def _add_noise(self, counts: np.ndarray, epsilon: float, rng) -> np.ndarray:
        """Integer noise of scale Δ/ε on every cell (tests override this to prove a wrong scale is caught)."""
        return rng.geometric_noise_counts(counts, epsilon, sensitivity=SENSITIVITY)

    def _run(self, data: Dataset, *, rng, **params: Any) -> Iterator[Progress | Release]:
        yield Progress(0.05, "building the domain")
        axes, problems = build_axes(data, params)
        yield Progress(0.2, "counting")
        true = true_counts(data.frame, axes)
        yield Progress(0.5, f"adding noise to {true.size:,} cells")
        noisy = self._add_noise(true, params["epsilon"], rng)
        del true  # nothing below may depend on the exact counts
        released = post_process(noisy, non_negative=params["non_negative"], consistency=params["consistency"])
        count_name = "count" if "count" not in params["columns"] else "noisy count"
        cells = cells_frame(axes, released, count_name)
        yield Progress(0.8, "building the table")
        extra = {}
        if params["output"] == "records":
            table = records_frame(axes, np.maximum(released, 0))
            extra["noisy counts"] = cells
        else:
            table = cells
        eps = float(params["epsilon"])
        metadata = {
            "columns": list(params["columns"]),
            "domain sizes": {a.column: a.size for a in axes},
            "domain source": {a.column: a.source for a in axes},
            "cells": int(released.size),
            "noise": "discrete Laplace (two-sided geometric), integer",
            "noise scale": SENSITIVITY / eps,
            "sensitivity": SENSITIVITY,
            "neighbouring": "one record added or removed",
            "expected |noise| per cell": expected_abs_noise(eps / SENSITIVITY),
            "count column": count_name,
            "warnings": [p.message for p in problems if p.level == "warning"],
        }
        yield Progress(1.0, "done")
        yield Release(mechanism=self.name, table=table, cost=self.privacy_cost(**params), params=dict(params),
                      metadata=metadata, extra_tables=extra)

    # -- figures for simulations (sweeps) -------------------------------------------------------------------
    def measures(self, release: Release, train: Dataset, test: Dataset | None) -> dict[str, float]:
        """Error per cell against the exact counts of `train`: for the custodian's own simulation only."""
        cells = release.extra_tables.get("noisy counts", release.table)
        noisy = cells[release.metadata["count column"]].to_numpy(dtype=np.int64)
        axes, _ = build_axes(train, dict(release.params))
        err = np.abs(noisy - true_counts(train.frame, axes))
        return {"mean abs error": float(err.mean()), "max abs error": float(err.max()),
                "total error": float(abs(int(noisy.sum()) - train.n_rows))}


__all__ = ["LaplaceHistogram", "Axis", "numeric_axis", "build_axes", "true_counts", "post_process",
           "scale_to_total", "expected_abs_noise", "cells_frame", "records_frame"]
