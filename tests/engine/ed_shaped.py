"""An emergency-department extract unlike the diabetes one (the nurse's walk of issue 26): one row per visit,
several visits per patient (`patient_id`), a visit number, the patient's name, arrival dates, 5-digit ZIP codes,
an age in years, sex, triage level 1-5, an ICD-10 diagnosis (full codes such as 'J18.9'), the disposition (the
outcome), a free-text note; blank cells (not '?') in several columns. Values are random; only the shapes matter."""

from __future__ import annotations

import numpy as np
import pandas as pd

ICD10 = ["J18.9", "J06.9", "R07.4", "R10.4", "S52.50", "S06.0", "I21.4", "I48.0", "N39.0", "K35.8", "A09",
         "R55", "T78.4", "F10.1", "E11.9", "I10", "J45.9", "M54.5", "S93.4", "L03.1", "R51", "G40.9", "K80.2",
         "O20.0", "Z76.0", "I63.9", "J44.1", "R50.9", "S01.8", "T14.1"]
FIRST = ["Anna", "Ben", "Chloe", "David", "Emma", "Farid", "Grace", "Hugo", "Ines", "Jack", "Lena", "Mohamed"]
LAST = ["Smith", "Jones", "Garcia", "Nguyen", "Brown", "Martin", "Okafor", "Rossi", "Kowalski", "Dubois"]
NOTES = ["fell at home", "chest pain since morning", "fever 3 days", "", "brought by ambulance", "seen by GP",
         "left before seen", "pain 7/10", "known asthmatic", ""]


def blanks(r: np.random.Generator, values, share: float) -> np.ndarray:
    out = np.asarray(values).astype(object)
    out[r.random(len(out)) < share] = None
    return out


def ed_shaped(n: int = 5000, seed: int = 42) -> pd.DataFrame:
    r = np.random.default_rng(seed)
    n_patients = int(0.6 * n)
    patient = r.integers(0, n_patients, n)
    first = np.asarray(FIRST)[patient % len(FIRST)]
    last = np.asarray(LAST)[(patient // len(FIRST)) % len(LAST)]
    age = (r.gamma(2.0, 20.0, n_patients).clip(0, 104)).astype(int)[patient]
    sex = r.choice(["F", "M"], n_patients)[patient]
    zips = r.choice([f"{z:05d}" for z in r.integers(10000, 99999, 60)], n_patients)[patient]
    arrival = pd.Timestamp("2025-01-01") + pd.to_timedelta(r.integers(0, 365, n), unit="D")
    weights = 1.0 / np.arange(1, len(ICD10) + 1)
    return pd.DataFrame({
        "visit_id": np.arange(n) + 700001,
        "patient_id": patient * 7 + 1000,
        "name": np.char.add(np.char.add(first, " "), last),
        "arrival_date": arrival.strftime("%Y-%m-%d"),
        "age": age,
        "sex": sex,
        "zip": blanks(r, zips, 0.03),
        "triage_level": blanks(r, r.choice([1, 2, 3, 4, 5], n, p=[0.03, 0.17, 0.4, 0.3, 0.1]), 0.05),
        "diagnosis": blanks(r, r.choice(ICD10, n, p=weights / weights.sum()), 0.08),
        "length_of_stay_h": r.integers(1, 30, n),
        "note": blanks(r, r.choice(NOTES, n), 0.2),
        "disposition": r.choice(["discharged", "admitted", "transferred"], n, p=[0.7, 0.25, 0.05]),
    })
