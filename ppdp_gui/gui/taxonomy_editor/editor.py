"""Taxonomy editor for one column: a tree of groups and values edited by drag & drop, buttons or keys, all undoable.

The editor owns a working copy (EditTree) and, after every edit, import or build, emits a fresh engine Taxonomy
through `taxonomyChanged(column, taxonomy)`; the main window puts it into the Dataset. File dialogs and error
pop-ups are attributes so tests (and scripts) can replace them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pandas as pd
from PySide6 import QtCore, QtGui, QtWidgets

from ppdp_gui.engine.errors import PpdpError
from ppdp_gui.engine.taxonomy.tree import Taxonomy
from ppdp_gui.gui.taxonomy_editor import commands as cmd
from ppdp_gui.gui.taxonomy_editor.coverage_panel import CoveragePanel
from ppdp_gui.engine.taxonomy.editing import EditTree
from ppdp_gui.gui.taxonomy_editor.intervals_panel import IntervalBuilder
from ppdp_gui.gui.taxonomy_editor.model import TaxonomyModel

FileDialog = Callable[[QtWidgets.QWidget, str, str], str]
CSV_FILTER = "ARX hierarchy (*.csv);;All files (*)"


def ask_open_path(parent: QtWidgets.QWidget, caption: str, start: str) -> str:
    return QtWidgets.QFileDialog.getOpenFileName(parent, caption, start, CSV_FILTER)[0]


def ask_save_path(parent: QtWidgets.QWidget, caption: str, start: str) -> str:
    return QtWidgets.QFileDialog.getSaveFileName(parent, caption, start, CSV_FILTER)[0]


def show_error(parent: QtWidgets.QWidget, title: str, message: str) -> None:
    QtWidgets.QMessageBox.warning(parent, title, message)


class TaxonomyEditor(QtWidgets.QWidget):
    """Edit one column's taxonomy. `set_column(name, taxonomy, values)`; listen to `taxonomyChanged`."""

    taxonomyChanged = QtCore.Signal(str, object)

    def __init__(self, parent: QtWidgets.QWidget | None = None):
        super().__init__(parent)
        self.open_dialog: FileDialog = ask_open_path
        self.save_dialog: FileDialog = ask_save_path
        self.error_handler: Callable[[QtWidgets.QWidget, str, str], None] = show_error
        self._column = ""
        self._base: Taxonomy | None = None  # as loaded: returned unchanged (ARX rows kept) while nothing is edited
        self._values: pd.Series | None = None
        self._public: tuple[str, ...] | None = None  # the column's public list of values (its domain), if stated
        self._clipboard: list[int] = []
        self._loading = False
        self._built: tuple[EditTree, int, Taxonomy] | None = None  # last tree -> Taxonomy conversion
        self.undo_stack = QtGui.QUndoStack(self)
        self.model = TaxonomyModel(EditTree(), self)
        self.model.move_handler = self.move_nodes
        self.model.rename_handler = self.rename
        self._build()
        self.undo_stack.indexChanged.connect(self._after_change)

    # ---- construction ---------------------------------------------------------------------------------------
    def _action(self, text: str, tip: str, keys, slot, icon=None) -> QtGui.QAction:
        action = QtGui.QAction(text, self)
        if icon is not None:
            action.setIcon(self.style().standardIcon(icon))
        keys = keys if isinstance(keys, list) else [keys]
        action.setShortcuts([QtGui.QKeySequence(k) for k in keys if k])
        action.setShortcutContext(QtCore.Qt.ShortcutContext.WidgetWithChildrenShortcut)
        shown = action.shortcut().toString(QtGui.QKeySequence.SequenceFormat.NativeText)
        action.setToolTip(f"{tip} ({shown})" if shown else tip)
        action.triggered.connect(lambda _checked=False: slot())
        self.addAction(action)
        return action

    def _build(self) -> None:
        SP = QtWidgets.QStyle.StandardPixmap
        # fixed texts (the stack's own actions rename themselves and make the tool bar jump); the tooltip says what
        self.undo_action = self._action("&Undo", "Undo the last change to the taxonomy", "Ctrl+Z", self.undo_stack.undo,
                                        SP.SP_ArrowBack)
        self.redo_action = self._action("&Redo", "Redo the change just undone", ["Ctrl+Shift+Z", "Ctrl+Y"],
                                        self.undo_stack.redo, SP.SP_ArrowForward)
        self.undo_action.setEnabled(False)
        self.redo_action.setEnabled(False)
        self.undo_stack.canUndoChanged.connect(self.undo_action.setEnabled)
        self.undo_stack.canRedoChanged.connect(self.redo_action.setEnabled)
        self.undo_stack.undoTextChanged.connect(
            lambda t: self.undo_action.setToolTip(f"Undo: {t} (Ctrl+Z)" if t else "Undo (Ctrl+Z)"))
        self.undo_stack.redoTextChanged.connect(
            lambda t: self.redo_action.setToolTip(f"Redo: {t} (Ctrl+Shift+Z)" if t else "Redo (Ctrl+Shift+Z)"))
        self.new_group_action = self._action("&New group", "Add an empty group inside the selected group; then drag "
                                             "values into it", "Ins", self.new_group, SP.SP_FileDialogNewFolder)
        self.level_action = self._action("Group &selection", "Put the selected values or groups (of one group) into "
                                         "a new group: a level above them", "Ctrl+G", self.insert_level)
        self.rename_action = self._action("Re&name", "Rename the selected group", "F2", self.rename_selected)
        self.delete_action = self._action("&Delete", "Delete the selected groups (their contents move up) or "
                                          "values", "Del", self.delete_selected, SP.SP_TrashIcon)
        self.cut_action = self._action("Cu&t", "Pick the selected values or groups to move them with Paste",
                                       "Ctrl+X", self.cut_selected)
        self.paste_action = self._action("&Paste into group", "Move the picked values or groups into the selected "
                                         "group", "Ctrl+V", self.paste_into_selected)
        self.import_action = self._action("&Import ARX…", "Replace the tree with an ARX hierarchy CSV file", "",
                                          lambda: self.import_arx(), SP.SP_DialogOpenButton)
        self.export_action = self._action("&Export ARX…", "Save the tree as an ARX hierarchy CSV file", "",
                                          lambda: self.export_arx(), SP.SP_DialogSaveButton)
        self.expand_action = self._action("E&xpand all", "Show every level of the tree", "", self._expand_all)
        self.add_missing_action = self._action("Add &missing values", "Put the data's values that the tree lacks "
                                               "under the top group", "", self.add_missing_values)

        bar = QtWidgets.QHBoxLayout()
        bar.setSpacing(4)
        self.buttons: dict[str, QtWidgets.QToolButton] = {}
        for i, action in enumerate((self.undo_action, self.redo_action, None, self.new_group_action,
                                    self.level_action, self.rename_action, self.delete_action, None,
                                    self.import_action, self.export_action)):
            if action is None:
                bar.addSpacing(12)
                continue
            button = QtWidgets.QToolButton()
            button.setDefaultAction(action)
            button.setToolButtonStyle(QtCore.Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
            button.setAccessibleName(action.text().replace("&", "").rstrip("…"))
            self.buttons[action.text().replace("&", "")] = button
            bar.addWidget(button)
        bar.addStretch(1)

        self.title_label = QtWidgets.QLabel()
        self.title_label.setAccessibleName("Column and taxonomy size")
        self.view = QtWidgets.QTreeView()
        self.view.setModel(self.model)
        self.view.setAccessibleName("Taxonomy tree")
        self.view.setToolTip("Drag values into groups; F2 renames a group; Del deletes; Ctrl+X then Ctrl+V moves "
                             "without the mouse")
        self.view.setSelectionMode(QtWidgets.QAbstractItemView.SelectionMode.ExtendedSelection)
        self.view.setDragDropMode(QtWidgets.QAbstractItemView.DragDropMode.InternalMove)
        self.view.setDefaultDropAction(QtCore.Qt.DropAction.MoveAction)
        self.view.setDragEnabled(True)
        self.view.setAcceptDrops(True)
        self.view.setDropIndicatorShown(True)
        self.view.setUniformRowHeights(True)
        self.view.setEditTriggers(QtWidgets.QAbstractItemView.EditTrigger.EditKeyPressed
                                  | QtWidgets.QAbstractItemView.EditTrigger.DoubleClicked)
        self.view.header().setStretchLastSection(False)
        self.view.header().setSectionResizeMode(0, QtWidgets.QHeaderView.ResizeMode.Stretch)
        self.view.header().setSectionResizeMode(1, QtWidgets.QHeaderView.ResizeMode.ResizeToContents)
        self.view.setContextMenuPolicy(QtCore.Qt.ContextMenuPolicy.ActionsContextMenu)
        for action in (self.new_group_action, self.level_action, self.rename_action, self.delete_action,
                       self.cut_action, self.paste_action, self.expand_action):
            self.view.addAction(action)
        self.message_label = QtWidgets.QLabel()
        self.message_label.setAccessibleName("Editor message")
        self.message_label.setWordWrap(True)
        self.message_label.setStyleSheet("color: #8a4b00;")

        left = QtWidgets.QWidget()
        left_layout = QtWidgets.QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(self.title_label)
        left_layout.addWidget(self.view, 1)
        left_layout.addWidget(self.message_label)

        self.builder = IntervalBuilder()
        self.builder.applyRequested.connect(lambda tax: self.replace_taxonomy(tax, "Build intervals"))
        self.coverage_panel = CoveragePanel()
        self.coverage_panel.add_button.setDefaultAction(self.add_missing_action)
        self.coverage_panel.add_button.setAccessibleName("Add missing values")
        right = QtWidgets.QWidget()
        right_layout = QtWidgets.QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addWidget(self.coverage_panel)
        right_layout.addWidget(self.builder, 1)
        right_layout.addStretch(0)  # takes the room when the interval builder is hidden (text columns)

        self.splitter = QtWidgets.QSplitter()
        self.splitter.addWidget(left)
        self.splitter.addWidget(right)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        layout = QtWidgets.QVBoxLayout(self)
        layout.addLayout(bar)
        layout.addWidget(self.splitter, 1)
        self.view.selectionModel().selectionChanged.connect(lambda *_: self._update_actions())
        self._update_actions()

    # ---- loading and result ---------------------------------------------------------------------------------
    @property
    def column(self) -> str:
        return self._column

    def set_column(self, column: str, taxonomy: Taxonomy | None = None, values: pd.Series | None = None,
                   public_values=None) -> None:
        """Show `column`'s taxonomy (a flat one from `values` if it has none); forgets the undo history.
        `public_values`: the column's public list (its domain): values it names that the tree lacks are offered
        by "Add missing values" too, and adding them keeps a public tree public."""
        if taxonomy is None:
            if values is None:
                raise ValueError("set_column needs a taxonomy or the column's values")
            # in the values' natural order (3, 10, 100 — ages, not text: 10, 100, 3)
            from ppdp_gui.engine.taxonomy.order import natural_key
            shown = sorted({str(v) for v in values.dropna().astype(str).unique()}, key=natural_key)
            taxonomy = Taxonomy.from_paths(column, [[v, "*"] for v in shown])
        self._loading = True
        try:
            self._column = column
            self._base = taxonomy
            self._values = values
            self._public = None if public_values is None else tuple(str(v) for v in public_values)
            self.undo_stack.clear()
            self.model.set_tree(EditTree.from_taxonomy(taxonomy))
            self.undo_stack.setClean()
        finally:
            self._loading = False
        self.view.expandToDepth(1)
        self._refresh_views()
        # the interval builder covers the data's values (or the tree's when no data is given)
        numbers = values if values is not None else pd.Series(self.tree().value_labels())
        numeric = self._numeric(numbers)
        self.builder.setVisible(numeric)  # intervals only make sense for numbers
        self.builder.set_values(column, numbers if numeric else [])

    def clear(self) -> None:
        """Show nothing: no column, no tree, no data values, no undo history (another table was opened, so
        nothing of the last one may be shown, offered by "Add missing values" or sent back to the session)."""
        self._loading = True
        try:
            self._column, self._base, self._values, self._clipboard, self._built = "", None, None, [], None
            self._public = None
            self.undo_stack.clear()
            self.model.set_tree(EditTree())
            self.undo_stack.setClean()
        finally:
            self._loading = False
        self._say("")
        self._refresh_views()
        self.builder.setVisible(False)
        self.builder.set_values("", [])

    def taxonomy(self) -> Taxonomy:
        """The taxonomy as edited (the loaded, imported or built object itself while it is unchanged)."""
        index = self.undo_stack.index()
        if index == 0 and self._base is not None:
            return self._base
        last = self.undo_stack.command(index - 1) if index > 0 else None
        if isinstance(last, cmd.ReplaceCommand) and last.taxonomy is not None:
            return last.taxonomy  # as imported or built: keeps e.g. the ARX file's own row order
        tree = self.model.tree
        if self._built is not None and self._built[0] is tree and self._built[1] == tree.version:
            return self._built[2]
        taxonomy = tree.to_taxonomy()
        self._built = (tree, tree.version, taxonomy)
        return taxonomy  # an edited ARX file keeps its layout: the tree carries the imported file's format

    def tree(self) -> EditTree:
        return self.model.tree

    def coverage(self):
        return self.coverage_panel.coverage

    # ---- edits (each one undo command) ----------------------------------------------------------------------
    def _push(self, command: QtGui.QUndoCommand) -> bool:
        self.undo_stack.push(command)
        error = getattr(command, "error", "")
        if error:
            self._say(error)
            return False
        return True

    def _plan_or_say(self, make):
        try:
            return make()
        except ValueError as exc:
            self._say(str(exc))
            return None

    def move_nodes(self, nodes: list[int], target: int, row: int = -1) -> bool:
        plan = self._plan_or_say(lambda: cmd.plan_move(self.tree(), nodes, target, row))
        if plan is None:
            return False
        n = len(cmd.top_level(self.tree(), nodes))
        text = f"Move {n} item{'s' if n != 1 else ''} into {self.tree().labels[target]!r}"
        return self._push(cmd.EditCommand(self.model, text, plan))

    def rename(self, node: int, label: str) -> bool:
        if node in self.tree() and self.tree().labels[node] == label.strip():
            return False
        plan = self._plan_or_say(lambda: cmd.plan_rename(self.tree(), node, label))
        return plan is not None and self._push(cmd.EditCommand(self.model, f"Rename to {label.strip()!r}", plan))

    def new_group(self, label: str | None = None, parent: int | None = None, edit: bool = True) -> int | None:
        """An empty group in `parent` (default: the selected group, or the selected value's group)."""
        tree = self.tree()
        if parent is None:
            selected = self.selected_nodes()
            parent = selected[0] if selected else 0
        if not tree.is_group(parent):
            parent = tree.parent[parent]
        label = label or tree.unique_child_label(parent, "New group")
        made = self._plan_or_say(lambda: cmd.plan_new_group(tree, parent, label))
        if made is None or not self._push(cmd.EditCommand(self.model, f"New group {label!r}", made[0])):
            return None
        self._select(made[1], edit=edit)
        return made[1]

    def insert_level(self, nodes: list[int] | None = None, label: str | None = None, edit: bool = True) -> int | None:
        """A new group above `nodes` (default: the selection), all of one group."""
        tree = self.tree()
        nodes = self.selected_nodes() if nodes is None else nodes
        parent = tree.parent[nodes[0]] if nodes and nodes[0] in tree and nodes[0] != 0 else 0
        label = label or tree.unique_child_label(parent, "New group")
        made = self._plan_or_say(lambda: cmd.plan_insert_level(tree, nodes, label))
        if made is None or not self._push(cmd.EditCommand(self.model, f"Group into {label!r}", made[0])):
            return None
        self._select(made[1], edit=edit)
        return made[1]

    def delete_nodes(self, nodes: list[int]) -> bool:
        plan = self._plan_or_say(lambda: cmd.plan_delete(self.tree(), nodes))
        return plan is not None and self._push(cmd.EditCommand(self.model, "Delete", plan))

    def delete_selected(self) -> bool:
        return self.delete_nodes(self.selected_nodes())

    def rename_selected(self) -> None:
        nodes = self.selected_nodes()
        if nodes:
            self.view.edit(self.model.index_of(nodes[0]))

    def cut_selected(self) -> None:
        self._clipboard = cmd.top_level(self.tree(), self.selected_nodes())
        n = len(self._clipboard)
        self._say(f"{n} item{'s' if n != 1 else ''} picked: select a group and press Ctrl+V to move "
                  f"{'them' if n != 1 else 'it'} there." if n else "Select what to move first.")

    def paste_into_selected(self) -> bool:
        selected = self.selected_nodes()
        target = selected[0] if selected else 0
        nodes = [n for n in self._clipboard if n in self.tree()]
        if self.move_nodes(nodes, target):
            self._clipboard = []
            return True
        return False

    def set_public_values(self, public_values) -> None:
        """The column's public list changed (its domain was stated or removed): coverage follows."""
        public = None if public_values is None else tuple(str(v) for v in public_values)
        if public != self._public:
            self._public = public
            self._refresh_views()

    def add_missing_values(self) -> bool:
        """Add the data's values and the public list's values that the tree lacks. Values read only from the
        data make the tree data-derived (say so); those of the public list keep a public tree public."""
        cov = self.coverage_panel.coverage
        data_missing = list(cov.missing) if cov is not None else []
        public_missing = list(self.coverage_panel.public_missing)
        public = set(self._public or ())
        from_data = [v for v in data_missing if v not in public]
        values = public_missing + [v for v in data_missing if v not in set(public_missing)]
        plan = self._plan_or_say(lambda: cmd.plan_add_values(self.tree(), values, from_data=bool(from_data)))
        ok = plan is not None and self._push(cmd.EditCommand(self.model, "Add missing values", plan))
        if ok and from_data and self._base is not None and getattr(self._base, "origin", "public") == "public":
            self._say(f"{len(from_data)} value(s) read from your table were added: the tree is now built from the "
                      "table's values, so a differentially private release cannot treat it as public.")
        return ok

    def replace_taxonomy(self, taxonomy: Taxonomy, text: str = "Replace taxonomy") -> bool:
        tree = EditTree.from_taxonomy(taxonomy)
        tree.column = self._column
        ok = self._push(cmd.ReplaceCommand(self.model, text, tree, taxonomy))
        self.view.expandToDepth(1)
        return ok

    # ---- files ----------------------------------------------------------------------------------------------
    def import_arx(self, path: str | Path | None = None) -> bool:
        if path is None:
            path = self.open_dialog(self, f"Import a hierarchy for {self._column}", "")
            if not path:
                return False
        try:
            from ppdp_gui.engine.taxonomy.arx_io import read_arx_hierarchy

            taxonomy = read_arx_hierarchy(path, column=self._column)
        except (PpdpError, OSError) as exc:
            self.error_handler(self, "Could not import the hierarchy", str(exc))
            return False
        return self.replace_taxonomy(taxonomy, f"Import {Path(path).name}")

    def export_arx(self, path: str | Path | None = None) -> Path | None:
        if path is None:
            path = self.save_dialog(self, f"Save the hierarchy of {self._column}", f"{self._column}_hierarchy.csv")
            if not path:
                return None
        try:
            from ppdp_gui.engine.taxonomy.arx_io import write_arx_hierarchy

            written = Path(write_arx_hierarchy(self.taxonomy(), path))
        except (PpdpError, OSError) as exc:
            self.error_handler(self, "Could not save the hierarchy", str(exc))
            return None
        self._say(f"Saved {written.name}.")
        return written

    # ---- selection and refresh ------------------------------------------------------------------------------
    def selected_nodes(self) -> list[int]:
        rows = self.view.selectionModel().selectedRows(0)
        return [self.model.node(i) for i in rows if self.model.node(i) in self.tree()]

    def _select(self, node: int, edit: bool = False) -> None:
        index = self.model.index_of(node)
        self.view.setExpanded(index.parent(), True)
        self.view.setCurrentIndex(index)
        self.view.selectionModel().select(index, QtCore.QItemSelectionModel.SelectionFlag.ClearAndSelect
                                          | QtCore.QItemSelectionModel.SelectionFlag.Rows)
        if edit and self.isVisible():
            self.view.edit(index)

    def _say(self, text: str) -> None:
        self.message_label.setText(text)

    def _expand_all(self) -> None:
        self.view.expandAll()

    def _update_actions(self) -> None:
        nodes = self.selected_nodes() if self.view.selectionModel() else []
        tree = self.tree()
        self.rename_action.setEnabled(len(nodes) == 1 and tree.is_group(nodes[0]))
        self.delete_action.setEnabled(any(n != 0 for n in nodes))
        self.level_action.setEnabled(any(n != 0 for n in nodes))
        self.paste_action.setEnabled(bool(self._clipboard))

    def _after_change(self, _index: int = 0) -> None:
        if self._loading:
            return
        self._say("")
        self._refresh_views()
        try:
            taxonomy = self.taxonomy()
        except PpdpError as exc:
            self._say(f"The taxonomy is not usable yet: {exc}")
            return
        self.taxonomyChanged.emit(self._column, taxonomy)

    def _refresh_views(self) -> None:
        tree = self.tree()
        n_values, n_groups = len(tree.values()), len(tree.groups) - 1
        empty = len(tree.empty_groups())
        height = max((len(tree.ancestors(v)) - 1 for v in tree.values()), default=0)
        self.title_label.setText(f"<b>{self._column or 'No column'}</b>: {n_values} values, {n_groups} groups, "
                                 f"{height} level{'s' if height != 1 else ''}"
                                 + (f" · {empty} empty group{'s' if empty != 1 else ''} (left out)" if empty else ""))
        try:
            taxonomy = self.taxonomy()
        except PpdpError:
            taxonomy = None
        self.coverage_panel.update_coverage(taxonomy, self._values, self._public)
        self.model.set_data_values(None if self._values is None else
                                   set(self._values.dropna().astype(str).unique()))
        self.view.viewport().update()
        self._update_actions()

    @staticmethod
    def _numeric(values: pd.Series) -> bool:
        values = values.dropna()
        return bool(len(values)) and bool(pd.to_numeric(values, errors="coerce").notna().all())
