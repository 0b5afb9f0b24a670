"""run_release: budget reserved before any computation and never refunded, independent k-check enforced;
run_sweep: grid × repeats, seeded and stratified, never charged; the JSON release report."""

import json
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from ppdp_gui.engine.data.schema import ColumnSpec, Dataset, Role, SourceInfo
from ppdp_gui.engine.errors import BudgetError, CheckError, ParameterError
from ppdp_gui.engine.mechanisms.base import Mechanism, ParamSpec, PrivacyCost, Progress, Release
from ppdp_gui.engine.mechanisms.laplace import LaplaceHistogram, expected_abs_noise
from ppdp_gui.engine.noise import NoiseSource
from ppdp_gui.engine.persistence.report import jsonable, release_report
from ppdp_gui.engine.pipeline import run_release, run_sweep
from ppdp_gui.engine.pipeline.sweep import split_holdout


class FakeLedger:
    """Records the order of calls; refuses a reservation above `cap` like the real ledger."""

    def __init__(self, cap=None, log=None):
        self.cap, self.log, self.spent, self.completed = cap, log if log is not None else [], Fraction(0), {}

    def fingerprint(self, frame):
        return "fp"

    def reserve(self, fp, mechanism, params, epsilon, delta=0, label=""):
        json.dumps(params)  # params must be storable
        if self.cap is not None and self.spent + epsilon > self.cap:
            self.log.append("refused")
            raise BudgetError("over the cap")
        self.spent += epsilon
        self.log.append("reserve")
        return len(self.log)

    def complete(self, entry, output_hash):
        self.log.append("complete")
        self.completed[entry] = output_hash


class Spy(LaplaceHistogram):
    """The Laplace histogram, logging when it starts computing and whether it was closed."""

    def __init__(self, log):
        self.log = log

    def _run(self, data, *, rng, **params):
        self.log.append("compute")
        try:
            yield from super()._run(data, rng=rng, **params)
        finally:
            self.log.append("closed")


def adult_like(n=600, seed=0) -> Dataset:
    r = np.random.default_rng(seed)
    frame = pd.DataFrame({"age": r.integers(17, 91, n), "sex": r.choice(["F", "M"], n),
                          "salary": r.choice(["<=50K", ">50K"], n, p=[0.75, 0.25])})
    schema = (ColumnSpec("age", "numeric", Role.QUASI_IDENTIFIER), ColumnSpec("sex", "categorical", Role.QUASI_IDENTIFIER),
              ColumnSpec("salary", "categorical", Role.CLASS))
    return Dataset(frame, schema, SourceInfo(path="/tmp/adult_like.csv", sha256="ab" * 32, n_rows_read=n))


PARAMS = {"columns": "age", "low": 17, "high": 90, "bin_width": 10, "epsilon": 0.5}


def test_reserve_happens_before_computing_and_is_completed_with_the_hash():
    log = []
    ledger = FakeLedger(log=log)
    items = list(run_release(Spy(log), adult_like(), PARAMS, ledger=ledger, rng=NoiseSource.for_tests(1)))
    release = items[-1]
    assert isinstance(release, Release) and all(isinstance(i, Progress) for i in items[:-1])
    assert log == ["reserve", "compute", "closed", "complete"]
    assert ledger.spent == Fraction(1, 2)
    assert ledger.completed[release.metadata["ledger_entry"]] == release.metadata["output_hash"]
    assert [p.fraction for p in items[:-1]] == sorted(p.fraction for p in items[:-1])


def test_budget_error_stops_everything_before_any_work():
    log = []
    gen = run_release(Spy(log), adult_like(), PARAMS, ledger=FakeLedger(cap=Fraction(1, 4), log=log))
    with pytest.raises(BudgetError):
        list(gen)
    assert log == ["refused"]


def test_invalid_parameters_raise_before_the_ledger_is_touched():
    log = []
    with pytest.raises(ParameterError, match="column"):
        list(run_release("Laplace histogram", adult_like(), {"columns": "nope"}, ledger=FakeLedger(log=log)))
    with pytest.raises(ParameterError):
        list(run_release("Laplace histogram", adult_like(), {**PARAMS, "epsilon": -1}, ledger=FakeLedger(log=log)))
    assert log == []


def test_cancelling_stops_the_work_and_keeps_the_budget_spent():
    log = []
    ledger = FakeLedger(log=log)
    gen = run_release(Spy(log), adult_like(), PARAMS, ledger=ledger)
    for item in gen:
        if "compute" in log:
            break
    gen.close()
    assert log == ["reserve", "compute", "closed"]  # never completed, never refunded
    assert ledger.spent == Fraction(1, 2)


class FixedTable(Mechanism):
    """A syntactic 'mechanism' that releases a given table and claims k = 3."""

    name = "fixed"
    guarantee = "k-anonymity"
    params = (ParamSpec("k", "k", "int", default=3, low=1),)

    def __init__(self, table):
        self.table = table

    def privacy_cost(self, **params):
        return PrivacyCost(k=params.get("k", 3))

    def _run(self, data, *, rng, k):
        yield Release(self.name, self.table, self.privacy_cost(k=k), {"k": k},
                      metadata={"quasi_identifiers": ["zip"], "k": k})


def test_k_anonymity_releases_are_recounted_independently():
    data = adult_like(10)
    good = pd.DataFrame({"zip": ["13*"] * 3 + ["14*"] * 3})
    ledger = FakeLedger()
    release = list(run_release(FixedTable(good), data, {"k": 3}, ledger=ledger))[-1]
    assert release.metadata["check"]["ok"] and release.metadata["check"]["min_class"] == 3
    assert ledger.log == []  # not DP: nothing charged
    bad = pd.DataFrame({"zip": ["13*"] * 3 + ["14*"] * 2})
    with pytest.raises(CheckError, match="fewer than k"):
        list(run_release(FixedTable(bad), data, {"k": 3}))


def test_sweep_is_reproducible_and_error_follows_epsilon():
    data = adult_like(3000)
    grid = {"epsilon": [0.1, 1.0]}
    base = {"columns": ("age", "sex"), "low": 17, "high": 90, "bin_width": 1, "non_negative": False}
    items = list(run_sweep("Laplace histogram", data, base, grid, repeats=3, holdout=0, seed=42))
    result = items[-1]
    assert all(isinstance(i, Progress) for i in items[:-1])
    assert len(result.rows) == 6 and result.param_names == ["epsilon"]
    summary = result.summary()
    err = summary[("mean abs error", "mean")]
    for eps in (0.1, 1.0):  # 148 cells x 3 repeats: within 25 % of E|X|
        assert err[eps] == pytest.approx(expected_abs_noise(eps), rel=0.25)
    again = list(run_sweep("Laplace histogram", data, base, grid, repeats=3, holdout=0, seed=42))[-1]
    pd.testing.assert_frame_equal(result.rows.drop(columns="seconds"), again.rows.drop(columns="seconds"))


def test_sweep_validates_every_point_first():
    with pytest.raises(ParameterError):
        list(run_sweep("Laplace histogram", adult_like(), PARAMS, {"epsilon": [1.0, 50.0]}))
    with pytest.raises(ParameterError, match="no parameter"):
        list(run_sweep("Laplace histogram", adult_like(), PARAMS, {"nope": [1]}))


def test_holdout_is_stratified_by_class():
    data = adult_like(3000)
    train, test = split_holdout(data, 1 / 3, NoiseSource.for_tests(5))
    assert train.n_rows + test.n_rows == 3000 and abs(test.n_rows - 1000) <= 2
    share = data.frame["salary"].value_counts(normalize=True)
    for part in (train, test):
        got = part.frame["salary"].value_counts(normalize=True)
        assert np.allclose(got[share.index], share, atol=0.002)
    same = split_holdout(data, 1 / 3, NoiseSource.for_tests(5))[1]
    pd.testing.assert_frame_equal(test.frame, same.frame)


def test_release_report_is_json_and_complete():
    data = adult_like()
    release = list(run_release("Laplace histogram", data, {**PARAMS, "epsilon": 0.1}, ledger=FakeLedger(),
                               rng=NoiseSource.for_tests(2)))[-1]
    report = release_report(release, data)
    text = json.dumps(report, allow_nan=False)
    back = json.loads(text)
    assert back["cost"]["epsilon"] == "1/10" and back["cost"]["epsilon_float"] == 0.1
    assert back["mechanism"] == {"name": "Laplace histogram", "guarantee": "ε-DP"}
    assert back["dataset"]["source_sha256"] == "ab" * 32 and back["dataset"]["rows_used"] == 600
    assert back["release"]["rows"] == 8 and len(back["release"]["output_sha256"]) == 64
    assert back["ledger"] == {"id": 1}
    assert back["params"]["columns"] == ["age"] and back["software"]["ppdp_gui"]
    assert back["warnings"] == [] and back["metadata"]["noise scale"] == 10.0  # public bounds: nothing leaks
    assert back["check"] is None and back["measures"] is None  # no error vs the private data in a release


def test_jsonable_handles_engine_values():
    out = jsonable({"f": Fraction(1, 3), "t": (1, np.int64(2)), "nan": float("nan"), "r": Role.CLASS,
                    "a": np.arange(3)})
    assert out == {"f": "1/3", "t": [1, 2], "nan": None, "r": "class", "a": [0, 1, 2]}


def test_with_the_real_ledger_a_cancelled_run_stays_charged(tmp_path):
    from ppdp_gui.engine.privacy.fingerprint import content_hash
    from ppdp_gui.engine.privacy.ledger import Ledger
    ledger, data = Ledger(tmp_path / "ledger.sqlite"), adult_like()
    fp = ledger.fingerprint(data.frame)
    ledger.set_cap(fp, Fraction(1))
    release = list(run_release("Laplace histogram", data, PARAMS, ledger=ledger))[-1]
    entry = ledger.entries(fp)[-1]
    assert entry.id == release.metadata["ledger_entry"] and entry.output_hash == content_hash(release.table)
    gen = run_release("Laplace histogram", data, PARAMS, ledger=ledger)
    for item in gen:
        if item.fraction > 0.05:  # the mechanism has started
            break
    gen.close()
    assert ledger.spent(fp) == Fraction(1) and ledger.entries(fp)[-1].output_hash is None
    with pytest.raises(BudgetError):  # the cancelled run's ε is not refunded: the cap is reached
        list(run_release("Laplace histogram", data, PARAMS, ledger=ledger))
    assert len(ledger.entries(fp)) == 2
    report = release_report(release, data, ledger_entry=entry)
    assert report["ledger"]["fingerprint"] == fp and report["dataset"]["fingerprint"] == fp


def test_every_fragment_of_a_release_is_recounted():
    """A multi-table release is refused when any one of its tables (not only the main one) breaks k."""
    from ppdp_gui.engine.pipeline.release import check_anonymity

    good = pd.DataFrame({"a": ["x"] * 4 + ["y"] * 4, "c": ["0", "1"] * 4})
    bad = pd.DataFrame({"b": ["u"] * 7 + ["v"], "c": ["0", "1"] * 4})
    frags = [{"table": "fragment 1", "where": "table", "quasi_identifiers": ["a"], "k": 4},
             {"table": "fragment 2", "where": "extra_tables", "quasi_identifiers": ["b"], "k": 4}]
    release = Release("Fragmentation", good, PrivacyCost(k=4), {}, metadata={"fragments": frags},
                      extra_tables={"fragment 2": bad})
    with pytest.raises(CheckError, match="fragment 2"):
        check_anonymity(release)
    fixed = Release("Fragmentation", good, PrivacyCost(k=4), {}, metadata={"fragments": frags},
                    extra_tables={"fragment 2": good.rename(columns={"a": "b"})})
    summary = check_anonymity(fixed)
    assert summary["ok"] and summary["min_class"] == 4 and len(summary["parts"]) == 2
