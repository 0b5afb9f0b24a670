"""A table shaped like the UCI diabetes encounter extract of issue 26 (101,766 × 50 there; ~3,000 rows here):
encounter numbers (one per row) and patient numbers (repeated), `?` for missing, payer_code ~40 % missing,
medical_specialty ~47 % missing (49 % there; kept below the mostly-missing threshold of 50 %), race 2 % missing, diag_1/2/3 ICD-9 codes with hundreds of distinct values, age
bands and the readmitted class. Values are random; only the shapes matter to the tests that use it."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ppdp_gui.engine.taxonomy.icd import category_rows

SPECIALTIES = ["InternalMedicine", "Emergency/Trauma", "Family/GeneralPractice", "Cardiology", "Surgery-General",
               "Nephrology", "Orthopedics", "Radiologist", "Pulmonology", "Psychiatry", "Urology", "Gastroenterology"]
PAYERS = ["MC", "HM", "SP", "BC", "MD", "CP", "UN", "CM", "OG", "PO", "DM", "CH", "WC", "OT", "MP", "SI"]


def icd9_codes(r: np.random.Generator, n: int, distinct: int) -> np.ndarray:
    """`distinct` ICD-9-CM codes ('250.8', '428', 'V45', 'E909'), drawn unevenly (a few common, many rare)."""
    categories = [row[0] for row in category_rows("icd9")]
    chosen = r.choice(np.asarray(categories), size=distinct, replace=False)
    pool = [c if i % 3 or c[0] in "VE" else f"{c}.{i % 10}" for i, c in enumerate(chosen)]
    weights = 1.0 / np.arange(1, len(pool) + 1) ** 0.8
    return r.choice(np.asarray(pool), size=n, p=weights / weights.sum())


def with_missing(r: np.random.Generator, values: np.ndarray, share: float) -> np.ndarray:
    out = values.astype(object)
    out[r.random(len(out)) < share] = "?"
    return out


def diabetes_shaped(n: int = 3000, seed: int = 26) -> pd.DataFrame:
    r = np.random.default_rng(seed)
    patients = r.integers(0, int(0.7 * n), n) * 9 + 135  # ~70 % as many patients as encounters: repeats
    ages = [f"[{a}-{a + 10})" for a in range(0, 100, 10)]
    return pd.DataFrame({
        "encounter_id": np.arange(n) * 13 + 2278392,
        "patient_nbr": patients,
        "race": with_missing(r, r.choice(["Caucasian", "AfricanAmerican", "Hispanic", "Other", "Asian"], n,
                                         p=[0.75, 0.19, 0.02, 0.02, 0.02]), 0.02),
        "gender": r.choice(["Female", "Male"], n),
        "age": r.choice(ages, n, p=np.array([1, 2, 4, 10, 35, 70, 90, 100, 60, 10]) / 382),
        "admission_type_id": r.integers(1, 9, n),
        "time_in_hospital": r.integers(1, 15, n),
        "payer_code": with_missing(r, r.choice(PAYERS, n), 0.40),
        "medical_specialty": with_missing(r, r.choice(SPECIALTIES, n), 0.47),
        "num_lab_procedures": r.integers(1, 100, n),
        "num_medications": r.integers(1, 60, n),
        "diag_1": icd9_codes(r, n, 300), "diag_2": icd9_codes(r, n, 320), "diag_3": icd9_codes(r, n, 340),
        "insulin": r.choice(["No", "Steady", "Up", "Down"], n),
        "readmitted": r.choice(["NO", ">30", "<30"], n, p=[0.54, 0.35, 0.11]),
    })
