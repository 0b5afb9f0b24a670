"""A large table as a `Dataset`: opened by the reader's rules applied in SQL, its kinds decided, its values typed.

`LargeDataset` is a `Dataset` whose `frame` holds no rows (only the typed columns, so schema code keeps working)
and whose `table` is the TableSource (bigdata/source.py, the only thing that touches the file): the publish path
(plan → run_release → export) is the same one; the mechanisms that support it ask `is_large(data)` and count
through SQL.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
import pyarrow as pa

from ppdp_gui.engine.bigdata.columns import FLOAT_TYPES, N, SqlFacts, example_non_numbers, infer_kind, kind_facts, quote
from ppdp_gui.engine.bigdata.source import SCHEMA_ROWS, TableSource, _count
from ppdp_gui.engine.data.coltypes import NUMERIC_MIN_DISTINCT
from ppdp_gui.engine.data.schema import Dataset, NAPolicy, SourceInfo
from ppdp_gui.engine.data.writer import file_sha256
from ppdp_gui.engine.errors import DataError


@dataclass(frozen=True)
class LargeDataset(Dataset):
    """A Dataset whose rows stay in the file: `frame` has the typed columns and no rows; `table` counts."""

    table: TableSource | None = field(default=None, compare=False, repr=False)

    @property
    def n_rows(self) -> int:
        return self.table.n_rows if self.table is not None else 0

    @property
    def larger_than_memory(self) -> bool:
        return self.table is not None


def is_large(data) -> bool:
    return isinstance(data, LargeDataset) and data.table is not None


def has_missing(data, column: str) -> bool:
    """`data.frame[column].isna().any()` for either engine: a large table's frame has no rows, its source
    knows the missing cells left (a numeric column's under 'category')."""
    if is_large(data):
        return data.table.nulls.get(column, 0) > 0
    return bool(data.frame[column].isna().any())


def open_large(path, *, na_policy: NAPolicy = NAPolicy(), kinds=None, roles=None, delimiter=None,
               hashes: bool = True, engine: str = "duckdb", master: str | None = None) -> LargeDataset:
    """A LargeDataset over `path` read by the in-memory reader's rules, applied in SQL to every row: missing
    values, columns left out and their notes (one pass), kinds (one pass over the kept rows), role guesses (exact
    counts for the columns whose name decides nothing); the source hash streamed, the ledger's row hashes
    computed in batches (`hashes=False` skips them, for tests). `engine`: "duckdb" or "spark" (on `master`)."""
    from ppdp_gui.engine.data.coltypes import kinds_by_name
    from ppdp_gui.engine.data.missing import every_row_missing
    from ppdp_gui.engine.data.reader import dataset_from_frame
    from ppdp_gui.engine.data.roles import guess_roles_with_reasons, guessed_parts
    if engine == "spark":
        from ppdp_gui.engine.bigdata.spark_source import SparkTableSource
        source = SparkTableSource(path, na_policy=na_policy, delimiter=delimiter, roles=roles, master=master)
    else:
        source = TableSource(path, na_policy=na_policy, delimiter=delimiter, roles=roles)
    unknown = [c for c in list(kinds or {}) + list(roles or {}) if c not in source.raw_columns]
    if unknown:
        raise DataError(f"no column named {unknown[0]!r} (columns: {', '.join(source.raw_columns)})",
                        path=str(source.path), column=unknown[0])
    if not source.n_rows_read:  # as the reader: a header without rows is not a table
        raise DataError("has a header but no data rows", path=str(source.path), line=2)
    if na_policy.action == "drop" and source.columns and source.n_rows_read and not source.n_rows:
        raise every_row_missing(source.n_rows_read, na_policy.tokens, str(source.path))
    given = {c: k for c, k in (kinds or {}).items() if c in source.columns}
    given = {**kinds_by_name(c for c in source.columns if c not in given), **given}  # ZIP codes, by name
    final, whole, first_rows = decide_kinds(source, given)
    source.apply_kinds(final, whole)
    sample = source.src_head(first_rows)
    given_roles = {c: r for c, r in (roles or {}).items() if c in source.columns}
    typed = dataset_from_frame(sample, kinds=final, roles=given_roles,
                               na_policy=NAPolicy(tokens=(), action="category", mostly_missing=None))
    reasons = guess_roles_with_reasons(typed.frame, final, facts=SqlFacts(source, final))
    guessed = {name: role for name, (role, _why) in reasons.items()}
    marks = guessed_parts(reasons, list(guessed), given_roles, given)  # as the in-memory reader marks them
    schema = tuple(replace(spec if spec.name in given_roles else replace(spec, role=guessed[spec.name]),
                           guessed=marks.get(spec.name, frozenset()))
                   for spec in typed.schema)
    info = SourceInfo(path=source.url if source.remote else str(source.path.resolve()),
                      sha256="" if source.remote else file_sha256(source.path),
                      n_rows_read=source.n_rows_read, n_rows_dropped=source.n_rows_read - source.n_rows,
                      na_policy=na_policy, delimiter=delimiter, file_format=source.file_format,
                      row_hashes=source.row_hashes() if hashes else None,
                      notes=tuple(source.report().notes(na_policy)) + (ENGINE_NOTE.replace("DuckDB", source.engine),),
                      left_out=tuple(source.left_out), missing=dict(source.missing), role_reasons=reasons)
    return LargeDataset(frame=typed.frame.iloc[:0], schema=schema, source=info, table=source)


ENGINE_NOTE = ("Read with the large-table engine (DuckDB): missing values, kinds and role guesses by the reader's "
               "rules, counted over every row of the file.")


def decide_kinds(source: TableSource, given: dict[str, str]) -> tuple[dict[str, str], list[str], pd.DataFrame]:
    """Each kept column's kind by `coltypes`' rule over every kept row (bigdata/columns.py), the declared ones
    checked (a declared numeric column holding a non-number is an error naming it, as in memory); and the
    columns whose every value is a whole number (a typed float column of them reads as integers; a numeric
    column of them with no missing cell is held as integers, so it is written as such); and the first rows of
    `kept` it read (the role guesses read them too)."""
    floats = [c for c in source.columns if source.raw_types[c].upper() in FLOAT_TYPES]
    sample = source.head(SCHEMA_ROWS, relation="kept")
    seen = {c: int(sample[c].dropna().nunique()) for c in source.columns}
    # a non-number or a leading zero in the first rows settles 'categorical' for the whole file: only the
    # columns whose first rows could be numeric (and the declared numeric ones) are read again
    could_be = {c for c, kind in zip(source.columns, _sample_kinds(sample)) if kind}
    check = [c for c in source.columns if given.get(c) == "numeric" or (c not in given and c in could_be)]
    base, weight = source.weighted("kept")
    facts = kind_facts(source.run, base, check, [c for c in check if c not in given
                                                 and seen[c] <= NUMERIC_MIN_DISTINCT],
                       list(dict.fromkeys(check + floats)), weight=weight)
    for c in check:
        if given.get(c) == "numeric" and facts[c]["not numbers"]:
            bad = example_non_numbers(source.run, c)
            raise DataError(f"column {c!r} is set to numeric but holds values that are not finite numbers, e.g. "
                            f"{bad}; make it categorical or fix the values", path=str(source.path), column=c)
    kinds = {c: given.get(c) or (infer_kind(facts[c], seen[c]) if c in facts else "categorical")
             for c in source.columns}
    whole = [c for c in source.columns if facts.get(c, {}).get("whole")]
    return kinds, whole, sample


def _sample_kinds(sample: pd.DataFrame) -> list[bool]:
    """Per column: every present value of the sample is a plain number with no leading zero (the first two parts
    of `coltypes`' rule; the count of distinct values is left to the whole file)."""
    from ppdp_gui.engine.data.coltypes import TextBatch
    out = []
    for c in sample.columns:
        present = sample[c].dropna().astype(str)
        if not len(present):
            out.append(True)
            continue
        batch = TextBatch([pa.array(present.to_numpy(dtype=object), pa.large_string())], len(present), ())
        miss = batch.cell_missing()
        out.append(batch.kinds(miss, min_distinct=-1)[0] != "categorical")
    return out


def uniqueness_sql(table: TableSource, column: str) -> tuple[float, float]:
    """pipeline.plan.uniqueness in SQL: (share of rows holding distinct values, share of rows whose value no
    other row has). From a histogram already counted when one holds the column (the class or sensitive column, in
    the histogram every mechanism reads): no pass over the file."""
    n = table.n_rows
    if not n:
        return 0.0, 0.0
    got = table.cached_histogram((column,))
    if got is not None:
        counts = got[N].to_numpy(dtype=np.int64)
        return float(len(counts)) / n, float((counts == 1).sum()) / n
    base, weight = table.weighted("src")
    d, u = table.con.execute(f"SELECT COUNT(*), SUM(CASE WHEN n = 1 THEN 1 ELSE 0 END) FROM (SELECT "
                             f"{_count(weight)} AS n FROM {base} GROUP BY {quote(column)}) AS g").fetchall()[0]
    return float(d) / n, float(u or 0) / n


def distinct_typed(data: Dataset, column: str) -> pd.Series:
    """The distinct values of a column of a large table, typed as in memory (a quasi-identifier's, a sensitive
    or the class column's from the one count of them all together, which the mechanism then reads; of the
    quasi-identifiers alone when that has too many combinations)."""
    qis = tuple(data.quasi_identifiers)
    outcomes = tuple(data.sensitive_columns) + ((data.class_column,) if data.class_column else ())
    for among in (qis + outcomes, qis):  # the one histogram every mechanism then reads
        if column in among and data.table.histogram(among) is not None:
            return typed_values(data, column, data.table.distinct(column, among=among))
    return typed_values(data, column, data.table.distinct(column))


def typed_values(data: Dataset, column: str, texts: pd.Series) -> pd.Series:
    """Distinct texts of a column typed as the reader types the column (so `Taxonomy.node_codes` sees what it
    would see in memory: '39' for a whole-number column, '39.5' otherwise)."""
    from ppdp_gui.engine.data.reader import dataset_from_frame
    spec = data.spec(column)
    frame = pd.DataFrame({column: texts.astype(str).to_numpy()})
    typed = dataset_from_frame(frame, kinds={column: spec.kind}, roles={column: spec.role},
                               na_policy=NAPolicy(tokens=(), mostly_missing=None))
    return typed.frame[column].reset_index(drop=True)
