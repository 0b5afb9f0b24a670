"""Laplace histogram: the noise has the scale ε says (a 2× error fails), the privacy loss of neighbouring
counts stays within ε, the whole public domain is noised, and domains read from the data are flagged."""

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ppdp_gui.engine.data.schema import ColumnSpec, Dataset, Role
from ppdp_gui.engine.errors import ParameterError
from ppdp_gui.engine.mechanisms import registry
from ppdp_gui.engine.mechanisms.base import run_to_release
from ppdp_gui.engine.mechanisms.laplace import (LaplaceHistogram, expected_abs_noise, numeric_axis,
                                                 post_process, scale_to_total)
from ppdp_gui.engine.noise import NoiseSource
from ppdp_gui.engine.taxonomy import Taxonomy
from ppdp_gui.engine.verify.noise import with_factor


def numeric_dataset(values, name="x") -> Dataset:
    frame = pd.DataFrame({name: np.asarray(values, dtype=np.int64)})
    return Dataset(frame, (ColumnSpec(name, "numeric", Role.QUASI_IDENTIFIER),))


def cells_dataset(m: int, copies: int) -> Dataset:
    """m one-wide bins 0..m-1, each holding `copies` records: every cell is an independent draw of one count."""
    return numeric_dataset(np.repeat(np.arange(m), copies))


def release(mech, data, seed, noise_factor=1.0, **params):
    """One release; `noise_factor` ≠ 1 plants a wrong noise scale from outside (engine.verify.ScaledNoise)."""
    return run_to_release(mech.run(data, rng=with_factor(NoiseSource.for_tests(seed), noise_factor), **params))


def raw_noisy_counts(mech, m, copies, epsilon, seed, noise_factor=1.0):
    params = dict(columns="x", low=0, high=m - 1, bin_width=1, epsilon=epsilon, non_negative=False)
    return release(mech, cells_dataset(m, copies), seed, noise_factor, **params).table["count"].to_numpy()


def test_registered_and_exact_cost():
    mech = registry.create("Laplace histogram")
    assert isinstance(mech, LaplaceHistogram) and mech.guarantee == "ε-DP"
    assert mech.privacy_cost(epsilon=0.1).epsilon == Fraction(1, 10)
    assert mech.privacy_cost(epsilon="0.25").epsilon == Fraction(1, 4)


@pytest.mark.parametrize("epsilon", [1.0, 0.1])
def test_mean_abs_noise_matches_the_scale(epsilon):
    """Over 100,000 cells the mean |noise| is within 5 standard errors of E|X| for scale 1/ε; for 2ε or ε/2
    it would be off by far more (E|X| roughly halves or doubles)."""
    m = 100_000
    noise = raw_noisy_counts(LaplaceHistogram(), m, 1, epsilon, seed=7) - 1
    mean, se = np.abs(noise).mean(), np.abs(noise).std() / np.sqrt(m)
    assert abs(mean - expected_abs_noise(epsilon)) < 5 * se
    for wrong in (2 * epsilon, epsilon / 2):
        assert abs(mean - expected_abs_noise(wrong)) > 40 * se


HALVED = 0.5  # noise of scale 1/(2ε): a deliberately broken release that really spends 2ε


def max_privacy_loss(mech, epsilon, m=150_000, min_count=1_000, seed=3, noise_factor=1.0):
    """Largest |log P[out=o | count 1] / P[out=o | count 2]| over outputs seen ≥ min_count times in both."""
    a = raw_noisy_counts(mech, m, 1, epsilon, seed, noise_factor)
    b = raw_noisy_counts(mech, m, 2, epsilon, seed + 1, noise_factor)
    lo, hi = min(a.min(), b.min()), max(a.max(), b.max())
    fa = np.bincount(a - lo, minlength=hi - lo + 1)
    fb = np.bincount(b - lo, minlength=hi - lo + 1)
    ok = (fa >= min_count) & (fb >= min_count)
    assert ok.sum() >= 5
    return float(np.abs(np.log(fa[ok] / fb[ok])).max())


def test_privacy_loss_of_neighbouring_counts_is_bounded_by_epsilon():
    eps, slack = 0.5, 0.2  # sampling error of a log ratio of ≥1,000 counts is ≈ 0.045
    loss = max_privacy_loss(LaplaceHistogram(), eps)
    assert eps - slack < loss <= eps + slack
    assert max_privacy_loss(LaplaceHistogram(), eps, noise_factor=HALVED) > eps + slack  # catches a 2× error


def test_every_cell_of_the_public_domain_is_noised():
    tax = Taxonomy.flat("blood", ["A", "B", "AB", "O"])
    frame = pd.DataFrame({"blood": ["A"] * 30 + ["O"] * 12})
    data = Dataset(frame, (ColumnSpec("blood", "categorical", Role.SENSITIVE, tax),))
    mech = LaplaceHistogram()
    assert mech.validate(data, columns="blood") == []  # a taxonomy is a public domain: no warning
    rel = release(mech, data, 1, columns="blood", epsilon=0.5, non_negative=False)
    assert set(rel.table["blood"]) == {"A", "B", "AB", "O"}
    # the empty cells B and AB got noise too: over many seeds they are not always 0
    outs = [release(mech, data, s, columns="blood", epsilon=0.5, non_negative=False).table.set_index("blood")
            ["count"]["AB"] for s in range(30)]
    assert len(set(outs)) > 3


def test_the_mechanism_never_reads_a_domain_from_the_data():
    """No bounds, no category list: the mechanism refuses (the publish path decides about an opt-in)."""
    data = numeric_dataset([20, 35, 70])
    mech = LaplaceHistogram()
    errors = [p for p in mech.validate(data, columns="x") if p.level == "error"]
    assert errors and "no public bounds" in errors[0].message
    assert mech.validate(data, columns="x", low=0, high=100) == []
    assert [n.what for n in mech.domain_needs(data, {"columns": ("x",)})] == ["bounds"]
    assert mech.domain_needs(data, {"columns": ("x",), "low": 0, "high": 100}) == []
    cat = Dataset(pd.DataFrame({"c": ["a", "b"]}), (ColumnSpec("c", "categorical"),))
    assert any("no public list" in p.message for p in mech.validate(cat, columns="c"))


def test_integer_bins_and_labels():
    axis = numeric_axis("age", 17, 90, width=1, integer=True)
    assert axis.size == 74 and axis.labels[0] == "17" and axis.labels[-1] == "90"
    axis = numeric_axis("age", 17, 90, width=10, integer=True)
    assert axis.labels[0] == "17-26" and axis.labels[-1] == "87-90"
    codes = axis.codes(pd.Series([17, 26, 27, 90, 200, 0]))
    assert codes.tolist() == [0, 0, 1, 7, 7, 0]
    axis = numeric_axis("w", 0.0, 1.0, bins=4)
    assert axis.labels == ("[0, 0.25)", "[0.25, 0.5)", "[0.5, 0.75)", "[0.75, 1]")


def test_contingency_table_on_adult_matches_a_recount(shared_data):
    """Real data: sex x race of ARX Adult. At ε = 1 no count is off by more than 20 (P ≈ 10^-8 per cell)."""
    frame = pd.read_csv(shared_data / "adult/hierarchies/arx/adult.csv.gz", sep=";", dtype=str,
                        usecols=["sex", "race"])
    taxes = {c: Taxonomy.flat(c, frame[c].unique()) for c in frame.columns}
    data = Dataset(frame, tuple(ColumnSpec(c, "categorical", Role.QUASI_IDENTIFIER, taxes[c]) for c in frame))
    rel = release(LaplaceHistogram(), data, 11, columns=("sex", "race"), epsilon=1.0)
    assert len(rel.table) == 2 * 5
    truth = frame.value_counts(["sex", "race"])
    got = rel.table.set_index(["sex", "race"])["count"]
    assert truth.sum() == 30_162
    for key, count in truth.items():
        assert abs(got[key] - count) <= 20
    m = LaplaceHistogram().measures(rel, data, None)
    assert 0 <= m["mean abs error"] <= 20


def test_records_output_repeats_each_cell():
    data = numeric_dataset([1] * 50 + [2] * 5)  # cell 3 is empty
    rel = release(LaplaceHistogram(), data, 5, columns="x", low=1, high=3, bin_width=1, output="records")
    counts = rel.extra_tables["noisy counts"].set_index("x")["count"]
    assert (rel.table["x"].value_counts().reindex(counts.index, fill_value=0) == counts).all()
    assert (counts >= 0).all()


def test_checks_refuse_bad_requests():
    mech = LaplaceHistogram()
    data = numeric_dataset([1, 2, 3])
    assert any(p.level == "error" for p in mech.validate(data))  # no column chosen
    assert any("no column" in p.message for p in mech.validate(data, columns="nope"))
    with pytest.raises(ParameterError):
        run_to_release(mech.run(data, rng=NoiseSource.for_tests(0), columns="x", epsilon=0))
    nan = Dataset(pd.DataFrame({"x": [1.0, np.nan]}), (ColumnSpec("x", "numeric"),))
    assert any("missing" in p.message for p in mech.validate(nan, columns="x"))


def test_post_processing():
    noisy = np.array([-3, 0, 5, 2, -1])
    assert post_process(noisy, non_negative=False, consistency="none").tolist() == noisy.tolist()
    assert post_process(noisy, non_negative=True, consistency="none").tolist() == [0, 0, 5, 2, 0]
    kept = post_process(noisy, non_negative=True, consistency="keep noisy total")
    assert kept.sum() == noisy.sum() and (kept >= 0).all()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 1000), min_size=1, max_size=40), st.integers(0, 5000))
def test_scale_to_total_is_exact_and_non_negative(counts, total):
    out = scale_to_total(np.array(counts), total)
    assert (out >= 0).all()
    assert out.sum() == (total if sum(counts) else 0)
