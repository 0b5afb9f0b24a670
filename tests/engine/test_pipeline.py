"""The publish path: plan (validated once) → run_release (budget reserved before any computation and never
refunded, every claim recounted) → Published; run_sweep: grid × repeats, seeded and stratified, never charged."""

import json
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from ppdp_gui.engine.claims import KAnonymity
from ppdp_gui.engine.data.domains import Domain
from ppdp_gui.engine.data.schema import ColumnSpec, Dataset, Role, SourceInfo
from ppdp_gui.engine.errors import BudgetError, CheckError, ParameterError
from ppdp_gui.engine.mechanisms.base import Mechanism, ParamSpec, PrivacyCost, Progress, Release
from ppdp_gui.engine.mechanisms.laplace import LaplaceHistogram, expected_abs_noise
from ppdp_gui.engine.noise import NoiseSource
from ppdp_gui.engine.persistence.jsonable import jsonable
from ppdp_gui.engine.pipeline import Published, plan, run_release, run_sweep
from ppdp_gui.engine.pipeline.sweep import split_holdout


@dataclass(frozen=True)
class FakeIdentity:
    fingerprint: str = "fp"
    budget: str = "fp"
    known: bool = True
    near_copy_of: str | None = None
    similarity: float | None = None
    label: str = ""


@dataclass(frozen=True)
class FakeBudget:
    cap: Fraction | None
    spent: Fraction
    spent_delta: Fraction = Fraction(0)
    releases: int = 0
    default_cap_applied: bool = False

    @property
    def remaining(self):
        return None if self.cap is None else max(self.cap - self.spent, Fraction(0))


@dataclass(frozen=True)
class FakeEntry:
    id: int
    output_hash: str | None = None


class FakeLedger:
    """Records the order of calls; refuses a reservation above `cap` like the real ledger."""

    path = None

    def __init__(self, cap=None, log=None):
        self.cap, self.log, self.spent, self.completed = cap, log if log is not None else [], Fraction(0), {}

    def identify(self, data, label="", separate=False):
        return FakeIdentity()

    def budget(self, identity):
        return FakeBudget(self.cap, self.spent)

    def reserve(self, identity, mechanism, params, epsilon, delta=0, *, release_id="", label="",
                neighbouring="add/remove"):
        json.dumps(params)  # params must be storable
        if self.cap is not None and self.spent + epsilon > self.cap:
            self.log.append("refused")
            raise BudgetError("over the cap")
        self.spent += epsilon
        self.log.append("reserve")
        return FakeEntry(len(self.log))

    def complete(self, entry_id, output_hash):
        self.log.append("complete")
        self.completed[entry_id] = output_hash

    def entry(self, entry_id):
        return FakeEntry(entry_id, self.completed.get(entry_id))

    def protected_paths(self):
        return []


class Spy(LaplaceHistogram):
    """The Laplace histogram, logging when it starts computing, each validation, and whether it was closed."""

    def __init__(self, log):
        self.log = log

    def problems(self, data, params):
        self.log.append("validate")
        return super().problems(data, params)

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


def release(mech, data, params, ledger=None, rng=None, **kw):
    return list(run_release(plan(data, mech, params, ledger=ledger, **kw), ledger=ledger, rng=rng))


def test_reserve_happens_before_computing_and_the_hash_waits_for_the_export(tmp_path):
    log = []
    ledger = FakeLedger(log=log)
    items = release(Spy(log), adult_like(), PARAMS, ledger, NoiseSource.for_tests(1))
    published = items[-1]
    assert isinstance(published, Published) and all(isinstance(i, Progress) for i in items[:-1])
    assert log == ["validate", "reserve", "compute", "closed"]  # validated once per release; no output yet
    assert ledger.spent == Fraction(1, 2)
    assert published.ledger_entry.id not in ledger.completed
    from ppdp_gui.engine.pipeline import export
    export(published, tmp_path / "out.csv", ledger=ledger)
    assert log[-1] == "complete" and ledger.completed[published.ledger_entry.id] == published.output_hash
    assert [p.fraction for p in items[:-1]] == sorted(p.fraction for p in items[:-1])


def test_budget_error_stops_everything_before_any_work():
    log = []
    ledger = FakeLedger(cap=Fraction(1, 4), log=log)
    planned = plan(adult_like(), Spy(log), PARAMS, ledger=ledger)
    assert planned.over_budget and "more than is left" in planned.budget_text()
    with pytest.raises(BudgetError) as refused:
        list(run_release(planned, ledger=ledger))
    assert log == ["validate"]  # the publish path's guard refused it before the ledger or the mechanism was touched
    assert str(refused.value) == planned.budget_text()


def test_invalid_parameters_raise_before_the_ledger_is_touched():
    log = []
    with pytest.raises(ParameterError, match="column"):
        release("Laplace histogram", adult_like(), {"columns": "nope"}, FakeLedger(log=log))
    with pytest.raises(ParameterError):
        release("Laplace histogram", adult_like(), {**PARAMS, "epsilon": -1}, FakeLedger(log=log))
    assert log == []


def test_cancelling_stops_the_work_and_keeps_the_budget_spent():
    log = []
    ledger = FakeLedger(log=log)
    gen = run_release(plan(adult_like(), Spy(log), PARAMS, ledger=ledger), ledger=ledger)
    for _item in gen:
        if "compute" in log:
            break
    gen.close()
    assert log == ["validate", "reserve", "compute", "closed"]  # never completed, never refunded
    assert ledger.spent == Fraction(1, 2)


class FixedTable(Mechanism):
    """A syntactic 'mechanism' that releases a given table and claims k = 3 on 'zip'."""

    name = "fixed"
    guarantee = "k-anonymity"
    params = (ParamSpec("k", "k", "int", default=3, low=1),)

    def __init__(self, table, extra=None, claims=None):
        self.table, self.extra, self.claims = table, extra or {}, claims

    def cost(self, params):
        return PrivacyCost(k=params.get("k", 3))

    def _run(self, data, *, rng, k):
        claims = self.claims if self.claims is not None else (KAnonymity(k, ("zip",)),)
        yield Release(self.name, self.table, self.privacy_cost(k=k), {"k": k}, claims=claims,
                      extra_tables=self.extra)


def test_k_anonymity_claims_are_recounted_independently():
    data = adult_like(10)
    good = pd.DataFrame({"zip": ["13*"] * 3 + ["14*"] * 3})
    ledger = FakeLedger()
    published = release(FixedTable(good), data, {"k": 3}, ledger)[-1]
    assert [c.ok for c in published.checks] == [True] and published.checks[0].figures["smallest group"] == 3
    assert ledger.log == []  # not DP: nothing charged
    assert published.figures["smallest group (rows)"] == 3  # for the custodian
    bad = pd.DataFrame({"zip": ["13*"] * 3 + ["14*"] * 2})
    with pytest.raises(CheckError, match="fewer than k"):
        release(FixedTable(bad), data, {"k": 3})


def test_every_table_of_a_release_is_recounted():
    """A multi-table release is refused when any one of its tables (not only the main one) breaks its claim."""
    good = pd.DataFrame({"a": ["x"] * 4 + ["y"] * 4, "c": ["0", "1"] * 4})
    bad = pd.DataFrame({"b": ["u"] * 7 + ["v"], "c": ["0", "1"] * 4})
    claims = (KAnonymity(4, ("a",)), KAnonymity(4, ("b",), table="fragment 2"))
    with pytest.raises(CheckError, match="fragment 2"):
        release(FixedTable(good, {"fragment 2": bad}, claims), adult_like(10), {"k": 4})
    fixed = good.rename(columns={"a": "b"})
    published = release(FixedTable(good, {"fragment 2": fixed}, claims), adult_like(10), {"k": 4})[-1]
    assert len(published.checks) == 2 and all(c.ok for c in published.checks)


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


def test_jsonable_handles_engine_values():
    out = jsonable({"f": Fraction(1, 3), "t": (1, np.int64(2)), "nan": float("nan"), "r": Role.CLASS,
                    "a": np.arange(3)})
    assert out == {"f": "1/3", "t": [1, 2], "nan": None, "r": "class", "a": [0, 1, 2]}


def test_with_the_real_ledger_a_cancelled_run_stays_charged(tmp_path):
    from ppdp_gui.engine.privacy.fingerprint import content_hash
    from ppdp_gui.engine.privacy.ledger import Ledger
    ledger, data = Ledger(tmp_path / "ledger.sqlite"), adult_like()
    identity = ledger.identify(data)
    ledger.set_cap(identity, Fraction(1))
    published = release("Laplace histogram", data, PARAMS, ledger)[-1]
    assert ledger.entry(published.ledger_entry.id).output_hash is None  # no output until a file exists
    from ppdp_gui.engine.pipeline import export
    export(published, tmp_path / "out.csv", ledger=ledger)
    entry = ledger.entry(published.ledger_entry.id)
    assert entry.output_hash == content_hash(published.table) == published.output_hash
    gen = run_release(plan(data, "Laplace histogram", PARAMS, ledger=ledger), ledger=ledger)
    for item in gen:
        if item.fraction > 0.05:  # the mechanism has started
            break
    gen.close()
    assert ledger.budget(identity).spent == Fraction(1)
    with pytest.raises(BudgetError):  # the cancelled run's ε is not refunded: the cap is reached
        release("Laplace histogram", data, PARAMS, ledger)
    assert ledger.budget(identity).releases == 2


def test_each_published_release_carries_its_own_ledger_entry(tmp_path):
    """Looked up by id: two releases of the same table get their own entries, not 'the last one'."""
    from ppdp_gui.engine.privacy.ledger import Ledger
    ledger, data = Ledger(tmp_path / "ledger.sqlite"), adult_like()
    first = release("Laplace histogram", data, PARAMS, ledger)[-1]
    second = release("Laplace histogram", data, {**PARAMS, "epsilon": 0.25}, ledger)[-1]
    assert first.ledger_entry.id != second.ledger_entry.id
    assert ledger.entry(first.ledger_entry.id).epsilon == Fraction(1, 2)
    assert ledger.entry(second.ledger_entry.id).epsilon == Fraction(1, 4)
    assert first.record_path and json.loads(open(first.record_path).read())["release_id"] == first.release_id


def test_domains_in_the_schema_make_the_bounds_parameters_unnecessary():
    data = adult_like().with_column("age", domain=Domain(low=0, high=120, integer=True))
    published = release("Laplace histogram", data, {"columns": "age", "bin_width": 10, "epsilon": 1},
                        rng=NoiseSource.for_tests(3))[-1]
    assert published.holds and list(published.table["age"].cat.categories)[0] == "0-9"
    assert len(published.table) == 13  # 0..120 in bands of 10: public, whatever the data
