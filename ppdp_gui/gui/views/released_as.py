"""The Data step's "Released as" column: for an identifier or the person column, leave it out or replace it with a
keyed pseudonym; for a date column of a table with a person column, keep the dates or shift them per patient. The
choices are the project's (`Session.treatments`); what they do is the engine's (engine/governance/treatments.py),
the same for `ppdp run`. A mixin of DataView, which owns the column table (`columns`), the window's spin box
(`shift_row`, `shift_days`) and `date_columns`."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QComboBox, QTableWidgetItem

from ppdp_gui.engine.data.schema import Dataset
from ppdp_gui.engine.governance import treatments as tr

TREAT_COL = 3  # "Released as": leave out / keyed pseudonym, keep dates / shift them per patient (beside the role)
TREAT_TIP = ("How this column goes out. An identifier or the person column: left out, or replaced by a keyed "
             "pseudonym (the same patient gets the same pseudonym in every row and every release of this project; "
             "nobody without the project's key can turn it back into the number). A date column of a table with a "
             "person column: kept, or every date of one patient moved by the same number of days within the "
             "window below. Saved in the project; ppdp run --recipe does the same.")


class ReleasedAsColumn:
    def _show_treatments(self, ds: Dataset) -> None:
        """One combo per column that can be treated, with the choice the project states; nothing for the others.
        A combo is made again only when its choices change (a role changed, the window changed)."""
        chosen = self.session.treatments()
        choices = tr.options(ds, chosen, self.date_columns)
        for row, spec in enumerate(ds.schema):
            words, index = choices.get(spec.name, ([], 0))
            combo = self.columns.cellWidget(row, TREAT_COL)
            have = [combo.itemText(i) for i in range(combo.count())] if isinstance(combo, QComboBox) else None
            if not words:
                if combo is not None:
                    self.columns.removeCellWidget(row, TREAT_COL)
                if self.columns.item(row, TREAT_COL) is None:
                    item = QTableWidgetItem("as its role says")
                    item.setFlags(Qt.ItemIsEnabled)
                    item.setForeground(QBrush(QColor("#666666")))
                    item.setToolTip("A quasi-identifier is generalised, a sensitive or other column goes out as "
                                    "the mechanism releases it. " + TREAT_TIP)
                    self.columns.setItem(row, TREAT_COL, item)
                continue
            if have != words or combo.objectName() != f"released_as:{spec.name}":  # (a table opened before)
                combo = QComboBox()
                combo.setObjectName(f"released_as:{spec.name}")
                combo.addItems(words)
                combo.setAccessibleName(f"How {spec.name} is released")
                combo.setToolTip(TREAT_TIP)
                combo.currentIndexChanged.connect(lambda i, n=spec.name: self._treatment_chosen(n, i))
                self.columns.setCellWidget(row, TREAT_COL, combo)
            if combo.currentIndex() != index:
                combo.blockSignals(True)
                combo.setCurrentIndex(index)
                combo.blockSignals(False)
        shifting = any(tr.shift_words(chosen.window_days) in w for w, _ in choices.values())
        self.shift_row.setVisible(shifting)
        if self.shift_days.value() != chosen.window_days:
            self.shift_days.blockSignals(True)
            self.shift_days.setValue(chosen.window_days)
            self.shift_days.blockSignals(False)

    def _context_changed(self) -> None:
        ds = self.session.dataset
        if ds is not None and not self._columns_later.pending:
            self._show_treatments(ds)

    def treatment_combo(self, column: str) -> QComboBox | None:
        self._columns_later.flush()  # filled in a later turn when the table opened
        return self.columns.cellWidget(self.session.dataset.frame.columns.get_loc(column), TREAT_COL)

    def _treatment_chosen(self, column: str, index: int) -> None:
        ds = self.session.dataset
        if ds is None:
            return
        now = self.session.treatments()
        if ds.spec(column).role in tr.PSEUDONYM_ROLES:
            now = now.choose(column, pseudonym=bool(index))
        else:
            now = now.choose(column, shift=bool(index))
        self.session.set_treatments(now)
        self._show_treatments(ds)

    def _window_chosen(self, days: int) -> None:
        if self.session.dataset is not None:
            self.session.set_treatments(self.session.treatments().with_window(days))
            self._show_treatments(self.session.dataset)
