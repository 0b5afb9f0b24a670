"""Risk before and after a release (explain.compare_risk): the figures of the input and of a record-level release
by hand, nothing measured on a DP release (and why, in words), the Safe Harbor screen of both."""

import numpy as np
from clinical_helpers import diabetes_like

from ppdp_gui.engine import explain
from ppdp_gui.engine.data import Role, dataset_from_frame
from ppdp_gui.engine.noise import NoiseSource
from ppdp_gui.engine.pipeline import plan, run_release

QIS = ["race", "gender", "age"]  # in the table's order


def released(data, mechanism, params):
    planned = plan(data, mechanism, params, allow_data_domains=True)
    assert planned.ok, planned.errors
    return list(run_release(planned, rng=NoiseSource.for_tests(5), seed=5))[-1]


def clinical():
    frame = diabetes_like(1500)
    roles = {c: (Role.QUASI_IDENTIFIER if c in QIS else Role.INSENSITIVE) for c in frame.columns
             if c not in ("patient_nbr", "encounter_id", "readmitted")}
    roles["patient_nbr"] = Role.IDENTIFIER  # one row, one unit: the hand counts below count rows (persons:
    return frame, dataset_from_frame(frame).with_roles(roles)  # tests/engine/test_person_kanon.py)


def test_mondrian_release_risk_is_lower_and_matches_a_hand_count():
    frame, data = clinical()
    published = released(data, "Mondrian", {"k": 10})
    out = explain.compare_risk(published, data.frame, sampling_fraction=0.05)
    assert out.qis == tuple(QIS) and out.release_qis == tuple(QIS) and out.not_measured == ""
    # input by hand: 4 × 2 × 10 age bands = 80 combinations of 1,500 rows
    sizes = frame.groupby(QIS).size().to_numpy()
    assert out.input.classes == len(sizes)
    assert np.isclose(out.input.prosecutor.highest_risk, 1 / sizes.min())
    assert np.isclose(out.input.prosecutor.success_rate, len(sizes) / 1500)
    rel = published.table.groupby(QIS).size().to_numpy()
    assert rel.min() >= 10 and np.isclose(out.release.prosecutor.highest_risk, 1 / rel.min())
    assert out.release.prosecutor.highest_risk <= 0.1 and out.release.prosecutor.records_at_risk == 0
    assert out.release.population is not None and out.release.population.sampling_fraction == 0.05
    assert out.release.histogram["records"].sum() == len(published.table)
    # the patient and encounter numbers are in the input, not in the release
    assert {f.column for f in out.harbor_input} >= {"encounter_id"}
    assert not {f.column for f in out.harbor_release} & {"encounter_id", "patient_nbr"}


def test_a_dp_release_shows_no_record_linkage_figures_and_says_why():
    _frame, data = clinical()
    published = released(data, "Laplace histogram", {"columns": "gender,readmitted", "epsilon": 1})
    out = explain.compare_risk(published, data.frame, population_size=100_000)
    assert out.release is None and out.not_measured.startswith(explain.RISK_DP_SENTENCE)
    assert "not fully ε-differentially private" in out.not_measured  # its domains came from the data
    assert out.input is not None and out.input.population.population_size == 100_000
