"""SQL text for generalised columns, written in the subset DuckDB and Spark SQL share.

Only CAST, FLOOR, LEAST, GREATEST, CASE, COUNT, GROUP BY and equi-joins against small mapping tables are used,
and numbers are written as CAST('<repr>' AS DOUBLE) (DuckDB would read 0.1 as a DECIMAL; both engines read a
string cast to DOUBLE as the nearest double, the value Python's float has). docs/big_tables.md shows the same
queries on Spark SQL.

- A numeric value's *grid cell* (diffgen/grid.py): c0 = floor((x − lo)/step) clipped to [0, n − 1], then one
  correction against the exact boundaries lo + g·step (the double nearest to (L + g·S)/D, computed from integers,
  as `Grid.boundary_floats` does), so a value right on a boundary lands in the same cell as in memory.
- A numeric value's *position in a cut* given by sorted split boundaries g₁ < … < g_m: the number of g_i ≤ cell
  (numpy's searchsorted(…, side='right')), as a sum of CASEs.
- A categorical value's code (cut position, taxonomy level label, …): an equi-join against a mapping table
  (value, code) built from the column's few distinct values.
"""

from __future__ import annotations

import math

from ppdp_gui.engine.bigdata.source import helper, quote

_EXACT = 2**53


def double(value: float) -> str:
    """A double literal both engines read exactly as Python's float."""
    return f"CAST('{float(value)!r}' AS DOUBLE)"


def boundary_sql(grid, g_expr: str) -> str | None:
    """The double nearest to lo + g·step for an integer SQL expression g, or None when the integers would not be
    exact doubles (then the caller keeps the uncorrected cell)."""
    den = math.lcm(grid.lo_q.denominator, grid.step_q.denominator)
    num_lo = grid.lo_q.numerator * (den // grid.lo_q.denominator)
    num_step = grid.step_q.numerator * (den // grid.step_q.denominator)
    if den >= _EXACT or abs(num_lo) + (grid.n_cells + 1) * abs(num_step) >= _EXACT:
        return None
    return f"(CAST(({num_lo} + ({g_expr}) * {num_step}) AS DOUBLE) / {double(den)})"


def raw_cell_sql(x: str, grid) -> str:
    """c0: floor((x − lo)/step) clipped to the grid (x a DOUBLE expression)."""
    last = grid.n_cells - 1
    return (f"CAST(LEAST(GREATEST(FLOOR(({x} - {double(grid.lo)}) / {double(grid.step)}), 0), {last}) "
            "AS BIGINT)")


def corrected_cell_sql(x: str, c0: str, grid) -> str:
    """The cell after one correction against the exact boundaries (c0 a column holding `raw_cell_sql`)."""
    last = grid.n_cells - 1
    low, high = boundary_sql(grid, c0), boundary_sql(grid, f"{c0} + 1")
    if low is None:
        return c0
    return (f"({c0} - CASE WHEN {c0} > 0 AND {x} < {low} THEN 1 ELSE 0 END"
            f" + CASE WHEN {c0} < {last} AND {x} >= {high} THEN 1 ELSE 0 END)")


def position_sql(cell: str, splits) -> str:
    """Position of a cell in the cut with sorted split boundaries `splits` (0 when there are none)."""
    if not len(splits):
        return "0"
    return "(" + " + ".join(f"CASE WHEN {cell} >= {int(g)} THEN 1 ELSE 0 END" for g in splits) + ")"


def cells_relation(columns: dict[str, object], keep: list[str], relation: str = "src") -> str:
    """A subquery with, for each numeric column name → Grid, its value helper('x$' + name) (DOUBLE) and its exact grid
    cell helper('cell$' + name) (names no column of the file has: columns.HELPER), plus the columns `keep` unchanged."""
    inner = [f"{quote(k)}" for k in keep]
    for name, grid in columns.items():
        x = f"CAST({quote(name)} AS DOUBLE)"
        inner.append(f"{x} AS {quote(helper('x$' + name))}")
        inner.append(f"{raw_cell_sql(x, grid)} AS {quote(helper('c0$' + name))}")
    outer = [quote(k) for k in keep]
    for name, grid in columns.items():
        x, c0 = quote(helper("x$" + name)), quote(helper("c0$" + name))
        outer.append(f"{corrected_cell_sql(x, c0, grid)} AS {quote(helper('cell$' + name))}")
    return f"(SELECT {', '.join(outer)} FROM (SELECT {', '.join(inner)} FROM {relation}) AS cells_inner) AS cells"
