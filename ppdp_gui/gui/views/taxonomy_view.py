"""Taxonomies step: which quasi-identifiers have a generalisation tree, and the editor for the chosen one.

The list says per column what is there ("5 levels, 100 values", "no taxonomy", "3 data values not in the tree").
Under the list: ARX import (one file, or a folder), and "Build a tree", which offers every builder of the engine's
registry (engine/taxonomy/registry.py: the list `ppdp --build-taxonomy` offers too) with its fields; what is typed
becomes the command line's spelling and is built by engine.taxonomy.from_spec, as `ppdp run --build-taxonomy`
builds it. The tree editor (gui/taxonomy_editor) edits the selected column and reports each change back to the
session; a column's public list of values (its domain) is handed to it, so values the domain needs can be added.
"""

from __future__ import annotations

import html
from pathlib import Path

import pandas as pd
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QComboBox, QFileDialog, QFormLayout, QGridLayout, QGroupBox, QLineEdit,
                               QListWidget, QListWidgetItem, QPushButton, QSizePolicy, QSplitter, QStackedWidget,
                               QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget)

from ppdp_gui.engine.errors import PpdpError
from ppdp_gui.engine.taxonomy import registry as builders
from ppdp_gui.gui.coverage_cache import cached_missing_values, missing_values  # noqa: F401 - re-exported
from ppdp_gui.gui.views.common import DONE, TODO, WARN, StepView, heading, note
from ppdp_gui.gui.widgets.messages import show_error

try:  # the tree editor is built alongside; until it is there the step shows a read-only preview
    from ppdp_gui.gui.taxonomy_editor.editor import TaxonomyEditor
except ImportError:  # pragma: no cover - depends on what has landed
    TaxonomyEditor = None


def numbers_with_top_codes(values) -> bool:
    """engine.taxonomy.builders' rule, imported when a table is there (numpy stays out of the window's start)."""
    from ppdp_gui.engine.data.schema import MISSING_LABEL
    from ppdp_gui.engine.taxonomy.builders import numbers_with_top_codes as rule
    return rule(values, MISSING_LABEL)  # a blank kept as "(missing)" gets a leaf of its own


def suggested_builder(column: str, values) -> str | None:
    """engine.data.coltypes' rule (masking for a ZIP code, the ICD tree for diagnoses …), imported when a table
    is there."""
    from ppdp_gui.engine.data.coltypes import suggested_builder as rule
    return rule(column, values)


def build_taxonomy(column: str, values, spec):
    from ppdp_gui.engine.taxonomy.from_spec import build_taxonomy as build
    return build(column, values, spec)


def interval_width_for(values) -> float:
    from ppdp_gui.engine.taxonomy.from_spec import interval_width_for as width
    return width(values)


def describe_taxonomy(tax, frame: pd.DataFrame, column: str) -> str:
    levels = tax.height  # levels above the values, as the tree editor's title counts them
    text = f"{levels} level{'s' if levels != 1 else ''}, {len(tax.leaf_values())} values"
    missing = cached_missing_values(tax, frame, column)
    if missing:
        text += f" — {len(missing)} data value{'s' if len(missing) != 1 else ''} not in the tree"
    return text


class TaxonomyView(StepView):
    title = "Taxonomies"

    def __init__(self, session, runner, parent=None):
        super().__init__(session, runner, parent)
        self.columns = QListWidget()
        self.columns.setAccessibleName("Quasi-identifier columns and their taxonomies")
        self.columns.setWordWrap(True)  # "built from the table's values: …" was cut off
        self.columns.setToolTip("Each quasi-identifier needs a generalisation tree (taxonomy) for DiffGen, TDS and "
                                "similar mechanisms. Numeric columns can use intervals instead.")
        self.import_button = QPushButton("&Import ARX hierarchy…")
        self.import_button.setToolTip("Read an ARX hierarchy CSV (one row per value, one column per level, ';') "
                                      "for the selected column.")
        self.folder_button = QPushButton("Import an ARX &folder…")
        self.folder_button.setToolTip("Match files named like <column>.csv or *_hierarchy_<column>.csv to columns.")
        self.flat_all_button = QPushButton("Flat for all &without one")
        self.flat_all_button.setToolTip("A one-level tree for every quasi-identifier that has none yet.")
        self.remove_button = QPushButton("&Remove taxonomy")
        self.summary = note(object_name="taxonomy_summary")
        self._width_column = None  # (column, its domain) the builders' fields were last filled for
        build_box = self._builder_box()

        buttons = QGridLayout()
        buttons.addWidget(self.import_button, 0, 0)
        buttons.addWidget(self.folder_button, 0, 1)
        buttons.addWidget(self.flat_all_button, 1, 0)
        buttons.addWidget(self.remove_button, 1, 1)
        left = QWidget()
        lv = QVBoxLayout(left)
        lv.setContentsMargins(0, 0, 0, 0)
        lv.addWidget(self.summary)
        lv.addWidget(self.columns, 1)
        lv.addWidget(build_box)
        lv.addLayout(buttons)

        if TaxonomyEditor is not None:
            self.editor = TaxonomyEditor()
            self.editor.taxonomyChanged.connect(self._edited)
            self.preview = None
        else:  # pragma: no cover
            self.editor = None
            self.preview = QTreeWidget()
            self.preview.setHeaderLabels(["Group / value"])
            self.preview.setAccessibleName("Taxonomy preview")
        split = QSplitter(Qt.Horizontal)
        split.addWidget(left)
        split.addWidget(self.editor or self.preview)
        split.setStretchFactor(1, 1)

        layout = QVBoxLayout(self)
        layout.addWidget(heading("2. Taxonomies"))
        layout.addWidget(note("A taxonomy says how values may be generalised, e.g. 39 → 35-39 → 30-39 → *. "
                              "Import the ARX hierarchy files you already have, or build and edit trees here."))
        layout.addWidget(split, 1)

        self.columns.currentItemChanged.connect(lambda _c, _p: self._show_selected())
        self.import_button.clicked.connect(self._import_one)
        self.folder_button.clicked.connect(self._import_folder)
        self.flat_all_button.clicked.connect(lambda: self._flat(self.session.qi_without_taxonomy()))
        self.build_button.clicked.connect(self.build_selected)
        self.remove_button.clicked.connect(lambda: self._set(self.selected_column(), None))
        session.dataset_changed.connect(self._refresh)
        self._shown_column: str | None = None
        self._shown_frame = None  # the table the editor's column was loaded from
        self._editor_stale = False
        self._refresh()

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self._editor_stale:
            self._show_selected()

    def _builder_box(self) -> QGroupBox:
        """'Build a tree': every builder of the engine's registry, its help and its fields (one page each)."""
        box = QGroupBox("Build a tree for the selected column")
        self.builder_box = box
        self.builder_combo = QComboBox()
        self.builder_combo.setAccessibleName("Taxonomy builder")
        self.builder_help = note(object_name="builder_help")
        self.builder_pages = QStackedWidget()
        self.builder_fields: dict[str, dict[str, QLineEdit | QComboBox]] = {}
        for b in builders.BUILDERS:
            self.builder_combo.addItem(b.label, b.name)
            self.builder_combo.setItemData(self.builder_combo.count() - 1, b.help, Qt.ToolTipRole)
            page = QWidget()
            form = QFormLayout(page)
            form.setContentsMargins(0, 0, 0, 0)
            self.builder_fields[b.name] = {}
            for p in b.params:
                if p.choices:
                    field = QComboBox()
                    field.addItems(list(p.choices))
                else:
                    field = QLineEdit()
                    field.setPlaceholderText(p.placeholder)
                field.setToolTip(p.help)
                field.setAccessibleName(f"{b.label}: {p.label}")
                form.addRow(p.label + ":", field)
                self.builder_fields[b.name][p.name] = field
            self.builder_pages.addWidget(page)
        self.build_button = QPushButton("&Build")
        self.build_button.setToolTip("Replace the selected column's tree with the one built (undo in the editor "
                                     "with Ctrl+Z)")
        self.builder_combo.currentIndexChanged.connect(self._builder_chosen)
        layout = QVBoxLayout(box)
        layout.addWidget(self.builder_combo)
        layout.addWidget(self.builder_help)
        layout.addWidget(self.builder_pages)
        layout.addWidget(self.build_button)
        self._builder_chosen()
        return box

    def builder_name(self) -> str:
        return self.builder_combo.currentData()

    def choose_builder(self, name: str, **fields: str) -> None:
        """Select builder `name` and type `fields` ({param: text}) into its fields (tests, scripts)."""
        self.builder_combo.setCurrentIndex(self.builder_combo.findData(name))
        for param, text in fields.items():
            field = self.builder_fields[name][param]
            field.setCurrentText(str(text)) if isinstance(field, QComboBox) else field.setText(str(text))

    def _builder_chosen(self, *_args) -> None:
        current = self.builder_combo.currentIndex()
        for i in range(self.builder_pages.count()):  # the box as tall as the chosen builder's fields, no more
            self.builder_pages.widget(i).setSizePolicy(QSizePolicy.Preferred if i == current else QSizePolicy.Ignored,
                                                       QSizePolicy.Preferred if i == current else QSizePolicy.Ignored)
        self.builder_pages.setCurrentIndex(current)
        self.builder_pages.adjustSize()
        self._enable_build()

    def _column_is_numbers(self, name: str | None) -> bool:
        ds = self.session.dataset
        return name is not None and ds is not None and (
            ds.spec(name).kind == "numeric" or numbers_with_top_codes(ds.frame[name].dropna().unique()))

    def _enable_build(self) -> None:
        name = self.selected_column()
        numbers = self._column_is_numbers(name)
        b = builders.builder(self.builder_name())
        fits = name is not None and (numbers or not b.numbers)
        self.build_button.setEnabled(fits)
        self.builder_box.setTitle(f"Build a tree for {name}" if name else "Build a tree for the selected column")
        why = (f" {name} holds text, not numbers: choose another builder." if name is not None and not fits else "")
        self.builder_help.setText(b.help + (" Public: it does not read the table's values." if b.public else "")
                                  + (f"<br><span style='color:#a33a00'>{html.escape(why.strip())}</span>" if why
                                     else ""))
        self.build_button.setText(f"&Build for {name}" if name else "&Build")

    def _fill_builder_fields(self, name: str | None) -> None:
        """The fields' starting values for a column: the one default interval width (unless absurd for its
        range, '90+' read as 90, as `ppdp` does) and, for bands, the column's public range if stated, else a
        standard one read from its name alone (0-120 for an age), never from its values."""
        from ppdp_gui.gui.widgets.domain_dialog import fmt_number, suggest_bounds
        ds = self.session.dataset
        fields = self.builder_fields
        if name is None or ds is None:
            return
        values = ds.frame[name]
        numeric = ds.spec(name).kind == "numeric" or numbers_with_top_codes(values.dropna().unique())
        fields["intervals"]["width"].setText(fmt_number(interval_width_for(values)) if numeric else "")
        dom = ds.spec(name).domain
        low = high = ""
        if dom is not None and dom.is_numeric and dom.is_public:
            low, high = fmt_number(dom.low), fmt_number(dom.high)
        elif (s := suggest_bounds(name)) is not None:
            low, high = fmt_number(s.low), fmt_number(s.high)
        fields["bands"]["low"].setText(low)
        fields["bands"]["high"].setText(high)

    def build_selected(self) -> None:
        """Build the chosen builder's tree for the selected column: the fields become the command line's
        spelling (registry.spec_text) and engine.taxonomy.from_spec builds it, exactly as `ppdp` would."""
        column, name = self.selected_column(), self.builder_name()
        if column is None or self.session.dataset is None:
            return
        typed = {p: f.currentText() if isinstance(f, QComboBox) else f.text()
                 for p, f in self.builder_fields[name].items()}
        ds = self.session.dataset
        try:
            spec = builders.spec_text(name, typed)
            recoded = self._recoded(column, spec)
            tax = build_taxonomy(column, ds.frame[column] if recoded is None else recoded, spec)
        except PpdpError as exc:
            show_error(self, exc, context=f"Could not build the {builders.builder(name).label.lower()} tree "
                                          f"for {column}.")
            return
        if recoded is not None:  # codes written at the level of the public list the tree holds (a public rule)
            frame = ds.frame.copy()
            frame[column] = recoded
            self.session.auto_notes.append(f"{column}: codes written as their 3-character category (250.83 → 250), "
                                           "the level of the public ICD list; open the table again to undo.")
            self.session.update_dataset(ds.with_frame(frame, ds.schema))
        self._set(column, tax)

    def _recoded(self, column: str, spec: str):
        """The column's values as the tree `spec` holds them, when it is at a coarser level (ICD categories), and
        only if that changes a value; else None."""
        from ppdp_gui.engine.taxonomy.from_spec import recoded_values
        ds = self.session.dataset
        label = getattr(ds.source.na_policy, "category_label", None)
        recoded = recoded_values(column, ds.frame[column], spec, keep=(label,) if label else ())
        if recoded is None:
            return None
        if ds.spec(column).kind != "categorical":
            raise PpdpError(f"{column} is read as numbers; set its kind to categorical in the Data step first")
        present = ds.frame[column].notna()
        same = (recoded[present].astype(str) == ds.frame[column][present].astype(str)).all()
        return None if same else recoded

    def forget_table(self) -> None:
        """A new table: the editor's tree, its data values and coverage, and the width box belonged to the last
        one (a column of the same name in the next table must be loaded afresh, never shown the old values)."""
        self._shown_column = self._width_column = None
        if self.editor is not None:
            self.editor.clear()

    # -- list -------------------------------------------------------------------------------------------------
    def qi_columns(self) -> list[str]:
        ds = self.session.dataset
        return ds.quasi_identifiers if ds is not None else []

    def selected_column(self) -> str | None:
        item = self.columns.currentItem()
        return item.data(Qt.UserRole) if item is not None else None

    def select(self, column: str) -> None:
        for i in range(self.columns.count()):
            if self.columns.item(i).data(Qt.UserRole) == column:
                self.columns.setCurrentRow(i)

    def column_status(self, name: str) -> str:
        ds = self.session.dataset
        spec = ds.spec(name)
        if spec.taxonomy is None:
            if spec.kind == "numeric":
                return "numeric: intervals or a tree (optional)"
            if self._listed(name):
                return "no tree: its public list is one level (value or *)"
            if self._few_values(name):
                shown = ", ".join(map(str, sorted(ds.frame[name].dropna().astype(str).unique())))
                return f"no tree needed: {shown} (each value is kept or shown as *)"
            if self._is_dates(name):
                return "exact dates, no taxonomy: build “Dates” below (day → month → year)"
            offered = suggested_builder(name, ds.frame[name])
            if offered is not None:  # a ZIP code: masking; diagnoses: the ICD tree
                return f"no taxonomy: build “{builders.builder(offered).label}” below"
            return "no taxonomy"
        text = describe_taxonomy(spec.taxonomy, ds.frame, name)
        if getattr(spec.taxonomy, "origin", "public") == "data":
            text += "\n    built from the table's values: fine for k-anonymity, not for ε-DP"
        return text + ("\n    attached automatically" if self.session.auto_attached(name) else "")

    def _refresh(self) -> None:
        keep = self.selected_column()
        self.columns.blockSignals(True)
        self.columns.clear()
        for name in self.qi_columns():
            item = QListWidgetItem(f"{name}\n    {self.column_status(name)}")
            item.setData(Qt.UserRole, name)
            auto = self.session.auto_attached(name)
            if auto:
                item.setToolTip(f"{name}: taxonomy read from {auto} when the table was opened")
            self.columns.addItem(item)
        self.columns.blockSignals(False)
        if self.columns.count():
            names = self.qi_columns()
            self.columns.setCurrentRow(names.index(keep) if keep in names else 0)
        self.summary.setText(self.summary_text())
        enabled = self.columns.count() > 0
        for b in (self.import_button, self.flat_all_button, self.remove_button, self.folder_button):
            b.setEnabled(enabled)
        self._show_selected()
        self.state_changed.emit()

    def summary_text(self) -> str:
        if self.session.dataset is None:
            return "Load a table first."
        text = self.state()[1].capitalize() + "."
        auto = [c for c in self.qi_columns() if self.session.auto_attached(c)]
        if auto:
            text += (f" {len(auto)} attached automatically from the ARX hierarchy files named after the table"
                     + (f" ({', '.join(auto)})." if len(auto) <= 3 else "."))
        read_notes = set(self.session.dataset.source.notes)  # how the file was read: the Data step shows those
        for note_text in self.session.auto_notes:
            if note_text not in read_notes:
                text += f"<br><span style='color:#a33a00'>{html.escape(note_text)}</span>"
        return text

    def _show_selected(self) -> None:
        name = self.selected_column()
        ds = self.session.dataset
        if self.editor is not None and not self.isVisible():
            self._editor_stale = True  # loaded when the step is shown (the editor's set-up is not free)
        elif self.editor is not None:
            self._editor_stale = False
            self.editor.setEnabled(name is not None)
            # only reload the editor when another column (or another taxonomy object) is to be shown, so the
            # editor's own edits, which come back through the session, keep their undo history
            tax = ds.spec(name).taxonomy if name else None
            if name is not None and (name != self._shown_column or self._shown_frame is not ds.frame
                                     or (tax is not None and tax is not self._editor_tax())):
                self._shown_column, self._shown_frame = name, ds.frame
                self.editor.set_column(name, tax, ds.frame[name], public_values=self._public_values(name))
            elif name is not None:
                self.editor.set_public_values(self._public_values(name))
            if name is None:
                self._shown_column = self._shown_frame = None
                self.editor.clear()
        elif self.preview is not None:  # pragma: no cover
            self.preview.clear()
            tax = ds.spec(name).taxonomy if name else None
            if tax is not None:
                self._fill_preview(tax)
        key = (name, ds.spec(name).domain if name is not None else None)  # refilled when its public range changes
        if key != self._width_column:
            self._fill_builder_fields(name)
            other = name is not None and name != (self._width_column or (None,))[0]
            offered = suggested_builder(name, ds.frame[name]) if other else None
            if offered is not None:  # a ZIP code: masking; dates; diagnoses: the ICD tree
                self.builder_combo.setCurrentIndex(self.builder_combo.findData(offered))
            elif other and builders.builder(self.builder_name()).numbers and not self._column_is_numbers(name):
                self.builder_combo.setCurrentIndex(self.builder_combo.findData("flat"))  # one that fits text
        self._enable_build()
        self._width_column = key

    def _public_values(self, name: str):
        """The column's stated public list of values (its domain), which the editor offers to add."""
        dom = self.session.dataset.spec(name).domain
        return dom.categories if dom is not None and dom.is_public and dom.categories is not None else None

    def _editor_tax(self):
        try:
            return self.editor.taxonomy()
        except Exception:  # noqa: BLE001 - an empty editor has none
            return None

    def _fill_preview(self, tax) -> None:  # pragma: no cover - used only without the editor
        items = {tax.root: QTreeWidgetItem([tax.label(tax.root)])}
        self.preview.addTopLevelItem(items[tax.root])
        stack = [tax.root]
        while stack:
            node = stack.pop()
            for child in tax.children(node):
                items[child] = QTreeWidgetItem(items[node], [tax.label(child)])
                stack.append(child)

    # -- actions ----------------------------------------------------------------------------------------------
    def _set(self, column: str | None, tax) -> None:
        if column is None:
            return
        self._shown_column = None if tax is not None else self._shown_column
        self.session.set_taxonomy(column, tax)

    def _edited(self, column: str, tax) -> None:
        if self.session.dataset is not None and column in self.session.dataset.frame.columns:
            self.session.set_taxonomy(column, tax)

    def import_arx(self, column: str, path: str) -> None:
        from ppdp_gui.engine.taxonomy.arx_io import read_arx_hierarchy
        try:
            self._set(column, read_arx_hierarchy(path, column))
        except PpdpError as exc:
            show_error(self, exc, context=f"Could not import {Path(path).name} for {column}.")

    def _import_one(self) -> None:
        column = self.selected_column()
        if column is None:
            return
        path, _ = QFileDialog.getOpenFileName(self, f"ARX hierarchy for {column}", "",
                                              "ARX hierarchy (*.csv *.txt);;All files (*)")
        if path:
            self.import_arx(column, path)

    def import_folder(self, folder: str) -> list[str]:
        """Attach every hierarchy file in `folder` whose name ends with a quasi-identifier's name."""
        from ppdp_gui.engine.taxonomy.arx_io import read_arx_hierarchy
        done = []
        files = sorted(Path(folder).glob("*.csv"))
        for column in self.qi_columns():
            for f in files:
                stem = f.stem
                if stem == column or stem.endswith("_" + column):
                    try:
                        self.session.set_taxonomy(column, read_arx_hierarchy(f, column))
                        done.append(column)
                    except PpdpError as exc:
                        show_error(self, exc, context=f"Could not import {f.name} for {column}.")
                    break
        self._shown_column = None
        self._refresh()
        return done

    def _import_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Folder of ARX hierarchy files")
        if folder:
            done = self.import_folder(folder)
            self.summary.setText(f"Imported {len(done)} hierarch{'ies' if len(done) != 1 else 'y'}"
                                 f"{': ' + ', '.join(done) if done else ''}. " + self.state()[1].capitalize() + ".")

    def _flat(self, columns) -> None:
        ds = self.session.dataset
        for column in [c for c in columns if c]:
            # built from the table's own values (origin "data"): it cannot serve as a public domain for ε-DP
            self.session.set_taxonomy(column, build_taxonomy(column, ds.frame[column], "flat"))
        self._shown_column = None
        self._refresh()

    # -- step state ---------------------------------------------------------------------------------------------
    def _listed(self, name: str) -> bool:
        """A column with a stated public list of values: without a tree the list is its one level (each value
        kept or replaced by *), which is what a flat tree would be — no warning for it."""
        dom = self.session.dataset.spec(name).domain
        return dom is not None and dom.categories is not None and dom.is_public

    def _few_values(self, name: str) -> bool:
        """Two values or fewer (F, M): no tree needed, nothing to warn about (engine's `needs_no_tree`)."""
        from ppdp_gui.engine.data.coltypes import needs_no_tree
        from ppdp_gui.engine.data.schema import MISSING_LABEL
        ds = self.session.dataset
        if ds.larger_than_memory:  # its frame holds no rows: no value was read here
            return False
        return needs_no_tree(ds.frame[name], (MISSING_LABEL,))

    def _is_dates(self, name: str) -> bool:
        """Exact dates (2023-01-05): the Dates builder keeps the month or the year instead of '*'."""
        from ppdp_gui.engine.data.schema import MISSING_LABEL
        from ppdp_gui.engine.taxonomy.dates import looks_like_dates
        return looks_like_dates(self.session.dataset.frame[name], (MISSING_LABEL,))

    def state(self) -> tuple[str, str]:
        ds = self.session.dataset
        if ds is None:
            return TODO, "load a table first"
        qis = ds.quasi_identifiers
        if not qis:
            return WARN, "no quasi-identifiers marked"
        missing = [c for c in self.session.qi_without_taxonomy() if not self._listed(c) and not self._few_values(c)]
        if missing:
            n = len(missing)
            return WARN, f"{n} quasi-identifier{'s' if n != 1 else ''} without taxonomy"
        uncovered = [c for c in qis if ds.spec(c).taxonomy is not None
                     and cached_missing_values(ds.spec(c).taxonomy, ds.frame, c)]
        if uncovered:
            return WARN, f"{len(uncovered)} of {len(qis)} taxonomies miss data values"
        return DONE, f"all {len(qis)} quasi-identifiers covered"
