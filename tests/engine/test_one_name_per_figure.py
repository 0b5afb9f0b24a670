"""Each group and risk figure has one source (metrics/risk.group_figures) and one name, in the custodian record,
in `ppdp run` / `ppdp demo`'s simulation and in the window (issue 29, Deliver 3): before, the record held the same
highest risk as "max prosecutor risk %" and "highest re-identification risk %", the number of groups as "classes"
and "groups", and the window hid the repeats when it drew them."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from ppdp_gui.engine import glossary
from ppdp_gui.engine.metrics import risk
from ppdp_gui.engine.pipeline import plan, run_release
from ppdp_gui.engine.pipeline.published import custodian_record
from ppdp_gui.engine.pipeline.sweep import run_sweep
from tests.engine.kanon_helpers import random_dataset

GROUP_NAMES = {risk.GROUPS, risk.HIGHEST_RISK, risk.AVERAGE_RISK, risk.RECORDS_AT_RISK,
               risk.smallest_group_name(False)}


def repeats(names) -> list:
    """Names that say the same as another (the same plain title and formula in the glossary)."""
    seen = Counter((glossary.figure(n).title, glossary.figure(n).formula) for n in names)
    return sorted(n for n in names if seen[(glossary.figure(n).title, glossary.figure(n).formula)] > 1)


def test_the_glossary_has_one_name_per_figure():
    assert repeats(glossary.FIGURES) == []


def test_the_group_figures_come_from_one_function_under_the_glossary_names():
    figures = risk.group_figures(np.array([2, 3, 5]))
    assert set(figures) == GROUP_NAMES and all(glossary.FIGURES.get(n) for n in figures)
    assert figures[risk.HIGHEST_RISK] == pytest.approx(50) and figures[risk.GROUPS] == 3
    assert risk.smallest_group_name(True) in risk.group_figures(np.array([4]), persons=True)
    assert risk.group_figures(np.array([], dtype=int)) == {} and risk.group_figures(None) == {}


@pytest.mark.parametrize("mechanism, params", [("Mondrian", {"k": 5}), ("Global recoding", {"k": 5}),
                                                ("Local recoding", {"k": 5})])
def test_record_and_simulation_name_each_figure_once(mechanism, params):
    data = random_dataset(np.random.default_rng(3), 240, n_num=0, n_cat=3)
    published = list(run_release(plan(data, mechanism, params), seed=7, write_record=False))[-1]
    record = custodian_record(published)["figures (against the true data)"]
    assert repeats(record) == [] and GROUP_NAMES <= set(record)
    assert not {"classes", "max prosecutor risk %", "records at risk %", "highest risk %"} & set(record)
    sim = list(run_sweep(mechanism, data, params, {}, repeats=1, holdout=1 / 3, seed=0))[-1]
    assert repeats(sim.measure_names) == [] and GROUP_NAMES <= set(sim.measure_names)
