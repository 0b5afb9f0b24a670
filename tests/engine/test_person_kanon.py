"""The person as the unit of the k-anonymity family (issue 25, item 3): with a person column (Role.PERSON) every
class of a k = 5 release holds the rows of at least 5 different patients, recounted on the written file; the
checker refuses a release that counts rows; without a person column the release says in words that one row is
one unit."""

import numpy as np
import pandas as pd
import pytest

from ppdp_gui.engine.checks.claims import check_claims, failures
from ppdp_gui.engine.claims import KAnonymity, LDiversity, RiskBound, Suppression, TCloseness
from ppdp_gui.engine.data.reader import dataset_from_frame
from ppdp_gui.engine.data.schema import Role
from ppdp_gui.engine.errors import CheckError
from ppdp_gui.engine.pipeline import plan, run_release
from ppdp_gui.engine.pipeline.export import export
from ppdp_gui.engine.taxonomy.from_spec import build_taxonomy

K = 5
MECHANISMS = {
    "Mondrian": {"k": K},
    "TDS": {"k": K},
    "Global recoding": {"k": K, "suppression": 5},
    "Local recoding": {"k": K},
    "Fragmentation": {"k": K},
}


def hospital(n_patients: int = 300, seed: int = 3) -> pd.DataFrame:
    """Several encounters per patient (1–6): the patient's age, sex and ZIP repeat (the age may move by a year),
    the diagnosis changes from visit to visit."""
    rng = np.random.default_rng(seed)
    visits = rng.integers(1, 7, n_patients)
    patient = np.repeat(np.arange(100_000, 100_000 + n_patients), visits)
    base_age = np.repeat(rng.integers(18, 90, n_patients), visits)
    age = base_age + rng.integers(0, 2, patient.size)
    sex = np.repeat(rng.choice(["F", "M"], n_patients), visits)
    zipc = np.repeat(rng.choice([f"021{i:02d}" for i in range(30)], n_patients), visits)
    icd = rng.choice(["250.0", "428.0", "414.0", "486", "584.9", "599.0"], patient.size)
    readmitted = rng.choice(["NO", "<30", ">30"], patient.size)
    frame = pd.DataFrame({"patient_nbr": patient.astype(str), "age": age, "sex": sex, "zip": zipc,
                          "diagnosis": icd, "readmitted": readmitted})
    return frame.sample(frac=1.0, random_state=seed).reset_index(drop=True)  # encounters not grouped by patient


def dataset(frame: pd.DataFrame, person: bool = True):
    roles = {"patient_nbr": Role.PERSON if person else Role.IDENTIFIER, "age": Role.QUASI_IDENTIFIER,
             "sex": Role.QUASI_IDENTIFIER, "zip": Role.QUASI_IDENTIFIER, "diagnosis": Role.SENSITIVE,
             "readmitted": Role.CLASS}
    data = dataset_from_frame(frame, roles=roles, kinds={"age": "numeric", "zip": "categorical"})
    taxonomies = {"age": build_taxonomy("age", data.frame["age"], "intervals:5"),
                  "zip": build_taxonomy("zip", data.frame["zip"], "mask"),
                  "sex": build_taxonomy("sex", data.frame["sex"], "flat")}
    for name, tax in taxonomies.items():
        data = data.with_column(name, taxonomy=tax)
    return data


def publish(data, mechanism: str, tmp_path):
    p = plan(data, mechanism, MECHANISMS[mechanism])
    assert not p.errors, [e.message for e in p.errors]
    published = None
    for item in run_release(p, seed=7):
        published = item
    exported = export(published, tmp_path / f"{mechanism.replace(' ', '_')}.csv")
    return published, exported


def persons_per_class(written: pd.DataFrame, qis: list[str], ids: np.ndarray, marker: str | None = None):
    """Distinct persons per group of the written rows (suppressed rows, '*' in every QI, left out)."""
    keep = np.ones(len(written), dtype=bool)
    if marker is not None:
        keep = ~(written[qis].astype(str) == marker).all(axis=1).to_numpy()
    frame = written[keep].astype(str).assign(_person=ids[keep])
    return frame.groupby(qis)["_person"].nunique()


def _written_tables(published, exported) -> dict[str, pd.DataFrame]:
    names = list(published.release.tables())
    return {name: pd.read_csv(path, dtype=str, keep_default_na=False) for name, path in zip(names, exported.files)}


@pytest.mark.parametrize("mechanism", list(MECHANISMS))
def test_k5_with_a_person_column_has_five_persons_in_every_class_of_the_written_file(mechanism, tmp_path):
    frame = hospital()
    data = dataset(frame)
    published, exported = publish(data, mechanism, tmp_path)
    source_ids = data.frame["patient_nbr"].to_numpy()
    written = _written_tables(published, exported)
    for claim in published.claims:
        if not isinstance(claim, KAnonymity):
            continue
        assert claim.person == "patient_nbr" and "persons (patient_nbr)" in claim.describe()
        table = written[claim.table]
        assert "patient_nbr" not in table.columns  # never written
        rows = np.asarray(published.release.source_rows[claim.table])
        # the alignment is right: the published-as-is columns of each written row are its source row's
        same = [c for c in table.columns if c not in claim.columns and c in ("diagnosis",)]
        for col in same:
            assert (table[col].to_numpy() == data.frame[col].astype(str).to_numpy()[rows]).all()
        per_class = persons_per_class(table, list(claim.columns), source_ids[rows], marker="*")
        assert per_class.min() >= K, (mechanism, claim.table, per_class.min())
    assert all(c.ok for c in exported.checks)
    assert any(isinstance(c.claim, KAnonymity) for c in exported.checks)


def test_row_level_k_leaves_classes_of_fewer_persons():
    """Why it matters: the same table released with k counting rows has classes made of fewer than 5 patients
    (several encounters of one patient)."""
    frame = hospital()
    data = dataset(frame, person=False)
    p = plan(data, "Mondrian", {"k": K})
    published = [x for x in run_release(p, seed=7)][-1]
    rows = np.asarray(published.release.source_rows["table"])
    ids = data.frame["patient_nbr"].to_numpy()[rows]
    per_class = persons_per_class(published.table, ["age", "sex", "zip"], ids)
    assert per_class.min() < K
