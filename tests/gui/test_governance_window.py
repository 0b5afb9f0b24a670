"""The window's governance actions (issue 31): the release-context questionnaire saved in the project, the
export step's risk-threshold gate with its explicit override, and the dossier written from the Tools menu."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QDialogButtonBox

from ppdp_gui.engine.persistence import release_context as cx
from ppdp_gui.engine.persistence.project import read_recipe
from ppdp_gui.gui import governance_menu
from ppdp_gui.gui.widgets.release_context_dialog import ReleaseContextDialog

SHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"


def _dialog(qtbot) -> ReleaseContextDialog:
    qtbot.waitUntil(lambda: any(isinstance(w, ReleaseContextDialog) and w.isVisible()
                                for w in QApplication.topLevelWidgets()), timeout=5000)
    return next(w for w in QApplication.topLevelWidgets() if isinstance(w, ReleaseContextDialog) and w.isVisible())


def test_questionnaire_proposes_a_threshold_and_is_saved_in_the_project(loaded_window, qtbot, tmp_path):
    w = loaded_window
    w.release_context_action.trigger()
    d = _dialog(qtbot)
    d.kind.setCurrentIndex(d.kind.findData("public"))
    assert d.threshold.value() == pytest.approx(0.09)
    assert "EMA" in d.source.text() and "Health Canada" in d.source.text()
    d.kind.setCurrentIndex(d.kind.findData("controlled"))
    assert d.threshold.value() == pytest.approx(0.2)
    d.recipient.setText("Regional diabetes registry")
    d.agreement.setText("DUA-2026-14")
    d.intruder.setPlainText("Searched local obituaries and social media for the oldest patients: no match.")
    d.threshold.setValue(0.1)  # own value: a reason is required
    ok = d.findChild(QDialogButtonBox).button(QDialogButtonBox.Ok)
    qtbot.mouseClick(ok, Qt.LeftButton)
    assert d.isVisible() and "Say why" in d.source.text()
    d.why.setText("Board decision 2026-11 for this registry")
    if os.environ.get("PPDP_SCREENSHOTS"):  # the README's screenshot, made on request only
        d.grab().save(str(SHOTS / "9_release_context.png"))
    qtbot.mouseClick(ok, Qt.LeftButton)
    assert not d.isVisible()
    ctx = governance_menu.context_of(w.session)
    assert ctx.release == "controlled" and ctx.threshold == pytest.approx(0.1)
    assert ctx.risk_threshold() == (pytest.approx(0.1), "Board decision 2026-11 for this registry")
    project = tmp_path / "adult.ppdp.json"
    w.session.project_path = str(project)
    assert w.save_project() is not None
    saved = cx.of(read_recipe(project))
    assert saved.recipient == "Regional diabetes registry" and saved.data_use_agreement == "DUA-2026-14"


def test_export_is_gated_then_overridden_and_the_dossier_keeps_it(loaded_window, qtbot, tmp_path, monkeypatch):
    w = loaded_window
    w.session.governance_context = cx.ReleaseContext(release="public").to_json()
    w.go_to(w.mechanism_view)
    w.mechanism_view.combo.setCurrentText("Mondrian")
    w.go_to(w.run_view)
    qtbot.mouseClick(w.run_view.run_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: not w.run_view.running, timeout=120000)
    published = w.session.last_release
    assert published.figures["highest re-identification risk %"] > 9
    view = w.export_view
    w.go_to(view)
    target = tmp_path / "release.csv"
    view.path_edit.setText(str(target))
    answers = iter([("", False), ("Registry use only, agreed by the board", True)])
    monkeypatch.setattr(governance_menu.QInputDialog, "getMultiLineText", lambda *a, **k: next(answers))
    qtbot.mouseClick(view.export_button, Qt.LeftButton)
    assert not view.busy and not target.exists()  # refused: no reason given
    qtbot.mouseClick(view.export_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: not view.busy, timeout=60000)
    assert target.is_file()
    override = governance_menu.context_of(w.session).overrides[0]
    assert override["reason"] == "Registry use only, agreed by the board"
    assert override["release_id"] == published.release_id
    out = tmp_path / "dossier.md"
    governance_menu.ask_dossier(w, layout="hipaa", path=str(out))
    qtbot.waitUntil(out.exists, timeout=60000)
    text = out.read_text(encoding="utf-8")
    assert "HIPAA Expert Determination" in text and "Registry use only, agreed by the board" in text
    assert "EXCEEDS" in text


def test_safe_harbor_from_the_tools_menu(loaded_window, qtbot, tmp_path):
    import pandas as pd
    w = loaded_window
    w.safe_harbor_action.trigger()
    qtbot.waitUntil(lambda: getattr(w, "safe_harbor_dialog", None) is not None
                    and w.safe_harbor_dialog.isVisible(), timeout=30000)
    dialog = w.safe_harbor_dialog
    steps = {s.column: s.action for s in dialog.result_.steps}
    assert "90 or older" in steps["age"]  # the Adult sample has ages of 90
    dialog.attest.setChecked(True)
    dialog.by.setText("A. Nurse")
    out = tmp_path / "adult_safe_harbor.csv"
    assert governance_menu.save_safe_harbor(w, dialog, dialog.data_, path=str(out)) is not None
    got = pd.read_csv(out, dtype=str, keep_default_na=False, skipinitialspace=True)
    ages = pd.to_numeric(got["age"], errors="coerce")
    assert ages.max() <= 89 and (got["age"] == "90 or older").any()
    ctx = governance_menu.context_of(w.session)
    assert ctx.attestations[0]["by"] == "A. Nurse" and "age" in ctx.safe_harbor["columns"]
    dialog.close()


def test_rerun_on_a_new_extract_from_the_file_menu(loaded_window, qtbot, tmp_path):
    import pandas as pd

    from ppdp_gui.engine.package_files import sample_table
    w = loaded_window
    assert w.rerun_action.text().startswith("Re-run on a")
    frame = pd.read_csv(sample_table(), dtype=str, keep_default_na=False)
    new = pd.concat([frame, frame.head(50).assign(workclass="Space-agency")], ignore_index=True)
    path = tmp_path / "adult_next_month.csv"
    new.to_csv(path, index=False)
    # the Adult sample's bundled taxonomies do not know the new workclass value
    governance_menu.ask_rerun(w, path=str(path))
    qtbot.waitUntil(lambda: getattr(w, "changes_dialog", None) is not None and w.changes_dialog.isVisible(),
                    timeout=60000)
    dialog = w.changes_dialog
    assert "workclass: 50 row(s), e.g. Space-agency" in dialog.text.toPlainText()
    assert not dialog.open_button.isEnabled()
    dialog.looked.setChecked(True)
    if os.environ.get("PPDP_SCREENSHOTS"):
        dialog.grab().save(str(SHOTS / "9_extract_changes.png"))
    qtbot.mouseClick(dialog.open_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: w.session.dataset is not None and w.session.dataset.source.path == str(path),
                    timeout=60000)
