"""TDS: specialises what predicts the class, keeps k, generalises unseen rows with the same cut."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ppdp_gui.engine.checks import check_release
from ppdp_gui.engine.data.schema import ColumnSpec, Dataset, Role
from ppdp_gui.engine.mechanisms.kanon.tds import TDS

from tests.engine.kanon_helpers import ARX_QIS, arx_adult_dataset, run, two_level_taxonomy


def small_table(n_per: int = 12) -> Dataset:
    rng = np.random.default_rng(1)
    jobs = ["nurse", "doctor", "clerk", "cook"]
    job = np.repeat(jobs, n_per)
    y = np.where(np.isin(job, ["nurse", "doctor"]), "high", "low")  # g0 = {nurse, doctor} predicts the class
    age = rng.integers(20, 60, job.size)
    frame = pd.DataFrame({"job": job, "age": age, "y": y})
    schema = (ColumnSpec("job", "categorical", Role.QUASI_IDENTIFIER, two_level_taxonomy("job", jobs, fan=2)),
              ColumnSpec("age", "numeric", Role.QUASI_IDENTIFIER), ColumnSpec("y", "categorical", Role.CLASS))
    return Dataset(frame, schema)


def test_specialises_the_informative_node_and_keeps_k():
    ds = small_table()
    rel = run(TDS(), ds, k=12, grid_width=10)
    job = rel.table["job"].astype(str)
    assert "*" not in set(job)  # the root was specialised (it carries all the information about y)
    assert check_release(rel.table, ["job", "age"], 12).ok
    # every class-pure group: the cut separates the two classes
    assert (rel.table.groupby(job, observed=True)["y"].nunique() == 1).all()


def test_k_too_large_for_any_specialisation_keeps_everything_general():
    ds = small_table()
    rel = run(TDS(), ds, k=40)
    assert set(rel.table["job"].astype(str)) == {"*"} and rel.record["specialisations"] == 0
    assert rel.table["age"].nunique() == 1


def test_apply_to_generalises_unseen_rows_like_the_release():
    ds = small_table()
    rel = run(TDS(), ds, k=6, grid_width=10)
    again = rel.apply_to(ds.frame)
    released = rel.table.assign(job=rel.table["job"].astype(str), age=rel.table["age"].astype(str))
    pairs = released.groupby(["job", "age"]).size().sort_index()
    assert again.groupby(["job", "age"]).size().sort_index().equals(pairs)
    unseen = rel.apply_to(pd.DataFrame({"job": ["pilot"], "age": [35], "y": ["low"]}))
    assert unseen.loc[0, "job"] == "*"


def test_needs_a_class_column():
    ds = small_table()
    ds = ds.with_column("y", role=Role.INSENSITIVE)
    assert any(p.param == "class_column" for p in TDS().validate(ds, k=5))


def test_adult_with_arx_hierarchies(shared_data):
    qis = ARX_QIS
    ds = arx_adult_dataset(shared_data, salary_role=Role.CLASS)
    rel = run(TDS(), ds, k=5)
    assert check_release(rel.table, qis, 5).ok
    assert rel.record["specialisations"] >= 10 and rel.record["groups"] >= 50
