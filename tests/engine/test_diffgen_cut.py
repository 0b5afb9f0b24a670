"""DiffGen's numeric cuts: integer split points on integer domains, grid split points on real ones, readable
labels, and the size figures."""

import re
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from ppdp_gui.engine.data.schema import ColumnSpec, Dataset, Role
from ppdp_gui.engine.mechanisms.base import run_to_release
from ppdp_gui.engine.mechanisms.diffgen import DiffGen
from ppdp_gui.engine.mechanisms.diffgen.algorithm import _draw_split, positive_noise_mean
from ppdp_gui.engine.mechanisms.diffgen.cut import ColumnCut
from ppdp_gui.engine.mechanisms.diffgen.partition import NumericAttr
from ppdp_gui.engine.mechanisms.diffgen.scores import max_score
from ppdp_gui.engine.noise import NoiseSource
from ppdp_gui.engine.taxonomy import Taxonomy
from ppdp_gui.engine.verify.noise import ScaledNoise

LABEL = re.compile(r"^\[(-?[\d.]+), (-?[\d.]+)([)\]])$")


def one_numeric(x, y, root: str, n_values=None) -> Dataset:
    """A numeric QI x with a one-level taxonomy whose root label carries the bounds; a flat class y."""
    leaves = [[str(v), root] for v in sorted(set(x))] if n_values is None else [[root]]
    frame = pd.DataFrame({"x": x, "y": y})
    return Dataset(frame, (ColumnSpec("x", "numeric", Role.QUASI_IDENTIFIER, Taxonomy.from_paths("x", leaves)),
                           ColumnSpec("y", "categorical", Role.CLASS, Taxonomy.flat("y", ["no", "yes"]))))


NOISE_FREE = 1e-9  # every noise scale × this (engine.verify.ScaledNoise): exact counts


def run(data, seed=0, **params):
    return run_to_release(DiffGen().run(data, rng=NoiseSource.for_tests(seed), **params))


def label_contains(label: str, v: float) -> bool:
    lo, hi, close = LABEL.match(label).groups()
    return float(lo) <= v and (v <= float(hi) if close == "]" else v < float(hi))


def test_integer_domain_gives_integer_splits_and_labels_that_hold_unseen_values():
    rng = np.random.default_rng(1)
    x = rng.integers(0, 101, 600)
    data = one_numeric(x, np.where(x > 60, "yes", "no"), "[0, 100]")
    release = run(data, epsilon=4, h=8)
    cut = release.note["cut"]["x"]
    assert cut["integer"] and len(cut["splits"]) == 8
    assert all(isinstance(s, int) and 0 < s <= 100 for s in cut["splits"])
    assert cut["grid"] == {"low": 0, "high": 100, "step": 1} and cut["grid indices"] == cut["splits"]
    assert all(LABEL.match(lab) and "." not in lab for lab in cut["cut"])
    assert len(set(cut["cut"])) == len(cut["cut"])
    assert all(h["split"] == int(h["split"]) for h in release.note["history"])
    unseen = np.concatenate([np.linspace(-5, 105, 441), [59.5, 60.0, 60.5, 99.99, 100.0]])
    general = release.apply_to(pd.DataFrame({"x": unseen}))["x"].astype(str)
    clamped = np.clip(unseen, 0, 100)
    assert all(label_contains(lab, v) for lab, v in zip(general, clamped))


def test_real_domain_keeps_real_splits_with_short_unique_labels():
    rng = np.random.default_rng(2)
    x = np.round(rng.uniform(0, 10, 500), 3)
    data = one_numeric(x, np.where(x > 6.2, "yes", "no"), "[0, 10.5]", n_values=0)
    release = run(data, epsilon=4, h=10)
    cut = release.note["cut"]["x"]
    assert not cut["integer"] and any(s != int(s) for s in cut["splits"])
    assert cut["grid"] == {"low": 0, "high": 10.5, "step": 0.02}  # 525 cells
    assert len(set(cut["cut"])) == len(cut["cut"]) == 11
    numbers = [t for lab in cut["cut"] for t in LABEL.match(lab).groups()[:2]]
    assert max(len(t.replace(".", "").lstrip("0")) for t in numbers) <= 4  # a grid of step 0.02 over [0, 10.5]
    general = release.apply_to(pd.DataFrame({"x": x}))["x"].astype(str)
    codes = np.searchsorted(cut["splits"], x, side="right")
    assert (general.to_numpy() == np.array(cut["cut"])[codes]).all()


def on_grid(value, lo: str, step: str, n_cells: int) -> bool:
    """True when `value` (a number, or its decimal text) is exactly lo + g·step for a boundary g in 1..n−1."""
    q = Fraction(value) if isinstance(value, str) else Fraction(repr(float(value)))
    g = (q - Fraction(lo)) / Fraction(step)
    return g.denominator == 1 and 1 <= g <= n_cells - 1


def test_released_split_points_lie_on_the_public_grid():
    """The auditor's finding: split values drawn uniform(v_j, v_{j+1}) between two data values and released as
    raw doubles reveal v_j and v_{j+1} in their low bits (measured ε ≥ 3.18 at a claimed ε = 1). Every split the
    release shows — metadata cut and history, the labels, apply_to's splits — must be a public grid value
    lo + g·step; the grid of [0, 10.5] has step 0.02, from the bounds alone (525 cells)."""
    rng = np.random.default_rng(11)
    x = rng.uniform(0, 10.5, 800)  # full-precision doubles: their low bits are what a raw split would copy
    data = one_numeric(x, np.where((x > 3.3) & (x < 7.7), "yes", "no"), "[0, 10.5]", n_values=0)
    for seed in range(5):
        release = run(data, seed=seed, epsilon=1, h=6)
        meta, cut = release.note, release.note["cut"]["x"]
        splits = cut["splits"]
        assert len(splits) == 6 and all(on_grid(s, "0", "0.02", 525) for s in splits)
        assert all(on_grid(h["split"], "0", "0.02", 525) for h in meta["history"])
        column = release.apply_to.columns[0]
        assert all(on_grid(s, "0", "0.02", 525) for s in column.splits)
        inner = [t for lab in cut["cut"] for t in LABEL.match(lab).groups()[:2] if t not in ("0", "10.5")]
        assert len(inner) == 2 * len(splits) and all(on_grid(t, "0", "0.02", 525) for t in inner)
        assert cut["grid"] == {"low": 0, "high": 10.5, "step": 0.02}
        assert [Fraction(repr(s)) for s in splits] == [Fraction(g, 50) for g in cut["grid indices"]]
        assert [h["split"] for h in meta["history"]] == [float(Fraction(h["grid index"], 50)) for h in meta["history"]]


def test_fractional_value_in_an_integer_domain_lands_on_one_side():
    """x = 2.5 on an integer domain lies in cell 2, i.e. [2, 3): left of a split at 3 in training and in
    apply_to alike (training once held it as ceil(2.5) = 3, to the right, while apply_to put it left)."""
    x = np.array([0.0, 1.0, 2.5, 2.999, 3.0, 3.5, 7.25, 10.0, 12.0, -1.5])
    y = np.array([0, 1, 0, 1, 0, 1, 0, 1, 0, 1], dtype=np.int64)
    attr = NumericAttr.build("x", x, 0.0, 10.0, y, 2, integer=True)
    attr.specialise(3)
    attr.specialise(10)
    train = attr.codes()
    applied = ColumnCut.of(attr).codes(pd.Series(x, name="x"))
    assert train.tolist() == applied.tolist() == [0, 0, 0, 0, 1, 1, 1, 2, 2, 0]
    assert attr.labels() == ["[0, 3)", "[3, 10)", "[10, 10]"]
    general = ColumnCut.of(attr).generalise(pd.Series(x, name="x")).astype(str)
    assert all(label_contains(lab, v) for lab, v in zip(general, np.clip(x, 0, 10)))


def test_fractional_values_in_an_integer_domain_are_counted_where_apply_to_puts_them():
    """The whole mechanism without noise: the released counts equal a group-by of apply_to(training data) even
    when most values are fractions (each split at an integer t sends 2.5 < t = 3 left both times)."""
    rng = np.random.default_rng(5)
    x = np.round(rng.uniform(0, 20, 400) * 2) / 2  # halves: 0, 0.5, …, 20
    data = one_numeric(x, np.where(x > 8, "yes", "no"), "[0, 20]", n_values=0)
    for seed in range(5):
        rng = ScaledNoise(NoiseSource.for_tests(seed), NOISE_FREE)
        release = run_to_release(DiffGen().run(data, rng=rng, epsilon=4, h=8))
        assert release.note["cut"]["x"]["integer"]
        general = release.apply_to(data.frame).astype(str)
        expected = general.groupby(["x", "y"]).size().to_dict()
        got = release.table.astype({"x": str, "y": str}).set_index(["x", "y"])["count"].to_dict()
        assert got == expected


def test_integer_split_draw_is_the_exponential_mechanism_over_integer_points():
    """Values 2 (yes) ×5 and 6 (no) ×5 on [0, 8]: the split t ∈ {1, …, 8} (x < t goes left), drawn with
    probability ∝ exp(ε' Max(t) / 2), computed here point by point; 40,000 draws must match it."""
    x = np.array([2.0] * 5 + [6.0] * 5)
    y = np.array([1] * 5 + [0] * 5, dtype=np.int64)
    attr = NumericAttr.build("x", x, 0.0, 8.0, y, 2, integer=True)
    eps = 1.0
    points = np.arange(1, 9)
    scores = [max_score(np.array([np.bincount(y[x < t], minlength=2), np.bincount(y[x >= t], minlength=2)]))
              for t in points]
    p = np.exp(eps * np.array(scores) / 2)
    p /= p.sum()
    rng = NoiseSource.for_tests(5)
    draws = np.array([_draw_split(attr, 0, attr.n_cells, "Max", eps, 1.0, rng).split for _ in range(40_000)])
    freq = np.bincount(draws.astype(int), minlength=9)[1:] / len(draws)
    assert set(np.unique(draws)) <= set(points.tolist())
    assert np.abs(freq - p).max() < 5 * np.sqrt(p * (1 - p) / len(draws)).max()


def test_integer_domain_runs_out_of_split_points_without_empty_intervals():
    """[0, 5] has six integers: at most five splits, every one of 1..5 once, then no candidate is left."""
    rng = np.random.default_rng(3)
    x = rng.integers(0, 6, 300)
    release = run(one_numeric(x, np.where(x > 2, "yes", "no"), "[0, 5]"), epsilon=1, h=30)
    meta = release.note
    assert meta["cut"]["x"]["splits"] == [1, 2, 3, 4, 5] and meta["stopped early"]
    assert meta["cut"]["x"]["cut"] == ["[0, 1)", "[1, 2)", "[2, 3)", "[3, 4)", "[4, 5)", "[5, 5]"]


# ---- how large the release grows ---------------------------------------------------------------------------------
def test_positive_noise_mean_matches_the_sampler():
    z = NoiseSource.for_tests(0).discrete_laplace(2.0, size=400_000)
    assert np.maximum(z, 0).mean() == pytest.approx(positive_noise_mean(2.0), rel=0.01)
    assert positive_noise_mean(20.0) == pytest.approx(10.0, rel=0.01)  # ≈ scale/2 for a large scale


def test_size_figures_in_metadata_and_warning_when_noise_dominates():
    rng = np.random.default_rng(4)
    x = rng.integers(0, 101, 60)
    data = one_numeric(x, np.where(x > 60, "yes", "no"), "[0, 100]")
    small = run(data, epsilon=10, h=1)
    meta = small.note
    assert meta["released groups"] == len(small.table) and meta["released records"] == small.table["count"].sum()
    assert meta["expected records from noise (at most)"] == pytest.approx(
        meta["groups"] * meta["expected records per empty group"])
    assert not any("noise alone" in w for w in small.warnings)
    c = [f"c{i}" for i in rng.integers(0, 40, 60)]  # a flat 40-value QI: one step cuts it into 40 pieces
    wide = Dataset(data.frame.assign(c=c), data.schema + (
        ColumnSpec("c", "categorical", Role.QUASI_IDENTIFIER, Taxonomy.flat("c", [f"c{i}" for i in range(40)])),))
    big = run(wide, epsilon=0.1, h=10, output="records")  # hundreds of groups × ~10 noise records vs 60 rows
    warned = [w for w in big.warnings if "noise alone" in w]
    assert len(warned) == 1 and f"{big.note['groups']:,} groups" in warned[0]
    assert len(big.table) == big.note["released records"]
