"""The mechanism conformance kit (issue 29, Deliver 5): what every registered mechanism must do, checked for each
entry of the registry with no per-mechanism code — so a new mechanism that forgets a step fails here, with a
message saying which step (docs/adding_a_mechanism.md is the checklist). The example mechanism kept in the tests
(tests/example_mechanism.py, registered only in this process) passes it too.

The window's half (the same bytes from `ppdp run` and from the window) is in tests/gui/test_same_release.py."""

from __future__ import annotations

import importlib
import inspect
import pickle
import sys
from pathlib import Path

import pandas as pd
import pytest

import ppdp_gui.engine.claims as claim_types
from ppdp_gui.cli import main
from ppdp_gui.engine import glossary
from ppdp_gui.engine.mechanisms import registry
from ppdp_gui.engine.mechanisms.base import Mechanism, PrivacyCost, ReleaseShape
from ppdp_gui.engine.pipeline import load, plan, run_release
from ppdp_gui.engine.persistence.project import read_recipe

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conformance_helpers import NEVER_RELEASED, table_params, ward_recipe  # noqa: E402
from example_mechanism import EXAMPLE, registered  # noqa: E402

NAMES = registry.names() + [EXAMPLE]
#: known failures, (check, mechanism) -> reason; strict, so the kit says when one is fixed
KNOWN: dict[tuple[str, str], str] = {}


def cases(check: str) -> list:
    """Every registered name, a known failure of `check` marked xfail(strict=True) with its reason."""
    return [pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=KNOWN[(check, n)]))
            if (check, n) in KNOWN else n for n in NAMES]


@pytest.fixture(autouse=True)
def example_registered(monkeypatch):
    """The example mechanism is in the registry for these tests only."""
    with registered(monkeypatch):
        yield


def is_dp(name: str) -> bool:
    cls = registry.get(name)
    return cls().privacy_cost(**cls.resolve_params(**table_params(name))).epsilon is not None


@pytest.mark.parametrize("name", NAMES)
def test_the_entry_names_a_mechanism_and_its_defaults_resolve(name):
    cls = registry.get(name)
    assert inspect.isclass(cls) and issubclass(cls, Mechanism), f"registry entry {name!r} is not a Mechanism"
    assert cls.name == name, f"the registry calls it {name!r}, the class calls itself {cls.name!r}"
    assert cls.guarantee and cls.params, f"{name}: set `guarantee` and `params` (ParamSpecs)"
    defaults = cls.resolve_params()
    assert set(defaults) == {p.name for p in cls.params}
    assert all(p.label and p.help for p in cls.params), f"{name}: every ParamSpec needs a label and a help text"


@pytest.mark.parametrize("name", NAMES)
def test_the_privacy_cost_is_known_from_the_parameters_alone(name):
    cls = registry.get(name)
    cost = cls().privacy_cost(**cls.resolve_params(**table_params(name)))
    assert isinstance(cost, PrivacyCost)
    if cost.epsilon is not None:
        assert cost.epsilon > 0 and "DP" in cls.guarantee, f"{name}: an ε-DP cost needs a DP guarantee label"


@pytest.mark.parametrize("name", NAMES)
def test_the_mechanism_pickles_for_the_worker_process(name):
    mech = registry.create(name)
    again = pickle.loads(pickle.dumps(mech))
    assert type(again) is type(mech)


@pytest.mark.parametrize("name", NAMES)
def test_the_window_draws_its_parameters_from_the_specs_alone(name, qtbot):
    from ppdp_gui.gui.widgets.param_panel import ParamPanel
    cls = registry.get(name)
    panel = ParamPanel(cls.params)
    qtbot.addWidget(panel)
    shown = panel.values()
    assert set(shown) == {p.name for p in cls.params}
    plain = {p.name for p in cls.params if p.kind not in ("column", "columns")}
    resolved = cls.resolve_params(**{k: v for k, v in shown.items() if k in plain})
    assert {k: resolved[k] for k in plain} == {k: cls.resolve_params()[k] for k in plain}, \
        f"{name}: the panel shows other values than the defaults"


def published(name: str, tmp_path: Path):
    recipe = read_recipe(ward_recipe(tmp_path, name))
    data = load(recipe).dataset
    planned = plan(data, name, recipe.params, allow_data_domains=True)
    assert not planned.errors, [p.message for p in planned.errors]
    return planned.dataset, planned, list(run_release(planned, seed=7, write_record=False))[-1]


@pytest.mark.parametrize("name", NAMES)
def test_ppdp_run_releases_no_identifier_or_person_column(name, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PPDP_TEST_SEED", "7")
    recipe = ward_recipe(tmp_path, name)
    code = main(["run", "--recipe", str(recipe), "-o", str(tmp_path / "out.csv"),
                 "--ledger", str(tmp_path / "ledger.sqlite")])
    assert code == 0, capsys.readouterr().err
    written = sorted(tmp_path.glob("out*.csv"))
    assert written
    for f in written:
        columns = set(pd.read_csv(f, dtype=str).columns)
        assert not columns & set(NEVER_RELEASED), f"{name} released {columns & set(NEVER_RELEASED)} in {f.name}"


@pytest.mark.parametrize("name", NAMES)
def test_claims_are_typed_and_a_dp_release_claims_what_it_cost(name, tmp_path):
    data, planned, pub = published(name, tmp_path)
    kinds = tuple(c for _, c in inspect.getmembers(claim_types, inspect.isclass)
                  if c.__module__ == claim_types.__name__)
    assert all(isinstance(c, kinds) for c in pub.claims), f"{name}: a claim is not one of engine/claims.py's types"
    assert all(getattr(c, "table", "table") in pub.release.tables() for c in pub.claims), \
        f"{name}: a claim names a table the release does not have"
    # what the mechanism says before the run is what its release claims, as the same objects: every guarantee
    # (all but the PublicSchema a DP release adds from its output's domains) is declared by `declared_claims`
    declared = planned.mechanism.declared_claims(data, planned.params)
    produced = tuple(c for c in pub.release.claims if not isinstance(c, claim_types.PublicSchema))
    assert produced == declared, f"{name}: declared {declared} before the run, the release claims {produced}"
    assert all(a is b for a, b in zip(produced, declared)), f"{name}: the release made its claims again"
    dp = claim_types.dp_claim(pub.claims)
    if planned.cost.epsilon is not None:
        assert dp is not None and dp.epsilon == planned.cost.epsilon, f"{name}: a DP release must claim its ε"
    else:
        assert dp is None


@pytest.mark.parametrize("name", cases("glossary"))
def test_every_measure_and_figure_is_in_the_glossary(name, tmp_path):
    data, planned, pub = published(name, tmp_path)
    names = set(planned.mechanism.measures(pub.release, data, None) or {})
    names |= set(planned.mechanism.reference_measures(data, None) or {})
    missing = sorted(n for n in names if not glossary.figure(n).meaning)
    assert not missing, f"{name}: add a glossary entry (engine/glossary.py) for {missing}"


@pytest.mark.parametrize("name", NAMES)
def test_each_figure_is_named_once(name, tmp_path):
    """The custodian record, `ppdp run` and the window show a figure once, under one name (the group and risk
    figures come from metrics/risk.group_figures only; a mechanism's measures never repeat them)."""
    _, _, pub = published(name, tmp_path)
    said = {}
    for figure in pub.figures:
        entry = glossary.figure(figure)
        said.setdefault((entry.title, entry.formula), []).append(figure)
    twice = [names for names in said.values() if len(names) > 1]
    assert not twice, f"{name}: one figure under several names {twice}: keep the glossary's one name"


@pytest.mark.parametrize("name", NAMES)
def test_the_plain_words_before_a_run_come_from_the_mechanism(name, tmp_path):
    data, planned, _ = published(name, tmp_path)
    shape = planned.mechanism.describe_release(data, planned.params)
    assert isinstance(shape, ReleaseShape) and (shape.sentences or shape.columns), \
        f"{name}: describe_release (or a summary) must say what the release holds"


@pytest.mark.parametrize("name", [n for n in NAMES if n != EXAMPLE])
def test_a_dp_mechanism_declares_its_audit_tables_in_the_registry(name):
    if not is_dp(name):
        assert registry.audit_tables(name) is None, f"{name} is not ε-DP; the verifier has nothing to audit"
        return
    target = registry.audit_tables(name)
    assert target, f"{name} is ε-DP: add its audit tables (engine/verify) to the registry's _AUDITS"
    module, function = target.split(":")
    scenarios = getattr(importlib.import_module(module), function)()
    assert scenarios, f"{name}: its audit tables are empty"
    from ppdp_gui.engine.verify.scenarios import scenarios_for
    assert [s.name for s in scenarios_for(name)] == [s.name for s in scenarios], \
        f"{name}: the verifier's own list and the registry disagree"
