"""Statistical ε-DP tests of DP-PCA, DP-LDA and the record baselines on neighbouring tables, each with a mutated
twin whose sensitivity is halved (so its noise is halved) that the same test must catch.

For an output event E, ε-DP requires P[E | D] ≤ e^ε · P[E | D'] both ways. Over many seeded draws we count how
often E happens on D and on D' and take Clopper–Pearson bounds: log(lower(P_D) / upper(P_D')) is a lower
confidence bound on the privacy loss of E (as in test_diffgen_privacy.py). Each pair below is built so that the
loss of its events is known exactly; the test holds the measured loss to it, and the twin must exceed it.

- DP-PCA moments (ε/2): one record x = 1 replaced by x' = 0 moves Σx and Σx² by 1 each (Δ = 2 for one number);
  E = {noisy Σx ≥ Σx(D), noisy Σx² ≥ Σx²(D)} has loss exactly Δ/b = ε/2.
- DP-PCA projections (ε/2), end to end: with one column and k = 1, the released row i is x_i ± noise (the mean and
  the basis cancel), clamped to the bounds; every row is then an independent trial of record i's own output, so a
  table of 0s against a table of 1s gives thousands of trials per run. E = {released value = lower bound} has loss
  1/b ≈ ε/2.
- DP-LDA statistics (ε), one record (x = 1, class 0) added: its class sum, class count and Σx² move by 1 each;
  E = {all three noisy values ≥ their values with the record} has loss exactly 3/b = ε.
- Laplace on records (ε), end to end, per row: loss of {released = lower bound} is exactly ε.
- Exponential on records, end to end, per row: on the symmetric pair (lowest vs highest value, or one category vs
  the other) the normalisers are equal and the loss of {drawn = lowest / first} is exactly ε/2 (the mechanism's
  factor 2); with the sensitivity halved it is ε.
"""

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from scipy.stats import beta

from ppdp_gui.engine.data.domains import Domain
from ppdp_gui.engine.data.schema import ColumnSpec, Dataset, Role
from ppdp_gui.engine.mechanisms.base import run_to_release
from ppdp_gui.engine.mechanisms.dp_pca import DPLDA, DPPCA, ExponentialRecords, LaplaceRecords
from ppdp_gui.engine.mechanisms.dp_pca.encoding import plan_encoding
from ppdp_gui.engine.noise import NoiseSource

ALPHA = 1e-3  # per bound; every draw is seeded, so the outcome is fixed


def loss_lower_bound(hits_d, hits_d2, runs_d, runs_d2=None) -> float:
    """Largest lower confidence bound on |log P_D(E) − log P_D'(E)| over the events."""
    runs_d2 = runs_d if runs_d2 is None else runs_d2

    def lower(k, n):
        return 0.0 if k == 0 else beta.ppf(ALPHA, k, n - k + 1)

    def upper(k, n):
        return 1.0 if k == n else beta.ppf(1 - ALPHA, k + 1, n - k)

    worst = -np.inf
    for k1, k2 in zip(hits_d, hits_d2):
        for (a, na), (b, nb) in (((k1, runs_d), (k2, runs_d2)), ((k2, runs_d2), (k1, runs_d))):
            if lower(a, na) > 0:
                worst = max(worst, np.log(lower(a, na) / upper(b, nb)))
    return float(worst)


# ---- twins: the same mechanisms with half the sensitivity ---------------------------------------------------------
class HalfMomentsPCA(DPPCA):
    def moment_sensitivity(self, p1, p2):
        return super().moment_sensitivity(p1, p2) / 2


class HalfProjectionPCA(DPPCA):
    def projection_sensitivity(self, k, p1, p2, grid):
        return super().projection_sensitivity(k, p1, p2, grid) / 2


class HalfLDA(DPLDA):
    def stats_sensitivity(self, p1, p2):
        return super().stats_sensitivity(p1, p2) / 2


class HalfLaplace(LaplaceRecords):
    def sensitivity(self, p1, p2):
        return super().sensitivity(p1, p2) / 2


class HalfExponential(ExponentialRecords):
    def sensitivity(self, p1, p2):
        return super().sensitivity(p1, p2) / 2


def unit_table(values, integer=False, high=1.0, cls=None) -> Dataset:
    frame = pd.DataFrame({"x": np.asarray(values, dtype=np.int64 if integer else np.float64)})
    schema = [ColumnSpec("x", "numeric", Role.QUASI_IDENTIFIER, domain=Domain(low=0, high=high, integer=integer))]
    if cls is not None:
        frame["y"] = pd.Series(cls, dtype=str)
        schema.append(ColumnSpec("y", "categorical", Role.CLASS, domain=Domain(categories=("a", "b"))))
    return Dataset(frame, tuple(schema))


# ---- DP-PCA: the noisy moments (ε/2) -------------------------------------------------------------------------------
def moments_loss(mech: DPPCA, runs: int = 2000) -> float:
    base = np.array([0.25, 0.5, 0.75, 0.4, 0.9])
    tables = [np.concatenate([[1.0], base]), np.concatenate([[0.0], base])]  # record 0 replaced
    enc = plan_encoding(unit_table(tables[0]), ["x"])
    eps = Fraction(2)  # ε/2 = 1 for the moments
    hits = []
    for which, x in enumerate(tables):
        x = x[:, None]
        n = len(x)
        s1 = s2 = None
        counts = np.zeros(3, dtype=np.int64)
        for s in range(runs):
            m = mech.moments(NoiseSource.for_tests(100_000 * which + s), x, n, enc, eps)
            j = m.grid_exponent
            if s1 is None:  # thresholds: D's true sums on the grid, plus 0, 1 and 2 steps
                s1 = np.round(tables[0] * 2 ** j).sum()
                s2 = (np.round(tables[0] * 2 ** j) ** 2).sum()
            n1 = np.rint(m.mean[0] * n * 2 ** j)
            n2 = np.rint(m.second[0, 0] * n * 4 ** j)
            counts += [(n1 >= s1 + t) and (n2 >= s2 + t) for t in (0, 1, 2)]
        hits.append(counts)
    return loss_lower_bound(hits[0], hits[1], runs)


def test_pca_moments_stay_within_half_epsilon():
    assert moments_loss(DPPCA()) <= 1.0


def test_pca_moments_test_fails_with_halved_sensitivity():
    assert moments_loss(HalfMomentsPCA()) > 1.0


# ---- DP-PCA: the projections (ε/2), end to end ---------------------------------------------------------------------
def per_row_loss(mech, make_tables, event, runs: int, **params) -> float:
    hits, trials = [], []
    for which, data in enumerate(make_tables()):
        got = 0
        for s in range(runs):
            release = run_to_release(mech.run(data, rng=NoiseSource.for_tests(7919 * which + s), **params))
            got += int(event(release.table).sum())
        hits.append([got])
        trials.append(runs * data.n_rows)
    return loss_lower_bound(hits[0], hits[1], trials[0], trials[1])


def zeros_and_ones(n=3000, integer=False, high=1.0):
    return lambda: (unit_table(np.zeros(n), integer, high), unit_table(np.full(n, high), integer, high))


def at_lower_bound(table):
    return table["x"].to_numpy() == 0


def test_pca_projection_stays_within_half_epsilon():
    assert per_row_loss(DPPCA(), zeros_and_ones(), at_lower_bound, 2, epsilon=2, k=1) <= 1.0


def test_pca_projection_test_fails_with_halved_sensitivity():
    assert per_row_loss(HalfProjectionPCA(), zeros_and_ones(), at_lower_bound, 2, epsilon=2, k=1) > 1.0


# ---- DP-LDA: the noisy statistics (ε) ------------------------------------------------------------------------------
def lda_loss(mech: DPLDA, runs: int = 2000) -> float:
    x = np.array([0.2, 0.5, 0.7, 0.9, 0.3, 0.6])
    y = np.array([0, 0, 0, 1, 1, 1])
    tables = [(x, y), (np.append(x, 1.0), np.append(y, 0))]  # D' = D plus one record (x = 1, class a)
    enc = plan_encoding(unit_table(x), ["x"])
    eps = Fraction(1)
    hits = []
    for which, (xs, ys) in enumerate(tables):
        counts = np.zeros(1, dtype=np.int64)
        ref = None
        for s in range(runs):
            st = mech.statistics(NoiseSource.for_tests(50_000 * which + s), xs[:, None], ys, 2, enc, eps)
            j = st.grid_exponent
            if ref is None:  # thresholds: the values with the record, on the grid
                g = np.round(tables[1][0] * 2 ** j)
                ref = (g[tables[1][1] == 0].sum(), int((tables[1][1] == 0).sum()), (g ** 2).sum())
            v = (np.rint(st.sums[0, 0] * 2 ** j), st.counts[0], np.rint(st.second[0, 0] * 4 ** j))
            counts += [all(a >= b for a, b in zip(v, ref))]
        hits.append(counts)
    return loss_lower_bound(hits[0], hits[1], runs)


def test_lda_statistics_stay_within_epsilon():
    assert lda_loss(DPLDA()) <= 1.0


def test_lda_statistics_test_fails_with_halved_sensitivity():
    assert lda_loss(HalfLDA()) > 1.0


# ---- the record baselines, end to end ------------------------------------------------------------------------------
def test_laplace_records_stay_within_epsilon():
    assert per_row_loss(LaplaceRecords(), zeros_and_ones(6000), at_lower_bound, 1, epsilon=1) <= 1.0


def test_laplace_records_test_fails_with_halved_sensitivity():
    assert per_row_loss(HalfLaplace(), zeros_and_ones(6000), at_lower_bound, 1, epsilon=1) > 1.0


def categories(n=6000):
    def make():
        spec = (ColumnSpec("c", "categorical", Role.QUASI_IDENTIFIER, domain=Domain(categories=("a", "b"))),)
        return (Dataset(pd.DataFrame({"c": ["a"] * n}), spec), Dataset(pd.DataFrame({"c": ["b"] * n}), spec))
    return make


@pytest.mark.parametrize("case", ["number", "category"])
def test_exponential_records_stay_within_half_epsilon_on_the_symmetric_pair(case):
    tables, event = ((zeros_and_ones(6000, integer=True, high=10), at_lower_bound) if case == "number"
                     else (categories(), lambda t: t["c"].astype(str).to_numpy() == "a"))
    assert per_row_loss(ExponentialRecords(), tables, event, 1, epsilon=2) <= 1.0


@pytest.mark.parametrize("case", ["number", "category"])
def test_exponential_records_test_fails_with_halved_sensitivity(case):
    tables, event = ((zeros_and_ones(6000, integer=True, high=10), at_lower_bound) if case == "number"
                     else (categories(), lambda t: t["c"].astype(str).to_numpy() == "a"))
    assert per_row_loss(HalfExponential(), tables, event, 1, epsilon=2) > 1.0
