"""Opening a second table in the same window (issue 26, finding 1): nothing derived from the first table — its
taxonomy coverage, the editor's "Add missing values", parameters applied by advice, domains, releases, simulations —
is shown, offered or applied to the second."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
from PySide6.QtCore import Qt

from ppdp_gui.engine.data.domains import Domain

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))
from clinical_helpers import heart_like  # noqa: E402


def breast_like(n: int = 286, seed: int = 2) -> pd.DataFrame:
    """Shaped like the UCI breast-cancer table: age in decades written as text, a few coded columns."""
    r = np.random.default_rng(seed)
    return pd.DataFrame({"age": r.choice(["30-39", "40-49", "50-59", "60-69", "70-79"], n),
                         "menopause": r.choice(["premeno", "ge40", "lt40"], n),
                         "tumor-size": r.choice(["0-4", "5-9", "10-14", "15-19", "20-24"], n),
                         "deg-malig": r.integers(1, 4, n),
                         "class": r.choice(["no-recurrence-events", "recurrence-events"], n)})


def open_table(window, qtbot, path) -> None:
    before = window.session.dataset
    window.open_path(str(path))
    qtbot.waitUntil(lambda: window.session.dataset is not None and window.session.dataset is not before,
                    timeout=30000)
    qtbot.waitUntil(lambda: not window.data_view._columns_later.pending, timeout=10000)


def test_second_table_shows_nothing_of_the_first(make_window, qtbot, tmp_path):
    heart, breast = tmp_path / "heart.csv", tmp_path / "breast.csv"
    heart_like().to_csv(heart, index=False)
    breast_like().to_csv(breast, index=False)
    w = make_window()
    open_table(w, qtbot, heart)
    assert "age" in w.session.dataset.quasi_identifiers
    w.go_to(w.taxonomy_view)
    w.taxonomy_view.select("age")
    qtbot.waitUntil(lambda: w.taxonomy_view.editor.column == "age", timeout=5000)
    heart_ages = set(heart_like()["age"].astype(str))
    # things made for the heart table: a public domain, a release, a parameter set as advice sets it
    w.session.set_domain("age", Domain(low=0, high=120, integer=True))
    w.go_to(w.run_view)
    qtbot.waitUntil(lambda: w.run_view.run_button.isEnabled(), timeout=10000)
    qtbot.mouseClick(w.run_view.run_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: not w.run_view.running and len(w.session.releases) == 1, timeout=120000)
    mechanism = w.session.mechanism_name
    spec = next(p for p in w.mechanism_view.panel.specs if p.kind == "int" and p.default is not None)
    applied = spec.default + 1
    w.session.set_params({**w.session.params, spec.name: applied})  # what "Apply this advice" does
    assert w.mechanism_view.panel.values()[spec.name] == applied

    open_table(w, qtbot, breast)
    # nothing of the heart table is applied, listed or stated for the breast table
    assert w.session.releases == [] and w.session.sweeps == [] and w.session.exports == {}
    qtbot.waitUntil(lambda: not w.results_view.showing, timeout=10000)
    assert w.results_view.release_combo.count() == 0 and w.export_view.release_combo.count() == 0
    assert not w.export_view.export_button.isEnabled()
    assert w.session.dataset.spec("age").domain is None
    assert "120" not in w.data_view.domain_item("age").text()
    if w.session.mechanism_name == mechanism:
        assert w.session.params.get(spec.name, spec.default) == spec.default
        assert w.mechanism_view.panel.values()[spec.name] == spec.default
    w.go_to(w.taxonomy_view)
    w.taxonomy_view.select("age")
    editor = w.taxonomy_view.editor
    breast_ages = set(w.session.dataset.frame["age"].dropna().astype(str))
    shown = set(editor.tree().value_labels())
    assert not (shown & heart_ages), f"heart's ages in breast's tree: {sorted(shown & heart_ages)[:5]}"
    cov = editor.coverage()
    offered = set(cov.missing) if cov is not None else set()
    assert not (offered & heart_ages)
    editor.add_missing_values()
    assert not (set(w.session.dataset.spec("age").taxonomy.leaf_values() if w.session.dataset.spec("age").taxonomy
                    else []) & heart_ages)


def test_the_release_context_belongs_to_its_table(make_window, qtbot, tmp_path):
    """The governance questionnaire's answers (recipient, threshold, recorded overrides, the project id behind the
    pseudonym key) were kept by the session across tables: the next table's export was gated, and its dossier
    written, with the first table's context."""
    from ppdp_gui.engine.persistence import release_context as cx
    heart, breast = tmp_path / "heart.csv", tmp_path / "breast.csv"
    heart_like().to_csv(heart, index=False)
    breast_like().to_csv(breast, index=False)
    w = make_window()
    open_table(w, qtbot, heart)
    w.session.governance_context = cx.ReleaseContext(release="public", recipient="a journal").to_json()
    assert w.session.recipe().context["recipient"] == "a journal"
    open_table(w, qtbot, breast)
    assert w.session.governance_context == {} and not w.session.recipe().context
