"""The DP samplers against their exact distributions (chi-square), against OpenDP, and for reproducibility.

Seeds are fixed, so every p-value below is a fixed number: the thresholds are loose for the right distribution
(p > 1e-3) and the wrong-by-2x alternatives give p-values below 1e-12, so the tests can and do fail."""

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from ppdp_gui.engine.errors import ParameterError
from ppdp_gui.engine.noise import NoiseSource, snapping_epsilon
from ppdp_gui.engine.noise.selection import effective_epsilon

N = 200_000


def discrete_laplace_pmf(x, scale):
    a = math.exp(-1.0 / scale)
    return (1 - a) / (1 + a) * a ** np.abs(x)


def chi_square_p(draws, pmf, min_expected=5.0):
    """p-value of a chi-square goodness-of-fit of integer `draws` to `pmf` (tails pooled into two bins)."""
    n = len(draws)
    k = 0
    while n * pmf(np.array([k + 1]))[0] >= min_expected:
        k += 1
    support = np.arange(-k, k + 1)
    probs = pmf(support)
    tail = (1.0 - probs.sum()) / 2
    observed = np.bincount(np.clip(draws, -k - 1, k + 1) + k + 1, minlength=2 * k + 3)
    expected = n * np.concatenate([[tail], probs, [tail]])
    return stats.chisquare(observed, expected).pvalue


@pytest.mark.parametrize("scale, seed", [(0.3, 1), (1.0, 2), (2.5, 3), (10.0, 4), (40.0, 5), (Fraction(7, 3), 6),
                                         (0.5, 7), (1000, 8)])
def test_discrete_laplace_matches_its_pmf(scale, seed):
    draws = NoiseSource.for_tests(seed).discrete_laplace(scale, N)
    scale = float(scale)
    assert draws.dtype == np.int64
    assert chi_square_p(draws, lambda x: discrete_laplace_pmf(x, scale)) > 1e-3
    # the same draws are clearly not from half or twice the scale
    assert chi_square_p(draws, lambda x: discrete_laplace_pmf(x, 2 * scale)) < 1e-12
    assert chi_square_p(draws, lambda x: discrete_laplace_pmf(x, scale / 2)) < 1e-12


def test_geometric_counts_use_scale_sensitivity_over_epsilon():
    counts = np.arange(N, dtype=np.int64) % 7
    for eps, sens in [(0.5, 1.0), (1.0, 2.0), (0.1, 1.0)]:
        noisy = NoiseSource.for_tests(11).geometric_noise_counts(counts, eps, sens)
        assert noisy.dtype == np.int64 and noisy.shape == counts.shape
        noise = noisy - counts
        assert chi_square_p(noise, lambda x: discrete_laplace_pmf(x, sens / eps)) > 1e-3
        # an ε wrong by 2x in either direction is detected
        assert chi_square_p(noise, lambda x: discrete_laplace_pmf(x, sens / (2 * eps))) < 1e-12
        assert chi_square_p(noise, lambda x: discrete_laplace_pmf(x, 2 * sens / eps)) < 1e-12


def test_discrete_laplace_agrees_with_opendp():
    import opendp.prelude as dp

    dp.enable_features("contrib")
    n = 40_000

    def opendp_draws(scale):
        meas = dp.m.make_laplace(dp.vector_domain(dp.atom_domain(T=int)), dp.l1_distance(T=int), scale=scale)
        assert meas.map(1) == pytest.approx(1 / scale)  # OpenDP's own ε for sensitivity 1: the same calibration
        return np.asarray(meas([0] * n), dtype=np.int64)

    def two_sample_p(a, b):
        edges = np.concatenate([[-np.inf], np.arange(-15.5, 16.5), [np.inf]])
        table = np.array([np.histogram(a, edges)[0], np.histogram(b, edges)[0]])
        table = table[:, table.min(axis=0) > 0]
        return stats.chi2_contingency(table).pvalue

    ours = NoiseSource.for_tests(21).discrete_laplace(2.0, n)
    theirs = opendp_draws(2.0)
    assert two_sample_p(ours, theirs) > 1e-4
    assert stats.ks_2samp(ours, theirs).pvalue > 1e-4
    # the test has power: OpenDP at twice the scale is told apart
    assert two_sample_p(ours, opendp_draws(4.0)) < 1e-12


def test_snapped_laplace_grid_bounds_and_distribution():
    scale, bound, x = 3.0, 50.0, 7.3
    out = NoiseSource.for_tests(31).snapped_laplace(np.full(N, x), scale, bound)
    lam = 4.0  # smallest power of two >= 3
    assert np.all(out / lam == np.round(out / lam))
    assert out.min() >= -bound and out.max() <= bound
    # P(out = kΛ) = F((k+½)Λ − x) − F((k−½)Λ − x) for the Laplace CDF F, away from the clamped ends
    ks = np.arange(-6, 11)
    probs = stats.laplace.cdf((ks + 0.5) * lam - x, scale=scale) - stats.laplace.cdf((ks - 0.5) * lam - x, scale=scale)
    observed = np.array([(out == k * lam).sum() for k in ks] + [(np.abs(out / lam - 2.5) > 8.5).sum()])
    expected = N * np.concatenate([probs, [1 - probs.sum()]])
    assert stats.chisquare(observed, expected).pvalue > 1e-3
    wrong = stats.laplace.cdf((ks + 0.5) * lam - x, scale=2 * scale) - \
        stats.laplace.cdf((ks - 0.5) * lam - x, scale=2 * scale)
    assert stats.chisquare(observed, N * np.concatenate([wrong, [1 - wrong.sum()]])).pvalue < 1e-12
    # inputs beyond the bound are clamped first, outputs never leave it
    far = NoiseSource.for_tests(32).snapped_laplace(np.array([1e9, -1e9] * 1000), 1.0, 10.0)
    assert far.max() <= 10 and far.min() >= -10 and np.median(np.abs(far)) >= 8


def test_uniform_reaches_small_doubles():
    u = NoiseSource.for_tests(33)._uniform_all_doubles(N)
    assert u.min() > 0 and u.max() < 1
    assert stats.kstest(u, "uniform").pvalue > 1e-3
    # not confined to multiples of 2^-53 (what random() gives): low bits of small values are populated
    small = u[u < 2 ** -5]
    assert np.any(small * 2 ** 53 != np.round(small * 2 ** 53))


def test_snapping_epsilon_is_slightly_above_nominal():
    assert snapping_epsilon(1.0, 100.0, 1.0) > 1.0
    assert snapping_epsilon(1.0, 100.0, 1.0) - 1.0 < 1e-12


def _em_probs(scores, eps, sens, log_weights=None):
    eps = float(effective_epsilon(eps))  # ε·(1 − 2^-10) − 4τ: the margin charged for float error
    logits = eps * np.asarray(scores, float) / (2 * sens)
    if log_weights is not None:
        logits = logits + np.asarray(log_weights, float)
    p = np.exp(logits - logits.max())
    return p / p.sum()


@pytest.mark.parametrize("log_weights", [None, np.log([1.0, 3.0, 0.5, 2.0, 1.0])])
def test_exponential_choice_frequencies(log_weights):
    scores, eps, sens, n = [0.0, 1.0, 2.0, 3.0, 5.0], 1.0, 1.0, 10_000
    rng = NoiseSource.for_tests(41)
    picks = np.array([rng.exponential_choice(scores, eps, sens, log_weights=log_weights) for _ in range(n)])
    observed = np.bincount(picks, minlength=5)
    assert stats.chisquare(observed, n * _em_probs(scores, eps, sens, log_weights)).pvalue > 1e-3
    for wrong in (2 * eps, eps / 2):
        assert stats.chisquare(observed, n * _em_probs(scores, wrong, sens, log_weights)).pvalue < 1e-12


def test_exponential_choice_zero_weight_and_errors():
    rng = NoiseSource.for_tests(42)
    picks = {rng.exponential_choice([0.0, 100.0, 1.0], 1.0, 1.0, log_weights=[0.0, -np.inf, 0.0]) for _ in range(200)}
    assert picks == {0, 2}
    with pytest.raises(ParameterError):
        rng.exponential_choice([], 1.0, 1.0)
    with pytest.raises(ParameterError):
        rng.exponential_choice([1.0], 1.0, 1.0, log_weights=[-np.inf])


def test_seeded_sources_repeat_and_unseeded_ones_differ():
    a, b = NoiseSource.for_tests(7), NoiseSource.for_tests(7)
    assert np.array_equal(a.discrete_laplace(2.0, 1000), b.discrete_laplace(2.0, 1000))
    assert np.array_equal(a.snapped_laplace(np.zeros(50), 1.0, 10.0), b.snapped_laplace(np.zeros(50), 1.0, 10.0))
    assert a.exponential_choice(np.arange(50.0), 0.1, 1.0) == b.exponential_choice(np.arange(50.0), 0.1, 1.0)
    assert not np.array_equal(NoiseSource.for_tests(8).discrete_laplace(2.0, 1000),
                              NoiseSource.for_tests(7).discrete_laplace(2.0, 1000))
    u1, u2 = NoiseSource(), NoiseSource()
    assert not u1.seeded and a.seeded
    assert not np.array_equal(u1.discrete_laplace(2.0, 1000), u2.discrete_laplace(2.0, 1000))


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), float("inf"), "x"])
def test_bad_scales_are_refused(bad):
    rng = NoiseSource.for_tests(1)
    with pytest.raises(ParameterError):
        rng.discrete_laplace(bad, 3)
    with pytest.raises(ParameterError):
        rng.geometric_noise_counts([1, 2], bad)
