"""DiffGen's two counting passes over a large table, as SQL GROUP BYs; everything else is the in-memory code.

DiffGen touches the records twice (diffgen/partition.py): once to collect each quasi-identifier's marginal
(attribute value or grid cell) × class, from which every score of every round is read, and once at the end to
count the records of every leaf partition × class. Both are GROUP BYs here:

1. per categorical QI: `GROUP BY value, class`; the few distinct values are mapped to taxonomy leaves in Python
   and summed up the tree (as `CategoricalAttr.build`);
   per numeric QI: `GROUP BY grid cell, class` with the cell by floor arithmetic (sql.py), giving the occupied
   cells and their cumulative class counts (as `NumericAttr.build`);
2. `GROUP BY cut position of every QI, class`: numeric positions by CASEs on the chosen split boundaries,
   categorical ones by a join against a (value → cut position) mapping table.

The specialisation rounds, the exponential mechanism and the noise (`algorithm.add_count_noise`, discrete Laplace
on every group, empty ones too) are the in-memory code, fed the same integer arrays, so the same seed gives the
same release. The attributes built here hold no per-record arrays.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ppdp_gui.engine.bigdata.source import N, ROWS, helper, quote
from ppdp_gui.engine.bigdata.large_dataset import distinct_typed, typed_values
from ppdp_gui.engine.bigdata.sql import cells_relation, double, position_sql
from ppdp_gui.engine.errors import ParameterError
from ppdp_gui.engine.mechanisms.diffgen.grid import Grid
from ppdp_gui.engine.mechanisms.diffgen.partition import CategoricalAttr, NumericAttr

_EMPTY = np.zeros(0, dtype=np.int64)


def _class_index(data, plan, texts: pd.Series) -> np.ndarray:
    values = typed_values(data, plan.class_column, texts).astype(str)
    codes = pd.Categorical(values, categories=plan.classes).codes.astype(np.int64)
    if (codes < 0).any():
        raise ParameterError(f"class column {plan.class_column!r} has values outside its domain")
    return codes


def _grid(plan, col: str) -> Grid:
    lo, hi = plan.bounds[col]
    return Grid.make(lo, hi, plan.steps[col], col in plan.integer)


def counted(data, plan, bound=None) -> tuple[str, str | None]:
    """The rows per combination of the plan's columns and the class (`TableSource.counted`): both passes below
    and the plan's checks read that histogram, counted once, rather than the file once per column. `bound`: at
    most c rows per person (bigdata/persons.py `BoundRows`): the histogram of those rows only."""
    columns = list(dict.fromkeys([*plan.columns, plan.class_column]))
    if bound is not None:
        from ppdp_gui.engine.bigdata.persons import counted_bound
        return counted_bound(data.table, bound, columns, "diffgen_bound_counts")
    return data.table.counted(columns, "diffgen_counts")


def build_attrs(data, plan, bound=None) -> list:
    """The attributes of `plan.columns` with their marginals counted in SQL (pass 1)."""
    table, k, cls = data.table, len(plan.classes), quote(plan.class_column)
    base, weight = counted(data, plan, bound)
    attrs = []
    for col in plan.columns:
        if col in plan.bounds:
            grid = _grid(plan, col)
            rel = cells_relation({col: grid}, [plan.class_column] + ([ROWS] if weight else []), relation=base)
            got = table.group_counts({"cell": quote(helper("cell$" + col)), "cls": cls}, relation=rel, weight=weight)
            y = _class_index(data, plan, got["cls"])
            cell = got["cell"].to_numpy(dtype=np.int64)
            occupied, inverse = np.unique(cell, return_inverse=True)
            per_cell = np.bincount(inverse.ravel() * k + y, weights=got[N].to_numpy(),
                                   minlength=len(occupied) * k).astype(np.int64)
            cum = np.zeros((len(occupied) + 1, k), dtype=np.int64)
            np.cumsum(per_cell.reshape(len(occupied), k), axis=0, out=cum[1:])
            attrs.append(NumericAttr(col, grid, _EMPTY, occupied, cum))
        else:
            tax = plan.taxonomies[col]
            got = table.group_counts({"v": quote(col), "cls": cls}, relation=base, weight=weight)
            leaf = tax.node_codes(typed_values(data, col, got["v"]))
            y = _class_index(data, plan, got["cls"])
            counts = np.bincount(leaf * k + y, weights=got[N].to_numpy(),
                                 minlength=len(tax) * k).astype(np.int64).reshape(len(tax), k)
            for node in tax.leaves():  # as CategoricalAttr.build: each leaf's counts to all its ancestors
                for above in tax.ancestors(node)[1:]:
                    counts[above] += counts[node]
            attrs.append(CategoricalAttr(col, tax, _EMPTY, counts))
    return attrs


def leaf_class_counts(data, plan, attrs: list, shape: tuple[int, ...], bound=None) -> np.ndarray:
    """The true count of every leaf partition × class, flat (cell·K + class), zeros included (pass 2)."""
    table, k = data.table, len(plan.classes)
    numeric = {a.column: a.grid for a in attrs if isinstance(a, NumericAttr)}
    base, weight = counted(data, plan, bound)
    rel = cells_relation(numeric, [c for c in [plan.class_column, *plan.columns] if c not in numeric]
                         + ([ROWS] if weight else []), relation=base)
    keys, joins = {}, []
    for i, a in enumerate(attrs):
        if isinstance(a, NumericAttr):
            keys[f"p{i}"] = position_sql(quote(helper("cell$" + a.column)), a.splits)
        else:
            texts = data.table.distinct(a.column)
            codes = a.codes(typed_values(data, a.column, texts))
            name = f"cut_map_{i}"
            table.register(name, pd.DataFrame({"v": texts.to_numpy(dtype=object), "code": codes}))
            joins.append(f" JOIN {name} AS m{i} ON m{i}.v = cells.{quote(a.column)}")
            keys[f"p{i}"] = f"m{i}.code"
    keys["cls"] = f"cells.{quote(plan.class_column)}"
    got = table.group_counts(keys, relation=rel + "".join(joins), weight=weight and f"cells.{weight}")
    n_cells = int(np.prod(shape, dtype=np.int64))
    y = _class_index(data, plan, got["cls"])
    pos = [got[f"p{i}"].to_numpy(dtype=np.int64) for i in range(len(attrs))]
    cell = np.ravel_multi_index(pos, shape).astype(np.int64) if pos else np.zeros(len(got), dtype=np.int64)
    true = np.bincount(cell * k + y, weights=got[N].to_numpy(), minlength=n_cells * k).astype(np.int64)
    n_rows = data.n_rows if bound is None else bound.n_kept
    if int(true.sum()) != n_rows:
        raise ParameterError(f"the SQL counts cover {int(true.sum()):,} of {n_rows:,} rows: a value is "
                             "missing from a mapping (is every value in its taxonomy?)")
    return true


def plan_checks(data, col: str, tax=None, bounds=None) -> tuple[list[str], int]:
    """For `diffgen.make_plan` on a large table: the column's values missing from `tax`, and how many values lie
    outside `bounds` (counted in SQL; for the custodian only)."""
    missing: list[str] = []
    if tax is not None:
        values = distinct_typed(data, col).astype(str)
        missing = [v for v in values if not tax.has_value(v)]
    outside = 0
    if bounds is not None:
        x = f"CAST({quote(col)} AS DOUBLE)"
        base, weight = data.table.counted([col], "bounds_counts")  # from the histogram when there is one
        outside = int(data.table.scalar(f"SELECT COALESCE({f'SUM({weight})' if weight else 'COUNT(*)'}, 0) "
                                        f"FROM {base} WHERE {x} < {double(bounds[0])} OR {x} > {double(bounds[1])}"))
    return missing, outside
