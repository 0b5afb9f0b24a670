"""The ledger view: budgets per table with near copies grouped, ε against the cap as a chart, releases listed,
exported as CSV — after real releases made through the engine's publish path."""

from __future__ import annotations

from fractions import Fraction

import pandas as pd

from ppdp_gui.cli import main


def test_ledger_view_shows_groups_and_exports_releases(make_window, qtbot, tmp_path, adult_sample, capsys):
    ledger = tmp_path / "ledger.sqlite"  # the window's ledger (make_window sets PPDP_LEDGER to it)
    frame = pd.read_csv(adult_sample, dtype=str, keep_default_na=False).head(2000)
    first, copy = tmp_path / "ward.csv", tmp_path / "ward_fixed.csv"
    frame.to_csv(first, index=False)
    frame.assign(age=frame["age"].where(frame.index != 5, "44")).to_csv(copy, index=False)  # one cell edited
    for table, eps in ((first, "0.5"), (copy, "0.25")):
        assert main(["run", "Laplace histogram", "-i", str(table), "-o", str(tmp_path / f"{table.stem}_h.csv"),
                     "--ledger", str(ledger), "--domain", "sex=Female,Male", "-p", "columns=sex",
                     "-p", f"epsilon={eps}", "--confirm-roles"]) == 0, capsys.readouterr().err
    w = make_window()
    dialog = w.show_ledger()
    qtbot.addWidget(dialog)
    assert len(dialog.groups) == 1 and len(dialog.tables) == 2  # the edited copy shares the first's budget
    assert dialog.groups["ε spent"].iloc[0] == 0.75 and dialog.groups["ε cap"].iloc[0] == 2.0
    assert dialog.tables["near copy of"].iloc[1] == dialog.tables["fingerprint"].iloc[0]
    assert list(dialog.entries["ε exact"]) == ["1/2", "1/4"]
    out = dialog.export_csv(str(tmp_path / "releases.csv"))
    back = pd.read_csv(out)
    assert len(back) == 2 and set(back["mechanism"]) == {"Laplace histogram"}
    assert sum(map(Fraction, back["ε exact"])) == Fraction(3, 4)
    assert dialog.export_csv(str(ledger)) is None  # never over the ledger itself
    code = main(["ledger", "--ledger", str(ledger), "--csv", str(tmp_path / "cli.csv"), "--tables-csv",
                 str(tmp_path / "tables.csv")])
    assert code == 0 and len(pd.read_csv(tmp_path / "cli.csv")) == 2 and len(pd.read_csv(tmp_path / "tables.csv")) == 2


def test_ledger_view_and_export_step_state_replace_one_units(qtbot, tmp_path):
    """A table with a replace-one release (DP-PCA) has its ε counted for one record replaced, in words; a table
    with add/remove releases only reads as before."""
    from types import SimpleNamespace

    from PySide6.QtWidgets import QLabel

    from ppdp_gui.engine.privacy import REPLACE, Ledger
    from ppdp_gui.gui.ledger_view import LedgerDialog
    from ppdp_gui.gui.views.export_view import describe_entry

    ledger = Ledger(tmp_path / "ledger.sqlite", default_cap=Fraction(3))
    pure = ledger.identify(pd.DataFrame({"x": ["1", "2", "3"]}))
    first = ledger.reserve(pure, "Laplace histogram", {}, Fraction(1, 2))
    record = SimpleNamespace(ledger_entry=first, budget=ledger.budget(pure), output_hash="a" * 64, cost=None,
                             identity=pure)
    assert "Spent on this table so far: ε = 0.5 of its cap of 3 (2.5 left)." in describe_entry(record)
    dialog = LedgerDialog(ledger)
    qtbot.addWidget(dialog)
    assert not any("replaced" in label.text() for label in dialog.findChildren(QLabel))
    assert list(dialog.groups["ε counted for"]) == ["one record added or removed"]
    entry = ledger.reserve(pure, "DP-PCA", {}, Fraction(1, 2), neighbouring=REPLACE)
    record = SimpleNamespace(ledger_entry=entry, budget=ledger.budget(pure), output_hash="a" * 64, cost=None,
                             identity=pure)
    assert ("Spent on this table so far: ε = 1.5 for one record replaced (add/remove releases count twice: 0.5 "
            "for one record added or removed, 0.5 for one record replaced) of its cap of 3 (1.5 left)."
            ) in describe_entry(record)
    dialog = LedgerDialog(ledger)
    qtbot.addWidget(dialog)
    assert any("counts ε for one record replaced" in label.text() for label in dialog.findChildren(QLabel))
    assert list(dialog.groups["ε counted for"]) == ["one record replaced (add/remove releases count twice)"]
    assert list(dialog.groups["ε spent"]) == [1.5]


def test_ledger_view_names_tables_changes_caps_and_acknowledges(qtbot, tmp_path):
    """Issue 27: no raw hashes on screen (the fingerprint is the tooltip); Change cap… and Acknowledge changes…
    are recorded with a reason."""
    import re
    import sqlite3

    from PySide6.QtCore import Qt

    from ppdp_gui.engine.privacy import Ledger
    from ppdp_gui.gui.ledger_view import LedgerDialog
    ledger = Ledger(tmp_path / "ledger.sqlite")
    frame = pd.DataFrame({"age": [str(a) for a in range(20, 80)], "ward": list("ABCDEF") * 10})
    identity = ledger.identify(frame, label=str(tmp_path / "ward.csv"))
    ledger.reserve(identity, "Laplace histogram", {}, Fraction(1, 2), label=str(tmp_path / "ward.csv"))
    dialog = LedgerDialog(ledger)
    qtbot.addWidget(dialog)
    model = dialog.budgets_view.model()
    col = list(dialog.groups.columns).index("budget group")
    shown = model.data(model.index(0, col), Qt.DisplayRole)
    assert shown.startswith("ward.csv (first seen") and not re.search(r"[0-9a-f]{16}", shown)
    assert identity.budget in model.data(model.index(0, col), Qt.ToolTipRole)
    assert not dialog.ack_button.isEnabled()
    assert dialog.change_cap(5, "", group=identity.budget) is False  # a raise needs a reason
    assert dialog.change_cap(5, "new study", group=identity.budget) and ledger.cap(identity) == 5
    assert list(dialog.cap_changes["why"])[-1] == "new study"
    with sqlite3.connect(ledger.path) as db:
        db.execute("DELETE FROM entries")
    again = LedgerDialog(Ledger(ledger.path))
    qtbot.addWidget(again)
    assert again.ack_button.isEnabled() and "changed outside" in again.chain_label.text()
    assert again.acknowledge("the test deleted it") and not again.ack_button.isEnabled()
