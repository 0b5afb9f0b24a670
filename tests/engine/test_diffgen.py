"""DiffGen: registry and parameters, exact budget split, checks, golden values from the paper, cut and counts."""

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from ppdp_gui.engine.data.domains import Domain
from ppdp_gui.engine.data.schema import ColumnSpec, Dataset, Role
from ppdp_gui.engine.errors import DataError, ParameterError
from ppdp_gui.engine.mechanisms import registry
from ppdp_gui.engine.mechanisms.base import run_to_release
from ppdp_gui.engine.mechanisms.diffgen import DiffGen, expand_counts
from ppdp_gui.engine.mechanisms.diffgen.algorithm import epsilon_prime, leaf_cells, specialise
from ppdp_gui.engine.mechanisms.diffgen.partition import CategoricalAttr, NumericAttr
from ppdp_gui.engine.mechanisms.diffgen.scores import info_gain, max_score, sensitivity
from ppdp_gui.engine.noise import NoiseSource
from ppdp_gui.engine.taxonomy import Taxonomy
from ppdp_gui.engine.verify.noise import with_factor

JOB = Taxonomy.from_paths("job", [["Engineer", "Professional", "Any_Job"], ["Lawyer", "Professional", "Any_Job"],
                                  ["Dancer", "Artist", "Any_Job"], ["Writer", "Artist", "Any_Job"]])


def paper_table() -> Dataset:
    """Table 1(a) of the paper with its taxonomy of Job (Figure 1) and Age bounds [18, 65]."""
    frame = pd.DataFrame({
        "job": ["Engineer", "Lawyer", "Engineer", "Lawyer", "Dancer", "Writer", "Writer", "Dancer"],
        "age": [34, 50, 38, 33, 20, 37, 32, 25],
        "class": ["Y", "N", "N", "Y", "Y", "N", "Y", "N"]})
    age_tax = Taxonomy.from_paths("age", [[str(v), "[18, 65]"] for v in sorted(set(frame["age"]))])
    return Dataset(frame, (ColumnSpec("job", "categorical", Role.QUASI_IDENTIFIER, JOB),
                           ColumnSpec("age", "numeric", Role.QUASI_IDENTIFIER, age_tax),
                           ColumnSpec("class", "categorical", Role.CLASS, domain=Domain(categories=("N", "Y")))))


def synthetic(n=400, seed=0) -> Dataset:
    """Two categorical QIs, one numeric QI, an identifier and an insensitive column; class depends on x and a."""
    rng = np.random.default_rng(seed)
    a = rng.choice(["a1", "a2", "a3", "a4"], n)
    b = rng.choice(["b1", "b2", "b3"], n)
    x = rng.integers(0, 100, n)
    y = np.where((x > 60) | (a == "a1"), "yes", "no")
    frame = pd.DataFrame({"id": np.arange(n).astype(str), "a": a, "b": b, "x": x, "note": "z", "y": y})
    tax_a = Taxonomy.from_paths("a", [["a1", "A12", "*"], ["a2", "A12", "*"], ["a3", "A34", "*"],
                                      ["a4", "A34", "*"]])
    tax_b = Taxonomy.flat("b", ["b1", "b2", "b3"])
    tax_x = Taxonomy.from_paths("x", [[str(v), "[0, 100]"] for v in sorted(set(x))])
    return Dataset(frame, (ColumnSpec("id", "categorical", Role.IDENTIFIER),
                           ColumnSpec("a", "categorical", Role.QUASI_IDENTIFIER, tax_a),
                           ColumnSpec("b", "categorical", Role.QUASI_IDENTIFIER, tax_b),
                           ColumnSpec("x", "numeric", Role.QUASI_IDENTIFIER, tax_x),
                           ColumnSpec("note", "categorical", Role.INSENSITIVE),
                           ColumnSpec("y", "categorical", Role.CLASS, domain=Domain(categories=("no", "yes")))))


NOISE_FREE = 1e-9  # every noise scale × this: the counts are the exact counts of the generalised data


def run(mech, data, seed=0, noise_factor=1.0, **params):
    """One release; `noise_factor` wraps the noise source (engine.verify.ScaledNoise) to check the bookkeeping."""
    rng = with_factor(NoiseSource.for_tests(seed), noise_factor)
    return run_to_release(mech.run(data, rng=rng, **params))


# ---- protocol ---------------------------------------------------------------------------------------------------
def test_registered_with_its_parameters():
    cls = registry.get("DiffGen")
    assert cls is DiffGen and cls.guarantee == "ε-DP"
    eps, h, utility, cls_col = (cls.param(n) for n in ("epsilon", "h", "utility", "class_column"))
    assert (eps.low, eps.high, eps.default, eps.log_scale) == (0.01, 10.0, 1.0, True)
    assert (h.low, h.high, h.default, h.kind) == (1, 30, 10, "int")
    assert utility.choices == ("Max", "InfoGain") and utility.default == "Max"
    assert cls_col.kind == "column" and cls_col.roles == (Role.CLASS,) and cls_col.column_kind == "categorical"
    with pytest.raises(ParameterError):
        DiffGen.resolve_params(h=0)


def test_privacy_cost_is_exact_and_split_as_the_paper():
    assert DiffGen().privacy_cost(epsilon=0.1).epsilon == Fraction(1, 10)
    split = DiffGen.budget_split(0.25, n_numeric=6, h=10)
    assert split["epsilon prime"] == Fraction(1, 4) / (2 * (6 + 20))
    assert split["epsilon counts"] == Fraction(1, 8)
    assert split["calls"] * split["epsilon prime"] + split["epsilon counts"] == Fraction(1, 4)
    assert epsilon_prime(1.0, 0, 0) == float("inf")  # nothing to choose: no call, no budget


def test_sensitivities():
    assert sensitivity("Max", 2) == 1.0
    assert sensitivity("InfoGain", 2) == 1.0
    assert sensitivity("InfoGain", 4) == 2.0


# ---- golden values from the paper's running example (Table 1, Figure 2) -----------------------------------------
def test_scores_of_the_paper_example():
    job_split = np.array([[2, 2], [2, 2]])  # Professional 2Y2N, Artist 2Y2N
    age_split = np.array([[4, 3], [0, 1]])  # [18, 40): 4Y3N, [40, 65): 0Y1N
    assert max_score(job_split) == 4 and max_score(age_split) == 5
    assert info_gain(job_split) == pytest.approx(0.0)
    h = lambda p: -(p * np.log2(p) + (1 - p) * np.log2(1 - p))  # noqa: E731
    assert info_gain(age_split) == pytest.approx(1 - 7 / 8 * h(4 / 7))


def test_figure_2_leaf_partitions():
    data = paper_table()
    frame, classes = data.frame, ["N", "Y"]
    y = pd.Categorical(frame["class"], categories=classes).codes.astype(np.int64)
    job = CategoricalAttr.build("job", JOB, frame["job"], y, 2)
    age = NumericAttr.build("age", frame["age"].to_numpy(), 18, 65, y, 2, integer=True)
    job.specialise(0)
    age.specialise(40 - 18)  # grid boundary g = 22 of the integer grid from 18: the value 40
    assert job.labels() == ["Professional", "Artist"] and age.labels() == ["[18, 40)", "[40, 65]"]
    cells, shape = leaf_cells([job, age])
    counts = np.bincount(cells * 2 + y, minlength=int(np.prod(shape)) * 2).reshape(2, 2, 2)
    # (job, age, class N/Y): Professional [18,40) 2Y1N, [40,65) 0Y1N; Artist [18,40) 2Y2N, [40,65) 0Y0N
    assert counts.tolist() == [[[1, 2], [1, 0]], [[2, 2], [0, 0]]]


# ---- checks ------------------------------------------------------------------------------------------------------
def test_categorical_qi_without_taxonomy_is_named():
    data = synthetic().with_column("b", taxonomy=None).with_column("a", taxonomy=None)
    problems = DiffGen().validate(data)
    assert {p.column for p in problems if p.level == "error"} == {"a", "b"}
    assert all("taxonomy" in p.message for p in problems)


def test_bounds_come_from_a_domain_or_taxonomy_never_from_the_data():
    data = synthetic()
    assert not [p for p in DiffGen().validate(data) if "bounds" in p.message]
    refused = DiffGen().validate(data.with_column("x", taxonomy=None))
    assert any(p.level == "error" and "no public bounds" in p.message for p in refused)
    assert {(n.column, n.what) for n in DiffGen().domain_needs(data, {})} == {
        ("y", "categories"), ("a", "categories"), ("b", "categories"), ("x", "bounds")}
    stated = data.with_column("x", taxonomy=None, domain=Domain(low=0, high=100, integer=True))
    release = run(DiffGen(), stated, epsilon=1, h=2)
    assert release.note["bounds source"] == {"x": "domain"} and release.note["bounds"] == {"x": [0.0, 100.0]}


def test_missing_class_and_values_outside_taxonomy_are_errors():
    data = synthetic().with_roles({"y": Role.INSENSITIVE})
    assert any("class column" in p.message for p in DiffGen().validate(data))
    bad = synthetic().with_column("b", taxonomy=Taxonomy.flat("b", ["b1", "b2"]))
    assert any("not in its taxonomy" in p.message for p in DiffGen().validate(bad))


# ---- the release ---------------------------------------------------------------------------------------------
def test_cut_is_valid_and_counts_are_the_generalised_counts_without_noise():
    data = synthetic()
    release = run(DiffGen(), data, noise_factor=NOISE_FREE, epsilon=1, h=5)
    meta = release.note
    assert meta["quasi_identifiers"] == ["a", "b", "x"]  # identifier, insensitive column and class left out
    assert list(release.table.columns) == ["a", "b", "x", "y", "count"]
    for col in ("a", "b"):  # each categorical cut covers every leaf exactly once
        tax = data.spec(col).taxonomy
        nodes = [n for n in range(len(tax)) if tax.label(n) in meta["cut"][col]["cut"]]
        assert sorted(tax.leaf_to_cut(nodes)) == sorted(tax.leaf_values())
    splits = meta["cut"]["x"]["splits"]
    assert splits == sorted(splits) and all(0 < s < 100 for s in splits)
    assert len(meta["cut"]["x"]["cut"]) == len(splits) + 1
    assert meta["specialisations"] == 5 and len(meta["history"]) == 5
    # exact counts equal a plain group-by of the training data generalised with apply_to
    general = release.apply_to(data.frame)
    keys = ["a", "b", "x", "y"]
    expected = general.astype(str).groupby(keys).size().to_dict()
    got = release.table.astype({k: str for k in keys}).set_index(keys)["count"].to_dict()
    assert sum(got.values()) == data.n_rows
    assert got == expected


def test_apply_to_maps_training_records_to_released_leaves():
    data = synthetic()
    release = run(DiffGen(), data, noise_factor=NOISE_FREE, epsilon=2, h=6)
    general = release.apply_to(data.frame)
    assert general.notna().all().all()
    keys = set(map(tuple, release.table[["a", "b", "x", "y"]].astype(str).to_numpy()))
    assert all(tuple(r) in keys for r in general[["a", "b", "x", "y"]].astype(str).to_numpy())
    with pytest.raises(DataError):
        release.apply_to(data.frame.drop(columns=["x"]))


def test_noisy_counts_sum_close_to_n_and_are_non_negative():
    data = synthetic(n=2000)
    release = run(DiffGen(), data, epsilon=8, h=3)
    counts = release.table["count"]
    assert (counts > 0).all()
    groups = release.note["groups"]
    # each group's noise has scale 2/ε = 0.25: |sum - n| stays within a few per group
    assert abs(int(counts.sum()) - data.n_rows) <= groups


def test_output_records_expands_the_groups():
    release = run(DiffGen(), synthetic(), epsilon=1, h=3, output="records")
    groups = release.extra_tables["noisy counts"]
    assert len(release.table) == int(groups["count"].sum())
    assert list(release.table.columns) == ["a", "b", "x", "y"]
    assert len(expand_counts(groups.head(3), "count")) == int(groups["count"].head(3).sum())


def test_runs_out_of_candidates_on_flat_categorical_taxonomies():
    data = synthetic().with_roles({"x": Role.INSENSITIVE})  # only a (3 inner nodes) and b (1) can be split
    release = run(DiffGen(), data, epsilon=1, h=30)
    meta = release.note
    assert meta["quasi_identifiers"] == ["a", "b"]
    assert meta["specialisations"] == 4 and meta["stopped early"]
    assert meta["cut"]["a"]["cut"] == ["a1", "a2", "a3", "a4"]
    assert meta["epsilon prime"] == str(Fraction(1, 2 * 60))  # ε' fixed before the run: 2h calls planned


def test_h_zero_specialises_nothing():
    data = synthetic()
    y = (data.frame["y"] == "yes").to_numpy().astype(np.int64)
    attrs = [CategoricalAttr.build("a", data.spec("a").taxonomy, data.frame["a"], y, 2)]
    gen = specialise(attrs, 2, epsilon=1.0, h=0, utility="Max", rng=NoiseSource.for_tests(0))
    with pytest.raises(StopIteration) as stop:
        next(gen)
    assert stop.value.value.specialisations == [] and attrs[0].cut == [0]


def test_without_marked_qis_every_other_non_identifier_column_is_used():
    data = synthetic().with_roles({"a": Role.INSENSITIVE, "b": Role.INSENSITIVE, "x": Role.INSENSITIVE})
    data = data.with_column("note", taxonomy=Taxonomy.flat("note", ["z"]))
    release = run(DiffGen(), data, epsilon=1, h=2)
    assert release.note["quasi_identifiers"] == ["a", "b", "x", "note"]


def test_same_seed_same_release_and_utilities_differ():
    data = synthetic()
    r1 = run(DiffGen(), data, seed=3, epsilon=1, h=4)
    r2 = run(DiffGen(), data, seed=3, epsilon=1, h=4)
    pd.testing.assert_frame_equal(r1.table, r2.table)
    r3 = run(DiffGen(), data, seed=3, epsilon=1, h=4, utility="InfoGain")
    assert r3.note["sensitivity"] == 1.0 and r3.note["utility"] == "InfoGain"


def test_large_epsilon_picks_the_informative_split():
    """x > 60 decides the class (with a1): at ε = 10 the numeric split lands near 60 most of the time."""
    data = synthetic(n=3000).with_roles({"a": Role.INSENSITIVE, "b": Role.INSENSITIVE})
    splits = [run(DiffGen(), data, seed=s, epsilon=10, h=1).note["cut"]["x"]["splits"][0] for s in range(20)]
    assert np.median(splits) == pytest.approx(60.5, abs=1.0)


def test_measures_give_ca_and_reference_ba_la():
    data = synthetic(n=900)
    train, test = data.with_frame(data.frame.iloc[:600]), data.with_frame(data.frame.iloc[600:])
    mech = DiffGen()
    release = run(mech, train, epsilon=5, h=4)
    ca = mech.measures(release, train, test)["CA %"]
    ref = mech.reference_measures(train, test)
    assert set(ref) == {"BA %", "LA %"}
    assert ref["LA %"] <= ref["BA %"] and 0 <= ca <= 100


def test_sweep_over_epsilon_draws_ca_with_ba_and_la():
    from ppdp_gui.engine.pipeline.sweep import SweepResult, run_sweep

    items = list(run_sweep("DiffGen", synthetic(n=600), {"h": 3}, {"epsilon": [0.5, 5.0]}, repeats=2, seed=1))
    result = items[-1]
    assert isinstance(result, SweepResult)
    assert set(result.reference) == {"BA %", "LA %"}
    assert "CA %" in result.measure_names and len(result.rows) == 4
    assert result.rows["CA %"].between(0, 100).all()
