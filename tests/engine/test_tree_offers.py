"""What the Run step offers to build before a run (data/tree_offers.py) and what the Taxonomies step calls fine
without a tree (coltypes.needs_no_tree): exact dates and ZIP codes, never numbers or a two-valued column."""

from __future__ import annotations

import pandas as pd

from ppdp_gui.engine.data import dataset_from_frame
from ppdp_gui.engine.data.coltypes import needs_no_tree
from ppdp_gui.engine.data.schema import MISSING_LABEL, Role
from ppdp_gui.engine.data.tree_offers import tree_offers
from ppdp_gui.engine.taxonomy.dates import looks_like_dates


def test_dates_are_read_from_their_spelling_not_from_numbers():
    assert looks_like_dates(["2023-01-05", MISSING_LABEL, None], (MISSING_LABEL,))
    assert looks_like_dates(["07/03/2020", "31.12.2021"]) and looks_like_dates(["2020-01-02 10:00"])
    assert not looks_like_dates(["2020", "2021"]) and not looks_like_dates(["90001"]) and not looks_like_dates([])
    assert not looks_like_dates(["2023-01-05", "soon"])


def test_two_values_need_no_tree_blanks_aside():
    assert needs_no_tree(["F", "M", MISSING_LABEL, None], (MISSING_LABEL,)) and needs_no_tree(["yes"])
    assert not needs_no_tree(["A", "B", "C"])


def test_offers_for_dates_and_zip_codes_only():
    n = 60
    frame = pd.DataFrame({"admit_date": [f"2023-01-{1 + i % 28:02d}" for i in range(n)],
                          "zip": [str(90001 + i % 30) for i in range(n)], "sex": ["F", "M"] * (n // 2),
                          "ward": [f"W{i % 25}" for i in range(n)], "age": list(range(20, 20 + n))})
    data = dataset_from_frame(frame, roles={c: Role.QUASI_IDENTIFIER for c in frame.columns},
                              kinds={"age": "numeric"})
    offers = {o.column: o.builder for o in tree_offers(data)}
    assert offers == {"admit_date": "dates", "zip": "mask"}
    assert "28 different days" in tree_offers(data)[0].reason
