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


def test_k_help_says_it_counts_persons_with_a_person_column():
    """The Mechanism step's line under k said "shared by at least k rows" just above "Privacy: … at least 10
    different persons (patient_id)" on a table with a person column."""
    from ppdp_gui.engine.mechanisms import registry
    for name in ("Mondrian", "Global recoding"):
        if name not in registry.names():
            continue
        help_text = next(p.help for p in registry.get(name).params if p.name == "k")
        assert "different persons" in help_text and "Person column" in help_text, name
