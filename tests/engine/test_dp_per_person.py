"""The guarantee typed once, and the person as the unit of privacy of every DP mechanism.

- the neighbouring relation and the unit are types (`Neighbouring`, `Unit`), never words parsed for "replace";
- each DP mechanism declares its claim before the run, the plan's cost is derived from it, and the release
  carries exactly that claim (for every DP mechanism of the registry, with and without a person column);
- one shared step keeps at most c rows per person, drawn by the noise source; how many rows it left out goes to
  the custodian record, never to the release note;
- the note and the claim say the unit in words: "ε = 1 per patient (pid), up to 2 rows each; neighbouring tables
  differ in all rows of one patient (added or removed)", or "one row; a person with several rows is protected less".
"""

import json
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from ppdp_gui.engine.claims import DifferentialPrivacy, Neighbouring, Unit
from ppdp_gui.engine.data.domains import Domain
from ppdp_gui.engine.data.schema import ColumnSpec, Dataset, Role
from ppdp_gui.engine.mechanisms import registry
from ppdp_gui.engine.mechanisms.base import PrivacyCost, cost_from_claims, run_to_release
from ppdp_gui.engine.mechanisms.contribution import DPMechanism, bound_contribution
from ppdp_gui.engine.noise import NoiseSource
from ppdp_gui.engine.pipeline.plan import plan
from ppdp_gui.engine.pipeline.published import custodian_record, release_note
from ppdp_gui.engine.pipeline.release import run_release
from ppdp_gui.engine.privacy.ledger_types import ADD_REMOVE, REPLACE, neighbouring_kind

DP_MECHANISMS = [n for n in registry.names() if registry.create(n).privacy_cost().is_dp]
WARDS = ("A", "B", "C", "D")


def ward_table(person: bool = True, n_persons: int = 60, seed: int = 3) -> Dataset:
    """Patients with 1 to 4 encounter rows each: pid (the person), age, ward, outcome (class)."""
    rng = np.random.default_rng(seed)
    per = rng.integers(1, 5, n_persons)
    pid = np.repeat([f"P{i:03d}" for i in range(n_persons)], per)
    n = len(pid)
    frame = pd.DataFrame({"pid": pid, "age": rng.integers(0, 101, n), "ward": rng.choice(WARDS, n),
                          "outcome": rng.choice(["no", "yes"], n)})
    return Dataset(frame, (
        ColumnSpec("pid", "categorical", Role.PERSON if person else Role.IDENTIFIER),
        ColumnSpec("age", "numeric", Role.QUASI_IDENTIFIER, domain=Domain(low=0, high=100, integer=True)),
        ColumnSpec("ward", "categorical", Role.QUASI_IDENTIFIER, domain=Domain(categories=WARDS)),
        ColumnSpec("outcome", "categorical", Role.CLASS, domain=Domain(categories=("no", "yes")))))


def params_for(name: str, c: int) -> dict:
    """Parameters that run `name` on ward_table, with c rows per person (1 for the replace-one mechanisms)."""
    one_to_one = registry.create(name).neighbouring is Neighbouring.REPLACE_ONE
    extra = {"Laplace histogram": {"columns": ("ward", "outcome")}, "DiffGen": {"h": 2},
             "DP-PCA": {"k": 1}, "DP-LDA": {"records": 50}}.get(name, {})
    return {"epsilon": 1.0, "max_rows_per_person": 1 if one_to_one else c, **extra}


# ---- the guarantee typed once -----------------------------------------------------------------------------------
def test_every_dp_mechanism_states_its_relation_and_unit_as_types():
    assert set(DP_MECHANISMS) == {"Laplace histogram", "DiffGen", "DP-PCA", "DP-LDA", "Laplace on records",
                                  "Exponential on records", "Marginal synthesizer"}
    for name in DP_MECHANISMS:
        mech = registry.create(name)
        assert isinstance(mech, DPMechanism), name
        cost = mech.privacy_cost()
        assert isinstance(cost.neighbouring, Neighbouring) and isinstance(cost.unit, Unit), name
        assert mech.param("max_rows_per_person").default == 1, name  # a ParamSpec: the window renders it
    expected = {"DP-PCA": REPLACE, "Laplace on records": REPLACE, "Exponential on records": REPLACE}
    for name in DP_MECHANISMS:
        assert registry.create(name).privacy_cost().neighbouring is expected.get(name, ADD_REMOVE), name


def test_words_are_refused_where_the_relation_is_expected():
    with pytest.raises(TypeError):
        DifferentialPrivacy(Fraction(1), neighbouring="one record replaced by another")
    with pytest.raises(TypeError):
        PrivacyCost(epsilon=Fraction(1), neighbouring="replace")
    with pytest.raises(ValueError):
        Unit("pid", 0)


def test_the_ledger_keeps_storing_its_two_words():
    """Existing ledgers read the same: the enum's values are the stored words, and equal to them."""
    assert Neighbouring.ADD_REMOVE.value == "add/remove" and Neighbouring.REPLACE_ONE.value == "replace"
    assert Neighbouring.REPLACE_ONE == "replace" and {"replace": 1}[Neighbouring.REPLACE_ONE] == 1
    assert str(Neighbouring.ADD_REMOVE) == "add/remove"
    assert neighbouring_kind("replace") is REPLACE and neighbouring_kind(None) is ADD_REMOVE
    assert neighbouring_kind(Neighbouring.REPLACE_ONE) is REPLACE


@pytest.mark.parametrize("person", [True, False], ids=["person column", "no person column"])
@pytest.mark.parametrize("name", DP_MECHANISMS)
def test_declared_claims_are_the_claims_produced_and_the_cost_shown(name, person):
    data = ward_table(person)
    planned = plan(data, name, params_for(name, 2))
    assert not planned.errors, [p.message for p in planned.errors]
    declared = planned.mechanism.declared_claims(data, planned.params)
    assert planned.cost == cost_from_claims(declared, note=planned.mechanism.cost_note)
    published = None
    for item in run_release(planned, seed=5, write_record=False):
        published = item
    assert published.dp == declared[0]
    assert published.cost == planned.cost and published.release.cost == planned.cost
    unit = published.dp.unit
    assert unit == (Unit("pid", planned.params["max_rows_per_person"]) if person else Unit())
    assert planned.cost.unit == unit and planned.cost.epsilon == Fraction(1)  # the ledger is charged ε per person


# ---- the one contribution bound ---------------------------------------------------------------------------------
def test_at_most_c_rows_per_person_drawn_by_the_noise_source():
    data = ward_table()
    per = data.frame["pid"].value_counts()
    bounded = bound_contribution(data, Unit("pid", 2), NoiseSource.for_tests(1))
    kept = bounded.data.frame["pid"].value_counts()
    assert (kept == np.minimum(per, 2).reindex(kept.index)).all() and set(kept.index) == set(per.index)
    assert bounded.left_out == int((per - 2).clip(lower=0).sum()) > 0
    # the kept rows are the source's rows (by position), in a drawn order, not the file's
    assert bounded.data.frame.equals(data.frame.iloc[bounded.kept].reset_index(drop=True))
    assert not np.all(np.diff(bounded.kept) > 0)
    again = bound_contribution(data, Unit("pid", 2), NoiseSource.for_tests(1))
    other = bound_contribution(data, Unit("pid", 2), NoiseSource.for_tests(2))
    assert np.array_equal(again.kept, bounded.kept) and set(other.kept) != set(bounded.kept)
    # every row of a person with more rows than c is kept in some draw: the choice is random, not "the first c"
    seen = set()
    for s in range(40):
        seen |= set(bound_contribution(data, Unit("pid", 1), NoiseSource.for_tests(s)).kept)
    assert seen == set(range(data.n_rows))


def test_without_a_person_column_every_row_is_used_in_order():
    data = ward_table(person=False)
    bounded = bound_contribution(data, Unit(), NoiseSource.for_tests(1))
    assert bounded.data is data and bounded.kept is None and bounded.left_out == 0


def test_rows_without_a_person_count_as_one_person():
    frame = pd.DataFrame({"pid": ["a", None, None, "b", None], "x": [1, 2, 3, 4, 5]})
    data = Dataset(frame, (ColumnSpec("pid", "categorical", Role.PERSON), ColumnSpec("x", "numeric")))
    bounded = bound_contribution(data, Unit("pid", 1), NoiseSource.for_tests(0))
    assert len(bounded.kept) == 3 and bounded.left_out == 2


def test_rows_left_out_are_in_the_custodian_record_never_in_the_note():
    data = ward_table()
    published = None
    for item in run_release(plan(data, "Laplace histogram", params_for("Laplace histogram", 1)), seed=2,
                            write_record=False):
        published = item
    left_out = published.release.record["rows left out by the bound per person"]
    assert left_out == data.n_rows - data.frame["pid"].nunique() > 0
    note = json.dumps(release_note(published), ensure_ascii=False)
    assert "left out by the bound" not in note and "rows used" not in note
    assert f"{left_out}" not in json.dumps(release_note(published)["details"])
    record = json.dumps(custodian_record(published), ensure_ascii=False)
    assert "rows left out by the bound per person" in record
    assert any(f"{left_out:,} of {data.n_rows:,} rows were left out" in w for w in published.warnings)


def test_figures_against_the_records_follow_the_rows_the_bound_kept():
    """DP-PCA's reconstruction error compares each released row with the source row it came from."""
    published = None
    for item in run_release(plan(ward_table(), "DP-PCA", params_for("DP-PCA", 1)), seed=2, write_record=False):
        published = item
    assert published.release.rows_used is not None and "MSE" in published.figures


# ---- the unit in words ------------------------------------------------------------------------------------------
def test_the_note_states_the_unit_and_the_relation_in_plain_words():
    published = None
    for item in run_release(plan(ward_table(), "DiffGen", params_for("DiffGen", 2)), seed=2, write_record=False):
        published = item
    note = release_note(published)
    assert note["guarantee"]["statement"] == (
        "differential privacy: ε = 1 per patient (pid), up to 2 rows each; neighbouring tables differ in all rows "
        "of one patient (added or removed)")
    assert note["guarantee"]["unit"] == {"person column": "pid", "max rows per person": 2,
                                         "words": "one patient (pid), up to 2 rows each"}
    assert note["guarantee"]["neighbouring relation"] == "add/remove"
    assert note["details"]["per person"].startswith("group privacy")
    assert "The unit of privacy: one patient (pid), up to 2 rows each." in note["what this means"]["means"]


def test_without_a_person_column_the_note_says_a_person_is_protected_less():
    published = None
    for item in run_release(plan(ward_table(False), "DP-PCA", params_for("DP-PCA", 1)), seed=2,
                            write_record=False):
        published = item
    note = release_note(published)
    assert note["guarantee"]["unit of privacy"] == "one row; a person with several rows is protected less"
    assert note["guarantee"]["statement"].endswith("a person with several rows is protected less")
    assert "replaced by another; the number of rows is published" in note["guarantee"]["neighbouring"]
    assert any("m·ε" in line for line in note["what this means"]["does not mean"])


def test_the_cost_before_the_run_says_per_patient():
    planned = plan(ward_table(), "Laplace histogram", params_for("Laplace histogram", 3))
    assert planned.cost.describe(with_note=False) == "ε = 1 per patient"
    assert plan(ward_table(False), "Laplace histogram",
                params_for("Laplace histogram", 1)).cost.describe(with_note=False) == "ε = 1"


# ---- bounds a mechanism cannot honour ----------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["DP-PCA", "Laplace on records", "Exponential on records"])
def test_a_one_row_per_record_mechanism_refuses_more_than_one_row_per_person(name):
    """Its number of rows is published: with c = 2 it would count the patients' rows."""
    planned = plan(ward_table(), name, {**params_for(name, 1), "max_rows_per_person": 2})
    assert any("Rows per patient (c) to 1" in p.message for p in planned.errors)


def test_c_without_a_person_column_is_a_warning_not_silence():
    planned = plan(ward_table(False), "Laplace histogram", params_for("Laplace histogram", 3))
    assert not planned.errors and any("has no effect" in w for w in planned.warnings)


def test_run_outside_the_plan_bounds_too():
    """The bound is inside the mechanism's run, not in the publish path: a direct run bounds as well."""
    data = ward_table()
    release = run_to_release(registry.create("Laplace histogram").run(
        data, rng=NoiseSource.for_tests(0), **params_for("Laplace histogram", 1)))
    assert release.record["rows used"] == data.frame["pid"].nunique()


def test_only_the_ledger_reads_the_relation_from_text():
    """`neighbouring_kind` reads the ledger's stored words back; nothing else may turn words into a relation."""
    import ast
    from pathlib import Path
    import ppdp_gui
    root = Path(ppdp_gui.__file__).parent
    users = []
    for path in root.rglob("*.py"):
        if "privacy" in path.relative_to(root).parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if any(isinstance(node, ast.Name) and node.id == "neighbouring_kind" or
               isinstance(node, ast.alias) and node.name == "neighbouring_kind" for node in ast.walk(tree)):
            users.append(str(path.relative_to(root)))
    assert users == []


def test_the_person_column_is_never_counted():
    planned = plan(ward_table(), "Laplace histogram", {**params_for("Laplace histogram", 1), "columns": ("pid",)})
    assert any("never released" in p.message for p in planned.errors)


def test_the_window_says_whom_epsilon_protects_before_and_after():
    from ppdp_gui.engine.explain import plan_sentences, published_sentences
    planned = plan(ward_table(), "DiffGen", params_for("DiffGen", 2))
    assert "ε protects each patient (pid) with up to 2 rows, chosen at random" in " ".join(plan_sentences(planned))
    unmarked = plan(ward_table(False), "DiffGen", params_for("DiffGen", 1))
    assert "mark the patient number as Person in the Data step" in " ".join(plan_sentences(unmarked))
    published = None
    for item in run_release(planned, seed=1, write_record=False):
        published = item
    assert any(line.startswith("ε protects each patient (pid)") for line in published_sentences(published))


@pytest.mark.parametrize("c", [1, 3])
def test_the_large_table_engine_bounds_rows_per_person(tmp_path, c):
    """It keeps at most c rows per person in SQL, drawn as in memory: the same seed, the same DiffGen release."""
    from ppdp_gui.engine.bigdata.large_dataset import open_large
    frame = ward_table().frame.astype(str)
    frame.to_parquet(tmp_path / "wards.parquet", index=False)
    data = open_large(tmp_path / "wards.parquet", hashes=False)
    for spec in ward_table().schema:
        data = data.with_column(spec.name, role=spec.role, domain=spec.domain)
    data = data.with_column("age", kind="numeric") if data.spec("age").kind != "numeric" else data
    large = plan(data.confirm_guesses(), "DiffGen", params_for("DiffGen", c))
    assert not large.errors, [e.message for e in large.errors]
    got = list(run_release(large, seed=5))[-1]
    memory = list(run_release(plan(ward_table(), "DiffGen", params_for("DiffGen", c)), seed=5))[-1]
    pd.testing.assert_frame_equal(got.table, memory.table)
    assert got.release.record["rows used"] == memory.release.record["rows used"]
    assert got.claims[0].unit == memory.claims[0].unit and got.claims[0].unit.max_rows == c
