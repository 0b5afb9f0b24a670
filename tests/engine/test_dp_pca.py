"""DP-PCA, DP-LDA and the record baselines: public-domain encoding and its inverse, the algorithms' algebra, the
exact samplers' laws, the greedy sampler, and releases through the publish path (claims recounted on the file,
nothing computed from the records in the note, refusal without public domains)."""

import json
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import chisquare

from ppdp_gui.engine.checks.claims import check_claims
from ppdp_gui.engine.claims import DifferentialPrivacy, Neighbouring, PublicSchema
from ppdp_gui.engine.data.domains import Domain
from ppdp_gui.engine.data.schema import ColumnSpec, Dataset, Role
from ppdp_gui.engine.mechanisms import registry
from ppdp_gui.engine.mechanisms.base import run_to_release
from ppdp_gui.engine.mechanisms.dp_pca import DPLDA, DPPCA, ExponentialRecords, LaplaceRecords, gridnoise, lda, pca
from ppdp_gui.engine.mechanisms.dp_pca.encoding import plan_encoding
from ppdp_gui.engine.noise import NoiseSource
from ppdp_gui.engine.pipeline import export, plan, run_release

WARDS = ("north", "south", "east")
OUTCOMES = ("home", "readmitted")


def ward_table(n=2000, seed=0, domains=True) -> Dataset:
    """Correlated numbers and categories, like a small hospital table; public domains unless told otherwise."""
    r = np.random.default_rng(seed)
    age = r.integers(20, 90, n)
    stay = np.clip(np.round(age / 10 + r.normal(0, 1.5, n)), 0, 30).astype(np.int64)
    ward = np.where(age > 60, "north", r.choice(["south", "east"], n))
    outcome = np.where(stay + r.normal(0, 2, n) > 8, "readmitted", "home")
    frame = pd.DataFrame({"id": np.arange(n), "age": age, "stay": stay, "ward": ward, "outcome": outcome})
    d = {"age": Domain(low=0, high=120, integer=True), "stay": Domain(low=0, high=30, integer=True),
         "ward": Domain(categories=WARDS), "outcome": Domain(categories=OUTCOMES)} if domains else {}
    schema = (ColumnSpec("id", "numeric", Role.IDENTIFIER),
              ColumnSpec("age", "numeric", Role.QUASI_IDENTIFIER, domain=d.get("age")),
              ColumnSpec("stay", "numeric", Role.QUASI_IDENTIFIER, domain=d.get("stay")),
              ColumnSpec("ward", "categorical", Role.QUASI_IDENTIFIER, domain=d.get("ward")),
              ColumnSpec("outcome", "categorical", Role.CLASS, domain=d.get("outcome")))
    return Dataset(frame, schema)


def release(mech, data, seed=1, **params):
    return run_to_release(mech.run(data, rng=NoiseSource.for_tests(seed), **params))


# ---- registry and cost ---------------------------------------------------------------------------------------------
def test_registered_with_exact_costs():
    for name, cls in (("DP-PCA", DPPCA), ("DP-LDA", DPLDA), ("Laplace on records", LaplaceRecords),
                      ("Exponential on records", ExponentialRecords)):
        mech = registry.create(name)
        assert isinstance(mech, cls) and mech.guarantee == "ε-DP"
        assert mech.privacy_cost(epsilon=0.1).epsilon == Fraction(1, 10)


# ---- encoding ------------------------------------------------------------------------------------------------------
def test_encoding_round_trip_and_layout():
    data = ward_table()
    enc = plan_encoding(data, ["age", "stay", "ward", "outcome"])
    # the ward's list holds "(missing)" too (part of every stated list of values but the class's)
    assert (enc.p1, enc.p2, enc.width) == (2, 2, 8)
    x, clamped = enc.encode(data.frame)
    assert clamped == {} and x.min() >= 0 and x.max() <= 1
    assert np.allclose(x[:, 2:6].sum(axis=1), 1) and np.allclose(x[:, 6:8].sum(axis=1), 1)
    back = enc.decode(x)
    for col in ("age", "stay"):
        assert (back[col].to_numpy() == data.frame[col].to_numpy()).all()
    for col in ("ward", "outcome"):
        assert (back[col].astype(str).to_numpy() == data.frame[col].to_numpy()).all()


def test_decoding_any_matrix_gives_only_public_values():
    enc = plan_encoding(ward_table(), ["age", "ward"])
    z = np.random.default_rng(0).normal(0, 5, size=(500, enc.width))
    out = enc.decode(z)
    assert out["age"].between(0, 120).all() and out["age"].dtype == np.int64
    assert set(out["ward"].astype(str)) <= set(WARDS) | {"(missing)"}


def test_values_outside_the_domain_are_clamped_and_only_the_custodian_is_told():
    data = ward_table(300)
    frame = data.frame.copy()
    frame.loc[:4, "age"] = 150
    data = data.with_frame(frame)
    problems = DPPCA().validate(data, epsilon=1, k=2)
    assert [p.level for p in problems] == ["warning"] and "5 value(s) of 'age'" in problems[0].message
    rel = release(DPPCA(), data, epsilon=1, k=2)
    assert rel.record["clamped values"] == {"age": 5} and any("5 value(s)" in w for w in rel.warnings)
    assert "5 value" not in json.dumps(rel.note, default=str)


def test_missing_domains_categories_and_identifiers_are_problems_naming_the_column():
    data = ward_table(200, domains=False)
    problems = DPPCA().validate(data, epsilon=1, k=1, columns=["age", "ward"])
    assert problems and problems[0].column == "age"
    data = ward_table(200)
    frame = data.frame.copy()
    frame.loc[0, "ward"] = "west"
    bad = DPPCA().validate(data.with_frame(frame), epsilon=1, k=1)
    assert any(p.column == "ward" and p.level == "error" for p in bad)
    ident = DPPCA().validate(data, epsilon=1, k=1, columns=["id", "age"])
    assert ident[0].column == "id" and "identifier" in ident[0].message
    assert DPPCA().validate(data, epsilon=1, k=50)[0].param == "k"


# ---- DP-PCA algebra ------------------------------------------------------------------------------------------------
def test_projection_onto_every_component_and_back_is_the_identity():
    rng = np.random.default_rng(1)
    x = rng.random((50, 6))
    basis, _ = np.linalg.qr(rng.normal(size=(6, 6)))
    mean = rng.random(6)
    assert np.allclose(pca.recover((x - mean) @ basis, basis, mean), x)


def test_noisy_moments_are_unbiased_and_their_components_are_the_true_ones_at_large_epsilon():
    data = ward_table(5000)
    enc = plan_encoding(data, ["age", "stay", "ward"])
    x, _ = enc.encode(data.frame)
    m = DPPCA().moments(NoiseSource.for_tests(3), x, len(x), enc, Fraction(10 ** 4))
    assert np.allclose(m.mean, x.mean(axis=0), atol=1e-3)
    assert np.allclose(m.covariance, np.cov(x.T, bias=True), atol=1e-3)
    values, basis = pca.components(m, 2)
    true_vals, true_vecs = np.linalg.eigh(np.cov(x.T, bias=True))
    assert np.allclose(values[:2], true_vals[::-1][:2], atol=1e-3)
    assert abs(abs(basis[:, 0] @ true_vecs[:, -1]) - 1) < 1e-3


def test_error_falls_with_epsilon_and_dp_pca_adds_less_noise_than_laplace():
    """Theorem 3: with k² small against p, DP-PCA's noisy matrix is closer to the data than the Laplace
    mechanism's, at every ε; after both are mapped back into the domains it still is (at ε = 1)."""
    data = ward_table(3000)
    cols = ["age", "stay", "ward", "outcome"]
    err = {}
    for eps in (0.1, 1.0, 10.0):
        for mech in (DPPCA(), LaplaceRecords(), ExponentialRecords()):
            params = dict(epsilon=eps, columns=cols, **({"k": 1} if isinstance(mech, DPPCA) else {}))
            rel = release(mech, data, seed=int(eps * 10), **params)
            err[mech.name, eps] = mech.measures(rel, data, None)
    for name in ("DP-PCA", "Laplace on records", "Exponential on records"):
        assert err[name, 0.1]["MSE"] > err[name, 1.0]["MSE"] > err[name, 10.0]["MSE"]
    for eps in (0.1, 1.0, 10.0):
        assert err["DP-PCA", eps]["MSE (noisy matrix)"] < err["Laplace on records", eps]["MSE (noisy matrix)"] / 5
    assert err["DP-PCA", 1.0]["MSE"] < err["Laplace on records", 1.0]["MSE"]


# ---- the exact samplers --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("scale", [Fraction(3, 2), Fraction(40)])  # narrow proposal, then wide
def test_exponential_on_a_grid_has_the_exact_law(scale):
    top, m, n = 10, 2, 40_000
    draws = gridnoise.exponential_on_grid(NoiseSource.for_tests(5), np.full(n, m), top, scale)
    g = np.arange(top + 1)
    p = np.exp(-np.abs(g - m) / float(scale))
    observed = np.bincount(draws, minlength=top + 1)
    assert chisquare(observed, n * p / p.sum()).pvalue > 1e-4
    wrong = np.exp(-np.abs(g - m) / float(scale * 2))  # the law with twice the scale is rejected
    assert chisquare(observed, n * wrong / wrong.sum()).pvalue < 1e-6


def test_exponential_category_has_the_exact_law():
    n, k, scale = 40_000, 4, Fraction(2)
    draws = gridnoise.exponential_category(NoiseSource.for_tests(6), np.zeros(n, dtype=np.int64), k, scale)
    p = np.array([1.0] + [np.exp(-0.5)] * 3)
    assert chisquare(np.bincount(draws, minlength=k), n * p / p.sum()).pvalue > 1e-4


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.floats(-5, 5), st.floats(0.01, 3)), min_size=1, max_size=12))
def test_weighted_median_minimises_the_weighted_l1_sum(pairs):
    pts = np.array([[p for p, _ in pairs]])
    w = np.array([[v for _, v in pairs]])
    z = lda.weighted_median(pts, w)[0]
    cost = lambda v: float((w[0] * np.abs(v - pts[0])).sum())  # noqa: E731
    assert all(cost(z) <= cost(v) + 1e-9 for v in np.linspace(-6, 6, 241))


# ---- DP-LDA --------------------------------------------------------------------------------------------------------
def test_greedy_samples_match_the_statistics_they_are_drawn_from():
    """With noise-free targets (ε huge) the synthetic class means and pooled second moments are those of the data."""
    data = ward_table(3000)
    enc = plan_encoding(data, ["age", "stay", "ward"])
    x, _ = enc.encode(data.frame)
    y = (data.frame["outcome"] == "readmitted").to_numpy().astype(np.int64)
    stats = DPLDA().statistics(NoiseSource.for_tests(2), x, y, 2, enc, Fraction(10 ** 5))
    sx, sy = lda.greedy_sample(stats, enc, 3000, NoiseSource.for_tests(3))
    assert len(sx) == 3000 and abs(np.bincount(sy, minlength=2)[1] - y.sum()) <= 1
    for c in (0, 1):
        assert np.abs(sx[sy == c].mean(axis=0) - x[y == c].mean(axis=0)).max() < 0.03
    assert np.abs(sx.T @ sx / len(sx) - x.T @ x / len(x)).max() < 0.03
    assert len(np.unique(sx, axis=0)) > 100  # the streams do not repeat one another


def test_lda_release_holds_public_values_and_chosen_size():
    data = ward_table(1500)
    rel = release(DPLDA(), data, epsilon=1.0, records=700)
    assert len(rel.table) == 700 and list(rel.table.columns) == ["age", "stay", "ward", "outcome"]
    assert rel.table["stay"].between(0, 30).all() and set(rel.table["outcome"].astype(str)) <= set(OUTCOMES)
    assert rel.note["synthetic records"] == 700 and rel.note["neighbouring relation"] == "add/remove"
    default = release(DPLDA(), data, epsilon=1.0)
    assert abs(len(default.table) - 1500) < 200  # as many as the noisy count
    figures = DPLDA().measures(default, data, None)
    assert {"ACA LDA %", "AUC tree", "entropy (bits)", "KL divergence (bits)"} <= set(figures)


# ---- through the publish path --------------------------------------------------------------------------------------
@pytest.mark.parametrize("name,params", [("DP-PCA", {"epsilon": 1, "k": 2}), ("DP-LDA", {"epsilon": 1}),
                                         ("Laplace on records", {"epsilon": 1}),
                                         ("Exponential on records", {"epsilon": 1})])
def test_published_and_recounted_on_the_written_file(tmp_path, name, params):
    data = ward_table(800)
    planned = plan(data, name, params)
    assert not planned.errors, [p.message for p in planned.errors]
    published = list(run_release(planned, rng=NoiseSource.for_tests(4)))[-1]
    dp = [c for c in published.claims if isinstance(c, DifferentialPrivacy)][0]
    schema = [c for c in published.claims if isinstance(c, PublicSchema)][0]
    assert dp.holds and dp.epsilon == 1 and "id" not in schema.columns
    assert all(c.ok for c in check_claims(published.release.tables(), published.claims))
    ex = export(published, tmp_path / "out.csv", note_path=tmp_path / "note.json")
    note = (tmp_path / "note.json").read_text()
    doc = json.loads(note)
    assert all(c["ok"] for c in doc["checked on the written file"]) and ex is not None
    details = json.dumps(doc["details"])
    for private in ('"rows"', "clamped", "F-norm", "MSE", "ACA"):
        assert private not in details
    if name != "DP-LDA":  # one row per record: the guarantee is for one record replaced, and the note says so
        assert dp.neighbouring is Neighbouring.REPLACE_ONE
        assert doc["what this means"]["means"][1].startswith("Replacing")
        assert doc["guarantee"]["neighbouring relation"] == "replace"


def test_refused_without_public_domains_and_labelled_when_opted_in():
    data = ward_table(300, domains=False)
    planned = plan(data, "DP-PCA", {"epsilon": 1, "k": 1, "columns": "age,ward"})
    assert {p.column for p in planned.errors} == {"age", "ward"}
    opted = plan(data, "DP-PCA", {"epsilon": 1, "k": 1, "columns": "age,ward"}, allow_data_domains=True)
    published = list(run_release(opted, rng=NoiseSource.for_tests(1)))[-1]
    assert not published.holds and "domain of age taken from the data" in published.caveats


# ---- weak shapes, said before the run from public quantities only ------------------------------------------------
def test_lda_says_when_it_is_weak_from_public_quantities_only():
    """The review's DP-LDA fell to chance on a 10-class table at ε = 0.25 and to the majority class on 297 rows;
    the Mechanism step now says so before the run. The warning depends on classes, attributes and ε only: a table
    of 300 rows and one of 30,000 with the same public schema get the same words."""
    from ppdp_gui.engine.mechanisms.dp_pca.weakness import lda_weakness, rows_needed
    assert rows_needed(3, 1, 2, 1) == (150, 300)  # S = 1 + 4 + 10 = 15; 10·S/ε per class
    assert lda_weakness(3, 1, 2, 1) is None  # the ward table's shape at ε = 1: fine
    msg = lda_weakness(12, 4, 10, 0.25)
    assert msg and "6,120 records" in msg and "61,200 in all" in msg  # S = 1 + 16 + 136 = 153 and "guessing" in msg
    small, big = ward_table(300), ward_table(3000)
    weak = [p for p in DPLDA().check(small, {"epsilon": 0.02}) if p.param == "epsilon"]
    assert len(weak) == 1 and weak[0].level == "warning"
    assert [p.message for p in DPLDA().check(big, {"epsilon": 0.02}) if p.param == "epsilon"] == \
        [p.message for p in weak]
    assert not [p for p in DPLDA().check(small, {"epsilon": 1}) if p.param == "epsilon"]
