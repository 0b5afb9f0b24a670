"""Protect what links (issue 26, finding 5): diagnosis codes, specialty, payer and other many-valued columns an
insurer or a neighbour can know are quasi-identifying candidates with a reason; the Run step lists those a release
would publish unchanged; the risk shows each column's part (rows unique on it alone, and the uniqueness it adds)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from diabetes_shaped import diabetes_shaped
from ppdp_gui.engine.data.linkable import linkable_column, linkable_columns, unprotected
from ppdp_gui.engine.data.reader import dataset_from_frame
from ppdp_gui.engine.data.schema import Role
from ppdp_gui.engine.mechanisms import registry
from ppdp_gui.engine.metrics.risk_models import attribute_risks, unique_share


@pytest.fixture(scope="module")
def diabetes():
    frame = diabetes_shaped().replace("?", np.nan)
    roles = {"encounter_id": Role.IDENTIFIER, "patient_nbr": Role.IDENTIFIER, "race": Role.QUASI_IDENTIFIER,
             "gender": Role.QUASI_IDENTIFIER, "age": Role.QUASI_IDENTIFIER, "readmitted": Role.CLASS}
    roles.update({c: Role.INSENSITIVE for c in frame.columns if c not in roles})
    return dataset_from_frame(frame, roles=roles)


def test_diagnosis_specialty_and_payer_are_candidates_with_a_reason(diabetes):
    found = {f.column: f for f in linkable_columns(diabetes)}
    assert {"diag_1", "diag_2", "diag_3", "medical_specialty", "payer_code"} <= set(found)
    assert found["diag_2"].what == "diagnosis codes" and "insurer" in found["diag_2"].reason
    assert f"{found['diag_2'].distinct:,} different values" in found["diag_2"].reason
    assert "Make it a quasi-identifier" in found["payer_code"].reason and found["payer_code"].what == "the payer"
    assert found["medical_specialty"].what == "the medical specialty or ward"
    # measurements nobody outside the hospital knows, identifiers and protected columns are not candidates
    for column in ("num_lab_procedures", "insulin", "patient_nbr", "race", "readmitted"):
        assert column not in found


def test_icd_codes_under_an_unknown_name_are_read_from_their_look(diabetes):
    data = diabetes.with_column("diag_3", role=Role.INSENSITIVE)
    frame = data.frame.rename(columns={"diag_3": "secondary"})
    renamed = dataset_from_frame(frame, roles={c.name if c.name != "diag_3" else "secondary": c.role
                                               for c in data.schema})
    f = linkable_column(renamed, "secondary")
    assert f is not None and f.what == "diagnosis codes"


def test_a_many_valued_categorical_column_is_a_candidate():
    frame = pd.DataFrame({"ward_bed": [f"B{i % 40}" for i in range(400)], "x": ["a", "b"] * 200})
    data = dataset_from_frame(frame, roles={"ward_bed": Role.INSENSITIVE, "x": Role.INSENSITIVE})
    assert [f.column for f in linkable_columns(data)] == ["ward_bed"]


def test_the_run_step_lists_what_a_record_release_would_publish_unchanged(diabetes):
    mondrian = registry.create("Mondrian")
    published = mondrian.published_columns(diabetes, mondrian.resolve_params())
    listed = [f.column for f in unprotected(diabetes, published)]
    assert {"diag_2", "diag_3", "payer_code", "medical_specialty"} <= set(listed)
    diffgen = registry.create("DiffGen")  # counts over the quasi-identifiers only: nothing published unchanged
    assert unprotected(diabetes, diffgen.published_columns(diabetes, {})) == []
    made_qi = diabetes.with_column("diag_2", role=Role.QUASI_IDENTIFIER)
    assert "diag_2" not in [f.column for f in unprotected(made_qi, published)]


def test_each_columns_part_in_the_risk(diabetes):
    frame = diabetes.frame
    qis = ["race", "gender", "age"]
    risks = {a.column: a for a in attribute_risks(frame, qis, ["diag_2"])}
    assert set(risks) == {"race", "gender", "age", "diag_2"}
    diag = risks["diag_2"]
    assert not diag.in_set and diag.unique_without == pytest.approx(unique_share(frame, qis))
    assert diag.unique_with == pytest.approx(unique_share(frame, qis + ["diag_2"]))
    assert diag.drop > 0.3  # hundreds of codes: adding it makes many rows unique
    assert diag.unique_alone == pytest.approx(float((frame["diag_2"].map(frame["diag_2"].value_counts()) == 1)
                                                    .mean()))
    age = risks["age"]
    assert age.in_set and age.unique_without == pytest.approx(unique_share(frame, ["race", "gender"]))
    assert list(risks)[0] == "diag_2"  # ordered by the uniqueness each adds


def test_compare_risk_shows_each_columns_part_for_the_input_and_the_release(diabetes):
    from ppdp_gui.engine.explain import compare_risk
    from ppdp_gui.engine.noise import NoiseSource
    from ppdp_gui.engine.pipeline import plan, run_release
    data = diabetes.with_column("encounter_id", role=Role.IDENTIFIER)
    p = plan(data, registry.create("Mondrian"), {"k": 5}, publish_as_is=("num_lab_procedures",
                                                                             "num_medications"))
    published = list(run_release(p, rng=NoiseSource.for_tests(5), seed=5))[-1]
    comparison = compare_risk(published, data.frame)
    before = {a.column: a for a in comparison.attributes_input}
    after = {a.column: a for a in comparison.attributes_release}
    assert {"race", "gender", "age", "diag_2", "payer_code"} <= set(before)
    assert before["diag_2"].drop > 0.3 and not before["diag_2"].in_set
    assert "diag_2" in after and after["age"].in_set  # the release publishes diag_2 unchanged: still linkable


def test_the_plan_carries_the_linkable_columns_with_their_reasons(diabetes):
    from ppdp_gui.engine.pipeline import plan
    p = plan(diabetes, "Mondrian", {"k": 10})
    assert {"diag_2", "payer_code"} <= {f.column for f in p.linkable}
    assert all(f.reason for f in p.linkable) and not [e for e in p.errors if e.column == "diag_2"]
    assert plan(diabetes, "DiffGen", {}, allow_data_domains=True).linkable == ()


def test_a_count_of_diagnoses_is_not_diagnosis_codes():
    """The clinical screenshot's Run step said "number_diagnoses holds diagnosis codes, which an insurer … can
    know; it has 16 different values": it counts a stay's diagnoses (1 to 16)."""
    import numpy as np
    import pandas as pd

    from ppdp_gui.engine.data import dataset_from_frame
    from ppdp_gui.engine.data.linkable import linkable_column
    r = np.random.default_rng(2)
    frame = pd.DataFrame({"number_diagnoses": r.integers(1, 17, 300), "num_procedures": r.integers(0, 7, 300),
                          "diag_1": r.choice(["250.83", "428", "414", "V45"], 300), "age": r.integers(0, 90, 300)})
    data = dataset_from_frame(frame)
    assert linkable_column(data, "number_diagnoses") is None and linkable_column(data, "num_procedures") is None
    found = linkable_column(data, "diag_1")
    assert found is not None and found.what == "diagnosis codes"
