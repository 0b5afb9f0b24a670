"""Qt item model over the editor's tree: node ids as internal ids, rows read on demand, drag & drop of nodes.

Every change goes through `apply(op)` (exact insert/remove/move signals) or a `batch()` of them (one layout
change); either way the view keeps its expansion and selection. Edits asked for by the view (drop, rename in
place) become undo commands.
"""

from __future__ import annotations

import contextlib
import json
from typing import Callable

from PySide6 import QtCore, QtGui, QtWidgets

from ppdp_gui.engine.taxonomy.editing import Add, EditTree, Move, Op, Remove, Rename, SetOrigin

MIME = "application/x-ppdp-taxonomy-nodes"
Qt = QtCore.Qt


class TaxonomyModel(QtCore.QAbstractItemModel):
    """Column 0: group or value label; column 1: how many values a group holds."""

    HEADERS = ("Group / value", "Values")

    def __init__(self, tree: EditTree | None = None, parent: QtCore.QObject | None = None, editable: bool = True):
        super().__init__(parent)
        self._tree = tree or EditTree()
        self._editable = editable
        self._counts: dict[int, int] = {}
        self._data_values: set[str] | None = None
        self._batch = False
        # set by the editor: called with (nodes, parent, row) and (node, label) to push undo commands
        self.move_handler: Callable[[list[int], int, int], bool] | None = None
        self.rename_handler: Callable[[int, str], bool] | None = None
        style = QtWidgets.QApplication.style() if QtWidgets.QApplication.instance() else None
        self._group_icon = style.standardIcon(QtWidgets.QStyle.StandardPixmap.SP_DirIcon) if style else None
        self._value_icon = style.standardIcon(QtWidgets.QStyle.StandardPixmap.SP_FileIcon) if style else None

    # ---- tree access ----------------------------------------------------------------------------------------
    @property
    def tree(self) -> EditTree:
        return self._tree

    def set_tree(self, tree: EditTree) -> None:
        self.beginResetModel()
        self._tree = tree
        self._counts.clear()
        self.endResetModel()

    def set_data_values(self, values: set[str] | None) -> None:
        """Values present in the data: values of the tree not among them are shown greyed."""
        self._data_values = values  # the editor repaints its view

    def node(self, index: QtCore.QModelIndex) -> int:
        return int(index.internalId()) if index.isValid() else -1

    def index_of(self, node: int, column: int = 0) -> QtCore.QModelIndex:
        if node not in self._tree:
            return QtCore.QModelIndex()
        return self.createIndex(self._tree.row(node), column, node)

    def value_count(self, node: int) -> int:
        if node not in self._counts:
            self._counts[node] = len(self._tree.values(node)) if self._tree.is_group(node) else 1
        return self._counts[node]

    # ---- edits ----------------------------------------------------------------------------------------------
    @contextlib.contextmanager
    def batch(self):
        """Apply many ops as one layout change: the view re-lays out once, not once per op (100 values dragged
        out of a group of 5,000 cost seconds with per-row move signals). Expansion and selection are kept."""
        if self._batch:
            yield
            return
        self.layoutAboutToBeChanged.emit()
        old = self.persistentIndexList()
        nodes = [(self.node(i), i.column()) for i in old]
        self._batch = True
        try:
            yield
        finally:
            self._batch = False
            self._counts.clear()
            new = [self.index_of(n, c) if n in self._tree else QtCore.QModelIndex() for n, c in nodes]
            self.changePersistentIndexList(old, new)
            self.layoutChanged.emit()

    def apply(self, op: Op) -> Op:
        """Apply one op with exact insert/remove/move signals (or silently inside `batch()`)."""
        tree = self._tree
        if self._batch:
            return tree.apply(op)
        touched: list[int] = []
        if isinstance(op, Add):
            self.beginInsertRows(self.index_of(op.parent), op.row, op.row)
            inverse = tree.apply(op)
            self.endInsertRows()
            touched = [op.parent]
        elif isinstance(op, Remove):
            parent, row = tree.parent[op.node], tree.row(op.node)
            self.beginRemoveRows(self.index_of(parent), row, row)
            inverse = tree.apply(op)
            self.endRemoveRows()
            touched = [parent]
        elif isinstance(op, Move):
            old_parent, old_row = tree.parent[op.node], tree.row(op.node)
            # Qt counts the destination before the row leaves; our row counts after
            dest = op.row + 1 if op.parent == old_parent and op.row >= old_row else op.row
            moving = self.beginMoveRows(self.index_of(old_parent), old_row, old_row, self.index_of(op.parent), dest)
            inverse = tree.apply(op)
            if moving:
                self.endMoveRows()
            touched = [old_parent, op.parent]
        elif isinstance(op, Rename):
            inverse = tree.apply(op)
            index = self.index_of(op.node)
            self.dataChanged.emit(index, index)
            touched = []
        elif isinstance(op, SetOrigin):
            inverse = tree.apply(op)
            touched = []
        else:
            raise TypeError(op)
        self._counts.clear()
        for node in touched:
            for anc in tree.ancestors(node):
                idx = self.index_of(anc, 1)
                self.dataChanged.emit(idx, idx)
        return inverse

    # ---- QAbstractItemModel ---------------------------------------------------------------------------------
    def index(self, row: int, column: int, parent: QtCore.QModelIndex = QtCore.QModelIndex()) -> QtCore.QModelIndex:
        if not parent.isValid():
            return self.createIndex(row, column, 0) if row == 0 and 0 <= column < 2 else QtCore.QModelIndex()
        kids = self._tree.kids.get(self.node(parent), [])
        if 0 <= row < len(kids) and 0 <= column < 2:
            return self.createIndex(row, column, kids[row])
        return QtCore.QModelIndex()

    def parent(self, index: QtCore.QModelIndex = QtCore.QModelIndex()) -> QtCore.QModelIndex:  # type: ignore[override]
        if not index.isValid():
            return QtCore.QModelIndex()
        node = self.node(index)
        if node not in self._tree:
            return QtCore.QModelIndex()
        parent = self._tree.parent[node]
        return QtCore.QModelIndex() if parent < 0 else self.index_of(parent)

    def rowCount(self, parent: QtCore.QModelIndex = QtCore.QModelIndex()) -> int:
        if not parent.isValid():
            return 1
        if parent.column() != 0:
            return 0
        return len(self._tree.kids.get(self.node(parent), []))

    def columnCount(self, parent: QtCore.QModelIndex = QtCore.QModelIndex()) -> int:
        return 2

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole):
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.HEADERS[section]
        return None

    def data(self, index: QtCore.QModelIndex, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        node = self.node(index)
        tree = self._tree
        if node not in tree:
            return None
        group = tree.is_group(node)
        label = tree.labels[node]
        unused = not group and self._data_values is not None and label not in self._data_values
        if index.column() == 1:
            if role == Qt.ItemDataRole.DisplayRole and group:
                return str(self.value_count(node))
            if role == Qt.ItemDataRole.TextAlignmentRole:
                return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            return None
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
            return label
        if role == Qt.ItemDataRole.DecorationRole:
            return self._group_icon if group else self._value_icon
        if role == Qt.ItemDataRole.ToolTipRole:
            if node == 0:
                return "The top group: every value generalises to this in the end"
            if group:
                n = self.value_count(node)
                return f"Group {label!r} with {n} value{'s' if n != 1 else ''}" + (
                    " — empty groups are left out of the taxonomy" if n == 0 else "")
            return f"Value {label!r}" + (" — not found in the data" if unused else "")
        if role == Qt.ItemDataRole.ForegroundRole and unused:
            return QtGui.QBrush(QtGui.QColor("#777777"))
        if role == Qt.ItemDataRole.FontRole and (unused or (group and node != 0 and self.value_count(node) == 0)):
            font = QtGui.QFont()
            font.setItalic(True)
            return font
        if role == Qt.ItemDataRole.AccessibleTextRole:
            return f"{'group' if group else 'value'} {label}"
        return None

    def flags(self, index: QtCore.QModelIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.ItemIsDropEnabled if self._editable else Qt.ItemFlag.NoItemFlags
        node = self.node(index)
        flags = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        if not self._editable:
            return flags
        if node != 0:
            flags |= Qt.ItemFlag.ItemIsDragEnabled
        if self._tree.is_group(node):
            flags |= Qt.ItemFlag.ItemIsDropEnabled
            if index.column() == 0:
                flags |= Qt.ItemFlag.ItemIsEditable
        return flags

    def setData(self, index: QtCore.QModelIndex, value, role: int = Qt.ItemDataRole.EditRole) -> bool:
        if role != Qt.ItemDataRole.EditRole or not index.isValid() or self.rename_handler is None:
            return False
        return self.rename_handler(self.node(index), str(value))

    # ---- drag & drop ----------------------------------------------------------------------------------------
    def supportedDropActions(self) -> Qt.DropAction:
        return Qt.DropAction.MoveAction

    def supportedDragActions(self) -> Qt.DropAction:
        return Qt.DropAction.MoveAction

    def mimeTypes(self) -> list[str]:
        return [MIME]

    def mimeData(self, indexes) -> QtCore.QMimeData:
        nodes = []
        for index in indexes:
            node = self.node(index)
            if node > 0 and node not in nodes:
                nodes.append(node)
        mime = QtCore.QMimeData()
        mime.setData(MIME, QtCore.QByteArray(json.dumps(nodes).encode()))
        return mime

    def nodes_from_mime(self, data: QtCore.QMimeData) -> list[int]:
        if data is None or not data.hasFormat(MIME):
            return []
        try:
            nodes = json.loads(bytes(data.data(MIME)).decode())
        except ValueError:
            return []
        return [int(n) for n in nodes if int(n) in self._tree and int(n) != 0]

    def canDropMimeData(self, data, action, row, column, parent) -> bool:
        target = self.node(parent) if parent.isValid() else 0
        nodes = self.nodes_from_mime(data)
        return bool(nodes) and self._editable and self._tree.is_group(target) and not any(
            self._tree.is_ancestor(n, target) for n in nodes)

    def dropMimeData(self, data, action, row, column, parent) -> bool:
        if action == Qt.DropAction.IgnoreAction:
            return True
        if not self.canDropMimeData(data, action, row, column, parent) or self.move_handler is None:
            return False
        if not parent.isValid():  # dropped below the tree: into the top group, at its end
            return self.move_handler(self.nodes_from_mime(data), 0, -1)
        return self.move_handler(self.nodes_from_mime(data), self.node(parent), row)

    def moveRows(self, source_parent, source_row, count, destination_parent, destination_child) -> bool:
        """Programmatic move (Qt convention: destination row counted before the rows leave)."""
        if self.move_handler is None:
            return False
        kids = self._tree.kids.get(self.node(source_parent) if source_parent.isValid() else -1, [])
        nodes = kids[source_row:source_row + count]
        target = self.node(destination_parent)
        if not nodes or target not in self._tree or not self._tree.is_group(target):
            return False
        return self.move_handler(nodes, target, destination_child)

    def removeRows(self, row: int, count: int, parent: QtCore.QModelIndex = QtCore.QModelIndex()) -> bool:
        """The view calls this after an internal move drop; the move is already done, so nothing to remove."""
        return False
