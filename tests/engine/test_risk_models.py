"""Risk models as ARX offers them, against hand-computed values and direct summation (the reference README has no
ARX risk figures to compare with): prosecutor / journalist / marketer, the risk histogram, Zayatz, Pitman, SNB
with the Shlosser class estimate, and Dankar's rule."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from ppdp_gui.engine.errors import ParameterError
from ppdp_gui.engine.metrics import risk_models as M


# ---- attacker models -----------------------------------------------------------------------------------------
def test_prosecutor_journalist_marketer_by_hand():
    f = np.array([1, 1, 2, 3, 3])  # n = 10 records, u = 5 classes
    pro, jou, mar = M.attacker_risks(f, threshold=0.4)
    assert pro.highest_risk == 1.0 and pro.success_rate == pytest.approx(5 / 10)
    assert pro.records_at_risk == pytest.approx(4 / 10)  # classes of 1, 1 and 2 rows have risk > 0.4
    assert jou == M.AttackerRisk("journalist", pro.records_at_risk, 1.0, 0.5)  # no population: the same
    assert mar.success_rate == pytest.approx(0.5) and mar.highest_risk is None
    F = np.array([2, 5, 4, 3, 10])
    _pro, jou, mar = M.attacker_risks(f, F, threshold=0.3)
    assert jou.records_at_risk == pytest.approx(4 / 10)  # F = 2 (1 record) and F = 3 (3 records)
    assert jou.highest_risk == pytest.approx(1 / 2)
    linked = (1 / 2 + 1 / 5 + 2 / 4 + 3 / 3 + 3 / 10) / 10  # Σ f/F / n = 0.25
    assert jou.success_rate == pytest.approx(max(5 / 24, linked)) and mar.success_rate == pytest.approx(linked)


def test_report_on_a_table_with_known_class_sizes():
    frame = pd.DataFrame({"age": ["30-39"] * 2 + ["40-49"] * 3 + ["50-59"] * 5, "sex": ["F"] * 10,
                          "other": range(10)})
    rep = M.risk_report(frame, ["age", "sex"], threshold=0.2)
    assert (rep.rows, rep.classes) == (10, 3)
    assert rep.prosecutor.highest_risk == pytest.approx(1 / 2)  # 1 / smallest class
    assert rep.prosecutor.success_rate == pytest.approx(3 / 10)  # classes / records
    assert rep.marketer.success_rate == pytest.approx(3 / 10)
    assert rep.prosecutor.records_at_risk == pytest.approx(5 / 10)  # classes of 2 and 3: risk 0.5, 0.33 > 0.2
    assert rep.population is None


def test_journalist_against_a_population_table():
    population = pd.DataFrame({"age": ["30-39"] * 8 + ["40-49"] * 4, "sex": ["F"] * 12})
    sample = population.iloc[[0, 1, 8]]
    rep = M.risk_report(sample, ["age", "sex"], population=population)
    assert rep.journalist.highest_risk == pytest.approx(1 / 4)
    assert rep.marketer.success_rate == pytest.approx((2 / 8 + 1 / 4) / 3)
    with pytest.raises(ParameterError, match="do not occur in the population"):
        M.risk_report(pd.DataFrame({"age": ["90+"], "sex": ["F"]}), ["age", "sex"], population=population)


def test_histogram_bands():
    hist = M.risk_histogram(np.array([1, 2, 10, 1000]))
    got = dict(zip(hist["band"], hist["records"]))
    assert got["50 %–100 %"] == 1 and got["33.3 %–50 %"] == 2 and got["5 %–10 %"] == 10 and got["0 %–0.1 %"] == 1000
    assert hist["records"].sum() == 1013 and hist["share"].sum() == pytest.approx(1)


# ---- population models ----------------------------------------------------------------------------------------
def test_zayatz_by_hand():
    f = np.array([1, 1, 2, 3])  # n = 7, u = 4, c1 = 2
    N, n = 30, 7

    def h(k):  # P(exactly 1 of k population records is in a sample of n from N)
        return k * math.comb(N - k, n - 1) / math.comb(N, n)

    cond = (2 / 4 * h(1)) / (2 / 4 * h(1) + 1 / 4 * h(2) + 1 / 4 * h(3))
    k, c = M.size_frequencies(f)
    assert M.zayatz_uniques(k, c, N) == pytest.approx(2 * cond / (n / N), rel=1e-12)


def test_pitman_solves_its_likelihood_equations():
    f = np.r_[np.ones(60), np.full(25, 2), np.full(10, 3), np.full(5, 7), [20, 40]].astype(int)
    k, c = M.size_frequencies(f)
    t, a = M.pitman_parameters(k, c)
    assert 0 < a < 1 and t > -a
    n, u = int(f.sum()), len(f)
    # the score equations by plain loops (Hoshino 2001), independent of the digamma forms the solver uses
    g1 = sum(1 / (t + i * a) for i in range(1, u)) - sum(1 / (t + i) for i in range(1, n))
    g2 = sum(i / (t + i * a) for i in range(1, u)) - sum(
        cnt * sum(1 / (m - a) for m in range(1, size)) for size, cnt in zip(k, c) if size > 1)
    assert abs(g1) < 1e-7 and abs(g2) < 1e-6
    N = 10 * n
    want = math.exp(math.lgamma(t + 1) - math.lgamma(t + a)) * N ** a
    assert M.pitman_uniques(k, c, N) == pytest.approx(want)


def test_shlosser_by_hand():
    f = np.array([1, 1, 1, 2, 2, 3])
    q = 0.5
    k, c = M.size_frequencies(f)
    num1 = 1 * q**2 * 3 + 2 * q**2 * (1 - q**2) * 2 + 3 * q**2 * (1 - q**2) ** 2 * 1
    den1 = sum((1 - q) ** s * ((1 + q) ** s - 1) * n for s, n in ((1, 3), (2, 2), (3, 1)))
    num2 = sum((1 - q) ** s * n for s, n in ((1, 3), (2, 2), (3, 1)))
    den2 = sum(s * q * (1 - q) ** (s - 1) * n for s, n in ((1, 3), (2, 2), (3, 1)))
    assert M.shlosser_classes(k, c, q) == pytest.approx(6 + 3 * num1 / den1 * (num2 / den2) ** 2)


@pytest.mark.parametrize("alpha, beta, q", [(2.3, 0.4, 0.2), (0.7, 0.8, 0.05), (5.0, 0.1, 0.5)])
def test_snb_expectations_match_direct_summation(alpha, beta, q):
    K = 1000.0
    size = np.arange(1, 4000)  # population class sizes 1 + X, X ~ negative binomial(alpha, beta)
    p_size = stats.nbinom.pmf(size - 1, alpha, beta)
    e1 = K * (p_size * size * q * (1 - q) ** (size - 1)).sum()
    e2 = K * (p_size * size * (size - 1) / 2 * q**2 * (1 - q) ** (size - 2)).sum()
    got = M.snb_expected(alpha, beta, K, q)
    assert got == pytest.approx((e1, e2), rel=1e-9)


def test_snb_recovers_the_model_that_made_c1_and_c2():
    alpha, beta, K, q = 1.7, 0.35, 5000.0, 0.2
    c1, c2 = M.snb_expected(alpha, beta, K, q)
    assert M.snb_solve(c1, c2, K, q) == pytest.approx((alpha, beta), rel=1e-6)


def test_no_sample_uniques_means_no_population_uniques():
    pop = M.population_uniqueness(np.array([2, 2, 3, 5]), sampling_fraction=0.5)
    assert (pop.zayatz, pop.pitman, pop.snb, pop.dankar, pop.sample_uniqueness) == (0, 0, 0, 0, 0)


def synthetic_population(N=60_000, seed=7):
    """People with 4 quasi-identifiers of skewed frequencies: many rare combinations, like real tables."""
    r = np.random.default_rng(seed)
    return pd.DataFrame({"age": r.integers(18, 95, N), "sex": r.integers(0, 2, N),
                         "zip": r.zipf(1.6, N) % 400, "race": r.choice(5, N, p=[.7, .15, .08, .05, .02])})


@pytest.mark.parametrize("fraction", [0.05, 0.3])
def test_dankar_estimate_is_near_the_true_population_uniqueness(fraction):
    people = synthetic_population()
    qis = list(people.columns)
    truth = float((M.class_sizes(people, qis) == 1).sum()) / len(people)
    sample = people.sample(frac=fraction, random_state=1)
    pop = M.population_uniqueness(M.class_sizes(sample, qis), population_size=len(people))
    assert pop.dankar_model == ("Pitman" if fraction <= 0.1 else pop.dankar_model)
    if fraction > 0.1:
        assert pop.dankar == pytest.approx(min(v for v in (pop.zayatz, pop.snb) if np.isfinite(v)))
    assert pop.dankar == pytest.approx(truth, rel=0.25), (truth, pop)  # 14.1 % true; 14.1 % (5 %), 14.5 % (30 %)
    assert pop.sample_uniqueness > truth  # a sample looks more unique than its population


def test_population_input_checks():
    with pytest.raises(ParameterError, match="population size or the sampling fraction"):
        M.population_uniqueness(np.array([1, 2]))
    with pytest.raises(ParameterError, match="cannot be smaller"):
        M.population_uniqueness(np.array([1, 2]), population_size=2)


def test_before_and_after_a_mondrian_release():
    from clinical_helpers import diabetes_like

    from ppdp_gui.engine.data import Role, dataset_from_frame
    from ppdp_gui.engine.noise import NoiseSource
    from ppdp_gui.engine.pipeline import plan, run_release

    data = dataset_from_frame(diabetes_like(3000), roles={"time_in_hospital": Role.QUASI_IDENTIFIER,
                                                           "payer_code": Role.QUASI_IDENTIFIER})
    published = list(run_release(plan(data, "Mondrian", {"k": 10}), rng=NoiseSource.for_tests(2), seed=2))[-1]
    before = M.risk_report(data.frame, data.quasi_identifiers, sampling_fraction=0.05)
    after = M.risk_report(published.table, data.quasi_identifiers, sampling_fraction=0.05)
    assert after.prosecutor.highest_risk <= 1 / 10 < before.prosecutor.highest_risk
    assert after.prosecutor.success_rate < before.prosecutor.success_rate
    assert after.population.dankar <= before.population.dankar
    assert after.rows == 3000 and after.population.dankar is not None
