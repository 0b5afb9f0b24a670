"""ε per *person*, measured: for every DP mechanism, a table where one person has m rows, and a test that holds the
privacy loss of that person's rows to what the claim allows — with a twin that must fail it.

For an output event E, ε-DP per person requires P[E | D] ≤ e^ε · P[E | D'] for D and D' that differ in all rows of
one person. The lower confidence bound on log(P_D(E) / P_D'(E)) (Clopper–Pearson, as in test_dp_pca_privacy.py)
must stay at or below the loss the mechanism allows; each test's twins get it wrong by 2× or more *per person*:

- "bounding off": the same table with the person column not marked, so every row is a unit and a person with m
  rows loses m·ε (the bound's whole purpose);
- "c forgotten": bounding on, but the mechanism runs as if c were 1 (no group privacy, no scaled sensitivity);
- a halved noise scale from outside the mechanism (engine.verify.ScaledNoise).

Many independent trials per run make the tests fast: in a table of counts every cell (or class) whose count only
one person's rows change is an independent trial; in a one-row-per-record release every person's released rows
are found through `Release.rows_used` (custodian-side) and are an independent trial of that person's output.
"""

import numpy as np
import pandas as pd
import pytest
from scipy.stats import beta

from ppdp_gui.engine.data.domains import Domain
from ppdp_gui.engine.data.schema import ColumnSpec, Dataset, Role
from ppdp_gui.engine.mechanisms.base import run_to_release
from ppdp_gui.engine.mechanisms.diffgen import DiffGen
from ppdp_gui.engine.mechanisms.dp_pca import DPLDA, DPPCA, ExponentialRecords, LaplaceRecords
from ppdp_gui.engine.mechanisms.laplace import LaplaceHistogram
from ppdp_gui.engine.noise import NoiseSource
from ppdp_gui.engine.taxonomy import Taxonomy
from ppdp_gui.engine.verify.noise import with_factor

ALPHA = 1e-3  # per bound; every draw is seeded, so the outcome is fixed


def loss_lower_bound(hits_d, hits_d2, n_d, n_d2) -> float:
    """Largest lower confidence bound on |log P_D(E) − log P_D'(E)| over the events (hits out of n trials)."""
    def lower(k, n):
        return 0.0 if k == 0 else beta.ppf(ALPHA, k, n - k + 1)

    def upper(k, n):
        return 1.0 if k == n else beta.ppf(1 - ALPHA, k + 1, n - k)

    worst = -np.inf
    for k1, k2 in zip(hits_d, hits_d2):
        for (a, na), (b, nb) in (((k1, n_d), (k2, n_d2)), ((k2, n_d2), (k1, n_d))):
            if lower(a, na) > 0:
                worst = max(worst, np.log(lower(a, na) / upper(b, nb)))
    return float(worst)


def person_role(marked: bool) -> Role:
    return Role.PERSON if marked else Role.IDENTIFIER  # unmarked: left out, every row its own unit


# ---- tables of counts: one trial per cell ---------------------------------------------------------------------
def cells_pair(k: int, m: int, marked: bool, cls: bool = False) -> tuple[Dataset, Dataset]:
    """k wards; on D each holds one patient with one row; on D' each also holds a patient with m rows. A ward's
    count depends on its own patients only, so every ward is one trial of "that patient added"."""
    wards = [f"w{i:04d}" for i in range(k)]
    base = pd.DataFrame({"pid": [f"b{i}" for i in range(k)], "ward": wards})
    extra = pd.DataFrame({"pid": np.repeat([f"q{i}" for i in range(k)], m), "ward": np.repeat(wards, m)})
    spec = [ColumnSpec("pid", "categorical", person_role(marked)),
            ColumnSpec("ward", "categorical", Role.QUASI_IDENTIFIER, Taxonomy.flat("ward", wards),
                       domain=Domain(categories=tuple(wards)))]
    out = []
    for frame in (base, pd.concat([base, extra], ignore_index=True)):
        frame = frame.copy()
        if cls:
            frame["y"] = "yes"
        schema = spec + ([ColumnSpec("y", "categorical", Role.CLASS, domain=Domain(categories=("no", "yes")))]
                         if cls else [])
        out.append(Dataset(frame, tuple(schema)))
    return out[0], out[1]


def cell_counts(release, k: int, count_column: str = "count") -> np.ndarray:
    """Each ward's released count (a ward left out of the table: 0), in ward order; class 'yes' only."""
    table = release.extra_tables.get("noisy counts", release.table)
    if "y" in table.columns:
        table = table[table["y"].astype(str) == "yes"]
    counts = table.groupby(table["ward"].astype(str), observed=True)[count_column].sum()
    return counts.reindex([f"w{i:04d}" for i in range(k)], fill_value=0).to_numpy()


def cells_loss(mech, pair, runs: int, thresholds, noise_factor=1.0, **params) -> float:
    hits, trials = [], []
    for which, data in enumerate(pair):
        got = np.zeros(len(thresholds), dtype=np.int64)
        for s in range(runs):
            rng = with_factor(NoiseSource.for_tests(10_007 * which + s), noise_factor)
            counts = cell_counts(run_to_release(mech.run(data, rng=rng, **params)), len(pair[0].frame))
            got += [(counts >= t).sum() for t in thresholds]
        hits.append(got)
        trials.append(runs * len(pair[0].frame))
    return loss_lower_bound(hits[0], hits[1], trials[0], trials[1])


# Laplace histogram (sensitivity × c): ε = 1, m = c = 3; noise scale 3, counts 1 vs 4: {count ≥ t ≥ 4} loses ε.
def histogram_loss(marked=True, noise_factor=1.0, mech=None):
    return cells_loss(mech or LaplaceHistogram(), cells_pair(1000, 3, marked), 3, (4, 5, 6, 7),
                      noise_factor=noise_factor, epsilon=1.0, columns=("ward",), max_rows_per_person=3,
                      non_negative=False)


class HistogramForgetsC(LaplaceHistogram):
    """Bounds to c rows but calibrates the noise to one row (the sensitivity not scaled by c)."""

    def bounded(self, data, params, rng):
        bounded, unit = super().bounded(data, params, rng)
        return bounded, type(unit)(unit.person_column, 1)


def test_histogram_loses_at_most_epsilon_per_person():
    assert histogram_loss() <= 1.0


@pytest.mark.parametrize("twin", ["bounding off", "c forgotten", "halved noise"])
def test_histogram_per_person_test_fails_on_its_twins(twin):
    loss = {"bounding off": lambda: histogram_loss(marked=False),
            "c forgotten": lambda: histogram_loss(mech=HistogramForgetsC()),
            "halved noise": lambda: histogram_loss(noise_factor=0.5)}[twin]()
    assert loss > 1.0


# DiffGen (group privacy: ε/c per row): one flat quasi-identifier and h = 1 give one group per ward; ε = 2 per
# person, so the counts get ε/2 = 1 per person: with c = m = 2 the scale is 2c/ε = 2, counts 1 vs 3 → loss 1.
def diffgen_loss(marked=True, noise_factor=1.0, mech=None):
    return cells_loss(mech or DiffGen(), cells_pair(500, 2, marked, cls=True), 4, (3, 4, 5, 6),
                      noise_factor=noise_factor, epsilon=2.0, h=1, max_rows_per_person=2)


class DiffGenForgetsC(DiffGen):
    """Bounds to c rows but runs at the full ε per row (no group privacy)."""

    def row_epsilon(self, params, unit):
        return params["epsilon"]


def test_diffgen_counts_lose_at_most_their_half_of_epsilon_per_person():
    assert diffgen_loss() <= 1.0


@pytest.mark.parametrize("twin", ["bounding off", "c forgotten"])
def test_diffgen_per_person_test_fails_on_its_twins(twin):
    loss = diffgen_loss(marked=False) if twin == "bounding off" else diffgen_loss(mech=DiffGenForgetsC())
    assert loss > 1.0


# DP-LDA (sensitivity × c): one numeric column, so one row moves the statistics by Δ = 3 (sum, count, Σx²);
# ε = 3, c = m = 2: scale c·Δ/ε = 2, and a class count moves by 2 → {count ≥ t} loses 1. One class per trial.
def lda_pair(k: int, marked: bool) -> tuple[Dataset, Dataset]:
    classes = tuple(f"c{i:04d}" for i in range(k))
    base = pd.DataFrame({"pid": [f"b{i}" for i in range(k)], "x": 0.5, "y": classes})
    extra = pd.DataFrame({"pid": np.repeat([f"q{i}" for i in range(k)], 2), "x": 1.0, "y": np.repeat(classes, 2)})
    schema = (ColumnSpec("pid", "categorical", person_role(marked)),
              ColumnSpec("x", "numeric", Role.QUASI_IDENTIFIER, domain=Domain(low=0, high=1)),
              ColumnSpec("y", "categorical", Role.CLASS, domain=Domain(categories=classes)))
    return (Dataset(base, schema), Dataset(pd.concat([base, extra], ignore_index=True), schema))


def lda_loss(marked=True, mech=None, runs=6, k=400):
    hits, trials = [], []
    thresholds = (3, 4, 5)
    for which, data in enumerate(lda_pair(k, marked)):
        got = np.zeros(len(thresholds), dtype=np.int64)
        for s in range(runs):
            release = run_to_release((mech or DPLDA()).run(data, rng=NoiseSource.for_tests(77 * which + s),
                                                           epsilon=3.0, records=1, max_rows_per_person=2))
            counts = np.array(list(release.note["noisy class counts"].values()))
            got += [(counts >= t).sum() for t in thresholds]
        hits.append(got)
        trials.append(runs * k)
    return loss_lower_bound(hits[0], hits[1], trials[0], trials[1])


class LDAForgetsC(DPLDA):
    def statistics(self, rng, x, y, k, enc, epsilon, max_rows=1):
        return super().statistics(rng, x, y, k, enc, epsilon, 1)


def test_lda_statistics_lose_at_most_epsilon_per_person():
    assert lda_loss() <= 1.0


@pytest.mark.parametrize("twin", ["bounding off", "c forgotten"])
def test_lda_per_person_test_fails_on_its_twins(twin):
    assert (lda_loss(marked=False) if twin == "bounding off" else lda_loss(mech=LDAForgetsC())) > 1.0


# ---- one row per record (replace-one, c = 1): one trial per person -----------------------------------------------
def persons_pair(n: int, m: int, marked: bool, column: str = "x", values=(0, 1), high=1.0, integer=False,
                 categories=None) -> tuple[Dataset, Dataset]:
    """n patients with m rows each; on D every row holds values[0], on D' values[1]. Each patient's released rows
    depend on that patient's rows only (each row is perturbed on its own; the shuffle and the rows kept are drawn
    independently per patient), so every patient is one trial of "that patient's rows replaced"."""
    pid = np.repeat([f"p{i:05d}" for i in range(n)], m)
    if categories:
        spec = ColumnSpec(column, "categorical", Role.QUASI_IDENTIFIER, domain=Domain(categories=categories))
    else:
        spec = ColumnSpec(column, "numeric", Role.QUASI_IDENTIFIER, domain=Domain(low=0, high=high,
                                                                                  integer=integer))
    schema = (ColumnSpec("pid", "categorical", person_role(marked)), spec)
    return tuple(Dataset(pd.DataFrame({"pid": pid, column: np.full(n * m, v)}), schema) for v in values)


def per_person_loss(mech, pair, event, runs: int, **params) -> float:
    """Loss of {every released row of a patient shows the event}, one trial per patient."""
    hits, trials = [], []
    for which, data in enumerate(pair):
        persons = pd.factorize(data.frame["pid"])[0]
        n_persons = persons.max() + 1
        got = 0
        for s in range(runs):
            release = run_to_release(mech.run(data, rng=NoiseSource.for_tests(7919 * which + s), **params))
            used = np.arange(data.n_rows) if release.rows_used is None else release.rows_used
            miss = np.bincount(persons[used], weights=~event(release.table), minlength=n_persons)
            got += int((miss == 0).sum())
        hits.append([got])
        trials.append(runs * n_persons)
    return loss_lower_bound(hits[0], hits[1], trials[0], trials[1])


def at_lower_bound(table):
    return table["x"].to_numpy() == 0


ONE_TO_ONE = {  # mechanism, pair maker, event, parameters, the loss its event may show per person
    "DP-PCA": (DPPCA, lambda marked: persons_pair(3000, 2, marked), at_lower_bound, {"epsilon": 2, "k": 1}, 1.0),
    "Laplace on records": (LaplaceRecords, lambda marked: persons_pair(3000, 2, marked), at_lower_bound,
                           {"epsilon": 1}, 1.0),
    "Exponential on records": (ExponentialRecords,
                               lambda marked: persons_pair(3000, 2, marked, "c", ("a", "b"), categories=("a", "b")),
                               lambda t: t["c"].astype(str).to_numpy() == "a", {"epsilon": 2}, 1.0),
}


@pytest.mark.parametrize("name", list(ONE_TO_ONE))
def test_one_row_per_record_mechanisms_lose_at_most_their_epsilon_per_person(name):
    cls, pair, event, params, allowed = ONE_TO_ONE[name]
    assert per_person_loss(cls(), pair(True), event, 2, **params) <= allowed


@pytest.mark.parametrize("name", list(ONE_TO_ONE))
def test_one_row_per_record_per_person_test_fails_with_bounding_off(name):
    """Unmarked, a patient's two rows are both released: the same per-person event loses twice as much."""
    cls, pair, event, params, allowed = ONE_TO_ONE[name]
    assert per_person_loss(cls(), pair(False), event, 2, **params) > allowed
