"""Tuning that does not leak (issue 33, item 4): the simulation behind the advice runs on a DP copy charged to the
ledger, or on a public table, and the result says which and what it cost. A spy replaces the private table's rows
once the copy is made: any later read of them fails the test."""

from fractions import Fraction

import pytest

from ppdp_gui.engine.advice import advise
from ppdp_gui.engine.errors import ParameterError
from ppdp_gui.engine.mechanisms.base import Progress
from ppdp_gui.engine.pipeline import sweep as sweep_module
from ppdp_gui.engine.pipeline.proxy import DP_COPY, OWN, PUBLIC, cost_words
from ppdp_gui.engine.pipeline.sweep import SweepResult, simulate
from ppdp_gui.engine.privacy.ledger import Ledger
from tests.engine.test_marginals import table

GRID = {"epsilon": [0.3, 3.0]}


class Exploding:
    """Stands for the private rows after the copy is made: any use of them is a leak."""

    def __getattr__(self, name):
        raise AssertionError(f"the private table was read after the DP copy was made (.{name})")

    def __len__(self):
        raise AssertionError("the private table was read after the DP copy was made (len)")


def drain(gen) -> SweepResult:
    out = None
    for item in gen:
        if not isinstance(item, Progress):
            out = item
    return out


def test_advice_on_a_dp_copy_reads_only_the_copy_and_the_ledger_holds_its_charge(tmp_path, monkeypatch):
    monkeypatch.setenv("PPDP_TEST_SEED", "5")  # the copy's noise, fixed for the test (as for any release)
    data = table(600)
    rows = data.frame
    ledger = Ledger(tmp_path / "ledger.sqlite")
    real = sweep_module.dp_copy

    def spying(*args, **kwargs):
        for item in real(*args, **kwargs):
            if not isinstance(item, Progress):  # the copy is made: from now on the private rows are gone
                object.__setattr__(data, "frame", Exploding())
            yield item

    monkeypatch.setattr(sweep_module, "dp_copy", spying)
    result = drain(simulate("Marginal synthesizer", data, {}, GRID, on=DP_COPY, ledger=ledger,
                            proxy_epsilon=Fraction(1, 10), repeats=2, seed=5))
    assert isinstance(data.frame, Exploding)  # the spy was in place for the whole simulation
    assert result.basis.kind == DP_COPY and result.basis.epsilon == Fraction(1, 10) and result.basis.accounted
    assert "charged to the budget ledger" in result.basis.words and len(result.rows) == 4
    advice = advise(result, "epsilon", more_private="lower")
    assert advice is not None
    object.__setattr__(data, "frame", rows)
    identity = ledger.identify(data)
    assert ledger.spent(identity) == Fraction(1, 10)
    (entry,) = ledger.entries(identity.fingerprint)
    assert entry.mechanism == "Marginal synthesizer" and entry.id == result.basis.ledger_entry
    assert result.table.startswith("table:")  # the advice still belongs to the private table


def test_a_dp_copy_needs_a_ledger_and_refuses_a_column_without_public_domain(tmp_path):
    data = table(100)
    with pytest.raises(ParameterError, match="ledger"):
        drain(simulate("Marginal synthesizer", data, {}, GRID, on=DP_COPY, ledger=None))
    ledger = Ledger(tmp_path / "ledger.sqlite")
    with pytest.raises(ParameterError, match="age"):
        drain(simulate("Marginal synthesizer", data.with_column("age", domain=None), {}, GRID, on=DP_COPY,
                       ledger=ledger))
    assert not ledger.entries()  # refused before anything was charged


def test_a_public_table_costs_nothing_and_the_own_table_says_it_is_unaccounted():
    data, public = table(300, seed=1), table(300, seed=2)
    result = drain(simulate("Marginal synthesizer", data, {}, GRID, on=PUBLIC, public=public, repeats=1, seed=1))
    assert result.basis.kind == PUBLIC and result.basis.epsilon == 0 and result.basis.accounted
    own = drain(simulate("Marginal synthesizer", data, {}, GRID, on=OWN, repeats=1, seed=1))
    assert not own.basis.accounted and "itself a release" in own.basis.words
    assert "charged" in cost_words(DP_COPY) and "not accounted" in cost_words(OWN)


def test_the_simulations_seed_never_seeds_the_dp_copy(tmp_path, monkeypatch):
    """`--seed` makes a simulation reproducible; a DP copy drawn from that known seed would not be private."""
    monkeypatch.delenv("PPDP_TEST_SEED", raising=False)
    seen = []
    real = sweep_module.dp_copy

    def recording(*args, **kwargs):
        seen.append(kwargs.get("seed"))
        yield from real(*args, **kwargs)

    monkeypatch.setattr(sweep_module, "dp_copy", recording)
    drain(simulate("Marginal synthesizer", table(2000), {}, {"epsilon": [1.0]}, on=DP_COPY,
                   ledger=Ledger(tmp_path / "ledger.sqlite"), proxy_epsilon=1, repeats=1, seed=3))
    assert seen == [None]


def test_a_copy_too_small_to_simulate_on_says_so_and_its_charge_stays(tmp_path, monkeypatch):
    """A copy with fewer rows than the simulation needs (here: the floor raised above any copy) is refused with
    words that say its ε is spent and what to do; the ledger keeps the charge."""
    monkeypatch.setenv("PPDP_TEST_SEED", "1")
    monkeypatch.setattr(sweep_module, "MIN_COPY_ROWS", 10 ** 9)
    ledger = Ledger(tmp_path / "ledger.sqlite")
    with pytest.raises(ParameterError, match="too few to simulate on") as info:
        drain(simulate("Marginal synthesizer", table(300), {}, GRID, on=DP_COPY, ledger=ledger, repeats=1))
    assert "stays in the ledger" in str(info.value) and len(ledger.entries()) == 1
