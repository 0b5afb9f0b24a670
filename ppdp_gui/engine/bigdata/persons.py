"""The person column (Role.PERSON) on a large table: whose row each row is, in SQL.

The in-memory path reads persons as `pd.factorize(frame[person], use_na_sentinel=False)`: equal values (as the
reader types them) are one person, every missing id together one person. Here the same value is
`person_sql` — the column as the reader holds it (`TableSource.value_sql`: a number column as a number, so '7' and
'7.0' are one person as in memory; text as it is) — and GROUP BY puts every NULL in one group, as factorize does.
A recount counts `COUNT(DISTINCT person_hash)`: DuckDB's 64-bit hash of that value, NULL included (a collision
would merge two persons: the side on which fewer persons are counted, never more).

`bound_rows` keeps at most c rows per person for a DP mechanism (contribution.py) with the in-memory rule: one
uniform key per row from the release's noise source, drawn in file order; per person the c rows with the smallest
keys (ties by file order), so the same seed keeps the same rows on either engine.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ppdp_gui.engine.bigdata.columns import helper, quote

#: the person's hash in a relation that carries it for a recount (never written), a row's position, whether a
#: written row lines up with its person: the engine's own columns (a space first: no column of a file clashes)
PERSON, POS, ALIGNED = helper("person"), helper("pos"), helper("aligned")


def person_sql(table, column: str, alias: str = "s") -> str:
    """The person column as the reader holds it (the in-memory person codes group by this value)."""
    return table.value_sql(column, alias)


def hash64(table) -> str:
    """The engine's 64-bit hash function: DuckDB's `hash`; on Spark `xxhash64` (its `hash` has 32 bits, whose
    collisions would merge persons or groups more often)."""
    return "xxhash64" if getattr(table, "engine", "DuckDB") == "Spark" else "hash"


def person_hash_sql(table, column: str, alias: str = "s") -> str:
    """A 64-bit hash of the person's value (NULL, a missing id, hashes to one value: one person)."""
    return f"{hash64(table)}({person_sql(table, column, alias)})"


def n_persons(table, column: str) -> int:
    """Distinct persons of the table (every missing id together one person, as in memory)."""
    got = table.run(f"SELECT COUNT(*) FROM (SELECT {person_sql(table, column, 's')} AS p FROM src AS s "
                    "GROUP BY 1) AS g")
    return int(got[0][0])


@dataclass(frozen=True)
class BoundRows:
    """At most c rows per person of a large table: `relation` (SQL over `src` in file order: read it inside
    `TableSource.file_order`), `n_kept` its rows."""

    relation: str
    n_kept: int


def bound_rows(table, column: str, max_rows: int, keys: np.ndarray, tag: str) -> BoundRows:
    """The rows `contribution.bound_contribution` keeps, in SQL: `keys` (one uniform per row of `src`, in file
    order, drawn by the caller from the release's noise source) registered as a table; per person the rows with the
    `max_rows` smallest keys (ties: the earlier row), as the in-memory `lexsort((key, person))`. The window sorts
    only (position, person, key), and the kept positions are held once (a DuckDB temporary table; on Spark a
    cached view), so the rows themselves are read again only by the count that follows."""
    name = f"{tag}_keys"
    table.register(name, pd.DataFrame({"pos": np.arange(1, keys.size + 1, dtype=np.int64),
                                       "key": np.asarray(keys, dtype=np.float64)}))
    person = person_sql(table, column, "s")
    kept = (f"SELECT pos FROM (SELECT x.pos, row_number() OVER (PARTITION BY x.p ORDER BY k.key, x.pos) AS r "
            f"FROM (SELECT row_number() OVER () AS pos, {person} AS p FROM src AS s) AS x "
            f"JOIN {name} AS k ON k.pos = x.pos) AS ranked WHERE r <= {int(max_rows)}")
    positions = f"{tag}_kept"
    with table.file_order():
        _materialize(table, positions, kept)
        n_kept = int(table.scalar(f"SELECT COUNT(*) FROM {positions}"))
    shown = ", ".join(f"s.{quote(c)}" for c in table.columns)
    relation = (f"(SELECT {shown} FROM (SELECT *, row_number() OVER () AS {quote(POS)} FROM src) AS s "
                f"JOIN {positions} AS kept ON kept.pos = s.{quote(POS)})")
    return BoundRows(relation, n_kept)


def _materialize(table, name: str, sql: str) -> None:
    """The result of `sql` held under `name` (small: positions): a temporary table, or a cached view on Spark."""
    if getattr(table, "engine", "DuckDB") == "Spark":
        from ppdp_gui.engine.bigdata.dialect import to_spark
        table.spark.sql(to_spark(sql)).persist().createOrReplaceTempView(name)
        return
    table.run(f"CREATE OR REPLACE TEMP TABLE {name} AS {sql}", fetch="")


def counted_bound(table, bound: BoundRows, columns: list[str], name: str) -> tuple[str, str | None]:
    """(relation, weight column) of the bounded rows counted per combination of `columns` (as
    `TableSource.counted` over `src`): one GROUP BY in file order, registered as `name`."""
    from ppdp_gui.engine.bigdata.source import HISTOGRAM_ROWS, ROWS
    keys = ", ".join(quote(c) for c in columns)
    with table.file_order():
        got = table.query(f"SELECT {keys}, COUNT(*) AS {quote(ROWS)} FROM {bound.relation} AS b GROUP BY {keys} "
                          f"LIMIT {HISTOGRAM_ROWS + 1}")
    if len(got) > HISTOGRAM_ROWS:  # too many to hold: the passes read the bounded rows (in file order)
        return bound.relation, None
    got[ROWS] = got[ROWS].astype(np.int64)
    table.register(name, pd.DataFrame(got))
    return name, quote(ROWS)
