"""Mechanism step: "Choose ε from the error you accept…" puts the smallest ε meeting the typed error into the ε
field, from the mechanism's public noise model (nothing run, nothing charged)."""

from __future__ import annotations

from PySide6.QtWidgets import QInputDialog, QMessageBox

from ppdp_gui.engine.noise.intervals import count_interval


def test_target_error_sets_epsilon(loaded_window, qtbot, monkeypatch):
    w = loaded_window
    w.go_to(w.mechanism_view)
    w.mechanism_view.combo.setCurrentText("Laplace histogram")
    view = w.mechanism_view
    view.refresh_preview()
    assert view.target_button.isEnabled()
    said = []
    monkeypatch.setattr(QInputDialog, "getDouble", staticmethod(lambda *a, **k: (5.0, True)))
    monkeypatch.setattr(QMessageBox, "information", staticmethod(lambda _p, _t, text: said.append(text)))
    spent_before = w.session.ledger.datasets()
    view.target_button.click()
    assert view.panel.values()["epsilon"] == 0.539 == w.session.params["epsilon"]
    assert count_interval(0.539) <= 5 < count_interval(0.538)
    assert said and "Nothing was run or charged" in said[0]
    assert w.session.ledger.datasets() == spent_before
