"""A diabetes-shaped table (tests/engine/diabetes_shaped.py) with the columns Safe Harbor is about: a ZIP code
(some in restricted 3-digit areas), an admission date, an exact age (some over 89), a patient name and a phone."""

from __future__ import annotations

import numpy as np
import pandas as pd

from diabetes_shaped import diabetes_shaped


def governance_table(n: int = 600, seed: int = 31) -> pd.DataFrame:
    r = np.random.default_rng(seed)
    frame = diabetes_shaped(n, seed)
    zips = r.choice(["02138", "03601", "10001", "89012", "55612", "60614"], n)
    days = r.integers(0, 3 * 365, n)
    frame["zip"] = zips
    frame["admission_date"] = (pd.Timestamp("2019-01-01") + pd.to_timedelta(days, unit="D")).strftime("%Y-%m-%d")
    frame["age_years"] = r.integers(20, 100, n)
    frame["patient_name"] = [f"Name{i % 350}" for i in range(n)]
    frame["phone"] = [f"+1 617 555 {1000 + i:04d}" for i in range(n)]
    return frame
