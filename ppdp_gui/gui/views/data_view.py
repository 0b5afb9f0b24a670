"""Data step: the table, each column's kind, role and public domain, the missing-value policy, and load errors in
words. The "Public domain" column says what a DP release may rely on for each column (the stated domain, or what an
imported taxonomy supplies) and its Set… button opens the domain editor (gui/widgets/domain_dialog.py)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (QComboBox, QFormLayout, QGroupBox, QHBoxLayout, QHeaderView, QLabel, QLineEdit,
                               QPushButton, QSpinBox, QSplitter, QTableView, QTableWidget, QTableWidgetItem,
                               QToolButton, QVBoxLayout, QWidget)

from ppdp_gui.engine.data.missing import WARN_SHARE, left_out_by_the_data
from ppdp_gui.engine.data.schema import Dataset, NAPolicy, Role
from ppdp_gui.engine.governance import treatments as tr
from ppdp_gui.engine.pipeline.plan import CONFIRM_BUTTON
from ppdp_gui.gui.coverage_cache import remember as remember_not_covered
from ppdp_gui.gui.models import DataFrameModel, fit_columns
from ppdp_gui.gui.views.common import BLOCKED, DONE, TODO, WARN, Later, StepView, escape, heading, note
from ppdp_gui.gui.views.released_as import TREAT_COL, TREAT_TIP, ReleasedAsColumn
from ppdp_gui.gui.widgets.domain_dialog import domain_text, open_domain_dialog
from ppdp_gui.gui.widgets.messages import describe_error

KINDS = ("numeric", "categorical")


def kind_rule() -> str:
    """engine.data.coltypes' rule for kinds, imported on first use (Arrow stays out of the window's start)."""
    from ppdp_gui.engine.data.coltypes import kind_rule_text
    return kind_rule_text()


def kind_why(spec) -> str:
    """Why a column has its kind (the engine's words), for its Kind cell and the line under the list."""
    from ppdp_gui.engine.data.coltypes import kind_reason
    return kind_reason(spec.name, spec.kind, "kind" in spec.guessed)
ROLES = tuple(Role)
#: how a role reads in the combo where its label alone would not say enough
ROLE_TEXT = {Role.PERSON: "Person (whose row it is)"}
ROLE_TIPS = {Role.PERSON: "The column that says whose row it is (a patient number that repeats over several "
                          "encounters): never released, and the unit that privacy protects."}
DISTINCT_COL = 4
DOMAIN_COL, SET_COL = 5, 6  # the "Public domain" text and its Set… button
#: the default (rows kept) first: the window starts with it
_NA_ACTIONS = {"category": "Keep missing as its own category", "drop": "Drop rows that have a missing value"}


def tokens_text(tokens) -> str:
    return ", ".join("(empty)" if t == "" else t for t in tokens)


def parse_tokens(text: str) -> tuple[str, ...]:
    """'(empty), ?, NA' -> ('', '?', 'NA'); blanks between commas are ignored, duplicates dropped."""
    out = []
    for part in text.split(","):
        t = part.strip()
        if t == "(empty)":
            out.append("")
        elif t:
            out.append(t)
    return tuple(dict.fromkeys(out))


class DataView(ReleasedAsColumn, StepView):
    title = "Data"
    loaded = Signal(str)  # path of a file that loaded
    load_failed = Signal(str)

    def __init__(self, session, runner, parent=None):
        super().__init__(session, runner, parent)
        self.distinct: dict[str, int] = {}
        self.reasons: dict[str, tuple[Role, str]] = {}  # column -> (guessed role, why), from the engine
        self.date_columns: list[str] = []  # columns of dates (engine: governance/treatments.date_columns)
        self.error_text = ""
        self._loading = False
        self._after_load = None
        # a new table's column table (two combo boxes and a button per column: ~15 ms for Adult) is filled in a
        # later turn of the event loop than the table itself; the accessors below fill it at once if asked first
        self._columns_later = Later(self, self._fill_new_columns)

        self.open_button = QPushButton("&Open a table…")
        self.open_button.setToolTip("Open a CSV, TSV, Excel (.xlsx) or Parquet file. You can also drop a file on the window.")
        self.file_label = note("No table loaded. Open a file, or drop one on this window.", object_name="file_label")
        self.error_label = note("", warn=True, object_name="load_error")
        self.error_label.setVisible(False)
        self.error_label.setAccessibleName("Load error")
        self.notes_label = note("", warn=True, object_name="load_notes")
        self.notes_label.setVisible(False)
        self.notes_label.setAccessibleName("Notes on how the table was read")
        self.leave_out_button = QPushButton("Leave out by name")
        self.leave_out_button.setToolTip("Columns left out because most of their values are missing: name them as "
                                         "left out, your own choice, so that a differentially private release "
                                         "does not depend on how many values the table happens to miss.")
        self.leave_out_button.setVisible(False)
        self.leave_out_button.clicked.connect(self.leave_out_by_name)
        self.user_kinds: dict[str, str] = {}  # kinds the custodian chose; the others are guessed again on reload
        # the custodian's confirmation of the roles and kinds shown (saved in the project; a DP release needs it)
        self.confirm_button = QPushButton(CONFIRM_BUTTON)
        self.confirm_button.setAccessibleName(CONFIRM_BUTTON)
        self.confirm_button.setToolTip(
            "Roles and kinds are first guesses, most of them read from the table's values (how many different "
            "values a column has, whether they look like numbers); one patient more or less can change such a "
            "guess. Check each column, then press this to make them your choice: a differentially private release "
            "asks for it. A kind or role you change yourself counts as confirmed. Reading the table again with "
            "another missing-value policy guesses the kinds again.")
        self.confirm_button.clicked.connect(self.confirm_roles)
        self.confirm_label = note("", object_name="confirm_state")
        self.confirm_label.setAccessibleName("Whether the roles and kinds are confirmed")

        # missing-value policy
        self.na_tokens = QLineEdit(tokens_text(NAPolicy().tokens))
        self.na_tokens.setAccessibleName("Missing-value tokens")
        self.na_tokens.setToolTip("Cell values that mean 'missing', separated by commas; (empty) is an empty cell.")
        self.na_action = QComboBox()
        for key, text in _NA_ACTIONS.items():
            self.na_action.addItem(text, key)
        self.na_action.setAccessibleName("What to do with missing values")
        self.na_apply = QPushButton("Re&load with this policy")
        self.na_apply.setEnabled(False)
        na_box = QGroupBox("Missing values")
        na_form = QFormLayout(na_box)
        self.na_action.setToolTip(
            "Keep missing as its own category (the default): every row is kept; a blank in a text column reads "
            "“(missing)”, a value like any other (and part of every list of public values), a blank in a number "
            "column stays empty. Drop rows: every row with a blank in a released column is left out — on a "
            "clinical table that can be most of the rows, and the mechanisms private for one record replaced "
            "(DP-PCA, Laplace or Exponential on records) refuse it, as the number of rows then depends on the data.")
        na_form.addRow("Tokens meaning missing:", self.na_tokens)
        na_form.addRow("Rows with a missing value:", self.na_action)
        na_form.addRow("", self.na_apply)

        # column kinds and roles
        self.columns = QTableWidget(0, 7)
        self.columns.setHorizontalHeaderLabels(["Column", "Kind", "Role", "Released as", "Distinct",
                                                "Public domain", ""])
        self.columns.verticalHeader().setVisible(False)
        header = self.columns.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeToContents)
        header.setSectionResizeMode(DOMAIN_COL, QHeaderView.Stretch)  # long lists are elided; full text in tooltip
        header.setMinimumSectionSize(self.fontMetrics().horizontalAdvance("0" * 4))
        self.columns.horizontalHeaderItem(DISTINCT_COL).setToolTip("How many different values the column holds.")
        self.columns.horizontalHeaderItem(1).setToolTip(kind_rule())
        self.columns.horizontalHeaderItem(TREAT_COL).setToolTip(TREAT_TIP)
        self.columns.horizontalHeaderItem(DOMAIN_COL).setToolTip(
            "The values everyone may know for each column (a range, or a published list of values). A "
            "differentially private release needs them and never reads them from the table.")
        self.columns.setAccessibleName("Column kinds, roles and public domains")
        self.columns.setToolTip("Choose what each column is. Quasi-identifiers (age, sex, ZIP…) can link a record "
                                "to a person and are generalised; identifiers are removed; the class is what a "
                                "data user wants to predict. Set… states a column's public domain.")
        self.columns.setWordWrap(False)
        self.columns.setTextElideMode(Qt.ElideRight)
        self.columns.cellDoubleClicked.connect(self._cell_double_clicked)
        self.shift_days = QSpinBox()
        self.shift_days.setRange(1, 3650)
        self.shift_days.setValue(tr.DEFAULT_WINDOW_DAYS)
        self.shift_days.setPrefix("± ")
        self.shift_days.setSuffix(" days")
        self.shift_days.setAccessibleName("Date shift window in days")
        self.shift_days.setToolTip("Each patient's dates move by the same number of days, drawn between minus and "
                                   "plus this many days. The window is stated in the release note; the days of "
                                   "each patient are not.")
        self.shift_days.valueChanged.connect(self._window_chosen)
        self.shift_row = QWidget()
        shift_layout = QHBoxLayout(self.shift_row)
        shift_layout.setContentsMargins(0, 0, 0, 0)
        shift_layout.addWidget(QLabel("Window for shifting dates per patient (when chosen under Released as):"))
        shift_layout.addWidget(self.shift_days)
        shift_layout.addStretch(1)
        self.shift_row.setVisible(False)
        self.why_label = note("", object_name="role_why")
        self.why_label.setAccessibleName("Why this role")
        self.columns.currentCellChanged.connect(lambda row, _c, _r, _pc: self._show_why(row))
        self.table = QTableView()
        self.model = DataFrameModel(parent=self)
        self.table.setModel(self.model)
        self.table.setAccessibleName("Table preview")
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.Fixed)
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.Interactive)
        self.table.setWordWrap(False)

        left = QWidget()
        lv = QVBoxLayout(left)
        lv.setContentsMargins(0, 0, 0, 0)
        lv.addWidget(na_box)
        lv.addWidget(QLabel("Columns:"))
        lv.addWidget(self.columns, 1)
        lv.addWidget(self.shift_row)
        confirm_row = QHBoxLayout()
        confirm_row.addWidget(self.confirm_label, 1)
        confirm_row.addWidget(self.confirm_button, 0, Qt.AlignTop)
        lv.addLayout(confirm_row)
        lv.addWidget(self.why_label)
        split = QSplitter(Qt.Horizontal)
        split.addWidget(left)
        split.addWidget(self.table)
        split.setStretchFactor(1, 1)
        # the column table (seven columns, two combos and "Released as" wide) gets more of the width than the preview
        split.setSizes([self.fontMetrics().horizontalAdvance("0") * 112, self.fontMetrics().horizontalAdvance("0") * 40])

        top = QHBoxLayout()
        top.addWidget(self.open_button)
        top.addWidget(self.file_label, 1)
        layout = QVBoxLayout(self)
        layout.addWidget(heading("1. Data"))
        layout.addLayout(top)
        layout.addWidget(self.error_label)
        notes_row = QHBoxLayout()
        notes_row.addWidget(self.notes_label, 1)
        notes_row.addWidget(self.leave_out_button, 0, Qt.AlignTop)
        layout.addLayout(notes_row)
        layout.addWidget(split, 1)

        self.na_apply.clicked.connect(self.reload)
        self.na_tokens.textEdited.connect(lambda _t: self.na_apply.setEnabled(self.session.dataset is not None))
        self.na_action.currentIndexChanged.connect(lambda _i: self.na_apply.setEnabled(self.session.dataset is not None))
        session.dataset_changed.connect(self._dataset_changed)
        session.context_changed.connect(self._context_changed)

    # -- loading --------------------------------------------------------------------------------------------
    def na_policy(self) -> NAPolicy:
        """The policy in the widgets; columns left out by name stay left out."""
        ds = self.session.dataset
        leave_out = ds.source.na_policy.leave_out if ds is not None else ()
        return NAPolicy(tokens=parse_tokens(self.na_tokens.text()), action=self.na_action.currentData(),
                        leave_out=leave_out)

    def load(self, path: str, *, na_policy: NAPolicy | None = None, kinds: dict | None = None,
             roles: dict | None = None, after=None, recipe=None) -> None:
        """Read `path` (or a whole `recipe`: a project) in the worker with the engine's loader; on success the
        session gets the new dataset and `after(dataset)` runs."""
        from ppdp_gui.engine.persistence.project import Recipe
        from ppdp_gui.gui.workers.tasks import load_job
        if recipe is None:
            self.user_kinds = dict(kinds or {})
            recipe = Recipe(source=str(path), na_policy=na_policy or self.na_policy(), kinds=dict(kinds or {}),
                            roles=dict(roles or {}))
        pol = recipe.na_policy
        self.na_tokens.setText(tokens_text(pol.tokens))
        self.na_action.setCurrentIndex(max(0, self.na_action.findData(pol.action)))
        self._loading, self._after_load = True, after
        self.file_label.setText(f"Reading {recipe.source}…")
        self.error_label.setVisible(False)
        self.state_changed.emit()
        open_ledger = not self.session.ledger_open  # the first preview needs it: opened in the worker
        self.runner.start(lambda: load_job(recipe, open_ledger),
                          on_done=lambda result, p=str(recipe.source): self._loaded(p, result),
                          on_error=lambda exc, tb, p=str(recipe.source): self._failed(p, exc))

    def _reload_recipe(self, **changes):
        """The current table's recipe (roles, kinds, taxonomies, domains kept) with `changes` applied."""
        recipe = self.session.recipe()
        for key, value in changes.items():
            setattr(recipe, key, value)
        return recipe

    def reload(self) -> None:
        """Read the same file again with the current missing-value policy; roles, kinds, taxonomies and
        domains are kept."""
        ds = self.session.dataset
        if ds is None or not ds.source.path:
            return
        # kinds are guessed again (a column that was text because of a missing token may now be numbers),
        # except the ones the custodian chose
        kinds = {c: k for c, k in self.user_kinds.items() if c in ds.frame.columns}
        recipe = self._reload_recipe(na_policy=self.na_policy(), kinds=kinds, mechanism=None, params={})
        self.load(ds.source.path, recipe=recipe, after=self.session.update_dataset)

    def leave_out_by_name(self) -> None:
        """Name the columns left out for being mostly missing as left out (the custodian's choice, kept in the
        project), and read the table again by that policy."""
        ds = self.session.dataset
        if ds is None or not ds.source.path:
            return
        policy = replace(self.na_policy(), leave_out=tuple(dict.fromkeys(ds.source.na_policy.leave_out
                                                                         + tuple(ds.source.left_out))))
        kinds = {c: k for c, k in self.user_kinds.items() if c in ds.frame.columns}
        recipe = self._reload_recipe(na_policy=policy, kinds=kinds, mechanism=None, params={})
        self.load(ds.source.path, recipe=recipe, after=self.session.update_dataset)

    def _loaded(self, path: str, result) -> None:
        loaded, self.distinct, self.reasons = result.loaded, result.distinct, result.reasons
        self.date_columns = list(getattr(result, "date_columns", []) or [])
        frame = loaded.dataset.frame
        for spec in loaded.dataset.schema:  # worked out in the worker: the Taxonomies step only looks them up
            if spec.name in result.not_covered:
                remember_not_covered(spec.taxonomy, frame, spec.name, result.not_covered[spec.name])
        self.session.suggest_mechanism(frame, result.first_runnable)
        self.session.adopt_ledger(result.ledger)
        self.session.auto_taxonomies = {c: (loaded.attached[c], loaded.taxonomies[c]) for c in loaded.attached}
        self.session.auto_notes = list(loaded.notes)
        self._loading = False
        self.error_text = ""
        self.error_label.setVisible(False)
        self.notes_label.setText("<br>".join(loaded.dataset.source.notes))
        self.notes_label.setVisible(bool(loaded.dataset.source.notes))
        self.leave_out_button.setVisible(bool(left_out_by_the_data(loaded.dataset.source)))
        self.na_apply.setEnabled(False)
        self.session.set_dataset(loaded.dataset)
        if self._after_load is not None:
            after, self._after_load = self._after_load, None
            after(loaded.dataset)
        self.loaded.emit(path)

    def _failed(self, path: str, exc: BaseException) -> None:
        self._loading = False
        title, message = describe_error(exc)
        self.error_text = message
        self.error_label.setText(f"<b>{title}.</b> {message}")
        self.error_label.setVisible(True)
        self.file_label.setText(f"Could not load {Path(path).name}." +
                                (" The table loaded before is still open." if self.session.dataset else ""))
        self.state_changed.emit()
        self.load_failed.emit(message)

    # -- showing the dataset ----------------------------------------------------------------------------------
    def _dataset_changed(self) -> None:
        ds = self.session.dataset
        if ds is None:
            self._columns_later.pending = False
            self.model.clear()
            self.columns.setRowCount(0)
        else:
            if self.model.frame is not ds.frame:
                self.model.set_frame(ds.frame)
                fit_columns(self.table)
                self._columns_later()  # a row of widgets per column: in a turn of its own
            elif not self._columns_later.pending:
                self._sync_columns(ds)
            self.model.set_header_tooltips({c.name: f"{c.name}: {c.kind}, {c.role.label}" for c in ds.schema})
            src = ds.source
            dropped = f", {src.n_rows_dropped:,} dropped for missing values" if src.n_rows_dropped else ""
            if src.left_out:
                dropped += f"; left out: {', '.join(src.left_out)}"
            self.file_label.setText(f"<b>{Path(src.path).name if src.path else 'table'}</b>: "
                                    f"{ds.n_rows:,} rows × {len(ds.schema)} columns{dropped}")
            self.file_label.setToolTip(src.path or "")
        self._show_confirmation(ds)
        self.state_changed.emit()

    def _fill_new_columns(self) -> None:
        """The column table of a table just opened (see `_columns_later`)."""
        ds = self.session.dataset
        if ds is not None:
            self._fill_columns(ds)
            self._show_why(self.columns.currentRow())

    def _fill_columns(self, ds: Dataset) -> None:
        self.columns.setRowCount(len(ds.schema))
        for row, spec in enumerate(ds.schema):
            item = QTableWidgetItem(spec.name)
            item.setFlags(Qt.ItemIsEnabled | Qt.ItemIsSelectable)
            self.columns.setItem(row, 0, item)
            kind = QComboBox()
            kind.addItems(list(KINDS))
            kind.setCurrentText(spec.kind)
            kind.setAccessibleName(f"Kind of {spec.name}")
            kind.setToolTip(kind_why(spec))
            kind.currentTextChanged.connect(lambda k, n=spec.name: self._kind_chosen(n, k))
            self.columns.setCellWidget(row, 1, kind)
            role = QComboBox()
            for i, r in enumerate(ROLES):
                role.addItem(ROLE_TEXT.get(r, r.label), r)
                if r in ROLE_TIPS:
                    role.setItemData(i, ROLE_TIPS[r], Qt.ToolTipRole)
            role.setCurrentIndex(ROLES.index(spec.role))
            role.setAccessibleName(f"Role of {spec.name}")
            role.setToolTip(self.role_reason(spec.name, spec.role))
            role.currentIndexChanged.connect(lambda i, n=spec.name, r=row: self._role_chosen(r, n, ROLES[i]))
            self.columns.setCellWidget(row, 2, role)
            count = QTableWidgetItem(f"{self.distinct.get(spec.name, 0):,}")
            missing = ds.source.missing.get(spec.name, 0)
            count.setToolTip(f"{self.distinct.get(spec.name, 0):,} different values; missing in {missing:,} of "
                             f"{ds.source.n_rows_read:,} rows of the file")
            count.setFlags(Qt.ItemIsEnabled)
            count.setTextAlignment(Qt.AlignRight | Qt.AlignVCenter)
            self.columns.setItem(row, DISTINCT_COL, count)
            self.columns.setItem(row, DOMAIN_COL, self._domain_item(spec))
            button = QToolButton()
            button.setText("Set…")
            button.setAccessibleName(f"Set the public domain of {spec.name}")
            button.setToolTip(f"State the values of {spec.name} everyone may know (a range, or a list of values).")
            button.clicked.connect(lambda _c=False, n=spec.name: self.edit_domain(n))
            self.columns.setCellWidget(row, SET_COL, button)
        self._show_treatments(ds)

    def _sync_columns(self, ds: Dataset) -> None:
        for row, spec in enumerate(ds.schema):
            for col, value in ((1, KINDS.index(spec.kind)), (2, ROLES.index(spec.role))):
                combo = self.columns.cellWidget(row, col)
                if combo is not None and combo.currentIndex() != value:
                    combo.blockSignals(True)
                    combo.setCurrentIndex(value)
                    combo.blockSignals(False)
            combo = self.columns.cellWidget(row, 2)
            if combo is not None:
                combo.setToolTip(self.role_reason(spec.name, spec.role))
            combo = self.columns.cellWidget(row, 1)
            if combo is not None:
                combo.setToolTip(kind_why(spec))
            item, fresh = self.columns.item(row, DOMAIN_COL), self._domain_item(spec)
            if item is None or item.text() != fresh.text() or item.toolTip() != fresh.toolTip():
                self.columns.setItem(row, DOMAIN_COL, fresh)
        self._show_treatments(ds)
        self._show_why(self.columns.currentRow())

    @staticmethod
    def _domain_item(spec) -> QTableWidgetItem:
        """The "Public domain" cell: the stated domain, what a taxonomy supplies (in grey), or a dash."""
        text, tip = domain_text(spec)
        item = QTableWidgetItem(text)
        item.setFlags(Qt.ItemIsEnabled | Qt.ItemIsSelectable)
        item.setToolTip(tip + " Double-click or press Set… to change it.")
        not_public = (spec.domain is not None and not spec.domain.is_public) or text.startswith("— (")
        if not_public or spec.domain is None:
            item.setForeground(QBrush(QColor("#a33a00" if not_public else "#666666")))
        return item

    def domain_item(self, column: str) -> QTableWidgetItem:
        self._columns_later.flush()  # filled in a later turn when the table opened
        return self.columns.item(self.session.dataset.frame.columns.get_loc(column), DOMAIN_COL)

    def domain_button(self, column: str) -> QToolButton:
        self._columns_later.flush()  # filled in a later turn when the table opened
        return self.columns.cellWidget(self.session.dataset.frame.columns.get_loc(column), SET_COL)

    def edit_domain(self, column: str):
        """Open the public-domain dialog for `column` (the table refreshes when the session changes)."""
        return open_domain_dialog(self, self.session, column)

    def _cell_double_clicked(self, row: int, col: int) -> None:
        ds = self.session.dataset
        if ds is not None and col in (0, DISTINCT_COL, DOMAIN_COL) and 0 <= row < len(ds.schema):
            self.edit_domain(ds.schema[row].name)

    def role_reason(self, column: str, role: Role) -> str:
        """Why `column` has `role`, in plain words: the engine's reason for its guess, or that the user chose it."""
        guessed = self.reasons.get(column)
        if guessed is None:
            return f"{column}: {role.label}."
        first, why = guessed
        if first == role:
            return f"{column} was guessed {role.label.lower()}: {why}."
        return (f"You chose {role.label.lower()} for {column}. The first guess was {first.label.lower()}: {why}.")

    def _role_chosen(self, row: int, column: str, role: Role) -> None:
        self.columns.setCurrentCell(row, 0)  # the "why" line follows the column just changed
        ds = self.session.dataset
        before = ds.spec(column).role if ds is not None else None
        self.session.set_role(column, role)
        # rows are dropped for a blank only in a column that is released: a column with blanks that becomes an
        # identifier (or stops being one) changes which rows are kept, so the table is read again by that rule
        if (ds is not None and ds.source.na_policy.action == "drop" and ds.source.missing.get(column)
                and (before == Role.IDENTIFIER) != (role == Role.IDENTIFIER)):
            self.reload()

    def _show_why(self, row: int) -> None:
        ds = self.session.dataset
        if ds is None or not 0 <= row < len(ds.schema):
            self.why_label.setText("Select a column to see why it has its role and its kind.")
            return
        spec = ds.schema[row]
        self.why_label.setText("<b>Why this role?</b> " + escape(self.role_reason(spec.name, spec.role))
                               + "<br><b>Why this kind?</b> " + escape(kind_why(spec)))

    def role_combo(self, column: str) -> QComboBox:
        self._columns_later.flush()  # filled in a later turn when the table opened
        return self.columns.cellWidget(self.session.dataset.frame.columns.get_loc(column), 2)

    def kind_combo(self, column: str) -> QComboBox:
        self._columns_later.flush()  # filled in a later turn when the table opened
        return self.columns.cellWidget(self.session.dataset.frame.columns.get_loc(column), 1)

    def _kind_chosen(self, column: str, kind: str) -> None:
        """A kind change re-types the column from the file's text, so the file is read again."""
        ds = self.session.dataset
        if ds is None or ds.spec(column).kind == kind or not ds.source.path:
            return
        self.user_kinds[column] = kind
        kinds = {c.name: c.kind for c in ds.schema}
        kinds[column] = kind
        domains = {c.name: c.domain for c in ds.schema if c.domain is not None and c.name != column}
        recipe = self._reload_recipe(kinds=kinds, domains=domains, mechanism=None, params={})
        left = tuple(p for p in recipe.guessed.get(column, ()) if p != "kind")  # chosen now: no longer a guess
        recipe.guessed = {**recipe.guessed, column: left} if left else \
            {c: g for c, g in recipe.guessed.items() if c != column}
        self.load(ds.source.path, recipe=recipe, after=self.session.update_dataset)

    def confirm_roles(self) -> None:
        """The custodian confirms every role and kind shown (kept in the project as `Recipe.guessed` emptied)."""
        self.session.confirm_roles()

    def _show_confirmation(self, ds: Dataset | None) -> None:
        guessed = ds.guessed_columns if ds is not None else []
        self.confirm_button.setEnabled(bool(guessed))
        self.confirm_button.setVisible(ds is not None)
        if ds is None:
            self.confirm_label.setText("")
        elif guessed:
            shown = ", ".join(guessed[:6]) + (f" and {len(guessed) - 6} more" if len(guessed) > 6 else "")
            self.confirm_label.setText(
                f"The roles and kinds of {shown} are first guesses read from the values. Check them, then press "
                f"“{CONFIRM_BUTTON}”: a differentially private release needs your confirmation.")
        else:
            self.confirm_label.setText("Roles and kinds confirmed by you.")

    # -- step state -----------------------------------------------------------------------------------------
    def _confirmation_needed(self) -> bool:
        """Whether the roles and kinds guessed from the values must be confirmed before a run: for a
        differentially private mechanism (`contribution.DPMechanism`, whose plan refuses guesses), and while no
        mechanism is chosen yet. A k-anonymity release does not need it."""
        name = self.session.mechanism_name
        if not name:
            return True
        from ppdp_gui.engine.mechanisms import registry
        from ppdp_gui.engine.mechanisms.contribution import DPMechanism
        try:
            return issubclass(registry.get(name), DPMechanism)
        except Exception:  # noqa: BLE001 - an unknown mechanism: the cautious answer
            return True

    def state(self) -> tuple[str, str]:
        ds = self.session.dataset
        if self._loading:
            return TODO, "reading…"
        if ds is None:
            return (BLOCKED, "could not load the file") if self.error_text else (TODO, "open a table")
        qi = len(ds.quasi_identifiers)
        parts = [f"{ds.n_rows:,} rows", f"{qi} quasi-identifier{'s' if qi != 1 else ''}"]
        if ds.class_column:
            parts.append(f"class: {ds.class_column}")
        if ds.guessed_columns:
            parts.append("roles and kinds to confirm")
            if self._confirmation_needed():  # a DP plan refuses guesses: never a green tick until confirmed
                return WARN, ", ".join(parts) + f" (press “{CONFIRM_BUTTON}”)"
        src = ds.source
        if src.n_rows_read and src.n_rows_dropped > WARN_SHARE * src.n_rows_read:  # not a green tick
            parts.append(f"{100 * src.n_rows_dropped / src.n_rows_read:.0f} % of rows dropped: choose “Keep missing "
                         "as its own category”")
            return WARN, ", ".join(parts)
        pending = bool(ds.guessed_columns)  # no green tick while "roles and kinds to confirm" is still said
        return (DONE if (qi or ds.class_column) and not pending else WARN), ", ".join(parts)
