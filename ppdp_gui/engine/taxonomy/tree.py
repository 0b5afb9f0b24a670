"""A taxonomy (generalisation hierarchy) over one column's values, as a tree of integer node ids.

Leaves are data values (strings, or numbers written as strings); inner nodes are group labels ("30-39", "*").
Labels need not be unique across levels (ARX files repeat them), so nodes are addressed by id; a leaf is found
by its value. Generalising a column to a *cut* (a set of nodes covering every leaf exactly once) is one
vectorised lookup through categorical codes.
"""

from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from ppdp_gui.engine.errors import TaxonomyError


class Taxonomy:
    """Tree of value groups for one column. Node 0 is the root."""

    def __init__(self, column: str = "", root_label: str = "*"):
        self.column = column
        self._labels: list[str] = [root_label]
        self._parent: list[int] = [-1]
        self._children: list[list[int]] = [[]]
        self._leaf_of_value: dict[str, int] = {}
        # rows exactly as imported (ARX CSV), so an unchanged import exports byte for byte
        self.source_rows: list[list[str]] | None = None
        # file layout of an imported ARX file (arx_io.ArxFormat), kept through edits
        self.source_format = None
        # "public": stated by the custodian (an ARX file, a tree they built from public values); "data": built from
        # the values found in the records (its leaves reveal them), so it cannot be a public domain for ε-DP
        self.origin = "public"

    # ---- construction ---------------------------------------------------------------------------------------
    def add_node(self, label: str, parent: int = 0) -> int:
        self._check(parent)
        node = len(self._labels)
        self._labels.append(str(label))
        self._parent.append(parent)
        self._children.append([])
        self._children[parent].append(node)
        self.source_rows = None
        return node

    def _register_leaves(self) -> None:
        self._leaf_of_value = {}
        for node in self.leaves():
            value = self._labels[node]
            if value in self._leaf_of_value:
                raise TaxonomyError(f"taxonomy of {self.column!r}: value {value!r} appears under two groups")
            self._leaf_of_value[value] = node

    @classmethod
    def from_paths(cls, column: str, paths: Sequence[Sequence[str]]) -> "Taxonomy":
        """Build from rows leaf → … → root (ARX order). Rows must share the root; repeated rows are merged."""
        if not paths:
            raise TaxonomyError(f"taxonomy of {column!r} has no rows")
        roots = {p[-1] for p in paths if p}
        if len(roots) != 1:
            raise TaxonomyError(f"taxonomy of {column!r}: rows end in different roots {sorted(roots)[:5]}")
        tax = cls(column, root_label=roots.pop())
        # a node is found by (its parent's id, its label): building costs one look-up per label, so a deep tree
        # is built in time and memory linear in its size (keys holding the whole path grew with the depth squared)
        index: dict[tuple[int, str], int] = {}
        where = [(1, len(paths[0]))]  # (row, column) where each node first appears, for messages
        for row_no, path in enumerate(paths, start=1):
            if any(cell == "" for cell in path):
                raise TaxonomyError(f"taxonomy of {column!r}, row {row_no}: empty label")
            top_down = list(reversed(path))[1:]
            node = 0
            for depth, label in enumerate(top_down):
                key = (node, label)
                found = index.get(key)
                if found is None:
                    found = index[key] = tax.add_node(label, node)
                    where.append((row_no, len(path) - 1 - depth))
                elif depth == len(top_down) - 1 and tax._children[found]:
                    raise TaxonomyError(f"taxonomy of {column!r}, row {row_no}: {label!r} is both a value and a group")
                node = found
        tax.check_labels(where)
        tax._register_leaves()
        return tax

    @classmethod
    def flat(cls, column: str, values: Iterable[str], root_label: str = "*", origin: str = "public") -> "Taxonomy":
        """Every value directly under the root: the least a categorical column needs. Pass origin="data" when
        the values were read from the records (see `origin` in __init__)."""
        values = sorted({str(v) for v in values})
        tax = cls.from_paths(column, [[v, root_label] for v in values])
        tax.origin = origin
        return tax

    def check_labels(self, where: Sequence[tuple[int, int]] | None = None) -> None:
        """Refuse a tree in which one label stands for two different things; TaxonomyError says where.

        Generalising writes labels, not node ids, so two nodes with one label must be the same group: the nodes
        that carry a label have to form one unbroken chain, each the parent of the next. That allows ARX's
        padding (a value repeated on the levels above it: ``x;x;G;*``) and refuses
        - a cycle: a label that is its own ancestor through another label (``a;b;a;*``), which would make a cut
          hold one label twice (DiffGen then failed after ε was charged, Mondrian merged two groups silently);
        - mixed levels: one label on two branches or levels (``x;G;K;*`` and ``y;H;G;*``), the same ambiguity.
        `where` gives (row, column) of each node in the file, when the tree was read from rows.
        """
        labels, parent = self._labels, self._parent
        depth = [0] * len(labels)
        for node in range(1, len(labels)):  # a parent always has a smaller id than its children (add_node)
            depth[node] = depth[parent[node]] + 1
        by_label: dict[str, list[int]] = {}
        for node, label in enumerate(labels):
            by_label.setdefault(label, []).append(node)
        for label, nodes in by_label.items():
            if len(nodes) < 2:
                continue
            nodes.sort(key=depth.__getitem__)
            for upper, lower in zip(nodes, nodes[1:]):
                if parent[lower] == upper:
                    continue
                at = (lambda n: f" (row {where[n][0]}, column {where[n][1]})" if where else f" (level {depth[n]})")
                chain = self.ancestors(lower)
                if upper in chain:
                    path = " < ".join(repr(labels[n]) for n in chain[:chain.index(upper) + 1])
                    raise TaxonomyError(f"taxonomy of {self.column!r}: label {label!r}{at(lower)} is its own "
                                        f"ancestor ({path}); a group cannot contain itself: rename one of them")
                if where and where[lower][0] < where[upper][0]:
                    upper, lower = lower, upper  # name them in file order
                raise TaxonomyError(f"taxonomy of {self.column!r}: label {label!r} names two different groups"
                                    f"{at(upper)} and{at(lower)}, under {labels[parent[upper]]!r} and "
                                    f"{labels[parent[lower]]!r}; a label must mean one group: rename one of them")

    # ---- queries --------------------------------------------------------------------------------------------
    def _check(self, node: int) -> None:
        if not 0 <= node < len(self._labels):
            raise TaxonomyError(f"taxonomy of {self.column!r} has no node {node}")

    @property
    def root(self) -> int:
        return 0

    def __len__(self) -> int:
        return len(self._labels)

    def label(self, node: int) -> str:
        return self._labels[node]

    def parent(self, node: int) -> int:
        return self._parent[node]

    def children(self, node: int) -> list[int]:
        return list(self._children[node])

    def is_leaf(self, node: int) -> bool:
        return not self._children[node]

    def depth(self, node: int) -> int:
        d = 0
        while self._parent[node] >= 0:
            node = self._parent[node]
            d += 1
        return d

    def ancestors(self, node: int) -> list[int]:
        """node, its parent, …, root."""
        out = [node]
        while self._parent[node] >= 0:
            node = self._parent[node]
            out.append(node)
        return out

    def leaves(self, node: int = 0) -> list[int]:
        """Leaf ids under `node` in tree order."""
        out, stack = [], [node]
        while stack:
            n = stack.pop()
            kids = self._children[n]
            if kids:
                stack.extend(reversed(kids))
            else:
                out.append(n)
        return out

    def leaf_values(self, node: int = 0) -> list[str]:
        return [self._labels[n] for n in self.leaves(node)]

    def leaf_count(self, node: int) -> int:
        return len(self.leaves(node))

    def leaf_node(self, value: str) -> int:
        try:
            return self._leaf_of_value[str(value)]
        except KeyError:
            raise TaxonomyError(f"value {value!r} of column {self.column!r} is not in its taxonomy") from None

    def has_value(self, value: str) -> bool:
        return str(value) in self._leaf_of_value

    @property
    def height(self) -> int:
        """Levels above the leaves on the longest path (ARX columns minus one)."""
        return max(self.depth(n) for n in self.leaves())

    def nodes_at_level(self, level: int) -> list[int]:
        """The cut `level` steps above each leaf (ARX column `level`); shallow leaves stop at the root."""
        cut, seen = [], set()
        for leaf in self.leaves():
            chain = self.ancestors(leaf)
            node = chain[min(level, len(chain) - 1)]
            if node not in seen:
                seen.add(node)
                cut.append(node)
        return cut

    def lowest_common_ancestor(self, nodes: Iterable[int]) -> int:
        nodes = list(nodes)
        if not nodes:
            return 0
        common = self.ancestors(nodes[0])
        for n in nodes[1:]:
            anc = set(self.ancestors(n))
            common = [a for a in common if a in anc]
        return common[0]

    # ---- generalisation -------------------------------------------------------------------------------------
    def leaf_to_cut(self, cut: Iterable[int]) -> dict[str, int]:
        """Each leaf value -> the node of `cut` above it; the cut must cover every leaf exactly once."""
        mapping: dict[str, int] = {}
        for node in cut:
            self._check(node)
            for leaf in self.leaves(node):
                value = self._labels[leaf]
                if value in mapping:
                    raise TaxonomyError(f"cut of {self.column!r} covers {value!r} twice")
                mapping[value] = node
        missing = set(self._leaf_of_value) - set(mapping)
        if missing:
            raise TaxonomyError(f"cut of {self.column!r} leaves {sorted(missing)[:5]} uncovered")
        return mapping

    def generalise(self, values: pd.Series, cut: Iterable[int]) -> pd.Series:
        """`values` with each replaced by the label of its node in `cut` (categorical, vectorised)."""
        mapping = self.leaf_to_cut(cut)
        codes = self.node_codes(values)
        leaf_ids = np.fromiter((self._leaf_of_value[v] for v in mapping), dtype=np.int64, count=len(mapping))
        lookup = np.zeros(len(self._labels), dtype=np.int64)
        lookup[leaf_ids] = [mapping[self._labels[i]] for i in leaf_ids]
        general = lookup[codes]
        labels = np.asarray(self._labels, dtype=object)
        cats = pd.unique(labels[np.unique(general)])
        return pd.Series(pd.Categorical(labels[general], categories=cats), index=values.index, name=values.name)

    def node_codes(self, values: pd.Series) -> np.ndarray:
        """Leaf node id of every value (vectorised through the column's distinct values)."""
        as_text = values.astype(str) if not isinstance(values.dtype, pd.CategoricalDtype) else values
        cat = pd.Categorical(as_text)
        try:
            ids = np.array([self._leaf_of_value[str(v)] for v in cat.categories], dtype=np.int64)
        except KeyError:
            missing = [str(v) for v in cat.categories if str(v) not in self._leaf_of_value]
            raise TaxonomyError(f"column {self.column!r} has values not in its taxonomy: {missing[:5]}") from None
        if (cat.codes < 0).any():
            raise TaxonomyError(f"column {self.column!r} has missing values; set a missing-value policy first")
        return ids[cat.codes]

    # ---- export ---------------------------------------------------------------------------------------------
    def to_paths(self) -> list[list[str]]:
        """Rows leaf → … → root, padded to equal length by repeating the leaf (ARX needs a rectangle)."""
        if self.source_rows is not None:
            return [list(r) for r in self.source_rows]
        rows = []
        width = self.height + 1
        for leaf in self.leaves():
            chain = [self._labels[n] for n in self.ancestors(leaf)]
            rows.append([chain[0]] * (width - len(chain)) + chain)
        return rows
