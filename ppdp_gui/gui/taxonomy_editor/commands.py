"""Undoable taxonomy edits. Each command records the primitive operations it applied the first time and their
inverses, so undo and redo replay exactly (same node ids), whatever the edit was.

Planners check the request first and raise ValueError with a message for the user before touching the tree.
"""

from __future__ import annotations

from typing import Callable

from PySide6 import QtGui

from ppdp_gui.engine.taxonomy.editing import Add, EditTree, Move, Op, Remove, Rename, SetOrigin
from ppdp_gui.gui.taxonomy_editor.model import TaxonomyModel

Plan = Callable[[Callable[[Op], None]], None]


class EditCommand(QtGui.QUndoCommand):
    """Runs `plan(apply)` once, recording the ops; afterwards undo/redo replay the record."""

    def __init__(self, model: TaxonomyModel, text: str, plan: Plan):
        super().__init__(text)
        self._model = model
        self._plan: Plan | None = plan
        self._ops: list[Op] = []
        self._inverses: list[Op] = []
        self.error = ""

    def redo(self) -> None:
        if self._plan is not None:
            plan, self._plan = self._plan, None
            try:
                with self._model.batch():
                    plan(self._record)
            except Exception as exc:  # planners check first; if one still fails, leave the tree as it was
                self.undo()
                self._ops.clear()
                self.error = str(exc)
                self.setObsolete(True)  # QUndoStack drops an obsolete command right after pushing it
            return
        with self._model.batch():
            self._inverses = [self._model.apply(op) for op in self._ops]

    def _record(self, op: Op) -> None:
        self._inverses.append(self._model.apply(op))
        self._ops.append(op)

    def undo(self) -> None:
        with self._model.batch():
            for inverse in reversed(self._inverses):
                self._model.apply(inverse)
        self._inverses = []


class ReplaceCommand(QtGui.QUndoCommand):
    """Swap the whole tree (import, auto-build): the old tree object is kept untouched for undo."""

    def __init__(self, model: TaxonomyModel, text: str, tree: EditTree, taxonomy=None):
        super().__init__(text)
        self._model = model
        self._new = tree
        self.taxonomy = taxonomy  # the engine object the tree came from, handed out while it is unchanged
        self._old: EditTree | None = None

    def redo(self) -> None:
        self._old = self._model.tree
        self._model.set_tree(self._new)

    def undo(self) -> None:
        self._model.set_tree(self._old)


# ---- planners ---------------------------------------------------------------------------------------------------
def top_level(tree: EditTree, nodes: list[int]) -> list[int]:
    """The nodes without their descendants (moving a group moves what is inside), in display order."""
    chosen = {n for n in nodes if n in tree and n != 0}
    order = {n: i for i, n in enumerate(tree.walk())}
    keep = [n for n in chosen if not any(a in chosen for a in tree.ancestors(n)[1:])]
    return sorted(keep, key=order.__getitem__)


def plan_move(tree: EditTree, nodes: list[int], target: int, row: int = -1) -> Plan:
    """Move `nodes` into group `target` before its child at `row` (-1: at the end)."""
    nodes = top_level(tree, nodes)
    if not tree.is_group(target):
        raise ValueError("Values can only be dropped into a group.")
    if any(tree.is_ancestor(n, target) for n in nodes):
        raise ValueError("A group cannot be moved into itself.")
    if not nodes:
        raise ValueError("Select the values or groups to move first.")
    kids = tree.kids[target]
    anchor = kids[row] if 0 <= row < len(kids) else None
    while anchor is not None and anchor in nodes:  # dropping next to itself: anchor on the next one not moving
        i = kids.index(anchor) + 1
        anchor = kids[i] if i < len(kids) else None

    def plan(apply):
        for node in nodes:
            rest = [k for k in tree.kids[target] if k != node]
            pos = rest.index(anchor) if anchor is not None else len(rest)
            if tree.parent[node] == target and tree.row(node) == pos:
                continue
            apply(Move(node, target, pos))
    return plan


def check_label(tree: EditTree, parent: int, label: str, node: int | None = None) -> str:
    label = label.strip()
    if not label:
        raise ValueError("A group needs a name.")
    if any(tree.labels[k] == label for k in tree.kids[parent] if k != node):
        raise ValueError(f"{tree.labels[parent]!r} already holds something called {label!r}.")
    return label


def plan_rename(tree: EditTree, node: int, label: str) -> Plan:
    if not tree.is_group(node):
        raise ValueError("Values come from the data and keep their names; rename groups only.")
    parent = tree.parent[node]
    label = check_label(tree, parent, label, node) if parent >= 0 else label.strip() or "*"
    return lambda apply: apply(Rename(node, label))


def plan_new_group(tree: EditTree, parent: int, label: str) -> tuple[Plan, int]:
    """An empty group at the end of `parent` (drag values into it next)."""
    if not tree.is_group(parent):
        parent = tree.parent[parent]
    label = check_label(tree, parent, label)
    node = tree.next_id
    return (lambda apply: apply(Add(node, label, parent, len(tree.kids[parent]), True))), node


def plan_insert_level(tree: EditTree, nodes: list[int], label: str) -> tuple[Plan, int]:
    """A new group between `nodes` (siblings) and their parent: a level added above them."""
    nodes = top_level(tree, nodes)
    if not nodes:
        raise ValueError("Select the values or groups to put into the new group.")
    parents = {tree.parent[n] for n in nodes}
    if len(parents) != 1:
        raise ValueError("Select values or groups of the same group to put a level above them.")
    parent = parents.pop()
    label = check_label(tree, parent, label)
    node = tree.next_id
    row = min(tree.row(n) for n in nodes)

    def plan(apply):
        apply(Add(node, label, parent, row, True))
        for i, child in enumerate(nodes):
            apply(Move(child, node, i))
    return plan, node


def plan_delete(tree: EditTree, nodes: list[int]) -> Plan:
    """Delete groups (their contents move up to the parent, in place) and values (gone from the tree)."""
    nodes = top_level(tree, nodes)
    if not nodes:
        raise ValueError("Select a group or value to delete (the top group stays).")
    gone_values = {n for n in nodes if not tree.is_group(n)}
    if gone_values and len(gone_values) >= len(tree.values()):
        raise ValueError("The taxonomy needs at least one value.")

    def plan(apply):
        for node in nodes:
            if tree.is_group(node):
                parent, row = tree.parent[node], tree.row(node)
                for i, child in enumerate(list(tree.kids[node])):
                    apply(Move(child, parent, row + 1 + i))
            apply(Remove(node))
    return plan


def plan_add_values(tree: EditTree, values: list[str], parent: int = 0, from_data: bool = False) -> Plan:
    """Put values the tree lacks under `parent`. `from_data`: some were read from the records (not from a public
    list), so the tree becomes data-derived (origin "data": no public domain for ε-DP); undo restores it."""
    present = set(tree.value_labels())
    new = [v for v in dict.fromkeys(values) if v not in present]
    if not new:
        raise ValueError("Every value is in the tree already.")

    def plan(apply):
        for value in new:
            apply(Add(tree.next_id, value, parent, len(tree.kids[parent]), False))
        if from_data and tree.origin != "data":
            apply(SetOrigin("data"))
    return plan
