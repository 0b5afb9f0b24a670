"""The paper's preprocessing and its inverse (Jiang et al. 2013, Sections 3.1 and 4.1), from public domains only.

Forward: every numeric attribute is clamped to its public bounds and scaled to [0, 1]; every categorical
attribute becomes one dummy per value of its public category set (exactly one of them is 1). The result is the
matrix X ∈ [0, 1]^(n × P) the mechanisms add noise to; the sensitivities (sensitivity.py) hold for any such X.

Inverse (what a published matrix becomes, Section 3.1): numbers are clamped to [0, 1], de-scaled to the public
bounds and, for whole-number domains, rounded to whole numbers (or to the domain's grid step); a category is
the dummy with the largest value. The published table therefore holds only values of the public domains.

Domains come from `numeric_bounds` / `category_set` (the column's stated domain, else its public taxonomy),
never from the records: the smallest age or a category held by one patient would itself leak. A column without
one is an error naming it (the publish path turns that into the refusal, or the opt-in labelled not ε-DP).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from ppdp_gui.engine.data.domains import DomainNeed, category_set, numeric_bounds
from ppdp_gui.engine.data.missing import numeric_blanks_fix
from ppdp_gui.engine.data.schema import Dataset
from ppdp_gui.engine.errors import ParameterError


def _refuse(column: str, message: str) -> ParameterError:
    exc = ParameterError(message)
    exc.column = column  # the window offers to set this column's domain
    return exc


@dataclass(frozen=True)
class Block:
    """One attribute's place in the encoded matrix: columns [start, start + width)."""

    column: str
    kind: str  # "numeric" | "categorical"
    start: int
    width: int
    low: float = 0.0
    high: float = 1.0
    integer: bool = False
    step: float | None = None
    labels: tuple[str, ...] = ()
    source: str = "domain"

    @property
    def stop(self) -> int:
        return self.start + self.width

    def describe(self) -> dict:
        """Public facts for the release note: the domain this attribute was encoded with."""
        if self.kind == "numeric":
            return {"bounds": [self.low, self.high], "whole numbers": self.integer, "source": self.source}
        return {"categories": list(self.labels), "source": self.source}


@dataclass(frozen=True)
class Encoding:
    """The encoded layout of a list of columns; built from the schema alone (`plan_encoding`)."""

    blocks: tuple[Block, ...]

    @property
    def width(self) -> int:
        return self.blocks[-1].stop if self.blocks else 0

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(b.column for b in self.blocks)

    @property
    def p1(self) -> int:
        return sum(b.kind == "numeric" for b in self.blocks)

    @property
    def p2(self) -> int:
        return sum(b.kind == "categorical" for b in self.blocks)

    @property
    def labels(self) -> dict[str, tuple[str, ...]]:
        return {b.column: b.labels for b in self.blocks if b.kind == "categorical"}

    def numeric_index(self) -> np.ndarray:
        return np.array([b.start for b in self.blocks if b.kind == "numeric"], dtype=np.int64)

    def categorical_blocks(self) -> list[Block]:
        return [b for b in self.blocks if b.kind == "categorical"]

    def describe(self) -> dict:
        return {b.column: b.describe() for b in self.blocks}

    # ---- forward ------------------------------------------------------------------------------------------
    def encode(self, frame: pd.DataFrame) -> tuple[np.ndarray, dict[str, int]]:
        """X ∈ [0, 1]^(n × P) and, per numeric column, how many values were clamped onto the bounds (custodian
        figures). Values outside a category set are an error (check() reports them before a run)."""
        n = len(frame)
        x = np.zeros((n, self.width), dtype=np.float64)
        clamped: dict[str, int] = {}
        rows = np.arange(n)
        for b in self.blocks:
            if b.kind == "numeric":
                v = numeric_column(frame[b.column])
                outside = int(((v < b.low) | (v > b.high)).sum())
                if outside:
                    clamped[b.column] = outside
                span = b.high - b.low
                x[:, b.start] = 0.0 if span <= 0 else (np.clip(v, b.low, b.high) - b.low) / span
            else:
                codes = category_codes(frame[b.column], b.labels)
                if (codes < 0).any():
                    raise _refuse(b.column, f"column {b.column!r} has values outside its public list of values")
                x[rows, b.start + codes] = 1.0
        return x, clamped

    # ---- inverse ------------------------------------------------------------------------------------------
    def decode(self, z: np.ndarray) -> pd.DataFrame:
        """A table in the original schema from any real matrix (Section 3.1's recovery); public values only."""
        z = np.asarray(z, dtype=np.float64)
        out = {}
        for b in self.blocks:
            if b.kind == "numeric":
                v = b.low + np.clip(z[:, b.start], 0.0, 1.0) * (b.high - b.low)
                if b.step:
                    v = np.clip(b.low + np.round((v - b.low) / b.step) * b.step, b.low, b.high)
                if b.integer:
                    out[b.column] = np.clip(np.round(v), b.low, b.high).astype(np.int64)
                else:
                    out[b.column] = v
            else:
                codes = np.argmax(z[:, b.start:b.stop], axis=1)
                out[b.column] = pd.Categorical.from_codes(codes, categories=list(b.labels))
        return pd.DataFrame(out)

    def reencode(self, table: pd.DataFrame) -> np.ndarray:
        """A decoded table back to [0, 1]^P (to measure it against the original encoding)."""
        return self.encode(table)[0]


def numeric_column(series: pd.Series) -> np.ndarray:
    return pd.to_numeric(series, errors="coerce").to_numpy(dtype=np.float64)


def category_codes(series: pd.Series, labels: Sequence[str]) -> np.ndarray:
    """Index of every value in `labels` (compared as text), −1 when it is not there or missing. Factorising
    first looks each distinct value up once: ten times faster than a Categorical on long text columns."""
    if isinstance(series.dtype, pd.CategoricalDtype) and list(series.cat.categories.astype(str)) == list(labels):
        return series.cat.codes.to_numpy().astype(np.int64)
    codes, uniques = pd.factorize(series)
    lookup = pd.Index(list(labels)).get_indexer(pd.Index(uniques).astype(str))
    return np.where(codes >= 0, lookup[np.maximum(codes, 0)], -1).astype(np.int64)


def default_columns(data: Dataset, exclude: Sequence[str] = ()) -> list[str]:
    """Every column that is not an identifier (identifiers are never released), minus `exclude`."""
    return [c.name for c in data.schema if not c.role.never_released and c.name not in set(exclude)]


def chosen_columns(data: Dataset, params: dict, exclude: Sequence[str] = ()) -> list[str]:
    cols = list(params.get("columns") or ()) or default_columns(data, exclude)
    return [c for c in cols if c not in set(exclude)]


def domain_needs_of(data: Dataset, columns: Sequence[str]) -> list[DomainNeed]:
    return [DomainNeed(c, "bounds" if data.spec(c).kind == "numeric" else "categories")
            for c in columns if c in data.frame.columns]


def plan_encoding(data: Dataset, columns: Sequence[str]) -> Encoding:
    """The layout from public domains only; ParameterError naming the column when one is missing."""
    blocks, start = [], 0
    for col in columns:
        if col not in data.frame.columns:
            raise ParameterError(f"no column named {col!r}")
        spec = data.spec(col)
        if spec.kind == "numeric":
            found = numeric_bounds(spec)
            if found is None:
                raise _refuse(col, f"column {col!r} has no public bounds: set its domain (e.g. 0 to 120 for an "
                                   "age)")
            blocks.append(Block(col, "numeric", start, 1, float(found.low), float(found.high), bool(found.integer),
                                float(found.step) if found.step else None,
                                source=found.source if found.is_public else "data"))
            start += 1
        else:
            found = category_set(spec)
            if found is None:
                raise _refuse(col, f"column {col!r} has no public list of values: set its domain (or give it a "
                                   "taxonomy from a public code list)")
            labels = tuple(str(v) for v in found.values)
            blocks.append(Block(col, "categorical", start, len(labels), labels=labels,
                                source=found.source if found.is_public else "data"))
            start += len(labels)
    if not blocks:
        raise ParameterError("choose at least one column")
    return Encoding(tuple(blocks))


def clamp_warnings(enc: Encoding, clamped: dict[str, int]) -> tuple[str, ...]:
    """The custodian's warnings for values clamped onto the bounds (they count records: never in the note)."""
    out = []
    for b in enc.blocks:
        if clamped.get(b.column):
            out.append(f"{clamped[b.column]} value(s) of {b.column!r} lie outside its public bounds "
                       f"[{b.low:g}, {b.high:g}] and are clamped onto them")
    return tuple(out)


def data_problems(data: Dataset, enc: Encoding) -> list[tuple[str, str, str]]:
    """(level, column, message) for values the encoding cannot take: missing numbers (an error: drop them with
    the missing-value policy), categories outside the public list (an error), numbers outside the public bounds
    (a warning for the custodian: they are clamped; the message counts records, so it never reaches the note)."""
    found = []
    for b in enc.blocks:
        series = data.frame[b.column]
        if b.kind == "numeric":
            v = numeric_column(series)
            if np.isnan(v).any():
                found.append(("error", b.column, f"numeric column {b.column!r} has missing values (empty "
                                                 "cells). " + numeric_blanks_fix(b.column) + "."))
                continue
            outside = int(((v < b.low) | (v > b.high)).sum())
            if outside:
                found.append(("warning", b.column, clamp_warnings(enc, {b.column: outside})[0]))
        else:
            codes = category_codes(series, b.labels)
            bad = int((codes < 0).sum())
            if bad:
                found.append(("error", b.column, f"column {b.column!r} has {bad} value(s) outside its public list "
                                                 "of values; add them to its domain"))
    return found


__all__ = ["Block", "Encoding", "plan_encoding", "data_problems", "clamp_warnings", "default_columns", "chosen_columns",
           "domain_needs_of", "numeric_column", "category_codes"]
