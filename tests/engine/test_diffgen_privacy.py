"""Statistical ε-DP test of DiffGen's parts on neighbouring tables (one record added), and proof that it can fail.

For an output event E, ε-DP requires P[E | D] ≤ e^ε · P[E | D'] both ways. Over many seeded runs the verifier's
statistics (engine.verify.stats.audit) choose the events on one half of the runs and bound them on the other
with Clopper–Pearson intervals and a Bonferroni correction, so trying many events (every threshold of a count,
every one of 64 split points) does not make the bound optimistic. Each test holds the bound to the budget of
the part that produced it; its twin halves every noise scale (engine.verify.ScaledNoise, from outside the
mechanism) and shows the same check fails.

- Counts: the group holding the added record has true count 10 on D, 11 on D' whatever the cut; its released
  count is charged ε/2, and the loss of {count ≥ t} is exactly ε/2 for t ≥ 11, so a halved scale shows ε.
- Specialisations: the exponential mechanism is charged ε' per call. Max is monotone (adding a record never
  lowers a score), for which the mechanism's loss is at most ε'/2; the tables below are built so that the loss
  approaches that bound, and the test holds the measured loss to ε'/2 (and so to the charge ε'). With a halved
  scale the same events show a loss near ε'. Split values are released as numbers: every one of up to 64
  thresholds is a candidate event, not 4 coarse bins.
- InfoGain: its sensitivity is log2 K (the paper); with ln K the choice is sharper than ε' allows. The odds of
  choosing the informative column over a useless one give a lower bound on the ε' really used.
"""

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from ppdp_gui.engine.data.schema import ColumnSpec, Dataset, Role
from ppdp_gui.engine.mechanisms.base import run_to_release
from ppdp_gui.engine.mechanisms.diffgen import DiffGen
from ppdp_gui.engine.mechanisms.diffgen import algorithm
from ppdp_gui.engine.mechanisms.diffgen.algorithm import specialise
from ppdp_gui.engine.mechanisms.diffgen.partition import CategoricalAttr, NumericAttr
from ppdp_gui.engine.noise import NoiseSource
from ppdp_gui.engine.taxonomy import Taxonomy
from ppdp_gui.engine.verify.noise import with_factor
from ppdp_gui.engine.verify.scenarios import info_gain
from ppdp_gui.engine.verify.stats import audit, choice_calibration

ALPHA = 1e-3  # for all events of one test together; the runs are seeded, so the outcome is fixed


def loss_lower_bound(values_d, values_d2) -> float:
    """Lower confidence bound on the privacy loss of the released value (a number or a label) between D and D'."""
    return audit([{"value": v} for v in values_d], [{"value": v} for v in values_d2], alpha=ALPHA).epsilon_lb


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
    counts = [[float(count_of_x(mech, count_table(extra), 10_000 * extra + s, noise_factor)) for s in range(runs)]
              for extra in (False, True)]
    return loss_lower_bound(*counts)


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
    chosen = []
    for extra in (False, True):
        base = candidate_attrs(extra)
        columns = []
        for s in range(runs):
            attrs = [replace(a, cut=[0]) for a in base]
            out = _drain(specialise(attrs, 2, epsilon=8.0, h=1, utility="Max",
                                    rng=with_factor(NoiseSource.for_tests(s + 100_000 * extra), noise_factor)))
            columns.append(out.specialisations[0]["column"])
        chosen.append(columns)
    return loss_lower_bound(*chosen), 2.0 / 2


def split_loss(noise_factor: float, runs: int = 5000, grid: str = "real") -> tuple[float, float]:
    """(loss bound, ε'/2) for where the root split of x falls; ε = 12, one numeric attribute, h = 1: ε' = 2.
    The split is released as a grid value (lo + g·step); every threshold (up to 64) is a candidate event."""
    splits = []
    for extra in (False, True):
        base = numeric_attr(extra, grid)
        first = []
        for s in range(runs):
            attr = replace(base, splits=[])
            out = _drain(specialise([attr], 2, epsilon=12.0, h=1, utility="Max",
                                    rng=with_factor(NoiseSource.for_tests(s + 100_000 * extra), noise_factor)))
            first.append(float(out.specialisations[0]["split"]))
        splits.append(first)
    return loss_lower_bound(*splits), 2.0 / 2


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


# ---- InfoGain's sensitivity (log2 K, not ln K) -----------------------------------------------------------------
def gain_attrs() -> tuple[list, dict[str, float]]:
    """a predicts the class perfectly (InfoGain 1 bit), b not at all (0 bits); K = 2 classes."""
    frame = pd.DataFrame({"a": ["a1"] * 4 + ["a2"] * 4, "b": ["b1", "b2"] * 4, "y": ["yes"] * 4 + ["no"] * 4})
    y = (frame["y"] == "yes").to_numpy().astype(np.int64)
    attrs = [CategoricalAttr.build(c, Taxonomy.flat(c, [f"{c}1", f"{c}2"]), frame[c], y, 2) for c in "ab"]
    return attrs, {c: info_gain(frame, c, "y") for c in "ab"}


def infogain_epsilon(runs: int = 2000) -> tuple[float, float]:
    """(lower bound on the ε' the choice used, the ε' charged): ε = 8, two attributes, h = 1, so ε' = 2 and
    P(a) should be 1/(1 + e^(−ε'·1/(2·log2 2))) = 0.731."""
    base, gains = gain_attrs()
    chose_a = []
    for s in range(runs):
        attrs = [replace(a, cut=[0]) for a in base]
        out = _drain(specialise(attrs, 2, epsilon=8.0, h=1, utility="InfoGain", rng=NoiseSource.for_tests(s)))
        chose_a.append(out.specialisations[0]["column"] == "a")
    lb, _ = choice_calibration(np.array(chose_a), gains["a"] - gains["b"], 1.0, ALPHA)
    return lb, 2.0


def test_infogain_choice_uses_no_more_than_its_epsilon_prime():
    measured, charged = infogain_epsilon()
    assert measured <= charged


def test_infogain_test_fails_with_sensitivity_ln_k(monkeypatch):
    monkeypatch.setattr(algorithm, "sensitivity", lambda utility, k: float(np.log(k)))
    measured, charged = infogain_epsilon()
    assert measured > charged
