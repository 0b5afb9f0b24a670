"""Strict Mondrian on per-tuple counts: rows with equal quasi-identifiers are one weighted row, the same classes.

Strict cuts never separate equal values and read only counts per (partition, value), so `partition` collapses a
large table's rows into their distinct QI tuples with counts (`weights=`) before splitting: the work per level
follows the tuples, not the rows. The labels must be exactly those of the row-by-row path (`_COLLAPSE_ROWS` set
out of reach), on a random table and on Adult with ARX's hierarchies.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import ppdp_gui.engine.mechanisms.kanon.mondrian_core as core
from ppdp_gui.engine.data.reader import read_table
from ppdp_gui.engine.data.schema import Dataset, Role
from ppdp_gui.engine.mechanisms.base import run_to_release
from ppdp_gui.engine.mechanisms.kanon.mondrian import Mondrian
from ppdp_gui.engine.noise import NoiseSource
from ppdp_gui.engine.taxonomy.discover import attach_hierarchies

ARX = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "adult" / "hierarchies" / "arx" / "adult.csv.gz"
ARX_QIS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation"]


def row_by_row(monkeypatch, fn):
    with monkeypatch.context() as m:
        m.setattr(core, "_COLLAPSE_ROWS", 10**12)
        return fn()


def test_random_tables_same_labels(monkeypatch):
    r = np.random.default_rng(7)
    for _ in range(12):
        n, d, k = int(r.integers(20_000, 50_000)), int(r.integers(1, 5)), int(r.integers(2, 60))
        X = r.integers(0, r.integers(2, 40), size=(n, d)).astype(float)
        assert np.array_equal(core.partition(X, k), row_by_row(monkeypatch, lambda: core.partition(X, k)))


def test_a_table_of_distinct_rows_keeps_the_row_path(monkeypatch):
    X = np.random.default_rng(2).random((30_000, 2))
    assert np.array_equal(core.partition(X, 5), row_by_row(monkeypatch, lambda: core.partition(X, 5)))


def test_levels_count_tuples_not_rows(monkeypatch):
    """The counting of every level reads at most one entry per distinct tuple (fails on the row-by-row core)."""
    X = np.random.default_rng(3).integers(0, 12, size=(60_000, 3)).astype(float)
    seen = []
    real = core._Runs.__init__

    def spy(self, local, code, *args, **kw):
        seen.append(code.size)
        real(self, local, code, *args, **kw)
    monkeypatch.setattr(core._Runs, "__init__", spy)
    core.partition(X, 10)
    assert seen and max(seen) <= len(np.unique(X, axis=0))


@pytest.mark.skipif(not ARX.exists(), reason="ARX's Adult is not in ../shared/data")
def test_adult_with_arx_hierarchies_same_classes(monkeypatch):
    ds = read_table(ARX, kinds={c: "categorical" for c in ARX_QIS},
                    roles={**{c: Role.QUASI_IDENTIFIER for c in ARX_QIS}, "salary-class": Role.CLASS})
    ds = attach_hierarchies(ds, ARX)[0]
    idx = np.random.default_rng(0).integers(0, ds.n_rows, 40_000)
    big = Dataset(ds.frame.iloc[idx].reset_index(drop=True), ds.schema)

    def run():
        return run_to_release(Mondrian().run(big, rng=NoiseSource.for_tests(0), k=10))
    new, old = run(), row_by_row(monkeypatch, run)
    pd.testing.assert_frame_equal(new.table, old.table)
    assert new.record["groups"] == old.record["groups"]
