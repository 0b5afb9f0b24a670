"""Read mean/std per grid point out of a sweep summary, whatever shape the summary frame has.

A sweep summary is usually `rows.groupby(params)[measures].agg(["mean", "std"])`: parameters in the index and
(measure, "mean"/"std") column pairs. Flat variants ("BA % mean", "BA %_mean") and a long form (columns
"measure", "mean", "std") are read too, so the chart does not break when the summary is reshaped.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

_STATS = ("mean", "std")
_SEPARATORS = (" ", "_", ".", ":")


@dataclass(frozen=True)
class Points:
    """One curve: x values (sorted), mean and std of the measure at each x; `label` names the fixed other params."""

    label: str
    x: np.ndarray
    mean: np.ndarray
    std: np.ndarray


def _flat_stat(col: str) -> tuple[str, str] | None:
    for stat in _STATS:
        for sep in _SEPARATORS:
            if col.endswith(sep + stat):
                return col[: -len(stat) - len(sep)], stat
            if col.startswith(stat + sep):
                return col[len(stat) + len(sep):], stat
    return None


def tidy(summary: pd.DataFrame, param_names: list[str] | None = None) -> tuple[pd.DataFrame, list[str], list[str]]:
    """Return (frame, params, measures): one row per grid point, params as columns, `<measure>|mean|std` columns."""
    frame = summary.copy()
    if any(name is not None for name in frame.index.names):
        frame = frame.reset_index()
    if "measure" in frame.columns and "mean" in frame.columns:  # long form
        params = [c for c in frame.columns if c not in ("measure", "mean", "std", "count", "n")]
        if param_names:
            params = [p for p in param_names if p in frame.columns]
        wide = frame.pivot_table(index=params, columns="measure", values=[s for s in _STATS if s in frame.columns])
        wide = wide.swaplevel(0, 1, axis=1)
        return tidy(wide, param_names)
    out: dict[str, pd.Series] = {}
    measures: list[str] = []
    params: list[str] = []
    for col in frame.columns:
        if isinstance(col, tuple):
            head, stat = str(col[0]), str(col[-1]) if len(col) > 1 else ""
            if stat in _STATS:
                key, kind = head, stat
            else:
                params.append(head)
                out[head] = frame[col]
                continue
        else:
            split = _flat_stat(str(col))
            if split is None:
                params.append(str(col))
                out[str(col)] = frame[col]
                continue
            key, kind = split
        if key not in measures:
            measures.append(key)
        out[f"{key}|{kind}"] = frame[col]
    tidy_frame = pd.DataFrame(out)
    if param_names:
        params = [p for p in param_names if p in tidy_frame.columns]
    params = [p for p in params if p not in ("count", "n", "repeats")] or params
    return tidy_frame, params, measures


def points(summary: pd.DataFrame, x_param: str, measure: str, param_names: list[str] | None = None) -> list[Points]:
    """Curves of `measure` against `x_param`: one per combination of the other parameters that vary."""
    return points_of(tidy(summary, param_names), x_param, measure)


def points_of(tidied: tuple[pd.DataFrame, list[str], list[str]], x_param: str, measure: str) -> list[Points]:
    """`points` of a summary already tidied (the chart keeps each series' tidy form: reshaping it again for every
    redraw cost ~10 ms a time)."""
    frame, params, measures = tidied
    if x_param not in frame.columns or measure not in measures:
        return []
    mean_col, std_col = f"{measure}|mean", f"{measure}|std"
    others = [p for p in params if p != x_param and frame[p].nunique(dropna=False) > 1]
    groups = frame.groupby(others, sort=True, dropna=False) if others else [((), frame)]
    curves = []
    for key, part in groups:
        key = key if isinstance(key, tuple) else (key,)
        part = part.sort_values(x_param)
        x = pd.to_numeric(part[x_param], errors="coerce").to_numpy(dtype=float)
        mean = part[mean_col].to_numpy(dtype=float)
        std = part[std_col].to_numpy(dtype=float) if std_col in part else np.zeros_like(mean)
        label = ", ".join(f"{p}={v}" for p, v in zip(others, key))
        curves.append(Points(label, x, mean, np.nan_to_num(std)))
    return curves
