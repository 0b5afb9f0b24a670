"""DiffGen's share-of-noise estimate (the Run step's warning before the run) against the records its runs really
add, on a real table: the bundled Adult sample with its ARX hierarchies. The earlier model (records spread evenly
over the cells) said about 9,700 records at h = 10, ε = 0.25, where runs added 43,000–174,000: it must now be
within a factor of 3 of the median of a few seeded runs, at two ε."""

import numpy as np
import pytest

from ppdp_gui.engine.data.schema import Dataset
from ppdp_gui.engine.mechanisms.base import run_to_release
from ppdp_gui.engine.mechanisms.diffgen import DiffGen
from ppdp_gui.engine.noise import NoiseSource
from ppdp_gui.engine.package_files import sample_table


def adult_sample() -> Dataset:
    from ppdp_gui.engine.pipeline.load import load
    from ppdp_gui.engine.persistence.project import Recipe
    loaded = load(Recipe(source=str(sample_table()), bundled="adult"))
    return loaded.dataset.confirm_guesses()


@pytest.mark.parametrize("epsilon", [0.25, 1.0])
def test_the_likely_noise_is_within_a_factor_3_of_what_runs_add(epsilon):
    data = adult_sample()
    mech = DiffGen()
    params = mech.resolve_params(epsilon=epsilon, h=10)
    assert not [p for p in mech.validate(data, **params) if p.level == "error"]
    est = mech.noise_estimate(data, params)
    added = []
    for seed in range(5):
        rel = run_to_release(mech.run(data, rng=NoiseSource.for_tests(seed), **params))
        count = "count" if "count" in rel.table.columns else "noisy count"
        added.append(int(rel.table[count].sum()) - data.n_rows)
    realised = float(np.median(added))
    likely = est.added_for(data.n_rows)
    assert realised / 3 < likely < 3 * realised, (likely, added)
