"""Statistical ε-DP test of DiffGen on neighbouring tables (one record added), and proof that it can fail.

For an output event E, ε-DP requires P[E | D] ≤ e^ε · P[E | D'] both ways. Over many seeded runs we count how
often E happens on D and on D', and take Clopper–Pearson bounds: log(lower(P_D) / upper(P_D')) is a lower
confidence bound on the privacy loss of E. The test passes when no event's bound exceeds the budget of the
part that produced it, and the twin test shows that halving every noise scale (a private multiplier that only
tests set) makes the same check fail.

- Counts: the group holding the added record has true count 10 on D, 11 on D' whatever the cut; its released
  count is charged ε/2, and the loss of {count ≤ t} is exactly ε/2 for t ≤ 10, so a halved scale shows ε.
- Specialisations: the exponential mechanism is charged ε' per call. Max is monotone (adding a record never
  lowers a score), for which the mechanism's loss is at most ε'/2; the tables below are built so that the loss
  approaches that bound, and the test holds the measured loss to ε'/2 (and so to the charge ε'). With a halved
  scale the same events show a loss near ε'.
"""

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from scipy.stats import beta

from ppdp_gui.engine.data.schema import ColumnSpec, Dataset, Role
from ppdp_gui.engine.mechanisms.base import run_to_release
from ppdp_gui.engine.mechanisms.diffgen import DiffGen
from ppdp_gui.engine.mechanisms.diffgen.algorithm import specialise
from ppdp_gui.engine.mechanisms.diffgen.partition import CategoricalAttr, NumericAttr
from ppdp_gui.engine.noise import NoiseSource
from ppdp_gui.engine.taxonomy import Taxonomy
from ppdp_gui.engine.verify.noise import with_factor

ALPHA = 1e-3  # per bound; the runs are seeded, so the outcome is fixed


def loss_lower_bound(hits_d: np.ndarray, hits_d2: np.ndarray, runs: int) -> float:
    """Largest lower confidence bound on |log P_D(E) − log P_D'(E)| over the events (columns of hits)."""
    def lower(k):
        return 0.0 if k == 0 else beta.ppf(ALPHA, k, runs - k + 1)

    def upper(k):
        return 1.0 if k == runs else beta.ppf(1 - ALPHA, k + 1, runs - k)

    worst = -np.inf
    for k1, k2 in zip(hits_d, hits_d2):
        for a, b in ((k1, k2), (k2, k1)):
            if lower(a) > 0:
                worst = max(worst, np.log(lower(a) / upper(b)))
    return float(worst)


HALVED = 0.5  # every noise scale halved from outside the mechanism (engine.verify.ScaledNoise)


# ---- counts (whole mechanism, 30 rows) ------------------------------------------------------------------------
def count_table(extra: bool) -> Dataset:
    """10 copies of x = (a1, b1, 50, yes), 20 'no' records elsewhere; D' has an 11th copy of x."""
    rng = np.random.default_rng(7)
    a = ["a1"] * 10 + list(rng.choice(["a1", "a2", "a3"], 20))
    b = ["b1"] * 10 + list(rng.choice(["b1", "b2"], 20))
    x = [50] * 10 + list(rng.integers(0, 101, 20))
    y = ["yes"] * 10 + ["no"] * 20
    if extra:
        a, b, x, y = a + ["a1"], b + ["b1"], x + [50], y + ["yes"]
    frame = pd.DataFrame({"a": a, "b": b, "x": x, "y": y})
    return Dataset(frame, (
        ColumnSpec("a", "categorical", Role.QUASI_IDENTIFIER,
                   Taxonomy.from_paths("a", [["a1", "A", "*"], ["a2", "A", "*"], ["a3", "*"]])),
        ColumnSpec("b", "categorical", Role.QUASI_IDENTIFIER, Taxonomy.flat("b", ["b1", "b2"])),
        ColumnSpec("x", "numeric", Role.QUASI_IDENTIFIER,
                   Taxonomy.from_paths("x", [[str(v), "[0, 100]"] for v in range(101)])),
        ColumnSpec("y", "categorical", Role.CLASS, Taxonomy.flat("y", ["no", "yes"]))))


def count_of_x(mech: DiffGen, data: Dataset, seed: int, noise_factor: float = 1.0) -> int:
    rng = with_factor(NoiseSource.for_tests(seed), noise_factor)
    release = run_to_release(mech.run(data, rng=rng, epsilon=2.0, h=2))
    key = release.apply_to(pd.DataFrame({"a": ["a1"], "b": ["b1"], "x": [50], "y": ["yes"]})).iloc[0]
    table = release.table
    match = np.ones(len(table), dtype=bool)
    for col in ("a", "b", "x", "y"):
        match &= (table[col].astype(str) == str(key[col])).to_numpy()
    return int(table.loc[match, "count"].sum())


def counts_loss(mech: DiffGen, runs: int = 500, noise_factor: float = 1.0) -> float:
    thresholds = np.arange(7, 14)
    hits = []
    for extra in (False, True):
        data = count_table(extra)
        c = np.array([count_of_x(mech, data, 10_000 * extra + s, noise_factor) for s in range(runs)])
        hits.append([(c <= t).sum() for t in thresholds])
    return loss_lower_bound(np.array(hits[0]), np.array(hits[1]), runs)


def test_noisy_counts_stay_within_their_half_of_epsilon():
    assert counts_loss(DiffGen()) <= 2.0 / 2


def test_noisy_counts_test_fails_with_halved_noise_scale():
    assert counts_loss(DiffGen(), noise_factor=HALVED) > 2.0 / 2


# ---- specialisations (the exponential mechanism through `specialise`) -------------------------------------------
def candidate_attrs(extra: bool) -> list:
    """Two flat attributes whose Max scores are equal on D; the added record (a1, b1, yes) raises only a's."""
    cells = {("a1", "b2", "yes"): 1, ("a2", "b1", "yes"): 6, ("a2", "b1", "no"): 8, ("a2", "b2", "yes"): 7,
             ("a2", "b2", "no"): 8, ("a1", "b1", "no"): 1}
    if extra:
        cells[("a1", "b1", "yes")] = 1
    rows = [k for k, n in cells.items() for _ in range(n)]
    frame = pd.DataFrame(rows, columns=["a", "b", "y"])
    y = (frame["y"] == "yes").to_numpy().astype(np.int64)
    return [CategoricalAttr.build(c, Taxonomy.flat(c, [f"{c}1", f"{c}2"]), frame[c], y, 2) for c in "ab"]


# grids over which the split of `numeric_attr` is drawn: (lo, hi, step, integer); the values 2, 4, 6 of [0, 8]
# are mapped affinely onto [lo, hi]
GRIDS = {"real": (0.0, 8.0, None, False),  # automatic step 0.01: 800 cells, 799 boundaries
         "integer": (0.0, 8.0, None, True),  # step 1: boundaries 1..8
         "coarse real": (0.5, 2.5, 0.25, False)}  # values 1.0, 1.5, 2.0; boundaries 0.75, 1.0, …, 2.25


def _on(grid: str, v):
    lo, hi = GRIDS[grid][:2]
    return lo + np.asarray(v, dtype=np.float64) * (hi - lo) / 8.0


def numeric_attr(extra: bool, grid: str = "real") -> NumericAttr:
    """Values 2 (yes) and 6 (no) on [0, 8]; the added record 4 (yes) raises every split score but (2, 4]'s.
    On every grid the four bins (0, 2], (2, 4], (4, 6], (6, 8] hold the same number of split boundaries (up to
    one fewer in the last, whose top is hi itself on a real grid), so the events are the same."""
    lo, hi, step, integer = GRIDS[grid]
    x = _on(grid, [2.0] * 5 + [6.0] * 5 + ([4.0] if extra else []))
    y = np.array([1] * 5 + [0] * 5 + ([1] if extra else []), dtype=np.int64)
    return NumericAttr.build("x", x, lo, hi, y, 2, integer=integer, step=step)


def _drain(gen):
    try:
        while True:
            next(gen)
    except StopIteration as stop:
        return stop.value


def selection_loss(noise_factor: float, runs: int = 5000) -> tuple[float, float]:
    """(loss bound, ε'/2) for the choice between a and b; ε = 8, no numeric attribute, h = 1: ε' = 2."""
    hits = []
    for extra in (False, True):
        base = candidate_attrs(extra)
        chose_a = 0
        for s in range(runs):
            attrs = [replace(a, cut=[0]) for a in base]
            out = _drain(specialise(attrs, 2, epsilon=8.0, h=1, utility="Max",
                                    rng=with_factor(NoiseSource.for_tests(s), noise_factor)))
            chose_a += out.specialisations[0]["column"] == "a"
        hits.append([chose_a, runs - chose_a])
    return loss_lower_bound(np.array(hits[0]), np.array(hits[1]), runs), 2.0 / 2


def split_loss(noise_factor: float, runs: int = 5000, grid: str = "real") -> tuple[float, float]:
    """(loss bound, ε'/2) for where the root split of x falls; ε = 12, one numeric attribute, h = 1: ε' = 2.
    The split is released as a grid value (lo + g·step); the events are the four bins it can fall in."""
    bins = _on(grid, [0.0, 2.0, 4.0, 6.0, 8.0])
    hits = []
    for extra in (False, True):
        base = numeric_attr(extra, grid)
        first = []
        for s in range(runs):
            attr = replace(base, splits=[])
            out = _drain(specialise([attr], 2, epsilon=12.0, h=1, utility="Max",
                                    rng=with_factor(NoiseSource.for_tests(s), noise_factor)))
            first.append(out.specialisations[0]["split"])
        which = np.digitize(first, bins[1:-1], right=True)
        hits.append(np.bincount(which, minlength=4))
    return loss_lower_bound(hits[0], hits[1], runs), 2.0 / 2


def integer_split_loss(noise_factor: float) -> tuple[float, float]:
    return split_loss(noise_factor, grid="integer")


def coarse_split_loss(noise_factor: float) -> tuple[float, float]:
    return split_loss(noise_factor, grid="coarse real")


LOSSES = [selection_loss, split_loss, integer_split_loss, coarse_split_loss]
LOSS_IDS = ["candidate", "split value", "integer split value", "coarse real grid split value"]


@pytest.mark.parametrize("loss", LOSSES, ids=LOSS_IDS)
def test_specialisations_stay_within_their_budget(loss):
    measured, bound = loss(1.0)
    assert measured <= bound


@pytest.mark.parametrize("loss", LOSSES, ids=LOSS_IDS)
def test_specialisation_test_fails_with_halved_noise_scale(loss):
    measured, bound = loss(0.5)
    assert measured > bound
