"""The Mechanism step's "Set a budget cap": lowering or a first cap as before; raising a cap asks why, and the
reason is recorded (issue 27: any run could raise a cap, silently)."""

from __future__ import annotations

from fractions import Fraction

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QInputDialog

from ppdp_gui.engine.mechanisms import registry

DP = "Laplace histogram"


@pytest.mark.skipif(DP not in registry.names(), reason="Laplace histogram not registered")
def test_raising_a_cap_in_the_window_asks_why_and_records_it(loaded_window, monkeypatch):
    w = loaded_window
    w.go_to(w.mechanism_view)
    w.mechanism_view.combo.setCurrentText(DP)
    w.mechanism_view.panel.editor("columns").findItems("sex", Qt.MatchExactly)[0].setCheckState(Qt.Checked)
    ledger = w.session.ledger
    identity = ledger.identify(w.session.dataset)
    ledger.reserve(identity, DP, {}, Fraction(1, 2))
    w.mechanism_view.refresh_preview(fresh=True)
    asked = []
    monkeypatch.setattr(QInputDialog, "getDouble", staticmethod(lambda *a, **k: (5.0, True)))
    monkeypatch.setattr(QInputDialog, "getText",
                        staticmethod(lambda *a, **k: asked.append(a[1]) or ("ethics board approval 12", True)))
    w.mechanism_view._ask_cap()
    assert asked and ledger.cap(identity) == 5
    assert ledger.cap_changes(identity)[-1].reason == "ethics board approval 12"
    monkeypatch.setattr(QInputDialog, "getDouble", staticmethod(lambda *a, **k: (1.0, True)))
    w.mechanism_view._ask_cap()  # lowering: no question
    assert len(asked) == 1 and ledger.cap(identity) == 1
