"""How much a generalised release says less than the original: NCP, discernibility, average class size.

A release describes each published QI label by its bounds [lo, hi] in loss units (Release.record "intervals")
and each QI's whole range (record "domains"): leaf positions for taxonomies, the column's unit for numbers. The
normalised certainty penalty of a cell is (hi - lo) / (domain hi - domain lo), clipped to [0, 1]; for a taxonomy
node that is (leaves under it - 1) / (leaves - 1), which is ARX's loss metric (LM) per QI.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd


def cell_loss(column: pd.Series, intervals: Mapping[str, Sequence[float]], domain: Sequence[float]) -> np.ndarray:
    """NCP of every cell of one published QI column."""
    span = float(domain[1]) - float(domain[0])
    labels = column.astype(str)
    width = {lab: max(0.0, float(b[1]) - float(b[0])) for lab, b in intervals.items()}
    w = labels.map(width).to_numpy(dtype=float)
    if np.isnan(w).any():
        unknown = sorted(set(labels[np.isnan(w)]))[:5]
        raise ValueError(f"column {column.name!r}: published labels without bounds {unknown}")
    if span <= 0:
        return np.zeros(len(column))
    return np.clip(w / span, 0.0, 1.0)


def ncp_per_qi(table: pd.DataFrame, intervals: Mapping, domains: Mapping) -> dict[str, float]:
    """Mean NCP of each quasi-identifier over the released rows (0 = exact, 1 = fully generalised)."""
    return {q: float(cell_loss(table[q], intervals[q], domains[q]).mean()) if len(table) else 0.0
            for q in intervals}


def ncp(table: pd.DataFrame, intervals: Mapping, domains: Mapping) -> float:
    """Mean NCP over rows x quasi-identifiers (the figure qiyuangong/Mondrian prints, and ARX's LM mean)."""
    per = ncp_per_qi(table, intervals, domains)
    return float(np.mean(list(per.values()))) if per else 0.0


def class_sizes(table: pd.DataFrame, quasi_identifiers: Sequence[str]) -> np.ndarray:
    """Sizes of the equivalence classes as a reader of the table sees them (rows sharing all QI labels)."""
    if len(table) == 0:
        return np.zeros(0, dtype=np.int64)
    if not quasi_identifiers:
        return np.array([len(table)])
    keys = pd.DataFrame({q: table[q].astype(str).to_numpy() for q in quasi_identifiers})
    return np.bincount(keys.groupby(list(quasi_identifiers), sort=False).ngroup().to_numpy())


def persons_per_class(table: pd.DataFrame, quasi_identifiers: Sequence[str], persons: np.ndarray) -> np.ndarray:
    """Different persons in each equivalence class (`persons`: one id per row of `table`): what k counts when the
    table has a person column, so the group size compared with k is in the same unit as k."""
    if len(table) == 0:
        return np.zeros(0, dtype=np.int64)
    keys = pd.DataFrame({q: table[q].astype(str).to_numpy() for q in quasi_identifiers})
    group = keys.groupby(list(quasi_identifiers), sort=False).ngroup().to_numpy() if quasi_identifiers \
        else np.zeros(len(table), dtype=np.int64)
    pairs = pd.DataFrame({"g": group, "p": pd.factorize(persons)[0]}).drop_duplicates()
    return np.bincount(pairs["g"].to_numpy())


def discernibility(sizes: np.ndarray, suppressed: int = 0, n_total: int | None = None) -> float:
    """Bayardo & Agrawal's discernibility: sum of squared class sizes (+ suppressed rows x table size)."""
    sizes = np.asarray(sizes, dtype=float)
    n = float(n_total if n_total is not None else sizes.sum() + suppressed)
    return float((sizes ** 2).sum() + suppressed * n)


def average_class_size(sizes: np.ndarray, k: int | None = None) -> float:
    """Mean class size; with k, LeFevre's normalised C_avg = (rows / classes) / k (1 is ideal)."""
    sizes = np.asarray(sizes)
    if sizes.size == 0:
        return 0.0
    avg = float(sizes.sum()) / sizes.size
    return avg / k if k else avg


def class_distortion(original: pd.Series, released: pd.Series) -> int:
    """Number of rows whose class value was changed by the release (rows aligned)."""
    return int((original.astype(str).to_numpy() != released.astype(str).to_numpy()).sum())


def _k_units(release, train, qis: list[str], sizes: np.ndarray) -> np.ndarray:
    """Class sizes in what k counts: persons when the release's k counts persons (several rows per patient would
    make groups look many times larger than k), else rows."""
    person = getattr(train, "person_column", None)
    rows = (getattr(release, "source_rows", None) or {}).get("table")
    if not release.record.get("k counts") or person is None or rows is None or len(rows) != len(release.table):
        return sizes
    return persons_per_class(release.table, qis, train.frame[person].to_numpy()[np.asarray(rows)])


def kanon_measures(release, train, test=None) -> dict[str, float]:
    """Utility figures of a k-anonymity release: loss, group sizes against k, and F-measures when a class column
    exists. Its groups and risks are the publish path's (metrics/risk.group_figures), never computed here."""
    meta = release.record
    table = release.table
    qis = list(meta["quasi_identifiers"])
    sizes = class_sizes(table, qis)
    out = {
        "NCP %": 100.0 * ncp(table, meta["intervals"], meta["domains"]),
        "C_avg": average_class_size(_k_units(release, train, qis, sizes), meta.get("k")),
        "discernibility": discernibility(sizes),
    }
    cls = train.class_column
    if cls is not None and test is not None and cls in table.columns and test.n_rows:
        from ppdp_gui.engine.metrics.fmeasure import release_f_measures
        out.update(release_f_measures(release, train, test))
    return out
