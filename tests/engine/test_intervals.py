"""Error bars of noisy counts (engine/noise/intervals.py): the exact discrete Laplace quantile, its place in the
release notes of count releases, and its inversion (ε from the error a custodian accepts)."""

import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from ppdp_gui.engine.data.domains import Domain
from ppdp_gui.engine.data.schema import ColumnSpec, Dataset, Role
from ppdp_gui.engine.mechanisms.base import run_to_release
from ppdp_gui.engine.mechanisms.laplace import LaplaceHistogram
from ppdp_gui.engine.noise import NoiseSource
from ppdp_gui.engine.noise.intervals import count_interval, coverage, epsilon_for_half_width, half_width

KEY = "95 % interval of each count"


@pytest.mark.parametrize("scale", [0.3, 1, Fraction(10, 3), 7.5, 40])
def test_coverage_is_the_sum_of_the_probabilities(scale):
    a = np.exp(-1 / float(scale))
    xs = np.arange(-4000, 4001)
    pmf = (1 - a) / (1 + a) * a ** np.abs(xs)
    k = half_width(scale)
    assert coverage(scale, k) == pytest.approx(pmf[np.abs(xs) <= k].sum(), abs=1e-12)
    assert pmf[np.abs(xs) <= k].sum() >= 0.95 > (pmf[np.abs(xs) <= k - 1].sum() if k > 0 else 0)


def test_the_interval_holds_for_the_sampler():
    draws = NoiseSource.for_tests(0).discrete_laplace(Fraction(10, 3), size=200_000)
    k = count_interval(0.3)
    assert np.mean(np.abs(draws) <= k) >= 0.945 and np.mean(np.abs(draws) <= k - 1) < 0.95


def test_known_values():
    # ε = 1, Δ = 1: α = 1/e, P(|X| ≤ k) = 1 − 2e^-(k+1)/(1 + 1/e) ≥ 0.95 first at k = 3
    assert count_interval(1.0) == 3 and count_interval(1.0, sensitivity=2) == 6 and count_interval(0.1) == 30


def test_laplace_note_states_the_interval():
    frame = pd.DataFrame({"ward": list("AABBC")})
    data = Dataset(frame, (ColumnSpec("ward", "categorical", Role.QUASI_IDENTIFIER,
                                      domain=Domain(categories=tuple("ABCD"))),))
    rel = run_to_release(LaplaceHistogram().run(data, rng=NoiseSource.for_tests(0), epsilon=0.5, columns="ward"))
    assert rel.note[KEY] == f"± {count_interval(0.5)}" == "± 6"


def test_diffgen_note_states_the_interval_of_its_counts():
    from ppdp_gui.engine.mechanisms.diffgen import DiffGen
    frame = pd.DataFrame({"ward": list("AABBCC"), "outcome": list("nynnyy")})
    data = Dataset(frame, (ColumnSpec("ward", "categorical", Role.QUASI_IDENTIFIER,
                                      domain=Domain(categories=tuple("ABC"))),
                           ColumnSpec("outcome", "categorical", Role.CLASS, domain=Domain(categories=("n", "y")))))
    from ppdp_gui.engine.taxonomy import Taxonomy
    data = data.with_column("ward", taxonomy=Taxonomy.flat("ward", list("ABC")))
    rel = run_to_release(DiffGen().run(data, rng=NoiseSource.for_tests(0), epsilon=1.0, h=1))
    assert rel.note[KEY] == "± 6"  # counts get ε/2: scale 2


@pytest.mark.parametrize("target", [0, 1, 3, 10, 250])
@pytest.mark.parametrize("c", [1, 2, Fraction(10, 9)])
def test_epsilon_for_a_target_is_the_smallest_that_meets_it(target, c):
    eps = epsilon_for_half_width(target, c)
    assert half_width(c / eps) <= target
    smaller = eps - Fraction(10) ** (math.floor(math.log10(eps)) - 2)  # one step of the 3rd digit less
    assert half_width(c / smaller) > target
