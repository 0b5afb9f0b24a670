"""Signal before noise (issue 26, finding 4): before a DP run, the share of a table of counts that will be noise,
from public quantities only (taxonomy sizes, bounds, classes, h, ε) through the Mechanism contract.

On the diabetes extract DiffGen released 152,477 count rows standing for 461,310 records from 101,766 rows; the
estimate must flag that before ε is spent, and must not read the table's rows (a part of the table gives the same
estimate)."""

from __future__ import annotations

import re
import pytest

from diabetes_shaped import diabetes_shaped
from ppdp_gui.engine.data.domains import Domain
from ppdp_gui.engine.data.schema import ColumnSpec, Dataset, Role, SourceInfo
from ppdp_gui.engine.mechanisms import registry
from ppdp_gui.engine.mechanisms.base import Mechanism
from ppdp_gui.engine.mechanisms.noise_share import NoiseEstimate, most_cells, positive_noise_mean
from ppdp_gui.engine.taxonomy.icd import icd_taxonomy
from ppdp_gui.engine.taxonomy.tree import Taxonomy

PATIENTS = 101_766  # the extract's rows, as the custodian states the size they expect


FLAT = ("race", "gender", "age", "admission_type_id", "payer_code", "medical_specialty", "insulin")
ICD = ("diag_1", "diag_2", "diag_3")


def diabetes_dataset(n: int = 3000, qis=FLAT + ICD) -> Dataset:
    """The diabetes-shaped table with its demographics, admission, payer, specialty, diagnoses and insulin as
    quasi-identifiers (what protecting every column someone could know gives), trees over public-looking lists."""
    full = diabetes_shaped(3000)  # the trees over every value of the full table (public code lists in real use)
    frame = full[list(FLAT + ICD) + ["time_in_hospital", "readmitted"]].astype(
        {c: str for c in FLAT + ICD}).iloc[:n]
    role = {c: (Role.QUASI_IDENTIFIER if c in qis else Role.INSENSITIVE) for c in FLAT + ICD + ("time_in_hospital",)}
    specs = [ColumnSpec(c, "categorical", role[c], Taxonomy.flat(c, full[c].astype(str).unique())) for c in FLAT]
    specs += [ColumnSpec(c, "categorical", role[c], icd_taxonomy(c, full[c].unique())) for c in ICD]
    specs.append(ColumnSpec("time_in_hospital", "numeric", role["time_in_hospital"],
                            domain=Domain(low=1, high=14, integer=True)))
    specs.append(ColumnSpec("readmitted", "categorical", Role.CLASS, domain=Domain(categories=("NO", ">30", "<30"))))
    return Dataset(frame.reset_index(drop=True), tuple(specs), SourceInfo(n_rows_read=len(frame)))


def test_diffgen_on_a_diabetes_shaped_table_flags_a_table_that_is_mostly_noise():
    mech = registry.create("DiffGen")
    est = mech.noise_estimate(diabetes_dataset(), {"epsilon": 1.0, "h": 10})
    assert isinstance(est, NoiseEstimate) and not est.exact
    assert est.cells > 152_477 and est.at_most >= est.cells  # many cells, little signal
    assert est.share(PATIENTS) > 0.5 and est.warns(PATIENTS)
    warning = est.warning(PATIENTS)
    assert warning and "noise" in warning and "smaller h" in warning and "coarser taxonomies" in warning
    text = " ".join(est.sentences(PATIENTS))
    assert "up to" in text and "101,766" in text and "diag_1" in text
    # the same estimate from a tenth of the table: nothing of the rows goes into it
    assert mech.noise_estimate(diabetes_dataset(300), {"epsilon": 1.0, "h": 10}) == est


def test_the_papers_setting_on_adult_is_not_flagged():
    """DiffGen as the paper runs it (Adult, ε = 1, h = 10: about 20 % of the records come from noise in a run) is
    not called mostly noise: the warning rests on the likely number of cells, not on the most."""
    from ppdp_gui.cli import demo_recipe
    from ppdp_gui.engine.pipeline.load import load
    recipe = demo_recipe()
    data = load(recipe).dataset
    est = registry.create("DiffGen").noise_estimate(data, dict(recipe.params))
    assert est.at_most > 10 * est.cells and 0.05 < est.share(data.n_rows) < 0.5
    assert not est.warns(data.n_rows)


def test_fewer_specialisations_and_columns_give_a_table_that_is_mostly_signal():
    mech = registry.create("DiffGen")
    ds = diabetes_dataset()
    coarse = diabetes_dataset(qis=("race", "gender", "age", "diag_1"))
    est = mech.noise_estimate(coarse, {"epsilon": 1.0, "h": 4})
    assert est is not None and not est.warns(PATIENTS) and est.warning(PATIENTS) is None
    assert est.cells < mech.noise_estimate(ds, {"epsilon": 1.0, "h": 10}).cells


def test_laplace_histogram_knows_its_cells_exactly():
    ds = diabetes_dataset()
    mech = registry.create("Laplace histogram")
    est = mech.noise_estimate(ds, {"epsilon": 0.5, "columns": ("race", "age", "diag_1")})
    leaves = {c: len(ds.spec(c).taxonomy.leaves()) for c in ("race", "age", "diag_1")}
    assert est.exact and est.cells == leaves["race"] * leaves["age"] * leaves["diag_1"]
    assert est.scale == pytest.approx(2.0)
    assert est.warns(500) and not est.warns(10 * est.cells)


def test_a_mechanism_without_counts_has_no_estimate():
    assert Mechanism.noise_estimate(registry.create("Mondrian"), diabetes_dataset(), {}) is None


def test_most_cells_shares_the_refinements_for_the_largest_product():
    # two columns, each refinement adds one value: 4 refinements -> 3 × 3
    assert most_cells([[1, 2, 3, 4, 5], [1, 2, 3, 4, 5]], 4) == (9, [3, 3])
    # a wide family first: one refinement of the second column gives 10 values
    assert most_cells([[1, 2, 3], [1, 10, 12]], 2)[0] == 20


def test_the_figures_after_the_run_show_the_same_estimate_for_the_custodian_only():
    import json

    from ppdp_gui.engine.explain import noise_estimate_of
    from ppdp_gui.engine.noise import NoiseSource
    from ppdp_gui.engine.persistence.jsonable import jsonable
    from ppdp_gui.engine.pipeline import plan, run_release
    ds = diabetes_dataset(600)
    planned = plan(ds, "DiffGen", {"epsilon": 1.0, "h": 3}, allow_data_domains=True)
    assert planned.ok, planned.errors
    published = list(run_release(planned, rng=NoiseSource.for_tests(3), seed=3))[-1]
    est = noise_estimate_of(published, ds)
    assert est is not None and est == registry.create("DiffGen").noise_estimate(planned.dataset, planned.params)
    assert noise_estimate_of(published, diabetes_dataset(500)) is None  # another table: no estimate shown
    # the release note holds nothing of it
    note = json.dumps(jsonable(dict(published.release.note)))
    assert "up to" not in note and "noise: ≈" not in note


def test_the_share_of_noise_is_said_as_a_range_when_the_cells_are_not_known():
    """The nurse's walk (an emergency-department extract, DiffGen ε = 1, h = 10): the Run step said "about 0 %
    noise: at least 1 records added", and the run came out 39 % noise. The likely share alone reads as 'no noise';
    the step now also says how much it can be if the run reaches the most cells, and counts in plain words. (With
    every cell counted near-empty — records cluster — the likely share is no longer about 0 % either.)"""
    est = NoiseEstimate(678, positive_noise_mean(2.0), 2.0, (("age", 11),), False, ("a smaller h",), 30_960)
    likely, most = est.share_range(4225)
    assert 0.1 < likely < 0.39 and most > 0.8
    text = " ".join(est.sentences(4225))
    assert "up to 88%" in text and "30,960 cells" in text
    assert not re.search(r"(?<![\d,])1 records", text) and "if every cell were empty" not in text
    exact = NoiseEstimate(678, positive_noise_mean(2.0), 2.0, exact=True)
    assert exact.share_range(4225)[1] is None and "up to" not in " ".join(exact.sentences(4225))
