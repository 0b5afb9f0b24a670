"""Issue 29, Deliver 2: the publish path owns its guards. `ppdp run` and the window's worker each had a copy of
"errors, no ledger, over budget" (and the copies differed); now both go through the engine's `check_ready`
(`charged_release`), so they refuse the same plan with the same words. The window's worker runs the plan the
window showed (`Session.preview`), never a second one planned from parts."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ppdp_gui.cli import main
from ppdp_gui.engine.data import read_table
from ppdp_gui.engine.data.domains import Domain
from ppdp_gui.engine.errors import BudgetError, ParameterError, PpdpError
from ppdp_gui.engine.pipeline import release as release_module
from ppdp_gui.engine.privacy.ledger import Ledger
from ppdp_gui.gui.session import Session
from ppdp_gui.gui.workers.tasks import release_job

PARAMS = {"columns": ("sex",), "epsilon": 3.0}  # above a new table's default cap of 2


@pytest.fixture
def guard_calls(monkeypatch) -> list:
    """Every refusal the engine's one guard raised, in order."""
    calls = []
    real = release_module.check_ready

    def spying(plan, ledger, **kw):
        try:
            return real(plan, ledger, **kw)
        except PpdpError as exc:
            calls.append(exc)
            raise
    monkeypatch.setattr(release_module, "check_ready", spying)
    return calls


def ward(tmp_path):
    r = np.random.default_rng(5)
    path = tmp_path / "ward.csv"
    pd.DataFrame({"sex": r.choice(["F", "M"], 200), "age": r.integers(20, 80, 200)}).to_csv(path, index=False)
    return path


def window_plan(qtbot, path, ledger, params=PARAMS):
    """The plan the window shows for the table (Session.preview), as the Run step sends it to the worker."""
    session = Session(ledger=ledger)
    data = read_table(path).confirm_guesses()
    session.set_dataset(data)
    session.set_domain("sex", Domain(categories=("F", "M")))
    session.set_mechanism("Laplace histogram", dict(params))
    return session.preview()


def test_cli_and_window_refuse_an_over_budget_plan_alike(qtbot, tmp_path, capsys, guard_calls):
    path = ward(tmp_path)
    code = main(["run", "Laplace histogram", "-i", str(path), "-o", str(tmp_path / "r.csv"), "--ledger",
                 str(tmp_path / "cli.sqlite"), "--confirm-roles", "--domain", "sex=F,M", "-p", "columns=sex",
                 "-p", "epsilon=3"])
    err = capsys.readouterr().err
    assert code == 2 and not (tmp_path / "r.csv").exists()
    ledger = Ledger(tmp_path / "window.sqlite")
    planned = window_plan(qtbot, path, ledger)
    assert planned.over_budget and not planned.errors
    with pytest.raises(BudgetError) as refused:
        list(release_job(planned, str(ledger.path)))
    assert len(guard_calls) == 2 and all(type(e) is BudgetError for e in guard_calls)  # both from check_ready
    assert str(guard_calls[0]) == str(guard_calls[1]) == str(refused.value) == planned.budget_text()
    assert err.strip() == f"ppdp: error: {' '.join(planned.budget_text().split())}"
    assert Ledger(tmp_path / "window.sqlite").entries() == [] and Ledger(tmp_path / "cli.sqlite").entries() == []


def test_a_dp_plan_without_a_ledger_is_refused_by_the_same_guard(qtbot, tmp_path, guard_calls):
    planned = window_plan(qtbot, ward(tmp_path), Ledger(tmp_path / "l.sqlite"), {**PARAMS, "epsilon": 1.0})
    assert planned.ok
    with pytest.raises(BudgetError, match="budget ledger cannot be opened"):
        list(release_job(planned, None))
    assert len(guard_calls) == 1


def test_a_plan_with_errors_is_refused_with_the_cli_words(qtbot, tmp_path, capsys, guard_calls):
    path = ward(tmp_path)
    planned = window_plan(qtbot, path, Ledger(tmp_path / "l.sqlite"), {**PARAMS, "epsilon": 0})
    with pytest.raises(ParameterError) as refused:
        list(release_job(planned, str(tmp_path / "l.sqlite")))
    code = main(["run", "Laplace histogram", "-i", str(path), "-o", str(tmp_path / "r.csv"), "--ledger",
                 str(tmp_path / "cli.sqlite"), "--confirm-roles", "--domain", "sex=F,M", "-p", "columns=sex",
                 "-p", "epsilon=0"])
    assert code == 2
    assert capsys.readouterr().err.strip() == f"ppdp: error: {' '.join(str(refused.value).split())}"
    assert "below the smallest allowed value" in str(refused.value) and len(guard_calls) == 2


def test_one_window_release_coerces_each_parameter_once(qtbot, tmp_path, monkeypatch):
    """The Run step's plan (Session.preview) is the only place the parameters are resolved; the worker runs that
    plan (release_job is run here in-process, as the worker process runs it)."""
    from collections import Counter

    from ppdp_gui.engine.mechanisms import base, registry
    calls: Counter = Counter()
    real = base.ParamSpec.coerce

    def counting(self, value):
        calls[self.name] += 1
        return real(self, value)
    monkeypatch.setattr(base.ParamSpec, "coerce", counting)
    ledger = Ledger(tmp_path / "l.sqlite")
    planned = window_plan(qtbot, ward(tmp_path), ledger, {**PARAMS, "epsilon": 1.0})
    published = list(release_job(planned, str(ledger.path)))[-1]
    assert published.ledger_entry is not None and len(ledger.entries()) == 1
    assert calls == Counter({spec.name: 1 for spec in registry.get("Laplace histogram").params}), calls
