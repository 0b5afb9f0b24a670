"""Charge only what can complete (issue 25, finding 4): once ε is reserved, a figure for the custodian that
fails (scikit-learn's LDA raising IndexError on a degenerate sample) is recorded as failed, never raised; the
ledger entry holds the release's hash only once export has put a file in place."""

from pathlib import Path

import json

from ppdp_gui.engine.mechanisms.laplace import LaplaceHistogram
from ppdp_gui.engine.pipeline import export, plan, run_release
from ppdp_gui.engine.privacy.ledger import Ledger
from tests.engine.test_pipeline import PARAMS, adult_like


class FailingFigures(LaplaceHistogram):
    """The Laplace histogram whose custodian figures crash, as DP-LDA's did."""

    def measures(self, release, data, reference=None):
        raise IndexError("index 1 is out of bounds for axis 0 with size 1")


def test_a_figure_that_crashes_after_the_reservation_is_recorded_and_the_run_completes(tmp_path):
    ledger = Ledger(tmp_path / "ledger.sqlite")
    data = adult_like()
    published = list(run_release(plan(data, FailingFigures(), PARAMS, ledger=ledger), ledger=ledger))[-1]
    failed = [w for w in published.warnings if "could not be computed" in w]
    assert failed and "IndexError" in failed[0]
    entry = ledger.entry(published.ledger_entry.id)
    assert entry.epsilon == published.cost.epsilon and entry.output_hash is None  # charged, no output yet
    record = json.loads(Path(published.record_path).read_text(encoding="utf-8"))
    assert any("could not be computed" in w for w in record["warnings"])
    assert record["ledger"]["entry"]["output_hash"] is None
    out = export(published, tmp_path / "release.csv", ledger=ledger)
    assert out.files[0].exists()
    assert ledger.entry(published.ledger_entry.id).output_hash == published.output_hash
    record = json.loads(Path(published.record_path).read_text(encoding="utf-8"))
    assert record["ledger"]["entry"]["output_hash"] == published.output_hash


def test_an_export_that_fails_leaves_the_entry_without_output(tmp_path):
    ledger = Ledger(tmp_path / "ledger.sqlite")
    published = list(run_release(plan(adult_like(), "Laplace histogram", PARAMS, ledger=ledger),
                                 ledger=ledger))[-1]

    def veto():
        raise RuntimeError("cancelled")
    try:
        export(published, tmp_path / "release.csv", ledger=ledger, before_commit=veto)
    except RuntimeError:
        pass
    assert not (tmp_path / "release.csv").exists()
    assert ledger.entry(published.ledger_entry.id).output_hash is None


class Crashing(LaplaceHistogram):
    """A mechanism that fails after the reservation (a library error inside its computation)."""

    def _run(self, data, *, rng, **params):
        yield from ()
        raise IndexError("index 1 is out of bounds")


def test_a_mechanism_that_crashes_after_the_reservation_is_one_plain_error(tmp_path):
    from ppdp_gui.engine.errors import MechanismError
    ledger = Ledger(tmp_path / "ledger.sqlite")
    planned = plan(adult_like(), Crashing(), PARAMS, ledger=ledger)
    try:
        list(run_release(planned, ledger=ledger))
    except MechanismError as exc:
        assert "could not finish" in str(exc) and "stays spent" in str(exc) and "no output" in str(exc)
    else:
        raise AssertionError("the crash was swallowed")
    [entry] = ledger.entries()
    assert entry.epsilon > 0 and entry.output_hash is None
