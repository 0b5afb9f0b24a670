"""Information loss, risk and F-measure figures against hand-computed values."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ppdp_gui.engine.mechanisms.kanon.mondrian import Mondrian
from ppdp_gui.engine.metrics import risk
from ppdp_gui.engine.metrics.fmeasure import weighted_f_measure
from ppdp_gui.engine.pipeline.sweep import release_groups
from ppdp_gui.engine.metrics.information_loss import (average_class_size, class_distortion, class_sizes,
                                                      discernibility, ncp, ncp_per_qi)

from tests.engine.kanon_helpers import random_dataset, run

TABLE = pd.DataFrame({"age": ["20-29", "20-29", "30-49", "30-49", "30-49"], "job": ["*", "*", "nurse", "nurse", "g0"]})
INTERVALS = {"age": {"20-29": [20, 29], "30-49": [30, 49]}, "job": {"*": [0, 3], "nurse": [0, 0], "g0": [0, 1]}}
DOMAINS = {"age": [20, 70], "job": [0, 3]}  # job: 4 leaves, positions 0..3


def test_ncp_by_hand():
    per = ncp_per_qi(TABLE, INTERVALS, DOMAINS)
    assert per["age"] == pytest.approx((2 * 9 / 50 + 3 * 19 / 50) / 5)
    assert per["job"] == pytest.approx((2 * 1 + 0 + 0 + 1 / 3) / 5)
    assert ncp(TABLE, INTERVALS, DOMAINS) == pytest.approx((per["age"] + per["job"]) / 2)
    with pytest.raises(ValueError):
        ncp(TABLE.assign(job="other"), INTERVALS, DOMAINS)


def test_class_counts_and_risk():
    sizes = class_sizes(TABLE, ["age", "job"])
    assert sorted(sizes) == [1, 2, 2]
    assert discernibility(sizes) == 9 and discernibility(sizes, suppressed=2, n_total=7) == 9 + 14
    assert average_class_size(sizes) == pytest.approx(5 / 3)
    assert average_class_size(sizes, k=1) == pytest.approx(5 / 3)
    assert risk.prosecutor_risk(sizes) == (1.0, pytest.approx(3 / 5))
    assert risk.records_at_risk(sizes, threshold=0.6) == pytest.approx(1 / 5)
    assert risk.records_at_risk(sizes, threshold=0.4) == 1.0


def test_f_measure_and_distortion():
    X = np.array([[0.0], [0.1], [0.2], [0.9], [1.0], [0.95]] * 5)
    y = np.array(["a", "a", "a", "b", "b", "b"] * 5)
    assert weighted_f_measure(X, y, X, y, "tree") == 1.0
    assert weighted_f_measure(X, y, X, y, "knn") == 1.0
    assert weighted_f_measure(X, y, X, np.where(y == "a", "b", "a"), "tree") == 0.0
    assert class_distortion(pd.Series(["a", "b", "a"]), pd.Series(["a", "a", "a"])) == 1


def test_mondrian_measures():
    rng = np.random.default_rng(2)
    ds = random_dataset(rng, 300, n_num=1, n_cat=2)
    train = ds.with_frame(ds.frame.iloc[:200].reset_index(drop=True))
    test = ds.with_frame(ds.frame.iloc[200:].reset_index(drop=True))
    rel = run(Mondrian(), train, k=10)
    m = Mondrian().measures(rel, train, test)
    assert 0 < m["NCP %"] < 100 and m["C_avg"] >= 1
    groups = release_groups(train, rel)  # the publish path's groups and risks, as a simulation shows them
    assert groups["groups"] == rel.record["groups"] and groups["highest re-identification risk %"] <= 10
    assert 0 <= m["F-measure tree %"] <= 100 and 0 <= m["F-measure 5-NN %"] <= 100
