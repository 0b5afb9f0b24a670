"""A generated table shaped like the hospital tables of issue 18 (the UCI diabetes encounters; the heart-disease
table): encounter and patient numbers, few-valued code columns, ICD-9 diagnoses, counts, a readmission class.
Values are random; only the shapes (distinct counts, kinds, names) matter to the tests that use it."""

import numpy as np
import pandas as pd

ICD9 = ["250.83", "250.01", "428", "414", "V45", "V57", "E909", "410", "786", "276", "427", "038", "599", "V58",
        "486", "491", "715", "682", "780", "996"]


def diabetes_like(n: int = 2000, seed: int = 0) -> pd.DataFrame:
    r = np.random.default_rng(seed)
    # like patient_nbr: most patients come once (about 55 % of rows), some often; about 70 % of values distinct
    once = int(0.55 * n)
    patients = r.permutation(np.r_[np.arange(once), once + r.integers(0, int(0.15 * n), n - once)]) + 100_000
    return pd.DataFrame({
        "encounter_id": np.arange(n) * 7 + 12_522,
        "patient_nbr": patients,
        "race": r.choice(["Caucasian", "AfricanAmerican", "Hispanic", "Other"], n),
        "gender": r.choice(["Female", "Male"], n),
        "age": r.choice([f"[{a}-{a + 10})" for a in range(0, 100, 10)], n),
        "admission_type_id": r.integers(1, 9, n),
        "discharge_disposition_id": r.integers(1, 27, n),
        "admission_source_id": r.integers(1, 18, n),
        "time_in_hospital": r.integers(1, 15, n),
        "payer_code": r.choice(["MC", "MD", "HM", "UN", "BC", "SP", "CP"], n),
        "medical_specialty": r.choice(["Cardiology", "InternalMedicine", "Surgery-General", "Emergency"], n),
        "num_lab_procedures": r.integers(1, 133, n),
        "num_procedures": r.integers(0, 7, n),
        "num_medications": r.integers(1, 82, n),
        "number_outpatient": r.integers(0, 10, n),
        "number_diagnoses": r.integers(1, 17, n),
        "diag_1": r.choice(ICD9, n), "diag_2": r.choice(ICD9, n), "diag_3": r.choice(ICD9, n),
        "max_glu_serum": r.choice(["None", ">200", ">300", "Norm"], n),
        "metformin": r.choice(["No", "Steady", "Up", "Down"], n),
        "diabetesMed": r.choice(["Yes", "No"], n),
        "readmitted": r.choice(["NO", ">30", "<30"], n),
    })


def heart_like(n: int = 303, seed: int = 1) -> pd.DataFrame:
    r = np.random.default_rng(seed)
    return pd.DataFrame({"age": r.integers(29, 78, n), "sex": r.integers(0, 2, n), "cp": r.integers(1, 5, n),
                         "trestbps": r.integers(94, 201, n), "chol": r.integers(126, 565, n),
                         "oldpeak": r.integers(0, 62, n) / 10, "thal": r.choice([3, 6, 7], n),
                         "num": r.integers(0, 5, n)})
