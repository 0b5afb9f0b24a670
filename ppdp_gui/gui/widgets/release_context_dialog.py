"""The release-context questionnaire (Tools → Release context…): who receives the release, the data-use
agreement, the motivated-intruder test, the review date, and the risk threshold it proposes with its source.

Thin: the answers become an engine `ReleaseContext` (engine/persistence/release_context.py), which the project saves and
the export step's gate and the dossier read."""

from __future__ import annotations

import dataclasses
import math

from PySide6.QtCore import QDate
from PySide6.QtWidgets import (QComboBox, QDateEdit, QDialog, QDialogButtonBox, QDoubleSpinBox, QFormLayout,
                               QLabel, QLineEdit, QPlainTextEdit, QVBoxLayout)

from ppdp_gui.engine.persistence.release_context import KIND_WORDS, RELEASE_KINDS, THRESHOLDS, ReleaseContext


class ReleaseContextDialog(QDialog):
    def __init__(self, context: ReleaseContext | None = None, parent=None):
        super().__init__(parent)
        self.setObjectName("release_context_dialog")
        self.setWindowTitle("Release context")
        self._base = context or ReleaseContext()
        c = self._base
        intro = QLabel("Who will receive this release, and under which conditions? The answers set the highest "
                       "re-identification risk the export accepts, and they go into the de-identification dossier "
                       "(for your governance only, never into the release note).")
        intro.setWordWrap(True)
        self.kind = QComboBox()
        for kind in RELEASE_KINDS:
            self.kind.addItem(KIND_WORDS[kind], kind)
        self.kind.setCurrentIndex(RELEASE_KINDS.index(c.release) if c.release in RELEASE_KINDS else 0)
        self.recipient = QLineEdit(c.recipient)
        self.recipient.setPlaceholderText("e.g. the regional diabetes registry")
        self.agreement = QLineEdit(c.data_use_agreement)
        self.agreement.setPlaceholderText("reference of the data-use agreement, or leave empty if there is none")
        self.intruder = QPlainTextEdit(c.intruder_test)
        self.intruder.setPlaceholderText("What a motivated intruder tried (searches, registers, social media) "
                                         "and what they found")
        self.intruder.setFixedHeight(70)
        self.review = QDateEdit()
        self.review.setCalendarPopup(True)
        self.review.setDisplayFormat("yyyy-MM-dd")
        self.review.setDate(QDate.fromString(c.review_date, "yyyy-MM-dd") if c.review_date
                            else QDate.currentDate().addYears(1))
        self.threshold = QDoubleSpinBox()
        self.threshold.setDecimals(3)
        self.threshold.setRange(0.001, 1.0)
        self.threshold.setSingleStep(0.01)
        self.source = QLabel()
        self.source.setWordWrap(True)
        self.source.setObjectName("threshold_source")
        self.why = QLineEdit(c.threshold_source)
        self.why.setPlaceholderText("why another threshold than the one proposed (required then)")
        form = QFormLayout()
        form.addRow("The release goes to", self.kind)
        form.addRow("Recipient", self.recipient)
        form.addRow("Data-use agreement", self.agreement)
        form.addRow("Motivated-intruder test", self.intruder)
        form.addRow("Review the release by", self.review)
        form.addRow("Highest risk accepted", self.threshold)
        form.addRow("", self.source)
        form.addRow("Why this threshold", self.why)
        buttons = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel)
        buttons.button(QDialogButtonBox.Ok).setText("Save in the project")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(form)
        layout.addWidget(buttons)
        self.kind.currentIndexChanged.connect(self._kind_changed)
        self.threshold.valueChanged.connect(self._update_source)
        self.why.textChanged.connect(self._update_source)
        self.threshold.setValue(c.threshold if c.threshold is not None else self.proposed())
        self._update_source()
        self.resize(620, self.sizeHint().height())

    def proposed(self) -> float:
        return THRESHOLDS[self.kind.currentData()][0]

    def _kind_changed(self) -> None:
        self.threshold.setValue(self.proposed())
        self._update_source()

    def _own(self) -> bool:
        return abs(self.threshold.value() - round(self.proposed(), 3)) > 1e-9

    def _update_source(self) -> None:
        own = self._own()
        self.why.setEnabled(own)
        proposed, source = THRESHOLDS[self.kind.currentData()]
        value = self.threshold.value()
        meaning = (f"{value:.3g} means: nobody can be picked out with a chance above {100 * value:.3g} % (every "
                   f"group of the release holds at least {math.ceil(1 / value - 1e-9)} patients). ")
        self.source.setText(meaning + (f"Your own value; say why below. Proposed for this release: {proposed:.3g} "
                                       f"({source})." if own else f"Proposed: {source}."))

    def context(self) -> ReleaseContext:
        """The answers as an engine ReleaseContext (keeping what was recorded before: overrides, attestations)."""
        own = self._own()
        return dataclasses.replace(
            self._base, release=self.kind.currentData(), recipient=self.recipient.text().strip(),
            data_use_agreement=self.agreement.text().strip(), intruder_test=self.intruder.toPlainText().strip(),
            review_date=self.review.date().toString("yyyy-MM-dd"),
            threshold=self.threshold.value() if own else None,
            threshold_source=self.why.text().strip() if own else "")

    def accept(self) -> None:
        if self._own() and not self.why.text().strip():
            self.source.setText("Say why you chose another threshold than the one proposed: the dossier shows it.")
            self.why.setFocus()
            return
        super().accept()
