"""A hospital extract the window was never tuned on, for walking the window as a nurse would.

Several stays per patient under `MRN_internal`, admission and discharge dates, a ZIP code written without its
leading zeros (90001-90099) with ~5 % blanks, an age with blanks, sex, ICD-10 codes (300+) in three diagnosis
columns with blanks, a length of stay, a readmission class, a free-text note, a name and a phone number.

    python scripts/hospital_extract.py OUT.csv [--rows 5000] [--seed 11]
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

_FIRST = ["Maria", "John", "Aisha", "Wei", "Olga", "Pedro", "Fatima", "Liam", "Sofia", "Noah", "Emma", "Ravi"]
_LAST = ["Garcia", "Smith", "Nguyen", "Khan", "Rossi", "Müller", "Dubois", "Kowalski", "Okafor", "Tanaka"]
_NOTES = ["pt stable, d/c home", "fall at home, daughter called", "needs follow-up with GP next week",
          "allergic to penicillin", "", "", "transferred from St Mary's", "wound care daily, lives alone"]


def icd10_codes(n_codes: int, rng: np.random.Generator) -> np.ndarray:
    """`n_codes` distinct ICD-10 codes: real 3-character categories of the shipped list, some with a subcode."""
    from ppdp_gui.engine.taxonomy.icd import icd_categories
    categories = np.array(sorted(icd_categories("icd10").leaf_values()))
    chosen = rng.choice(categories, n_codes, replace=False)
    sub = rng.random(n_codes) < 0.6
    return np.array(sorted(f"{c}.{rng.integers(0, 10)}" if s else c for c, s in zip(chosen, sub)))


def hospital_extract(rows: int = 5000, seed: int = 11) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    patients = max(1, rows // 3)
    pat = rng.integers(0, patients, rows)
    mrn = np.array([f"{700000 + p}" for p in pat])
    age = np.clip((rng.normal(62, 18, patients)).round(), 0, 101).astype(int)[pat].astype(object)
    age[rng.random(rows) < 0.03] = ""
    sex = rng.choice(["F", "M"], patients)[pat]
    zips = rng.integers(90001, 90100, patients)[pat].astype(str).astype(object)
    zips[rng.random(rows) < 0.05] = ""
    admit = pd.Timestamp("2023-01-01") + pd.to_timedelta(rng.integers(0, 700, rows), unit="D")
    los = rng.geometric(0.22, rows)
    discharge = admit + pd.to_timedelta(los, unit="D")
    codes = icd10_codes(340, rng)
    weights = 1.0 / np.arange(1, len(codes) + 1) ** 0.8
    weights /= weights.sum()
    diags = {}
    for i, blank in ((1, 0.0), (2, 0.25), (3, 0.55)):
        d = rng.choice(codes, rows, p=weights).astype(object)
        d[rng.random(rows) < blank] = ""
        diags[f"dx_{i}"] = d
    readmit = rng.choice(["NO", "<30", ">30"], rows, p=[0.55, 0.12, 0.33])
    names = np.array([f"{f} {l}" for f in _FIRST for l in _LAST])[rng.integers(0, 120, patients)][pat]
    phone = np.array([f"+1 213 555 {x:04d}" for x in rng.integers(0, 10000, patients)])[pat]
    frame = pd.DataFrame({
        "MRN_internal": mrn, "patient_name": names, "phone": phone, "age": age, "sex": sex, "zip": zips,
        "admit_date": admit.strftime("%Y-%m-%d"), "discharge_date": discharge.strftime("%Y-%m-%d"),
        **diags, "length_of_stay": los, "readmitted": readmit,
        "nurse_note": rng.choice(_NOTES, rows),
    })
    return frame


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--rows", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=11)
    args = ap.parse_args(argv)
    hospital_extract(args.rows, args.seed).to_csv(args.out, index=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
