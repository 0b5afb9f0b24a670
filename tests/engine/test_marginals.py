"""Marginal synthesizer: its budget (white-box and statistical), public domains, the model and the audit's twin.

A test here fails if ε or a sensitivity is wrong by 2×: the noise scale each table gets is held to K/ε_measure
exactly, the exponential-mechanism rounds to ε/10 in total with sensitivity 4, the score's sensitivity is shown
to exceed 2 on a real pair of neighbours (so halving it would under-charge), the noise's spread is held to the
discrete Laplace's, and the verifier must FAIL when every noise scale is halved.
"""

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from ppdp_gui.engine.data.domains import Domain, DomainNeed
from ppdp_gui.engine.data.schema import ColumnSpec, Dataset, Role
from ppdp_gui.engine.mechanisms import registry
from ppdp_gui.engine.mechanisms.base import run_to_release
from ppdp_gui.engine.mechanisms.marginals import MarginalSynthesizer
from ppdp_gui.engine.mechanisms.marginals.model import project_rows
from ppdp_gui.engine.mechanisms.marginals.structure import SENSITIVITY, independence_gap
from ppdp_gui.engine.noise import NoiseSource


class Recording:
    """A NoiseSource that records the scale of every noisy table and every exponential-mechanism call."""

    def __init__(self, seed=0):
        self.source, self.scales, self.choices = NoiseSource.for_tests(seed), [], []

    def discrete_laplace(self, scale, size=None):
        self.scales.append(Fraction(scale))
        return self.source.discrete_laplace(scale, size=size)

    def exponential_choice(self, scores, epsilon, sensitivity, **kw):
        self.choices.append((Fraction(epsilon), sensitivity))
        return self.source.exponential_choice(scores, epsilon, sensitivity, **kw)

    def __getattr__(self, name):
        return getattr(self.source, name)


def table(n=300, seed=1) -> Dataset:
    r = np.random.default_rng(seed)
    a = r.integers(0, 3, n)
    frame = pd.DataFrame({
        "age": np.clip(20 + 15 * a + r.integers(0, 20, n), 0, 100),
        "ward": np.array(list("ABCD"))[(a + r.integers(0, 2, n)) % 4],
        "sex": np.array(["F", "M"])[r.integers(0, 2, n)],
        "smoker": np.array(["no", "yes"])[(a > 1).astype(int)],
        "outcome": np.array(["no", "yes"])[((a + r.integers(0, 2, n)) > 2).astype(int)],
    })
    cat = lambda c, v, role=Role.QUASI_IDENTIFIER: ColumnSpec(c, "categorical", role, domain=Domain(categories=v))
    schema = (ColumnSpec("age", "numeric", Role.QUASI_IDENTIFIER, domain=Domain(low=0, high=100, integer=True)),
              cat("ward", tuple("ABCD")), cat("sex", ("F", "M")), cat("smoker", ("no", "yes")),
              cat("outcome", ("no", "yes"), Role.CLASS))
    return Dataset(frame, schema)


def test_registered_and_pure_epsilon():
    mech = registry.create("Marginal synthesizer")
    cost = mech.privacy_cost(epsilon=0.3)
    assert cost.epsilon == Fraction(3, 10) and cost.delta == 0


@pytest.mark.parametrize("structure,tables", [("tree around the class", 2 * 5 - 3), ("star around the class", 4),
                                              ("tree", 4)])
def test_every_table_gets_scale_K_over_epsilon_measure(structure, tables):
    rng = Recording()
    release = run_to_release(MarginalSynthesizer().run(table(), rng=rng, epsilon=0.5, structure=structure))
    select = Fraction(1, 20) if structure != "star around the class" else Fraction(0)
    assert rng.scales == [Fraction(tables) / (Fraction(1, 2) - select)] * tables
    assert len(release.note["measured tables"]) == tables
    assert sum(e for e, _ in rng.choices) == select  # ε/10 over the rounds of the tree, nothing for a star
    assert all(s == SENSITIVITY == 4 for _, s in rng.choices)
    assert Fraction(release.note["epsilon select"]) + Fraction(release.note["epsilon measure"]) == Fraction(1, 2)


def test_score_sensitivity_is_below_4_and_above_2():
    """|gap(D + r) − gap(D)| < 4 for every record r on random tables, and > 2 for some: halving is unsound."""
    r = np.random.default_rng(0)
    worst = 0.0
    for _ in range(300):
        n, nx, ny = int(r.integers(1, 12)), int(r.integers(2, 5)), int(r.integers(2, 5))
        x, y = r.integers(0, nx, n), r.integers(0, ny, n)
        base = independence_gap(x, y, nx, ny)
        for a in range(nx):
            for b in range(ny):
                moved = independence_gap(np.append(x, a), np.append(y, b), nx, ny)
                worst = max(worst, abs(moved - base))
    assert 2 < worst < SENSITIVITY


def test_noise_spread_is_discrete_laplace_of_the_declared_scale():
    """Published noisy counts minus the true ones: mean |noise| matches scale K/ε (2× off would be far out)."""
    data = table(60)
    eps, draws = 1.0, []
    wards = list("ABCD") + ["(missing)"]  # every stated list holds the public missing-value label (data/domains.py)
    true = pd.crosstab(data.frame["outcome"], data.frame["ward"]).reindex(index=["no", "yes"], columns=wards,
                                                                          fill_value=0)
    for seed in range(150):
        rel = run_to_release(MarginalSynthesizer().run(data, rng=NoiseSource.for_tests(seed), epsilon=eps,
                                                       columns=("ward", "outcome"), publish_tables=True,
                                                       structure="star around the class"))
        noisy = rel.extra_tables["noisy tables"]["noisy count"].to_numpy()
        draws.append(noisy - true.to_numpy().reshape(-1))
    noise = np.concatenate(draws)
    alpha = np.exp(-eps)  # K = 1 table: scale 1/ε
    expected = 2 * alpha / (1 - alpha ** 2)
    assert abs(np.abs(noise).mean() - expected) < 0.15 * expected


def test_domains_must_be_public():
    data = table()
    data = data.with_column("age", domain=None)
    problems = MarginalSynthesizer().validate(data, epsilon=1.0)
    assert problems and problems[0].column == "age" and "public bounds" in problems[0].message
    needs = MarginalSynthesizer().domain_needs(data, MarginalSynthesizer.resolve_params())
    assert DomainNeed("age", "bounds") in needs and DomainNeed("ward", "categories") in needs


def test_release_has_public_columns_and_requested_records():
    data = table()
    rel = run_to_release(MarginalSynthesizer().run(data, rng=NoiseSource.for_tests(3), epsilon=2.0, records=500))
    assert list(rel.table.columns) == list(data.frame.columns) and len(rel.table) == 500
    assert rel.table["age"].between(0, 100).all()
    assert set(rel.table["ward"].astype(str)) <= set("ABCD") | {"(missing)"}
    assert "noisy tables" not in rel.extra_tables


def test_structures_needing_a_class_say_so():
    data = Dataset(table().frame, tuple(s if s.name != "outcome" else ColumnSpec("outcome", "categorical",
               Role.QUASI_IDENTIFIER, domain=s.domain) for s in table().schema))
    problems = MarginalSynthesizer().validate(data, epsilon=1.0)
    assert problems and "class column" in problems[0].message
    assert not MarginalSynthesizer().validate(data, epsilon=1.0, structure="tree")


def test_projection_is_non_negative_and_keeps_row_totals():
    r = np.random.default_rng(2)
    noisy = r.normal(0, 5, size=(7, 9))
    totals = np.abs(r.normal(20, 10, size=7))
    out = project_rows(noisy, totals)
    assert (out >= 0).all() and np.allclose(out.sum(axis=1), totals)
    # and it is the nearest such point: no small move along the constraint set gets closer
    i, j, k = 0, int(np.argmax(out[0])), int(np.argmin(out[0]))
    moved = out.copy(); moved[i, j] -= 1e-3; moved[i, k] += 1e-3
    assert ((noisy - out) ** 2).sum() <= ((noisy - moved) ** 2).sum()


def test_the_audit_fails_when_the_noise_is_halved():
    from ppdp_gui.engine.verify import run_verification
    verdict = run_verification("Marginal synthesizer", size="quick", only=["one patient added"], noise_factor=0.5)
    assert not verdict.passed


def test_error_bars_only_beside_published_tables():
    data = table()
    run = lambda **kw: run_to_release(MarginalSynthesizer().run(data, rng=NoiseSource.for_tests(0), epsilon=1.0, **kw))
    from ppdp_gui.engine.noise.intervals import half_width
    rel = run(publish_tables=True)
    scale = Fraction(rel.note["noise scale (exact)"])
    assert rel.note["95 % interval of each count"] == f"± {half_width(scale)}"
    assert "95 % interval of each count" not in run().note


def test_a_person_with_c_rows_costs_epsilon_by_group_privacy():
    """With a Person column and c = 2 rows per person, every table and selection round runs at ε/2 per row."""
    data = table(200)
    frame = data.frame.assign(patient=np.repeat(np.arange(100), 2))
    data = Dataset(frame, data.schema + (ColumnSpec("patient", "categorical", Role.PERSON),))
    rng = Recording()
    rel = run_to_release(MarginalSynthesizer().run(data, rng=rng, epsilon=0.5, max_rows_per_person=2))
    tables = 2 * 5 - 3
    assert rng.scales == [Fraction(tables) / (Fraction(1, 4) * Fraction(9, 10))] * tables
    assert sum(e for e, _ in rng.choices) == Fraction(1, 40)
    assert "patient" not in rel.table.columns and rel.cost.epsilon == Fraction(1, 2)
    c = MarginalSynthesizer().count_noise_per_epsilon(data, MarginalSynthesizer.resolve_params(max_rows_per_person=2))
    assert c == Fraction(tables) / Fraction(9, 10) * 2


def test_four_column_tables_cost_nothing_more_and_only_when_the_noise_allows():
    """On 3,000 rows at ε = 5 a (class, g, p, c) table is measured — same K tables, same scale K/ε_measure —
    and the model still adds up; at ε = 0.05 (noise far above the rows) and with "never" none is."""
    from ppdp_gui.engine.mechanisms.marginals.widen import NEVER
    data = table(3000)
    tables = 2 * 5 - 3

    def run(eps, **kw):
        rng = Recording()
        rel = run_to_release(MarginalSynthesizer().run(data, rng=rng, epsilon=eps, publish_tables=True, **kw))
        return rel, rng

    rel, rng = run(5.0)
    widths = [len(t) for t in rel.note["measured tables"]]
    assert 4 in widths and len(widths) == tables
    assert rng.scales == [Fraction(tables) / (Fraction(5) * Fraction(9, 10))] * tables
    assert rel.cost.epsilon == 5 and "1 × the noisy total" in rel.note["four-column tables"]
    assert abs(len(rel.table) - 3000) < 100
    assert max(len(t) for t in run(0.05)[0].note["measured tables"]) == 3
    assert max(len(t) for t in run(5.0, detail=NEVER)[0].note["measured tables"]) == 3


def test_a_four_column_table_keeps_what_predicts_the_class():
    """The class is the parity of a, b and c (independent coins): no table of the class with two columns says
    anything about it, a (class, a, b, c) table says everything. With it the synthetic records keep the parity;
    with "never" they are right half of the time."""
    from ppdp_gui.engine.mechanisms.marginals.widen import NEVER
    r = np.random.default_rng(4)
    bits = r.integers(0, 2, size=(3, 6000))
    xy = np.array(["x", "y"])
    frame = pd.DataFrame({"a": xy[bits[0]], "b": xy[bits[1]], "c": xy[bits[2]],
                          "outcome": np.array(["no", "yes"])[bits.sum(axis=0) % 2]})
    cat = lambda col, v, role=Role.QUASI_IDENTIFIER: ColumnSpec(col, "categorical", role, domain=Domain(categories=v))
    data = Dataset(frame, (cat("a", ("x", "y")), cat("b", ("x", "y")), cat("c", ("x", "y")),
                           cat("outcome", ("no", "yes"), Role.CLASS)))
    parity = {}
    for detail in ("when the noise allows", NEVER):
        for seed in range(20):  # a seed whose tree is a chain from a (a star around a has no parent's parent)
            rel = run_to_release(MarginalSynthesizer().run(data, rng=NoiseSource.for_tests(seed), epsilon=5.0,
                                                           detail=detail))
            if detail == NEVER or max(len(t) for t in rel.note["measured tables"]) == 4:
                break
        syn = rel.table.astype(str)
        ones = (syn[["a", "b", "c"]] == "y").sum(axis=1) % 2
        parity[detail] = (ones == (syn["outcome"] == "yes")).mean()
    assert parity["when the noise allows"] > 0.9 and 0.4 < parity[NEVER] < 0.6


def test_raking_gives_a_table_the_pair_tables_counts_and_keeps_its_rows():
    """A noisy (class, parent, child) table after `rake`: each row still adds up to the model's count of its
    (class, parent), and its (class, child) counts come close to the inverse-variance mix of the measured pair
    table and its own sum — here mostly the pair table (the sum over 6 parent cells is 6× noisier)."""
    from ppdp_gui.engine.mechanisms.marginals.model import rake
    r = np.random.default_rng(7)
    true = r.integers(0, 40, size=(2, 6, 5)).astype(float)
    base = true.sum(axis=(1, 2))
    totals = true.sum(axis=2)
    noisy = true + r.normal(0, 8, size=true.shape)
    pair = true.sum(axis=1) + r.normal(0, 8, size=(2, 5))
    out = rake(project_rows(noisy, totals), noisy, pair, base, totals)
    assert (out >= 0).all() and np.allclose(out.sum(axis=2), totals)
    target = project_rows((pair * 6 + noisy.sum(axis=1)) / 7, base)
    assert np.abs(out.sum(axis=1) - target).max() < 1.0
    before = np.abs(project_rows(noisy, totals).sum(axis=1) - true.sum(axis=1)).sum()
    assert np.abs(out.sum(axis=1) - true.sum(axis=1)).sum() < before
