"""Messages the nurse's walk (issue 26) found unclear, as the window shows them: each names where to click."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ppdp_gui.engine.data.schema import ColumnSpec, Dataset, Role, SourceInfo
from ppdp_gui.engine.pipeline import plan


def test_diffgen_without_a_class_says_where_to_choose_it():
    """It said "mark one column's role as Class or choose it", under a setting labelled "Class column
    (optional)": the custodian did not know where 'choose it' was."""
    r = np.random.default_rng(1)
    frame = pd.DataFrame({"age": r.integers(0, 90, 100), "outcome_text": r.choice(["a", "b"], 100)})
    data = Dataset(frame, (ColumnSpec("age", "numeric", Role.QUASI_IDENTIFIER),
                           ColumnSpec("outcome_text", "categorical", Role.INSENSITIVE)), SourceInfo(n_rows_read=100))
    text = " ".join(p.message for p in plan(data, "DiffGen", {}).errors)
    assert "Class column above" in text and "Data step" in text and "choose it" not in text.replace("choose it under", "")
