"""DiffGen's public grid of split points: the step rule (bounds only), exact cells and exact labels."""

import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ppdp_gui.engine.data.schema import ColumnSpec, Dataset, Role
from ppdp_gui.engine.errors import ParameterError
from ppdp_gui.engine.mechanisms.diffgen.grid import MAX_GRID_CELLS, Grid, decimal_text, grid_step
from ppdp_gui.engine.mechanisms.diffgen.mechanism import make_plan
from ppdp_gui.engine.mechanisms.diffgen.partition import NumericAttr
from ppdp_gui.engine.taxonomy import Taxonomy

ROUND = {Fraction(1), Fraction(2), Fraction(5, 2), Fraction(5)}


def is_round(step: float) -> bool:
    """step = m·10^k with m ∈ {1, 2, 2.5, 5}, exactly (as its decimal text)."""
    q = Fraction(repr(step))
    k = math.floor(math.log10(q))
    return any(q == m * Fraction(10) ** j for m in ROUND for j in (k - 1, k))


# ---- the step rule ----------------------------------------------------------------------------------------------
def test_grid_step_known_values():
    assert grid_step(0, 10.5) == 0.02  # 525 cells
    assert grid_step(0, 1) == 0.001 and grid_step(-1, 1) == 0.002
    assert grid_step(0, 100) == 0.1 and grid_step(0, 0.25) == 0.00025
    assert grid_step(0, 1_500_000) == 2000  # 1500 is not round: 750 cells
    assert grid_step(18, 90) == 0.1  # 720 cells
    assert grid_step(5, 5) == 1.0 and Grid.make(5, 5).n_cells == 1  # nothing to split
    assert repr(grid_step(0, 0.025)) == "2.5e-05" and is_round(grid_step(0, 0.025))


@settings(max_examples=300, deadline=None)
@given(lo=st.floats(-1e9, 1e9, allow_nan=False), span=st.floats(1e-6, 1e9, allow_nan=False))
def test_grid_step_is_round_and_gives_at_most_1000_cells(lo, span):
    hi = lo + span
    if not hi > lo:
        return
    step = grid_step(lo, hi)
    n = Grid.make(lo, hi).n_cells
    assert is_round(step)
    assert 400 <= n <= MAX_GRID_CELLS or n < 400 and Fraction(repr(hi)) - Fraction(repr(lo)) <= 400 * Fraction(
        repr(step))


@settings(max_examples=100, deadline=None)
@given(lo=st.integers(-1000, 1000), width=st.integers(1, 10**6), scale=st.sampled_from([1, 10, 100, 1000]),
       seeds=st.tuples(st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1)),
       sizes=st.tuples(st.integers(0, 300), st.integers(1, 300)))
def test_step_is_a_function_of_the_bounds_only(lo, width, scale, seeds, sizes):
    """Same public bounds, any two data sets (sizes, values inside and outside the bounds): the same grid, in
    NumericAttr.build and in make_plan (where the mechanism chooses it; step 1 when the bounds are whole, an
    integer domain)."""
    lo, hi = lo / scale, (lo + width) / scale
    grids, plans = [], []
    for seed, n in zip(seeds, sizes):
        rng = np.random.default_rng(seed)
        x = rng.uniform(lo - width, hi + width, n) if seed % 2 else rng.choice([lo, hi, (lo + hi) / 2], n)
        y = rng.integers(0, 2, n)
        grids.append(NumericAttr.build("x", x, lo, hi, y, 2).grid)
        root = f"[{lo!r}, {hi!r}]"
        frame = pd.DataFrame({"x": x, "y": np.array(["no", "yes"])[y]})
        data = Dataset(frame, (ColumnSpec("x", "numeric", Role.QUASI_IDENTIFIER, Taxonomy.from_paths("x", [[root]])),
                               ColumnSpec("y", "categorical", Role.CLASS, Taxonomy.flat("y", ["no", "yes"]))))
        plans.append(make_plan(data, {}).steps["x"])
    assert grids[0] == grids[1] and grids[0].step == grid_step(lo, hi)
    integral = lo == int(lo) and hi == int(hi)  # the taxonomy's only numbers are the bounds
    assert plans[0] == plans[1] == (1.0 if integral else grid_step(lo, hi))


def test_integer_domain_step_1_and_explicit_step():
    grid = Grid.make(0, 100, integer=True)
    assert grid.step == 1 and grid.n_cells == 101  # one cell per integer, hi's included
    assert Grid.make(0, 10.5, step=0.5).n_cells == 21 and Grid.make(0, 10, step="0.5").n_cells == 20
    with pytest.raises(ParameterError):
        Grid.make(0, 1e6, step=1e-6)  # 10^12 cells
    with pytest.raises(ParameterError):
        Grid.make(0, 1, step=0)


# ---- cells ------------------------------------------------------------------------------------------------------
def test_cells_follow_the_exact_boundaries():
    grid = Grid.make(0, 1, step=0.1)  # 10 cells
    x = [0.3, 0.29999999999999993, 0.7, 0.0, 1.0, 1.5, -2.0, 0.99]
    # 0.3 / 0.1 = 2.9999999999999996 and 0.7 / 0.1 = 6.999999999999999: the quotient alone would say 2 and 6
    assert grid.cells(x).tolist() == [3, 2, 7, 0, 9, 9, 0, 9]
    ints = Grid.make(0, 10, integer=True)
    assert ints.cells([2.5, 2.999, 3.0, 10.0, 10.5, 12, -0.5]).tolist() == [2, 2, 3, 10, 10, 10, 0]


def test_boundary_floats_are_the_nearest_doubles_on_both_paths():
    g = np.arange(0, 1001)
    for grid in (Grid.make(0.1, 100.1, step=0.1),  # exact int64 path
                 Grid.make(0.30000000000000004, 10.3, step=0.01)):  # 17-digit lo: Fractions per g
        got = grid.boundary_floats(g)
        assert got.tolist() == [float(grid.value(int(v))) for v in g]


@settings(max_examples=300, deadline=None)
@given(x=st.floats(-5, 20, allow_nan=False), step=st.sampled_from([0.1, 0.05, 0.025, 0.3, 1.0, 0.7]))
def test_every_value_lies_in_the_label_of_its_cell(x, step):
    grid = Grid.make(0.1, 12.9, step=step)
    c = int(grid.cells([x])[0])
    label = grid.interval_label(c, c + 1)
    a, b = (float(t) for t in label[1:-1].split(", "))
    v = min(max(x, 0.1), 12.9)
    assert a <= v and (v <= b if label.endswith("]") else v < b)


# ---- exact text -------------------------------------------------------------------------------------------------
def test_labels_are_exact_grid_values():
    assert decimal_text(Fraction(1, 40)) == "0.025" and decimal_text(Fraction(-5, 2)) == "-2.5"
    assert decimal_text(Fraction(40)) == "40" and decimal_text(Fraction(0)) == "0"
    grid = Grid.make(0.1, 1.1, step=0.1)  # 0.1 + 2 × 0.1 is 0.30000000000000004 in doubles
    assert grid.labels([2, 5]) == ["[0.1, 0.3)", "[0.3, 0.6)", "[0.6, 1.1]"]
    assert grid.number(2) == 0.3 and grid.text(7) == "0.8"
    assert Grid.make(0, 10.5).labels([313]) == ["[0, 6.26)", "[6.26, 10.5]"]
    assert Grid.make(20, 90, integer=True).labels([15, 70]) == ["[20, 35)", "[35, 90)", "[90, 90]"]
    assert Grid.make(0, 2, step=0.25).labels([2, 5]) == ["[0, 0.5)", "[0.5, 1.25)", "[1.25, 2]"]
    assert Grid.make(0, 2, step=0.25).describe() == {"low": 0, "high": 2, "step": 0.25}
