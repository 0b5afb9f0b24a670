"""The exact samplers' building blocks: scale rounding, exact bits of exp(-v), the geometric part and its
refinement, Algorithm 1, the dyadic weights of the exponential mechanism and their error bound τ.

Seeds are fixed, so every p-value is a fixed number; right distributions give p > 1e-3, wrong ones p < 1e-12."""

import math
from decimal import Decimal, getcontext
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from ppdp_gui.engine.errors import ParameterError
from ppdp_gui.engine.noise import NoiseSource, discrete, selection
from ppdp_gui.engine.noise.discrete import (
    SCALE_DENOMINATOR,
    exact_scale,
    exact_value,
    floor_exp_neg,
)

getcontext().prec = 120


def gen(seed: int) -> np.random.Generator:
    return NoiseSource.for_tests(seed)._gen


# ---- the scale ------------------------------------------------------------------------------------------------
@settings(max_examples=300, deadline=None)
@given(st.floats(min_value=1e-9, max_value=2.0 ** 40, allow_nan=False, allow_infinity=False))
def test_float_scale_is_never_rounded_down(x):
    f = exact_scale(x)
    assert f >= Fraction(x) and f >= Fraction(repr(x))
    assert f.denominator <= SCALE_DENOMINATOR and f.numerator <= 2 ** 60
    assert f - max(Fraction(x), Fraction(repr(x))) <= Fraction(1, SCALE_DENOMINATOR)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 2 ** 70), st.integers(1, 2 ** 70))
def test_fraction_scale_is_kept_or_rounded_up(num, den):
    v = Fraction(num, den)
    if v > 2 ** 40:
        with pytest.raises(ParameterError):
            exact_scale(v)
        return
    f = exact_scale(v)
    assert f >= v and f.denominator <= SCALE_DENOMINATOR
    if v.denominator <= SCALE_DENOMINATOR:
        assert f == v


def test_readings_of_a_float():
    assert exact_scale(0.3) == Fraction(3, 10) and exact_scale(2.5) == Fraction(5, 2)
    assert exact_scale(Fraction(7, 3)) == Fraction(7, 3) and exact_scale(np.int64(4)) == 4
    assert exact_scale(0.1) > Fraction(1, 10)  # 0.1's binary value is above 1/10
    assert exact_value("ε", 0.1, rounding="down") == Fraction(1, 10)
    assert exact_value("ε", 0.1, rounding="decimal") == Fraction(1, 10)
    assert exact_value("ε", 0.3, rounding="down") == Fraction(0.3) < Fraction(3, 10)
    for bad in (0, -1, float("nan"), float("inf"), "1", None, True, Fraction(-1, 2), 2.0 ** 41):
        with pytest.raises(ParameterError):
            exact_scale(bad)


# ---- exact bits of exp(-v) and the geometric part -------------------------------------------------------------
@pytest.mark.parametrize("v", [1, 2, 3, 7, 22, 45, 60])
@pytest.mark.parametrize("k", [0, 8, 32, 64, 200])
def test_floor_exp_neg_is_exact(v, k):
    exact = (Decimal(-v).exp() * (Decimal(2) ** k)).to_integral_value(rounding="ROUND_FLOOR")
    assert floor_exp_neg(v, k) == int(exact)


def _geometric_p(draws, ratio):
    """p-value of draws against P(V = v) = (1 − ratio)·ratio^v (tail pooled)."""
    k = int(np.log(5 / len(draws)) / np.log(ratio))
    probs = (1 - ratio) * ratio ** np.arange(k + 1)
    observed = np.array([(draws == v).sum() for v in range(k + 1)] + [(draws > k).sum()])
    return stats.chisquare(observed, len(draws) * np.append(probs, 1 - probs.sum())).pvalue


@pytest.mark.parametrize("bits", [8, 32])
def test_geometric_part_is_exact_even_when_ties_are_frequent(bits, monkeypatch):
    calls = []
    real = discrete._refine_geometric
    monkeypatch.setattr(discrete, "_refine_geometric", lambda g, p, b: calls.append(p) or real(g, p, b))
    draws = discrete.geometric_e(gen(3), 400_000, bits=bits)
    assert draws.dtype == np.int64
    assert _geometric_p(draws, math.exp(-1)) > 1e-3
    assert _geometric_p(draws, math.exp(-1.1)) < 1e-12
    if bits == 8:  # an 8-bit prefix ties with a threshold 7 times in 256: the refinement is exercised, and
        assert len(calls) > 5_000 and max(draws) > 6  # it reaches values no 8-bit threshold can (⌊256e^-6⌋ = 0)


def test_refinement_alone_from_empty_prefix():
    g = gen(4)
    draws = np.array([discrete._refine_geometric(g, 0, 0) for _ in range(30_000)])
    assert _geometric_p(draws, math.exp(-1)) > 1e-3


@pytest.mark.parametrize("t, u", [(7, [0, 1, 3, 6]), (1000, [999, 500]), (2 ** 61 + 1, [2 ** 60, 2 ** 61])])
def test_bernoulli_exp_fraction(t, u):
    """Algorithm 1; t = 2^61 + 1 takes the two-draw branch once t·K passes int64."""
    n = 100_000
    for i, ui in enumerate(u):
        hits = int(discrete.bernoulli_exp_fraction(gen(5 + i), np.full(n, ui, dtype=np.int64), t).sum())
        assert stats.binomtest(hits, n, math.exp(-ui / t)).pvalue > 1e-3
        assert stats.binomtest(hits, n, math.exp(-ui / t * 1.1) if ui else 0.99).pvalue < 1e-12


def test_discrete_laplace_shapes_and_rounded_scales():
    rng = NoiseSource.for_tests(6)
    assert rng.discrete_laplace(2.0).dtype == np.int64 and rng.discrete_laplace(2.0).shape == ()
    assert rng.discrete_laplace(2.0, (3, 4)).shape == (3, 4) and rng.discrete_laplace(2.0, 0).size == 0
    counts = np.array([[1, 2], [3, 4]])
    assert rng.geometric_noise_counts(counts, 1.0).shape == (2, 2)
    # a scale with a large denominator is rounded up to 2^-20 and still sampled from its pmf
    scale = 2.0 / 0.3
    draws = rng.discrete_laplace(scale, 200_000)
    a = math.exp(-1 / scale)
    ks = np.arange(-40, 41)
    probs = (1 - a) / (1 + a) * a ** np.abs(ks)
    observed = np.array([(draws == k).sum() for k in ks] + [(np.abs(draws) > 40).sum()])
    assert stats.chisquare(observed, len(draws) * np.append(probs, 1 - probs.sum())).pvalue > 1e-3


# ---- exponential mechanism: the weights ---------------------------------------------------------------------
def test_float_constants_are_correctly_rounded():
    ln2 = Decimal(2).ln()
    assert abs(Decimal(selection._LN2) - ln2) <= Decimal(2) ** -54
    assert Fraction(selection._LN2_UP) >= Fraction(ln2)
    log2e = 1 / ln2
    assert abs(Decimal(selection._LOG2E) - log2e) <= log2e * Decimal(2) ** -53


def test_exp2_unit_error_is_below_4u():
    f = np.concatenate([np.random.default_rng(0).random(3000), np.arange(256) / 256,
                        [0.0, np.nextafter(1.0, 0), 5e-324, np.nextafter(1 / 256, 0)]])
    y = selection._exp2_unit(f.copy())
    worst = max(abs(Decimal(yi) / (Decimal(2) ** Decimal(fi)) - 1) for fi, yi in zip(f, y))
    assert worst < Decimal(4) * Decimal(2) ** -53


def _realised_log2(mech):
    """log2 of each candidate's realised weight (before the weights' acceptance step)."""
    smp = mech.sampler
    return np.log2(smp.mantissa) - selection.MANTISSA_BITS + smp.group + smp.offset


@settings(max_examples=150, deadline=None)
@given(st.lists(st.floats(-2.0 ** 40, 2.0 ** 40), min_size=2, max_size=40),
       st.sampled_from([1e-6, 0.01, 1.0, 7.5, 300.0]), st.sampled_from([1.0, 0.3, math.log2(7)]),
       st.booleans())
def test_realised_weights_are_within_tau_of_the_clamped_ideal(scores, eps, sens, with_log_weights):
    s = np.array(scores)
    lw = np.linspace(-2000, 2000, len(s)) if with_log_weights else None
    mech = selection.ExponentialMechanism(s, eps, sens, log_weights=lw)
    kappa = Fraction(selection._kappa(eps, sens))
    top = max(Fraction(x) for x in s)
    ideal = [max(kappa * (Fraction(x) - top), -selection.CLAMP_BITS) for x in s]
    if lw is not None:
        ideal = [a + Fraction(w) / Fraction(Decimal(2).ln()) for a, w in zip(ideal, lw)]
    smp = mech.sampler
    # the integer part exactly, log2 of the 43-bit mantissa in float (good to ~1e-14 bits; τ is 1.5e-12)
    diffs = [float(Fraction(int(e) + smp.offset - selection.MANTISSA_BITS) - a) + math.log2(m)
             for e, m, a in zip(smp.group, smp.mantissa, ideal)]
    assert max(map(abs, diffs)) <= float(selection.TAU_BITS) + 1e-14


def test_margin_covers_four_tau():
    ln2 = Fraction(Decimal(2).ln())
    for eps in (1e-9, 1e-4, 0.1, 1.0, 5.0, Fraction(1, 3)):
        for sens in (1.0, 0.5, math.log2(3), 1000.0):
            kappa = Fraction(selection._kappa(eps, sens))
            charged = 2 * kappa * Fraction(sens) * ln2 + 4 * selection.TAU_BITS * ln2
            assert charged <= exact_value("ε", eps, rounding="down") * (1 - selection.RELATIVE_MARGIN)
            assert charged >= Fraction(eps) * Fraction(99, 100)  # and the margin is small
    assert float(selection.TAU_BITS) < 2.0 ** -39


def test_clamp_floor_and_wrap_around():
    mech = selection.ExponentialMechanism([0.0, -1e12, -1e12 / 3, 5.0], 1.0, 1.0)
    got = _realised_log2(mech)
    assert got[3] == 0 and got[1] == got[2] == -selection.CLAMP_BITS  # both far ones sit exactly on the floor
    assert -5 < got[0] < -3
    # a log-weight a hair below 0: t − ⌊t⌋ rounds to 1, taken as the next exponent
    mech = selection.ExponentialMechanism([0.0, 0.0], 1.0, 1.0, log_weights=[0.0, -1e-300])
    assert np.array_equal(_realised_log2(mech), [0.0, 0.0])


# ---- exponential mechanism: the draws ---------------------------------------------------------------------------
def _probs(scores, eps, sens, weights=None):
    eff = float(selection.effective_epsilon(eps))
    logit = eff * np.asarray(scores, float) / (2 * sens)
    p = np.exp(logit - logit.max()) * (1.0 if weights is None else np.asarray(weights, float))
    return p / p.sum()


def _draws(seed, n, *args, **kwargs):
    g, mech = gen(seed), selection.ExponentialMechanism(*args, **kwargs)
    return np.array([mech.draw(g) for _ in range(n)])


def _chi2(picks, probs):
    observed = np.bincount(picks, minlength=len(probs))
    keep = probs * len(picks) >= 5
    obs = np.append(observed[keep], observed[~keep].sum())
    exp = len(picks) * np.append(probs[keep], probs[~keep].sum())
    if exp[-1] == 0:
        assert obs[-1] == 0
        obs, exp = obs[:-1], exp[:-1]
    return stats.chisquare(obs, exp).pvalue


CASES = {
    "plain": (np.array([0.0, 1.0, 2.0, 3.0, 5.0]), 1.0, 1.0, None),
    "integer weights": (np.array([0.0, 4.0, 4.0, 1.0, 2.0]), 1.0, 1.0, np.array([100, 1, 3, 0, 50])),
    "float weights": (np.array([3.0, 0.0, 1.5]), 2.0, 1.0, np.array([0.1, 2.5, 1e-3])),
    "many exponents": (np.arange(200.0), 0.5, 1.0, None),
    "info gain": (np.array([0.2, 0.9, 0.4]), 4.0, math.log2(3), None),
}


@pytest.mark.parametrize("name", CASES)
def test_choice_frequencies_match_exact_probabilities(name, monkeypatch):
    monkeypatch.setattr(selection, "_SMALL", 2)  # the grouped path, as with many candidates
    scores, eps, sens, w = CASES[name]
    picks = _draws(40, 20_000, scores, eps, sens, weights=w)
    assert _chi2(picks, _probs(scores, eps, sens, w)) > 1e-3
    if w is not None:
        assert set(np.flatnonzero(w == 0)).isdisjoint(picks)
    for wrong in (2 * eps, eps / 2):  # the ε-doubled (and halved) twin is rejected
        assert _chi2(picks, _probs(scores, wrong, sens, w)) < 1e-12


def test_log_weights_and_weights_give_the_same_choice_law():
    scores, w = np.array([0.0, 1.0, 2.0, 0.5]), np.array([1, 3, 0, 7])
    with np.errstate(divide="ignore"):
        picks = _draws(41, 30_000, scores, 1.0, 1.0, log_weights=np.log(w))
    assert _chi2(picks, _probs(scores, 1.0, 1.0, w)) > 1e-3


def test_equal_scores_huge_gaps_and_one_candidate():
    assert _chi2(_draws(42, 20_000, np.zeros(50), 1.0, 1.0), np.full(50, 1 / 50)) > 1e-3
    # the top pair takes everything (the others sit at the 2^-1100 floor), split exactly evenly
    picks = _draws(43, 20_000, [0.0, 1e6, 1e6, -1e9], 1.0, 1.0)
    assert set(picks) == {1, 2} and stats.binomtest(int((picks == 1).sum()), 20_000, 0.5).pvalue > 1e-3
    rng = NoiseSource.for_tests(44)
    assert rng.exponential_choice([3.0], 1.0, 1.0) == 0
    assert rng.exponential_choice([1.0, 9.0, 2.0], 1.0, 1.0, weights=[0, 0, 5]) == 2
    assert rng.exponential_choice([1.0, 9.0], 1.0, 1.0, log_weights=[-np.inf, 0.0]) == 1


@pytest.mark.parametrize("small", [0, 64])
def test_dyadic_sampler_across_groups_and_blocks(monkeypatch, small):
    monkeypatch.setattr(selection, "_SMALL", small)  # 0: grouped path even for 6 members; 64: Python walk
    monkeypatch.setattr(selection, "_BLOCK", 2)  # a group's cumulative sum is taken two members at a time
    mantissa = np.array([1.0, 2.0, 3.0, 5.0, 1.0, 4.0])
    expo = np.array([0, 0, 1, 0, 3, 0])
    weights = mantissa * 2.0 ** expo
    smp = selection._DyadicSampler(mantissa.copy(), expo.copy())
    g = gen(45)
    picks = np.array([smp.draw(g) for _ in range(30_000)])
    assert _chi2(picks, weights / weights.sum()) > 1e-3
    assert _chi2(picks, np.full(6, 1 / 6)) < 1e-12


@pytest.mark.parametrize("n", [3, 5, 2 ** 62 + 1, 2 ** 64 + 1])
def test_uniform_big_integer(n):
    g = gen(46)
    x = np.array([selection._uniform_int_below(g, n) % 3 for _ in range(30_000)], dtype=np.int64)
    buckets = np.array([(n - r + 2) // 3 for r in range(3)]) / n  # how many of 0..n-1 are ≡ r mod 3
    assert stats.chisquare(np.bincount(x, minlength=3), 30_000 * buckets).pvalue > 1e-3


def test_choices_repeat_under_a_seed():
    s = np.random.default_rng(0).random(1000) * 30
    a = [NoiseSource.for_tests(9).exponential_choice(s, 0.5, 1.0) for _ in range(3)]
    b = [NoiseSource.for_tests(9).exponential_choice(s, 0.5, 1.0) for _ in range(3)]
    assert a == b
    one, two = NoiseSource.for_tests(9), NoiseSource.for_tests(10)
    assert [one.exponential_choice(s, 0.5, 1.0) for _ in range(20)] != \
        [two.exponential_choice(s, 0.5, 1.0) for _ in range(20)]


BAD = [
    {"scores": []},
    {"scores": [[1.0, 2.0]]},
    {"scores": [1.0, float("nan")]},
    {"scores": [1.0, float("inf")]},
    {"scores": [1.0, 2.0 ** 41]},
    {"epsilon": 0}, {"epsilon": -1.0}, {"epsilon": float("nan")}, {"epsilon": float("inf")},
    {"epsilon": "x"}, {"epsilon": 1e-13},
    {"sensitivity": 0}, {"sensitivity": float("inf")}, {"sensitivity": None},
    {"weights": [1, -1]}, {"weights": [1.0, float("nan")]}, {"weights": [1.0, float("inf")]},
    {"weights": [0, 0]}, {"weights": [1, 2, 3]}, {"weights": np.array([1, 2 ** 60])},
    {"weights": ["a", "b"]},
    {"log_weights": [0.0, float("nan")]}, {"log_weights": [0.0, float("inf")]},
    {"log_weights": [0.0, 5000.0]}, {"log_weights": [-np.inf, -np.inf]},
    {"log_weights": [0.0, 0.0], "weights": [1, 1]},
]


@pytest.mark.parametrize("bad", BAD, ids=[repr(b) for b in BAD])
def test_bad_inputs_are_refused(bad):
    args = {"scores": [1.0, 2.0], "epsilon": 1.0, "sensitivity": 1.0}
    args.update(bad)
    with pytest.raises(ParameterError):
        NoiseSource.for_tests(1).exponential_choice(**args)
