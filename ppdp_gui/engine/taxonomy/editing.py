"""The one editing model for taxonomies (the GUI's tree editor drives it): stable node ids, empty groups allowed.

An engine Taxonomy cannot tell an empty group from a value (both are leaves), yet "make a group, then drag values
into it" needs one for a moment. So the editor edits this light tree and turns it into a fresh Taxonomy after every
edit (empty groups left out). Edits are four primitives, each with an exact inverse, so undo/redo replays them
with the same node ids.
"""

from __future__ import annotations

from dataclasses import dataclass

from ppdp_gui.engine.errors import TaxonomyError
from ppdp_gui.engine.taxonomy.tree import Taxonomy


@dataclass(frozen=True)
class Add:
    node: int
    label: str
    parent: int
    row: int
    group: bool


@dataclass(frozen=True)
class Remove:
    node: int


@dataclass(frozen=True)
class Move:
    node: int
    parent: int
    row: int


@dataclass(frozen=True)
class Rename:
    node: int
    label: str


@dataclass(frozen=True)
class SetOrigin:
    """Where the tree's values come from ("public" or "data"): values read from the records added to a public
    tree make it data-derived (no public domain for ε-DP any more); undoing the addition makes it public again."""
    origin: str
    node: int = 0  # the root: every op names a node


Op = Add | Remove | Move | Rename | SetOrigin


class EditTree:
    """Labels, parent and ordered children per node id; node 0 is the root; `groups` are the inner nodes."""

    def __init__(self, column: str = "", root_label: str = "*"):
        self.column = column
        self.labels: dict[int, str] = {0: root_label}
        self.parent: dict[int, int] = {0: -1}
        self.kids: dict[int, list[int]] = {0: []}
        self.groups: set[int] = {0}
        self.next_id = 1
        self.source_format = None  # the ARX file layout it was imported with, kept on export after edits
        self.origin = "public"  # "data" when the tree was built from the records' values (Taxonomy.origin)
        self.version = 0  # bumped by every edit: lets callers cache what they derive from the tree
        self._rows: dict[int, dict[int, int]] = {}  # parent -> {child: row}, rebuilt per parent after an edit

    # ---- conversion -----------------------------------------------------------------------------------------
    @classmethod
    def from_taxonomy(cls, tax: Taxonomy) -> "EditTree":
        """Same node ids as `tax` (handy when comparing), only nodes reachable from the root."""
        tree = cls(tax.column, tax.label(0))
        tree.source_format = getattr(tax, "source_format", None)
        tree.origin = getattr(tax, "origin", "public")
        stack = [0]
        while stack:
            node = stack.pop()
            for child in tax.children(node):
                tree.labels[child] = tax.label(child)
                tree.parent[child] = node
                tree.kids[child] = []
                tree.kids[node].append(child)
                if not tax.is_leaf(child):
                    tree.groups.add(child)
                stack.append(child)
        tree.next_id = max(len(tax), max(tree.labels) + 1)
        return tree

    def to_taxonomy(self) -> Taxonomy:
        """A fresh engine Taxonomy; empty groups are left out. Raises TaxonomyError when no value is left."""
        rows = []
        for leaf in self.values():
            rows.append([self.labels[n] for n in self.ancestors(leaf)])
        if not rows:
            raise TaxonomyError(f"taxonomy of {self.column!r} has no values left")
        tax = Taxonomy.from_paths(self.column, rows)
        tax.source_format = self.source_format
        tax.origin = self.origin  # editing a tree built from the data keeps it data-derived
        return tax

    # ---- queries --------------------------------------------------------------------------------------------
    def __contains__(self, node: int) -> bool:
        return node in self.labels

    def is_group(self, node: int) -> bool:
        return node in self.groups

    def row(self, node: int) -> int:
        parent = self.parent[node]
        if parent < 0:
            return 0
        rows = self._rows.get(parent)
        if rows is None:
            rows = self._rows[parent] = {k: i for i, k in enumerate(self.kids[parent])}
        return rows[node]

    def ancestors(self, node: int) -> list[int]:
        out = [node]
        while self.parent[node] >= 0:
            node = self.parent[node]
            out.append(node)
        return out

    def is_ancestor(self, maybe_ancestor: int, node: int) -> bool:
        return maybe_ancestor in self.ancestors(node)

    def walk(self, node: int = 0) -> list[int]:
        """`node` and everything below it, depth first in display order."""
        out, stack = [], [node]
        while stack:
            n = stack.pop()
            out.append(n)
            stack.extend(reversed(self.kids[n]))
        return out

    def values(self, node: int = 0) -> list[int]:
        """Value (non-group) nodes under `node`, in display order."""
        return [n for n in self.walk(node) if n not in self.groups]

    def value_labels(self, node: int = 0) -> list[str]:
        return [self.labels[n] for n in self.values(node)]

    def empty_groups(self) -> list[int]:
        return [n for n in self.walk() if n in self.groups and n != 0 and not self.values(n)]

    def find(self, label: str, parent: int | None = None) -> int:
        """First node with `label` (under `parent` if given), for tests and scripted edits."""
        pool = self.kids[parent] if parent is not None else self.walk()
        for n in pool:
            if self.labels[n] == label:
                return n
        raise KeyError(label)

    def unique_child_label(self, parent: int, base: str) -> str:
        taken = {self.labels[c] for c in self.kids[parent]}
        if base not in taken:
            return base
        i = 2
        while f"{base} {i}" in taken:
            i += 1
        return f"{base} {i}"

    def paths(self) -> list[list[str]]:
        """Every node as its label path from the root (groups included): an exact, id-free picture of the tree."""
        return [[self.labels[a] for a in reversed(self.ancestors(n))] + (["/"] if n in self.groups else [])
                for n in self.walk()]

    # ---- primitives (each returns its inverse) --------------------------------------------------------------
    def apply(self, op: Op) -> Op:
        self.version += 1
        for node in (op.node, getattr(op, "parent", -1)):
            if node in self.parent:
                self._rows.pop(self.parent[node], None)
            self._rows.pop(node, None)
        return self._apply(op)

    def _apply(self, op: Op) -> Op:
        if isinstance(op, Add):
            if op.node in self.labels:
                raise TaxonomyError(f"node {op.node} exists already")
            self.labels[op.node] = op.label
            self.parent[op.node] = op.parent
            self.kids[op.node] = []
            self.kids[op.parent].insert(op.row, op.node)
            if op.group:
                self.groups.add(op.node)
            self.next_id = max(self.next_id, op.node + 1)
            return Remove(op.node)
        if isinstance(op, Remove):
            if self.kids[op.node]:
                raise TaxonomyError("only an empty node can be removed")
            parent = self.parent[op.node]
            row = self.kids[parent].index(op.node)
            inverse = Add(op.node, self.labels[op.node], parent, row, op.node in self.groups)
            self.kids[parent].remove(op.node)
            for table in (self.labels, self.parent, self.kids):
                del table[op.node]
            self.groups.discard(op.node)
            return inverse
        if isinstance(op, Move):
            if self.is_ancestor(op.node, op.parent):
                raise TaxonomyError("a group cannot move into itself")
            old_parent = self.parent[op.node]
            old_row = self.kids[old_parent].index(op.node)
            del self.kids[old_parent][old_row]
            self.kids[op.parent].insert(op.row, op.node)
            self.parent[op.node] = op.parent
            return Move(op.node, old_parent, old_row)
        if isinstance(op, Rename):
            old = self.labels[op.node]
            self.labels[op.node] = op.label
            return Rename(op.node, old)
        if isinstance(op, SetOrigin):
            old, self.origin = self.origin, op.origin
            return SetOrigin(old)
        raise TypeError(op)
