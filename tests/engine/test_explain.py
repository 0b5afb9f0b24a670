"""Plain words on what a release is (engine/explain.py), before and after the run, for a table of noisy counts and
a k-anonymous table; figures read from the release kept apart from those compared with the true data."""

from __future__ import annotations

import pandas as pd

from ppdp_gui.engine import explain
from ppdp_gui.engine.data.domains import Domain
from ppdp_gui.engine.data.reader import dataset_from_frame
from ppdp_gui.engine.data.schema import Role
from ppdp_gui.engine.pipeline import plan, run_release


def clinic():
    frame = pd.DataFrame({"name": [f"p{i}" for i in range(40)], "age": [30 + i % 20 for i in range(40)],
                          "sex": ["F", "M"] * 20, "diagnosis": ["flu", "cold", "flu", "asthma"] * 10})
    data = dataset_from_frame(frame, roles={"name": Role.IDENTIFIER, "age": Role.QUASI_IDENTIFIER,
                                            "sex": Role.QUASI_IDENTIFIER, "diagnosis": Role.SENSITIVE},
                              kinds={"age": "numeric", "sex": "categorical", "diagnosis": "categorical",
                                     "name": "categorical"})
    data = data.with_column("age", domain=Domain(0, 120, integer=True))
    return data.with_column("sex", domain=Domain(categories=("F", "M")))


def released(data, mechanism, params):
    p = plan(data, mechanism, params)
    assert not p.errors, p.errors
    return p, [x for x in run_release(p, seed=5, write_record=False)][-1]


def test_a_count_table_is_explained_before_and_after():
    data = clinic()
    p, pub = released(data, "Laplace histogram", {"columns": ("age", "sex"), "bin_width": 10, "epsilon": 1})
    before = " ".join(explain.plan_sentences(p))
    assert "Columns that go out: age, sex, plus the new column count." in before
    assert "Not in the release: name, diagnosis." in before
    assert "table of counts, not one row per person" in before and "random noise on purpose" in before
    after = " ".join(explain.published_sentences(pub))
    assert f"This release has {len(pub.table):,} rows" in after and "repeat each row as many times" in after
    assert "Not in the release: name, diagnosis." in after
    public, mine = explain.release_figures(pub), explain.custodian_figures(pub)
    # 13 age bands of the public domain 0-120 × 3 sexes (F, M and "(missing)", part of every stated list of
    # values): far more rows than the ages 30-49 in the table
    assert public["rows released"] == 39 and public["total of the counts"] == pub.table["count"].sum()
    assert mine == {"rows in your table": 40, "records added by noise": public["total of the counts"] - 40}
    assert "rows in your table" not in public  # compared with the true data: the custodian's only
    assert list(explain.count_values(pub)) == list(pub.table["count"])


def test_a_k_anonymous_table_is_one_row_per_person():
    data = clinic()
    p, pub = released(data, "Mondrian", {"k": 5})
    before = " ".join(explain.plan_sentences(p))
    assert "Columns that go out: age, sex, diagnosis." in before and "Not in the release: name." in before
    assert "at least 5 rows" in before and "diagnosis is published as it is." in before
    assert "table of counts" not in before
    after = " ".join(explain.published_sentences(pub))
    assert "Every combination of age, sex is shared by at least 5 rows" in after
    assert explain.count_values(pub) is None and "total of the counts" not in explain.release_figures(pub)


def test_a_mechanism_that_says_nothing_is_described_by_its_summary():
    from ppdp_gui.engine.mechanisms.base import Mechanism, ReleaseShape
    class Quiet(Mechanism):
        name, guarantee, summary = "Quiet", "none", "Publishes nothing of interest."
    shape = Quiet().describe_release(clinic(), {})
    assert shape == ReleaseShape(sentences=("Publishes nothing of interest.",))
    assert explain.shape_sentences(shape, clinic()) == ["Publishes nothing of interest."]
