"""Seen on the hospital walk (several stays per patient, k counting patients): the Figures tab said "Group size
compared with k: 10.9 — 1 means groups are just big enough" while the groups held about 4 times k patients: the
figure counted rows, k counts persons."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ppdp_gui.engine.data import dataset_from_frame
from ppdp_gui.engine.data.schema import Role
from ppdp_gui.engine.mechanisms import registry


def test_group_size_compared_with_k_counts_persons_when_k_does():
    persons = np.repeat(np.arange(60), 5)  # five stays per patient
    frame = pd.DataFrame({"pid": [f"p{i}" for i in persons], "sex": np.where(persons % 2, "F", "M"),
                          "ward": [f"w{i % 3}" for i in persons]})
    data = dataset_from_frame(frame, roles={"pid": Role.PERSON, "sex": Role.QUASI_IDENTIFIER,
                                            "ward": Role.QUASI_IDENTIFIER}, kinds={"sex": "categorical",
                                                                                  "ward": "categorical"})
    mondrian = registry.create("Mondrian")
    release = [r for r in mondrian.run(data, rng=np.random.default_rng(0), k=5)][-1]
    c_avg = mondrian.measures(release, data, None)["C_avg"]
    table = release.table
    groups = table.groupby(["sex", "ward"], observed=True).size()
    assert c_avg == (60 / len(groups)) / 5  # each patient in one group: persons per group / k
    assert c_avg < (len(table) / len(groups)) / 5  # not the rows per group
