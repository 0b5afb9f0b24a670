"""The pre-run check for identifying columns (issue 18): a record-level release that would publish a patient number
unchanged stops with an error naming it, unless the custodian confirmed the column; DP count tables publish only
their own columns, so nothing else is checked for them."""

import numpy as np
import pandas as pd
import pytest
from clinical_helpers import diabetes_like

from ppdp_gui.engine.data import Role, dataset_from_frame
from ppdp_gui.engine.noise import NoiseSource
from ppdp_gui.engine.pipeline import plan, run_release
from ppdp_gui.engine.pipeline.plan import identifying_problems, uniqueness
from ppdp_gui.engine.pipeline.published import custodian_record

OLD_GUESS = {"patient_nbr": Role.INSENSITIVE, "encounter_id": Role.INSENSITIVE}  # what the issue found


def clinical(roles=None, n=2000):
    data = dataset_from_frame(diabetes_like(n))
    return data.with_roles(roles or {})


def test_default_guesses_make_a_safe_mondrian_plan():
    data = clinical()
    assert data.spec("patient_nbr").role == Role.PERSON and data.spec("encounter_id").role == Role.IDENTIFIER
    planned = plan(data, "Mondrian", {"k": 10})
    assert planned.ok, planned.errors


@pytest.mark.parametrize("mechanism, params", [("Mondrian", {"k": 10}), ("TDS", {"k": 10}),
                                               ("Fragmentation", {"k": 10})])
def test_a_published_patient_number_is_an_error_naming_it(mechanism, params):
    data = clinical(OLD_GUESS)
    planned = plan(data, mechanism, params)
    errors = {p.column: p.message for p in planned.errors if p.column in OLD_GUESS}
    assert set(errors) == {"patient_nbr", "encounter_id"}
    assert errors["encounter_id"].startswith("encounter_id has a different value in 100 % of rows: publishing it "
                                             "would identify patients. Mark it as an identifier")
    assert "patient_nbr has a value no other row has" in errors["patient_nbr"]
    assert not planned.ok


def test_quasi_identifiers_and_identifiers_are_not_published_as_is():
    data = clinical({"patient_nbr": Role.QUASI_IDENTIFIER})
    assert "patient_nbr" not in plan(data, "Mondrian", {"k": 10}).data_domain_columns
    assert not [p for p in plan(data, "Mondrian", {"k": 10}).errors if p.column == "patient_nbr"]


def test_dp_count_tables_publish_only_their_columns():
    data = clinical(OLD_GUESS)
    planned = plan(data, "Laplace histogram", {"columns": "gender,readmitted", "epsilon": 1})
    assert not [p for p in planned.problems if p.column in OLD_GUESS]


def test_confirmed_column_runs_and_the_record_keeps_the_confirmation():
    data = clinical({"encounter_id": Role.IDENTIFIER, "patient_nbr": Role.INSENSITIVE})
    planned = plan(data, "Mondrian", {"k": 10}, publish_as_is=("patient_nbr",))
    assert planned.ok and planned.publish_as_is == ("patient_nbr",)
    assert any("patient_nbr" in w and "you confirmed" in w for w in planned.warnings)
    published = list(run_release(planned, rng=NoiseSource.for_tests(3), seed=3))[-1]
    assert "patient_nbr" in published.table.columns
    record = custodian_record(published)
    assert any("you confirmed it may be published" in w for w in record["warnings"])


def test_uniqueness_figures_by_hand():
    values = pd.Series(["a", "a", "b", "c", "d", None, None, "e", "f", "g"])
    distinct, unique = uniqueness(values)
    assert distinct == pytest.approx(8 / 10)  # a, b, c, d, None, e, f, g
    assert unique == pytest.approx(6 / 10)  # b, c, d, e, f, g occur once
    big = pd.Series(np.arange(100_000) % 7)  # far from unique: decided on the sample
    assert uniqueness(big)[1] == 0.0
    unique_ids = pd.Series(np.arange(100_000))
    assert uniqueness(unique_ids) == (1.0, 1.0)


def test_thresholds_and_small_tables():
    n = 200
    frame = pd.DataFrame({"half": np.r_[np.arange(1, n // 2 + 1), np.zeros(n // 2)],  # 50 % of rows unique
                          "under": np.r_[np.arange(1, n // 2 - 1), np.zeros(n // 2 + 2)],  # 49 %
                          "x": np.zeros(n)})
    data = dataset_from_frame(frame)
    cols = {p.column for p in identifying_problems(data, ["half", "under", "x"])}
    assert cols == {"half"}
    small = dataset_from_frame(pd.DataFrame({"id_ish": np.arange(40)}))
    assert identifying_problems(small, ["id_ish"]) == []
