"""The statistical DP verifier: its wrapper, neighbours, audited output, statistics, exact checks, and that every
DP mechanism passes its quick audit (the planted bugs it must catch are in test_verify_mutants.py)."""

import inspect
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ppdp_gui.engine.data.domains import Domain
from ppdp_gui.engine.data.schema import ColumnSpec, Dataset, Role
from ppdp_gui.engine.errors import ParameterError
from ppdp_gui.engine.mechanisms import registry
from ppdp_gui.engine.noise import NoiseSource
from ppdp_gui.engine.pipeline import plan, run_release
from ppdp_gui.engine.pipeline.published import release_note
from ppdp_gui.engine.verify import ScaledNoise, run_verification, verify
from ppdp_gui.engine.verify.audit import determinism, scan_source
from ppdp_gui.engine.verify.neighbours import (add_record, change_record, class_flip, domain_extreme, gap_record,
                                               remove_record)
from ppdp_gui.engine.verify.noise import PASSED_THROUGH, SCALED
from ppdp_gui.engine.verify.output import VOLATILE, audited, features, output_digest, publish_once
from ppdp_gui.engine.verify.scenarios import info_gain, scenarios_for
from ppdp_gui.engine.verify.stats import audit, choice_calibration, cp_lower, cp_upper, loss_bound


# ---- the wrapper -----------------------------------------------------------------------------------------------
def test_every_noise_source_method_is_scaled_or_deliberately_passed_through():
    public = {n for n, v in inspect.getmembers(NoiseSource, callable) if not n.startswith("_")} - {"for_tests"}
    assert public == set(SCALED) | set(PASSED_THROUGH)
    assert not set(SCALED) & set(PASSED_THROUGH)


def test_scaled_noise_multiplies_every_scale():
    def pair(seed=3):
        return NoiseSource.for_tests(seed), ScaledNoise(NoiseSource.for_tests(seed), 0.5)
    plain, half = pair()
    assert np.array_equal(half.discrete_laplace(4.0, size=200), plain.discrete_laplace(2.0, size=200))
    plain, half = pair()
    counts = np.arange(50)
    assert np.array_equal(half.geometric_noise_counts(counts, 0.5), plain.geometric_noise_counts(counts, 1.0))
    plain, half = pair()
    scores = [0.0, 1.0, 3.0]
    assert [half.exponential_choice(scores, 1.0, 1.0) for _ in range(50)] == \
           [plain.exponential_choice(scores, 2.0, 1.0) for _ in range(50)]
    plain, half = pair()
    assert np.array_equal(half.integers(0, 100, size=20), plain.integers(0, 100, size=20))  # not noise: unchanged
    with pytest.raises(ValueError):
        ScaledNoise(NoiseSource.for_tests(0), 0)


# ---- neighbours ------------------------------------------------------------------------------------------------
def small() -> Dataset:
    frame = pd.DataFrame({"age": [30, 41, 45, 60], "ward": ["A", "A", "B", "A"], "y": ["no", "yes", "no", "no"]})
    return Dataset(frame, (ColumnSpec("age", "numeric", Role.QUASI_IDENTIFIER,
                                      domain=Domain(low=0, high=100, integer=True)),
                           ColumnSpec("ward", "categorical", Role.QUASI_IDENTIFIER,
                                      domain=Domain(categories=("A", "B", "C"))),
                           ColumnSpec("y", "categorical", Role.CLASS, domain=Domain(categories=("no", "yes")))))


def test_add_remove_change_keep_schema_and_types():
    data = small()
    added = add_record(data, {"age": 99, "ward": "C", "y": "yes"})
    assert added.relation == "add" and added.distance == 1 and added.data.n_rows == 5
    assert added.data.schema == data.schema and pd.api.types.is_integer_dtype(added.data.frame["age"])
    assert added.data.frame.iloc[-1].tolist() == [99, "C", "yes"] and data.n_rows == 4  # the original untouched
    removed = remove_record(data, 1)
    assert removed.data.n_rows == 3 and 41 not in removed.data.frame["age"].tolist()
    changed = change_record(data, 2, {"ward": "C"})
    assert changed.distance == 2 and changed.data.frame["ward"].tolist() == ["A", "A", "C", "A"]
    with pytest.raises(ParameterError):
        add_record(data, {"age": 1})
    with pytest.raises(ParameterError):
        remove_record(data, 9)


def test_worst_case_records():
    data = small()  # ages 30..60 on [0, 100]: the top bound is farther
    assert domain_extreme(data, "age")["age"] == 100
    assert domain_extreme(Dataset(data.frame.assign(age=[45, 50, 70, 95]), data.schema), "age")["age"] == 0
    data = Dataset(data.frame.assign(age=[5, 41, 45, 60]), data.schema)
    assert domain_extreme(data, "ward")["ward"] == "C"  # a public value the table lacks
    flip = class_flip(data, ["ward"], "y")  # ward B: 1 no, 0 yes -> margin 1; ward A: 2 no, 1 yes -> margin 1
    assert flip["y"] == "yes"
    gap = gap_record(data, "age", "y")
    assert gap["age"] == 23 and gap["y"] == "yes"  # widest gap 5..41, the rarer class


# ---- what leaves the machine -------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["Laplace histogram", "DiffGen"])
def test_publish_once_makes_the_note_run_release_makes(name):
    """The verifier's lean path must audit exactly the note the publish path writes."""
    sc = scenarios_for(name)[1]
    planned = plan(sc.data, name, sc.params)
    for seed in (0, 1):
        published = None
        for item in run_release(planned, rng=NoiseSource.for_tests(seed), write_record=False):
            published = item
        real = {k: v for k, v in release_note(published).items() if k not in VOLATILE}
        mine = audited(publish_once(planned, NoiseSource.for_tests(seed)))
        assert mine["note"] == real
        assert mine["frames"]["table"].equals(published.table)


def test_features_and_digest():
    sc = scenarios_for("Laplace histogram")[0]
    planned = plan(sc.data, "Laplace histogram", sc.params)
    out = audited(publish_once(planned, NoiseSource.for_tests(0)))
    feats = features(out)
    assert {"released table [ward=A]: count", "note/details/noise scale", "whole output"} <= set(feats)
    # four wards and "(missing)", part of every stated list
    assert feats["released table: rows"] == 5.0 and not [f for f in feats if "table table" in f]
    assert feats["note/parameters/columns"] == '["ward"]' and feats["note/parameters/columns/0"] == "ward"
    other = audited(publish_once(planned, NoiseSource.for_tests(1)))
    assert (output_digest(out) == output_digest(other)) == (features(other)["whole output"] == feats["whole output"])


# ---- statistics ----------------------------------------------------------------------------------------------------
def test_clopper_pearson_edges_and_values():
    assert cp_lower(0, 10, 0.05) == 0 and cp_upper(10, 10, 0.05) == 1
    assert math.isclose(float(cp_upper(0, 10, 0.05)), 1 - 0.05 ** (1 / 10))
    assert math.isclose(float(cp_lower(10, 10, 0.05)), 0.05 ** (1 / 10))
    assert float(cp_lower(50, 100, 0.01)) < 0.5 < float(cp_upper(50, 100, 0.01))
    assert loss_bound(0, 10, 5, 10, 0.05) == -np.inf


def bernoulli_runs(p: float, n: int, seed: int, extra_noise: bool = False) -> list[dict]:
    rng = np.random.default_rng(seed)
    x = rng.random(n) < p
    runs = [{"x": float(v)} for v in x]
    if extra_noise:  # a feature with many values that says nothing
        for r, v in zip(runs, rng.integers(0, 500, n)):
            r["junk"] = f"v{v}"
    return runs


def test_bound_is_below_the_true_loss_and_close_to_it():
    """P(x = 1) = 0.5 on D and 0.5/e on D': the true loss of {x = 1} is exactly 1."""
    lb = audit(bernoulli_runs(0.5, 4000, 1), bernoulli_runs(0.5 / math.e, 4000, 2), alpha=1e-3).epsilon_lb
    assert 0.6 < lb < 1.0


def test_choosing_events_on_the_same_runs_would_be_optimistic():
    """Identical tables, a junk feature with 500 values: the best event found *and* measured on the same runs
    claims a large loss; chosen on one half and bounded on the other, the bound shows none."""
    a, b = bernoulli_runs(0.5, 600, 3, True), bernoulli_runs(0.5, 600, 4, True)
    ca = pd.Series([r["junk"] for r in a]).value_counts()
    cb = pd.Series([r["junk"] for r in b]).value_counts()
    both = ca.index.union(cb.index)
    naive = np.abs(np.log((ca.reindex(both, fill_value=0) + 0.5) / (cb.reindex(both, fill_value=0) + 0.5))).max()
    assert naive > 1.5
    assert audit(a, b, alpha=1e-3).epsilon_lb <= 0


def test_a_deterministic_difference_gives_a_large_bound():
    a = [{"n": 10.0} for _ in range(200)]
    b = [{"n": 11.0} for _ in range(200)]
    bound = audit(a, b, alpha=1e-3)
    assert bound.epsilon_lb > 2 and "n" in bound.best.text


def test_choice_calibration():
    rng = np.random.default_rng(0)
    stated = 2.0  # P(better) = 1/(1 + e^-1) = 0.731 for gap 1, Δ = 1
    fair = rng.random(2000) < 1 / (1 + math.exp(-stated / 2))
    lb, share = choice_calibration(fair, 1.0, 1.0, 1e-3)
    assert lb < stated and abs(share - 0.731) < 0.03
    sharp = rng.random(2000) < 1 / (1 + math.exp(-stated / (2 * math.log(2))))  # Δ = ln 2 instead of 1
    assert choice_calibration(sharp, 1.0, 1.0, 1e-3)[0] > stated


def test_info_gain_is_the_verifiers_own():
    frame = pd.DataFrame({"a": ["a1", "a1", "a2", "a2"], "b": ["b1", "b2", "b1", "b2"], "y": ["Y", "Y", "N", "N"]})
    assert info_gain(frame, "a", "y") == pytest.approx(1.0) and info_gain(frame, "b", "y") == pytest.approx(0.0)


# ---- exact checks ----------------------------------------------------------------------------------------------
def test_source_scan_finds_randomness_outside_engine_noise():
    code = ("import numpy as np\nimport random\nfrom secrets import token_hex\nx = np.random.laplace(0, 1)\n"
            "y = os.urandom(4)\n# np.random.seed in a comment\ns = 'np.random in a string'\n")
    found = scan_source(code, "m")
    assert [f.split(": ", 1)[1] for f in found] == ["import random", "import secrets", "np.random", "os.urandom"]
    assert scan_source("rng.integers(0, 3)\n", "m") == []


def test_no_mechanism_source_reaches_for_randomness_outside_engine_noise():
    import ppdp_gui.engine.mechanisms as package
    root = Path(package.__file__).parent
    found = [f for path in sorted(root.rglob("*.py"))
             for f in scan_source(path.read_text(encoding="utf-8"), str(path.relative_to(root)))]
    assert found == []


class GlobalRandomLaplace(registry.get("Laplace histogram")):
    """Adds numpy's global-generator noise on top of the NoiseSource's: the same seed no longer fixes a release."""

    def _run(self, data, *, rng, **params):
        for item in super()._run(data, rng=rng, **params):
            if hasattr(item, "table"):
                item.table["count"] += np.random.randint(0, 2, len(item.table))
            yield item


def test_determinism_check_catches_a_mechanism_using_another_generator():
    scenarios = scenarios_for("Laplace histogram")[:1]
    assert determinism(registry.create("Laplace histogram"), scenarios, 0, 1).passed
    assert not determinism(GlobalRandomLaplace(), scenarios, 0, 1).passed


# ---- the verification itself ---------------------------------------------------------------------------------
def test_non_dp_mechanisms_and_unknown_sizes_are_refused():
    with pytest.raises(ParameterError, match="not differential privacy"):
        run_verification("Mondrian")
    with pytest.raises(ParameterError, match="audit size"):
        run_verification("Laplace histogram", size="huge")
    with pytest.raises(ParameterError, match="no audit table"):
        run_verification("Laplace histogram", only=("nope",))


@pytest.mark.parametrize("name", [n for n in registry.names()
                                  if registry.create(n).privacy_cost().is_dp])
def test_every_dp_mechanism_passes_its_quick_audit(name):
    progress = []
    verdict = None
    for item in verify(name, size="quick", seed=0):
        if hasattr(item, "fraction"):
            progress.append(item.fraction)
        else:
            verdict = item
    assert verdict.passed, "\n".join(verdict.lines())
    assert progress == sorted(progress) and progress[-1] == 1.0
    assert all(r.bound <= r.allowed for r in verdict.results)
    text = verdict.plain_words()
    assert text.startswith("Self-check passed") and f"{verdict.runs:,}" in text


def test_one_to_one_audits_hold_replace_one_notes_to_eps_and_add_remove_notes_to_two_eps():
    from ppdp_gui.engine.verify.scenarios_records import per_replacement
    assert per_replacement({"note/details/neighbouring relation": "replace"}, Fraction(1), 2)[0] == 1
    assert per_replacement({"note/details/neighbouring relation": "add/remove"}, Fraction(1), 2)[0] == 2
    # words are not parsed: only the typed value counts
    assert per_replacement({"note/details/neighbouring": "one record replaced by another"}, Fraction(1), 2)[0] == 2
    assert per_replacement({}, Fraction(1, 2), 2)[0] == 1  # a note silent on it gets no looser allowance than 2ε


def test_the_quick_audit_of_a_one_to_one_release_catches_half_the_noise():
    """Laplace on records with half its noise (a sensitivity or ε wrong by 2×) loses up to 2ε on the record that
    crosses the whole range: the quick audit must prove it, and pass the true mechanism on the same seeds."""
    assert not run_verification("Laplace on records", size="quick", seed=0, noise_factor=Fraction(1, 2)).passed
    assert run_verification("Laplace on records", size="quick", seed=0).passed
