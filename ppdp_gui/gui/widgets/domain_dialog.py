"""The public-domain editor: the custodian states one column's domain (numeric bounds, or its list of values).

Why a dialog of its own: an ε-DP release must know each column's domain before it looks at the records (the
smallest age, or a diagnosis held by one patient, is itself private; see engine/data/domains.py). The engine
refuses a DP release whose domain is missing or was built from the data, naming the column; this is where the
custodian answers it, from the Data step's columns table or from that problem on the Mechanism step.

The one rule of this module: it may *suggest* round public values, and only from the column's *name*
(`suggest_bounds` takes a string, never a series), and it never fills anything from the table. A domain read
from the data (origin "data") is not even shown for editing, so it cannot be turned into a "public" one by
pressing OK. Everything the dialog makes is `Domain(..., origin="public")`, handed to `Session.set_domain`.
"""

from __future__ import annotations

import csv
import math
import re
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QCheckBox, QDialog, QDialogButtonBox, QFileDialog, QFormLayout, QHBoxLayout,
                               QLabel, QLayout, QLineEdit, QPlainTextEdit, QPushButton, QVBoxLayout, QWidget)

from ppdp_gui.engine.data.domains import (CODE_SYSTEMS, Domain, category_set, code_system_domain, numeric_bounds,
                                          spelled_outside)
from ppdp_gui.engine.data.linkable import holds_diagnosis_codes
from ppdp_gui.engine.errors import DataError

WHY = ("A differentially private release must not learn its categories or bounds from your table: a value held "
       "by one patient would reveal that patient. State the values everyone may know (a published code list, a "
       "range such as 0–120 years).")


# ---- suggestions from the column name only ------------------------------------------------------------------
@dataclass(frozen=True)
class Suggestion:
    low: float
    high: float
    whole: bool
    what: str  # in words, for the hint: "an age in years"


# (pattern on the normalised name, suggestion). The name is lower-cased, every run of other characters becomes
# "_", and the pattern must match the whole name, so "stage", "days" (a length of stay) or "day_of_week" get no
# suggestion, and "gestational_age" (weeks) is not taken for an age in years. First match wins. Only ranges anyone
# would agree on are listed; "weight" alone is not (kg? lb? grams at birth?).
SUGGESTIONS: tuple[tuple[str, Suggestion], ...] = (
    (r"(patient_|mother_|father_|maternal_|paternal_)?age(_in)?(_years?|_yrs)?(_at_\w+)?",
     Suggestion(0, 120, True, "an age in years")),
    (r"hours(_worked)?(_per_week|_a_week|_weekly)?", Suggestion(0, 168, False, "hours in a week")),
    (r"hours?(_worked)?_per_day", Suggestion(0, 24, False, "hours in a day")),
    (r"(\w+_)?day_of_(the_)?month|day", Suggestion(1, 31, True, "a day of the month")),
    (r"(\w+_)?month", Suggestion(1, 12, True, "a month of the year")),
    (r"(\w+_)?(zip|zip_?code|zip5)", Suggestion(0, 99999, True, "a 5-digit ZIP code")),
    (r"(\w+_)?(percent|percentage|pct)", Suggestion(0, 100, False, "a percentage")),
    (r"(\w+_)?weight_(in_)?kgs?", Suggestion(0, 500, False, "a body weight in kg")),
    (r"(\w+_)?height_(in_)?cm", Suggestion(0, 250, False, "a height in cm")),
    (r"(\w+_)?bmi", Suggestion(0, 100, False, "a body-mass index")),
)


def suggest_bounds(column_name: str) -> Suggestion | None:
    """Round public bounds for a column from its name alone (None when the name says nothing we can rely on).
    A name ending in '%' or '(%)' is a percentage."""
    name = str(column_name)
    norm = re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")
    for pattern, suggestion in SUGGESTIONS:
        if re.fullmatch(pattern, norm):
            return suggestion
    if name.rstrip().rstrip(")").endswith("%"):
        return Suggestion(0, 100, False, "a percentage")
    return None


def fmt_number(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else f"{v:g}"


def parse_number(text: str, what: str) -> float:
    """A finite number typed by a person; the DataError says what is wrong in words."""
    t = text.strip().replace("\u2212", "-").replace(" ", "")
    if not t:
        raise DataError(f"Type the {what}.")
    if "," in t:
        raise DataError(f"The {what} “{text.strip()}” has a comma: write decimals with a dot and no thousands "
                        "separator (for example 1500 or 37.5).")
    try:
        value = float(t)
    except ValueError:
        raise DataError(f"The {what} “{text.strip()}” is not a number.") from None
    if not math.isfinite(value):
        raise DataError(f"The {what} must be an ordinary number, not “{text.strip()}”.")
    return value


def parse_values(text: str) -> tuple[tuple[str, ...], int, int]:
    """(values in order, each once and stripped; repeated lines dropped; blank lines dropped)."""
    lines = [line.strip() for line in text.splitlines()]
    kept = [v for v in lines if v]
    unique = tuple(dict.fromkeys(kept))
    return unique, len(kept) - len(unique), len(lines) - len(kept)


def read_values_file(path: str, column: str = "") -> list[str]:
    """The values of a code-list file: the first column of a .csv/.tsv (comma, semicolon or tab separated; a first
    line equal to the column's name is a heading and skipped), else one value per line."""
    from ppdp_gui.engine.data.prechecks import read_regular
    p = Path(path)
    try:  # only a regular file (a FIFO would hang the window), and a list's size
        raw = read_regular(p, 64 << 20, "file")
    except DataError as exc:
        raise DataError(f"Could not read {p.name}: {exc.reason}.") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = raw.decode("cp1252", errors="replace")
    if p.suffix.lower() in (".csv", ".tsv"):
        sample = text[:4096]
        delimiter = "\t" if p.suffix.lower() == ".tsv" else max(",;\t", key=sample.count)
        values = [row[0].strip() if row else "" for row in csv.reader(text.splitlines(), delimiter=delimiter)]
        if values and column and values[0].strip().lower() == column.strip().lower():
            values = values[1:]
    else:
        values = [line.strip() for line in text.splitlines()]
    return values


def domain_text(spec) -> tuple[str, str]:
    """(short text, tooltip) of what a column's public domain is now, for the columns table: the stated domain,
    else what a taxonomy supplies, else a dash. Reads only the spec (domain and taxonomy), never the records."""
    d = spec.domain
    if d is not None and not d.is_public:  # the warning first: the cell is often cut short
        return (f"not public, read from the table: {_full(d, 6)}",
                f"The domain of {spec.name} was read from the table: {_full(d)}. A differentially private release "
                "cannot rely on it: set the values everyone may know.")
    if d is not None:
        return d.describe(), f"Stated domain of {spec.name}: {_full(d)}"
    tax = spec.taxonomy
    if tax is not None:
        found = numeric_bounds(spec) if spec.kind == "numeric" else category_set(spec)
        if found is not None and found.is_public:
            if spec.kind == "numeric":
                what = f"{fmt_number(found.low)} to {fmt_number(found.high)}"
            else:
                what = f"{len(found.values)} values"
            return (f"{what} (taxonomy)",
                    ("No domain stated; a differentially private release uses the values of its taxonomy, "
                     "which you imported. Set a domain to state it yourself."))
        if found is not None:
            return ("— (taxonomy built from the table)",
                    ("Its taxonomy was built from the table's own values, so it is not public. Set the domain."))
    return "—", "No public domain. A differentially private release that uses this column needs one."


def _full(domain: Domain, at_most: int = 40) -> str:
    """The domain in words without its origin note, listing at most `at_most` values (for tooltips)."""
    cats = domain.categories
    if cats is not None and len(cats) > 6:
        return ", ".join(cats[:at_most]) + (f", … ({len(cats)} values)" if len(cats) > at_most else "")
    return domain.describe().removesuffix(" — read from the data, not public")


# ---- the dialog ------------------------------------------------------------------------------------------------
class DomainDialog(QDialog):
    """One column's public domain. OK builds a public `Domain` and calls `session.set_domain`; Remove domain
    sets None; Cancel changes nothing. Problems are shown inside the dialog, which then stays open."""

    def __init__(self, session, column: str, parent: QWidget | None = None):
        super().__init__(parent)
        self.session, self.column = session, column
        self._seen: list[str] | None = None
        spec = session.dataset.spec(column)
        self.numeric = spec.kind == "numeric"
        self.setObjectName("domain_dialog")
        self.setWindowTitle(f"Public domain of {column}")
        self.setAccessibleName(f"Public domain of {column}")

        why = QLabel(WHY)
        why.setWordWrap(True)
        why.setObjectName("domain_why")
        self.current = QLabel()
        self.current.setWordWrap(True)
        self.current.setObjectName("domain_current")
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setObjectName("domain_message")
        self.message.setStyleSheet("color: #a33a00;")
        self.message.setAccessibleName("Problem with the domain")
        self.message.setVisible(False)

        self.buttons = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel)
        self.ok_button = self.buttons.button(QDialogButtonBox.Ok)
        self.cancel_button = self.buttons.button(QDialogButtonBox.Cancel)
        self.remove_button = QPushButton("&Remove domain")  # apart from OK / Cancel: it changes the session
        self.remove_button.setAutoDefault(False)
        self.remove_button.setToolTip(f"{column} then has no stated domain (a differentially private release "
                                      "that uses it will ask for one again).")
        self.remove_button.setEnabled(spec.domain is not None)

        layout = QVBoxLayout(self)
        gap = self.fontMetrics().height() // 2
        layout.addWidget(why)
        layout.addSpacing(gap)
        layout.addWidget(self.current)
        layout.addSpacing(gap)
        editor = self._numeric_editor(spec) if self.numeric else self._category_editor(spec)
        layout.addWidget(editor, 1)
        layout.addWidget(self.message)
        bottom = QHBoxLayout()
        bottom.addWidget(self.remove_button)
        bottom.addStretch(1)
        bottom.addWidget(self.buttons)
        layout.addLayout(bottom)
        chain = self._inputs() + [self.remove_button, self.ok_button, self.cancel_button]
        for first, second in pairwise(chain):
            self.setTabOrder(first, second)
        chain[0].setFocus()

        self.buttons.accepted.connect(self.apply)
        self.buttons.rejected.connect(self.reject)
        self.remove_button.clicked.connect(self.remove)
        # wide enough for the explanation to read as a paragraph; the layout then grows the dialog in height
        # when a message appears, so nothing is squeezed
        em = self.fontMetrics().horizontalAdvance("M")
        self.setMinimumWidth(em * 40)
        layout.setSizeConstraint(QLayout.SetMinimumSize)
        if not self.numeric:
            self.resize(em * 40, em * 32)

    # -- numeric ----------------------------------------------------------------------------------------------
    def _numeric_editor(self, spec) -> QWidget:
        box = QWidget()
        form = QFormLayout(box)
        form.setContentsMargins(0, 0, 0, 0)
        self.low_edit = QLineEdit()
        self.low_edit.setAccessibleName(f"Lowest possible value of {self.column}")
        self.low_edit.setPlaceholderText("the smallest value anyone could have")
        self.high_edit = QLineEdit()
        self.high_edit.setAccessibleName(f"Highest possible value of {self.column}")
        self.high_edit.setPlaceholderText("the largest value anyone could have")
        self.whole_check = QCheckBox("&Whole numbers only")
        self.whole_check.setToolTip("Tick when every value is a whole number (ages in years, counts).")
        self.step_edit = QLineEdit()
        self.step_edit.setAccessibleName("Grid step (optional)")
        self.step_edit.setPlaceholderText("empty: chosen for you")
        self.step_edit.setToolTip("Where ranges in the release may start and end: the lowest value plus multiples "
                                  "of this step (5 gives 0–5, 5–10, …). Leave empty: 1 for whole numbers, "
                                  "otherwise a round step chosen from the bounds.")
        self.suggest_button = QPushButton("&Suggest")
        self.suggestion = suggest_bounds(self.column)
        self.suggest_hint = QLabel()
        self.suggest_hint.setWordWrap(True)
        self.suggest_hint.setObjectName("suggest_hint")
        if self.suggestion is not None:
            s = self.suggestion
            self.suggest_hint.setText(f"Fills in {fmt_number(s.low)} to {fmt_number(s.high)}"
                                      f"{', whole numbers' if s.whole else ''}: a usual range for {s.what}, "
                                      "guessed from the column's name only.")
        else:
            self.suggest_hint.setText(f"No suggestion for a column named “{self.column}”: type a range everyone "
                                      "may know, e.g. from the form or data dictionary the values come from.")
        self.suggest_button.setEnabled(self.suggestion is not None)
        self.suggest_button.setToolTip("Round public values guessed from the column's name — never read from "
                                       "the table.")
        suggest_row = QHBoxLayout()
        suggest_row.addWidget(self.suggest_button)
        suggest_row.addStretch(1)
        form.addRow("&Lowest possible value:", self.low_edit)
        form.addRow("&Highest possible value:", self.high_edit)
        form.addRow("", self.whole_check)
        form.addRow("Grid s&tep (optional):", self.step_edit)
        form.addRow("", suggest_row)
        form.addRow("", self.suggest_hint)
        for field in (self.low_edit, self.high_edit, self.step_edit):
            label = form.labelForField(field)
            if label is not None:
                label.setBuddy(field)

        d = spec.domain
        if d is not None and d.is_numeric and d.is_public:
            self.low_edit.setText(fmt_number(d.low))
            self.high_edit.setText(fmt_number(d.high))
            self.whole_check.setChecked(d.integer)
            self.step_edit.setText("" if d.step is None else fmt_number(d.step))
        self.current.setText(self._current_text(spec))
        self.suggest_button.clicked.connect(self.suggest)
        return box

    def suggest(self) -> None:
        s = self.suggestion
        if s is None:
            return
        self.low_edit.setText(fmt_number(s.low))
        self.high_edit.setText(fmt_number(s.high))
        self.whole_check.setChecked(s.whole)
        self.message.setVisible(False)

    def numeric_domain(self) -> Domain:
        low = parse_number(self.low_edit.text(), "lowest value")
        high = parse_number(self.high_edit.text(), "highest value")
        if not low < high:
            raise DataError(f"The lowest value ({fmt_number(low)}) must be below the highest value "
                            f"({fmt_number(high)}).")
        whole = self.whole_check.isChecked()
        if whole and not (low.is_integer() and high.is_integer()):
            odd = fmt_number(low if not low.is_integer() else high)
            raise DataError(f"“Whole numbers only” is ticked, so both values must be whole numbers ({odd} is not).")
        step = None
        if self.step_edit.text().strip():
            step = parse_number(self.step_edit.text(), "grid step")
            if step <= 0:
                raise DataError("The grid step must be above 0 (or leave it empty).")
        return Domain(low=low, high=high, integer=whole, step=step, origin="public")

    # -- categories -------------------------------------------------------------------------------------------
    def _category_editor(self, spec) -> QWidget:
        box = QWidget()
        v = QVBoxLayout(box)
        v.setContentsMargins(0, 0, 0, 0)
        label = QLabel(f"&Values of {self.column}, one per line:")
        self.values_edit = QPlainTextEdit()
        self.values_edit.setAccessibleName(f"Public values of {self.column}, one per line")
        self.values_edit.setPlaceholderText("Type or paste the values here, one per line.")
        self.values_edit.setTabChangesFocus(True)
        label.setBuddy(self.values_edit)
        self.count_label = QLabel()
        self.count_label.setObjectName("values_count")
        self.count_label.setWordWrap(True)
        self.file_button = QPushButton("&Load from file…")
        self.file_button.setToolTip("Replace the list with the values of a file: a text file with one value per "
                                    "line, or the first column of a CSV file (comma, semicolon or tab separated; "
                                    "a first line that is the column's name is skipped as a heading).")
        row = QHBoxLayout()
        row.addWidget(self.file_button)
        self.taxonomy_button = None
        tax = spec.taxonomy
        if tax is not None and getattr(tax, "origin", "public") == "public":
            self.taxonomy_button = QPushButton("Use the &taxonomy's values")
            self.taxonomy_button.setToolTip("Replace the list with the values of the taxonomy you imported for "
                                            f"{self.column} ({len(tax.leaf_values())} values).")
            self.taxonomy_button.clicked.connect(self.use_taxonomy)
            row.addWidget(self.taxonomy_button)
        row.addStretch(1)
        # a public code system's list, shipped with ppdp: one click states it (nothing is read from the table)
        codes_row = QHBoxLayout()
        self.code_buttons: dict[str, QPushButton] = {}
        codes = holds_diagnosis_codes(self.column, self.session.dataset.frame[self.column])
        for name, words in (CODE_SYSTEMS.items() if codes else ()):
            button = QPushButton(f"Use the {words.split(' diagnosis')[0]} list")
            button.setAutoDefault(False)
            button.setToolTip(f"State the public list of {words} shipped with ppdp as this column's domain (every "
                              "3-character category; the Taxonomies step's ICD builder, leaves 'categories', "
                              "builds the matching public tree). In ppdp: --domain "
                              f"{self.column}={name}")
            button.clicked.connect(lambda _c=False, n=name: self.use_code_system(n))
            codes_row.addWidget(button)
            self.code_buttons[name] = button
        codes_row.addStretch(1)
        self.spelling_label = QLabel()
        self.spelling_label.setObjectName("domain_spelling")
        self.spelling_label.setWordWrap(True)
        self.spelling_label.setStyleSheet("color: #a33a00;")
        self.spelling_label.setVisible(False)
        v.addWidget(label)
        v.addWidget(self.values_edit, 1)
        v.addWidget(self.count_label)
        v.addWidget(self.spelling_label)
        v.addLayout(row)
        v.addLayout(codes_row)

        d = spec.domain
        if d is not None and d.categories is not None and d.is_public:
            self.values_edit.setPlainText("\n".join(d.categories))
        self.current.setText(self._current_text(spec))
        self.values_edit.textChanged.connect(self._count)
        self.file_button.clicked.connect(self._ask_file)
        self._count()
        return box

    def use_code_system(self, name: str) -> None:
        """One click: the code system's public list becomes the column's domain (the dialog closes)."""
        try:
            domain = code_system_domain(name)
        except DataError as exc:
            self._show(str(exc))
            return
        self.session.set_domain(self.column, domain)
        self.accept()

    def table_values(self) -> list[str]:
        """The column's distinct values as the table spells them ('(missing)' for a missing value kept as a
        category): only to point out, before OK, which the typed list lacks — never to fill the list."""
        if self._seen is None:
            series = self.session.dataset.frame[self.column]
            self._seen = sorted(series.dropna().astype(str).unique())
        return self._seen

    def _count(self) -> None:
        values, repeated, blank = parse_values(self.values_edit.toPlainText())
        lacking = spelled_outside(self.table_values(), values) if values else ""
        self.spelling_label.setText(f"Your table also holds {lacking}: a value spelled otherwise than in the "
                                    "table does not match it. Add them as the table writes them, or leave them "
                                    "out on purpose (such rows cannot be released)." if lacking else "")
        self.spelling_label.setVisible(bool(lacking))
        text = f"{len(values)} value{'s' if len(values) != 1 else ''}"
        dropped = []
        if repeated:
            dropped.append(f"{repeated} repeated line{'s' if repeated != 1 else ''}")
        if blank and values:
            dropped.append(f"{blank} blank line{'s' if blank != 1 else ''}")
        if dropped:
            text += f" ({' and '.join(dropped)} will be left out)"
        self.count_label.setText(text + ". Values are kept exactly as typed: capitals and spelling must match "
                                 "the table.")

    def use_taxonomy(self) -> None:
        tax = self.session.dataset.spec(self.column).taxonomy
        if tax is not None and getattr(tax, "origin", "public") == "public":
            self.values_edit.setPlainText("\n".join(tax.leaf_values()))
            self.message.setVisible(False)

    def _ask_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, f"Values of {self.column}", "",
                                              "Code lists (*.txt *.csv *.tsv);;All files (*)")
        if path:
            self.load_file(path)

    def load_file(self, path: str) -> None:
        """Replace the list with the values of `path` (see `read_values_file`)."""
        try:
            values = read_values_file(path, self.column)
        except DataError as exc:
            self._show(str(exc))
            return
        self.values_edit.setPlainText("\n".join(values))
        if not parse_values("\n".join(values))[0]:
            self._show(f"{Path(path).name} holds no values.")
        else:
            self.message.setVisible(False)

    def category_domain(self) -> Domain:
        values, _repeated, _blank = parse_values(self.values_edit.toPlainText())
        if not values:
            raise DataError("Type at least one value (or press Remove domain to state none).")
        return Domain(categories=values, origin="public")

    # -- both -------------------------------------------------------------------------------------------------
    def _inputs(self) -> list[QWidget]:
        """The editor's inputs in reading order (the tab order)."""
        if self.numeric:
            return [self.low_edit, self.high_edit, self.whole_check, self.step_edit, self.suggest_button]
        return ([self.values_edit, self.file_button] + ([self.taxonomy_button] if self.taxonomy_button else [])
                + list(self.code_buttons.values()))

    def _current_text(self, spec) -> str:
        d = spec.domain
        if d is not None and not d.is_public:
            return (f"The current domain of {self.column} was read from the table, so it is not public and is not "
                    "shown here. State the values everyone may know.")
        if d is not None:
            return f"Current domain: {d.describe()}."
        text, _tip = domain_text(spec)
        if text.endswith(" (taxonomy)"):
            return (f"No domain stated: a differentially private release now uses the values of the taxonomy you "
                    f"imported ({text[:-len(' (taxonomy)')]}). A domain stated here replaces them.")
        return f"{self.column} has no public domain yet."

    def _show(self, text: str) -> None:
        self.message.setText(text)
        self.message.setVisible(True)
        self.fit_height()

    def fit_height(self) -> None:
        """Grow to the height the wrapped texts need at the current width (Qt's minimum size ignores it)."""
        self.layout().activate()
        need = self.layout().totalHeightForWidth(self.width())
        if need > self.height():
            self.resize(self.width(), need)

    def showEvent(self, event) -> None:
        super().showEvent(event)
        self.fit_height()

    def domain(self) -> Domain:
        """The Domain the inputs describe; DataError (in words) when they do not describe one."""
        return self.numeric_domain() if self.numeric else self.category_domain()

    def apply(self) -> None:
        try:
            domain = self.domain()
        except DataError as exc:
            self._show(str(exc))
            return
        self.session.set_domain(self.column, domain)
        self.accept()

    def remove(self) -> None:
        self.session.set_domain(self.column, None)
        self.accept()


def open_domain_dialog(parent: QWidget, session, column: str) -> DomainDialog | None:
    """Show the dialog for `column` window-modally without blocking the caller (tests keep driving the loop)."""
    if session.dataset is None or column not in session.dataset.frame.columns:
        return None
    dialog = DomainDialog(session, column, parent)
    dialog.setAttribute(Qt.WA_DeleteOnClose)
    dialog.open()
    return dialog
