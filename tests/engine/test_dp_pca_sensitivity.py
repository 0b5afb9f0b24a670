"""The sensitivities DP-PCA / DP-LDA / the record baselines charge are true maxima: never exceeded by any pair of
records (brute force and property tests), attained by an explicit pair, equal to the paper's formula where the
paper is right (p2 ≤ 1), and above it where it is not."""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ppdp_gui.engine.mechanisms.dp_pca import sensitivity as sens


def moments_vector(numbers, categories, width=3):
    """(x, upper triangle of xxᵀ) of one encoded record: numbers in [0, 1], one-hot dummy blocks."""
    x = list(numbers)
    for c in categories:
        block = [0.0] * width
        block[c] = 1.0
        x += block
    x = np.array(x, dtype=float)
    iu = np.triu_indices(len(x))
    return x, np.outer(x, x)[iu]


def pca_change(a, ca, b, cb):
    xa, ua = moments_vector(a, ca)
    xb, ub = moments_vector(b, cb)
    return np.abs(xa - xb).sum() + np.abs(ua - ub).sum()


def maximiser(p1, p2):
    """The pair the derivation says is worst: x has every number 1, x' has every number 1 − D*/p1, and every
    category differs."""
    if p1 == 0:
        return [], [0] * p2, [], [1] * p2
    d_star = min(max(Fraction(p1 * (2 + p1 - p2), p1 + 1), Fraction(0)), Fraction(p1))
    return [1.0] * p1, [0] * p2, [1.0 - float(d_star) / p1] * p1, [1] * p2


@pytest.mark.parametrize("p", range(1, 21))
def test_all_numeric_equals_the_papers_formula(p):
    assert sens.pca_moment_sensitivity(p, 0) == p + Fraction(p * (p + 1), 2) == sens.paper_pca_sensitivity(p, 0)


@pytest.mark.parametrize("p1", range(0, 8))
def test_one_categorical_attribute_equals_the_papers_formula(p1):
    assert sens.pca_moment_sensitivity(p1, 1) == sens.paper_pca_sensitivity(p1, 1)


def test_adult_and_other_golden_values():
    # Adult as the paper prepares it: 5 numbers, 6 categories (income included), 35 dummies and numbers
    assert sens.pca_moment_sensitivity(5, 6) == Fraction(1373, 12) and sens.paper_pca_sensitivity(5, 6) == 104
    assert sens.pca_moment_sensitivity(1, 2) == Fraction(57, 4)  # 14.25 > the paper's 14
    assert sens.pca_moment_sensitivity(0, 3) == 18
    assert sens.pca_moment_sensitivity(166, 0) == 166 + 166 * 167 // 2  # Musk
    assert sens.lda_sensitivity(5, 5) == 66 and sens.paper_lda_sensitivity(5, 5) == 90
    assert sens.record_sensitivity(5, 6) == 17


@pytest.mark.parametrize("p1,p2", [(p1, p2) for p1 in range(0, 5) for p2 in range(0, 5) if p1 + p2])
def test_the_maximiser_attains_the_bound_and_random_pairs_stay_below(p1, p2):
    bound = float(sens.pca_moment_sensitivity(p1, p2))
    assert pca_change(*maximiser(p1, p2)) == pytest.approx(bound, abs=1e-9)
    rng = np.random.default_rng(p1 * 10 + p2)
    worst = 0.0
    for trial in range(400):
        a, b = rng.random(p1), rng.random(p1)
        if trial % 2:
            a = np.ones(p1)  # near the maximiser's face
        ca, cb = rng.integers(0, 3, p2), rng.integers(0, 3, p2)
        worst = max(worst, pca_change(a, ca, b, cb))
    assert worst <= bound + 1e-9
    if p2 >= 2 and p1:
        assert bound > float(sens.paper_pca_sensitivity(p1, p2))  # the paper's figure is exceeded


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 4), st.integers(0, 4), st.data())
def test_no_pair_exceeds_the_pca_bound(p1, p2, data):
    if p1 + p2 == 0:
        return
    unit = st.floats(0, 1, allow_nan=False)
    a = data.draw(st.lists(unit, min_size=p1, max_size=p1))
    b = data.draw(st.lists(unit, min_size=p1, max_size=p1))
    ca = data.draw(st.lists(st.integers(0, 2), min_size=p2, max_size=p2))
    cb = data.draw(st.lists(st.integers(0, 2), min_size=p2, max_size=p2))
    assert pca_change(a, ca, b, cb) <= float(sens.pca_moment_sensitivity(p1, p2)) + 1e-9


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 4), st.integers(0, 4), st.data())
def test_no_record_exceeds_the_lda_bound(p1, p2, data):
    """Adding one record moves its class sum by x, its class count by 1 and Σxxᵀ by its upper xxᵀ."""
    if p1 + p2 == 0:
        return
    a = data.draw(st.lists(st.floats(0, 1, allow_nan=False), min_size=p1, max_size=p1))
    ca = data.draw(st.lists(st.integers(0, 2), min_size=p2, max_size=p2))
    x, u = moments_vector(a, ca)
    assert 1 + x.sum() + u.sum() <= float(sens.lda_sensitivity(p1, p2)) + 1e-9
    ones, uo = moments_vector([1.0] * p1, [0] * p2)
    assert 1 + ones.sum() + uo.sum() == pytest.approx(float(sens.lda_sensitivity(p1, p2)))


def test_projection_sensitivity_bounds_every_orthonormal_basis():
    rng = np.random.default_rng(3)
    for p1, p2, k in [(3, 0, 1), (3, 0, 3), (2, 2, 2), (0, 3, 4), (5, 6, 10)]:
        p = p1 + 3 * p2
        bound = float(sens.projection_sensitivity(k, p1, p2, Fraction(0)))
        assert bound >= np.sqrt(k * (p1 + 2 * p2))
        for _ in range(100):
            u, _r = np.linalg.qr(rng.normal(size=(p, p)))
            u = u[:, :k]
            a, b = rng.random(p1), rng.random(p1)
            xa, _ = moments_vector(a, rng.integers(0, 3, p2))
            xb, _ = moments_vector(b, rng.integers(0, 3, p2))
            assert np.abs((xa - xb) @ u).sum() <= bound + 1e-9


def test_sqrt_up_and_grid_exponent():
    for v in (Fraction(2), Fraction(17), Fraction(1, 3), Fraction(10 ** 6 + 1)):
        r = sens.sqrt_up(v)
        assert r * r >= v and float(r) - float(v) ** 0.5 < 1e-11
    for scale in (Fraction(1), Fraction(2289, 10), Fraction(28054, 1) / Fraction(1, 100)):
        j = sens.grid_exponent(scale, power=2)
        assert 0 <= j <= 10 and (j == 0 or scale * 4 ** j <= sens.MAX_GRID_SCALE)
        assert j == 10 or scale * 4 ** (j + 1) > sens.MAX_GRID_SCALE
