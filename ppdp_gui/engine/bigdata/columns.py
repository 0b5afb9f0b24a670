"""The in-memory reader's column rules on a large table, as SQL passes: text, missing values, kinds, role facts.

The reader (data/reader.py, data/missing.py, data/coltypes.py, data/roles.py) decides per column which cells are
missing, which columns are left out, which rows are dropped, each column's kind and a first guess of its role. A
table read by DuckDB must get the same answers, or the same file would give a different release depending on the
engine. So every rule is applied here to the whole file, in SQL, with the reader's own constants:

- *text*: each cell as the reader sees it (`text_sql`): text stripped of the white space Arrow's
  `utf8_trim_whitespace` strips (a `regexp_replace` with that character list); an empty CSV field is '' (DuckDB
  reads it as NULL); typed Parquet columns as the reader turns them into text (booleans 'True'/'False', dates
  '%Y-%m-%d', timestamps without a midnight time, a float column of whole numbers without '.0').
- *missing* (`missing_counts`, one pass): a text cell is missing when it is NULL or one of the policy's tokens;
  a typed cell when it is NULL or NaN (the reader does not apply tokens to typed columns). The counts feed
  `missing.left_out_columns` and `MissingReport` unchanged, so the columns left out and the notes are the
  reader's.
- *kinds* (`kind_facts`, one pass over the kept rows): the rule of `coltypes.kind_rule_text` on every present
  value of the column (a plain finite number, no leading zero, more than NUMERIC_MIN_DISTINCT distinct values),
  not on a sample: a column numeric in its first rows and text later is categorical, as in memory.
- *role facts* (`SqlFacts`): the rows, distinct values and whole-number test that the role rules read, counted
  exactly over the kept rows (roles.ColumnFacts).
"""

from __future__ import annotations

import pandas as pd

from ppdp_gui.engine.data import coltypes
from ppdp_gui.engine.data.roles import SAMPLE_VALUES, ColumnFacts


#: the start of every column name the engine makes up (a histogram's row count, a join key, a position): a space,
#: which no column of the file has (the reader strips header names, and `TableSource` refuses a Parquet column whose
#: name starts with one), so a file's column can be named anything, `n` or `ppdp_rows__` included, without
#: clashing with the engine's own (issue 28)
HELPER = " ppdp_"


def helper(name: str) -> str:
    """The name of one of the engine's own columns (see HELPER)."""
    return HELPER + name


#: the row count of every frame the engine's counting returns (`histogram`, `group_counts`, the recount's tally)
N = helper("n")


def quote(name: str) -> str:
    """A SQL identifier in double quotes (portable: DuckDB, Spark SQL with ANSI quoting, PostgreSQL)."""
    return '"' + str(name).replace('"', '""') + '"'


def literal(text: str) -> str:
    """A SQL string literal."""
    return "'" + str(text).replace("'", "''") + "'"


#: the characters Arrow's utf8_trim_whitespace strips (the reader strips values with it); tested against Arrow
WHITESPACE = "".join(chr(c) for c in [0x9, 0xA, 0xB, 0xC, 0xD, 0x1C, 0x1D, 0x1E, 0x1F, 0x20, 0x85, 0xA0, 0x1680,
                                      *range(0x2000, 0x200B), 0x2028, 0x2029, 0x202F, 0x205F, 0x3000])
#: the same as a RE2 pattern: `regexp_replace` with it is a tenth of `trim(s, chars)`'s cost on CSV cells and,
#: being one function, still runs once per distinct value of a dictionary-encoded Parquet column
_EDGES = "^[{0}]+|[{0}]+$".format("".join(f"\\x{{{ord(c):x}}}" for c in WHITESPACE))
FLOAT_TYPES = ("FLOAT", "DOUBLE", "REAL", "FLOAT4", "FLOAT8")
_INTEGERS = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER",
             "UBIGINT", "UHUGEINT")
_INT_LIMIT = "CAST('9007199254740992.0' AS DOUBLE)"


def is_text_type(type_name: str) -> bool:
    """A column the reader reads as text (tokens apply): strings, and every column of a CSV."""
    return type_name.upper() in ("VARCHAR", "BLOB") or type_name.upper().startswith("DECIMAL")


def text_sql(name: str, type_name: str, csv: bool, whole_float: bool = False) -> str:
    """A raw column's cell as the reader's text (see the module docstring); NULL for a typed missing cell."""
    c, t = quote(name), type_name.upper()
    if csv:
        return _trimmed(f"COALESCE({c}, '')")
    if t == "BOOLEAN":
        return f"(CASE WHEN {c} THEN 'True' WHEN NOT {c} THEN 'False' END)"
    if t in FLOAT_TYPES:
        shown = f"CAST(CAST({c} AS BIGINT) AS VARCHAR)" if whole_float else f"CAST({c} AS VARCHAR)"
        # an infinite value stays text ('inf'): it has no integer to be cast to (a whole-number column with one
        # refused to load)
        return f"(CASE WHEN isnan({c}) THEN NULL WHEN NOT isfinite({c}) THEN CAST({c} AS VARCHAR) ELSE {shown} END)"
    if t == "DATE":
        return f"strftime({c}, '%Y-%m-%d')"
    if t.startswith("TIMESTAMP"):
        return f"replace(strftime({c}, '%Y-%m-%d %H:%M:%S'), ' 00:00:00', '')"
    if t in _INTEGERS:
        return f"CAST({c} AS VARCHAR)"
    if t == "BLOB":  # the reader decodes binary Parquet text as UTF-8 (CAST would escape non-ASCII bytes)
        return _trimmed(f"decode({c})")
    return _trimmed(f"CAST({c} AS VARCHAR)")


def _trimmed(text: str) -> str:
    return f"regexp_replace({text}, {literal(_EDGES)}, '', 'g')"


def missing_sql(text: str, type_name: str, csv: bool, tokens) -> str:
    """True when the cell is missing: NULL, or (text columns only) one of the tokens."""
    if tokens and (csv or is_text_type(type_name)):
        return f"COALESCE({text} IN ({', '.join(literal(t) for t in tokens)}), TRUE)"
    return f"({text} IS NULL)"


def missing_counts(run, relation: str, missing: dict[str, str], keep_if: list[str], weight: str | None = None
                   ) -> tuple[int, dict[str, int], int]:
    """One pass: (rows, missing cells per column (`missing`: column → its `missing_sql`), rows with a missing
    cell in any column of `keep_if`). With `weight`, each row of `relation` stands for that many rows (the
    file's distinct rows, counted)."""
    one = weight or "1"
    parts = [f"SUM({weight})" if weight else "COUNT(*)"]
    parts += [f"SUM(CASE WHEN {m} THEN {one} ELSE 0 END)" for m in missing.values()]
    anywhere = " OR ".join(missing[c] for c in keep_if) or "FALSE"
    parts.append(f"SUM(CASE WHEN {anywhere} THEN {one} ELSE 0 END)")
    row = run(f"SELECT {', '.join(parts)} FROM {relation}")[0]
    n = int(row[0] or 0)
    counts = {c: int(v or 0) for c, v in zip(missing, row[1:-1])}
    return n, counts, int(row[-1] or 0)


_ZERO = coltypes._LEADING_ZERO
_NUMBER = coltypes._NUMBER


def number_sql(col: str) -> str:
    """The reader's 'plain finite number' test (TextBatch: the regex, then a finite float)."""
    return (f"(regexp_full_match({col}, {literal(_NUMBER)}) AND "
            f"COALESCE(isfinite(TRY_CAST({col} AS DOUBLE)), FALSE))")


def kind_facts(run, relation: str, columns: list[str], count_distinct: list[str], whole: list[str],
               weight: str | None = None) -> dict[str, dict]:
    """One pass over the kept rows (missing cells NULL): per column of `columns` the present values that are not
    plain numbers and those with a leading zero, the distinct values (for `count_distinct` only: the sample
    already has more than enough for the others); per column of `whole`, whether every finite value it reads as
    is a whole number below 2**53 (the reader then holds integers). When only one column is asked about (the
    usual case: the one whose first rows look like numbers), its rows are counted per value first and the tests
    run once per distinct value, not once per row. With `weight`, each row of `relation` stands for that many
    rows (the file's distinct rows, counted)."""
    parts, keys = [], []
    one = list(dict.fromkeys([*columns, *whole]))
    rows = weight or "1"
    if len(one) == 1:
        q = quote(one[0])
        n = f"SUM({weight})" if weight else "COUNT(*)"
        rows = quote(helper("rows"))
        relation = f"(SELECT {q}, {n} AS {rows} FROM {relation} GROUP BY {q}) AS per_value"
    for c in columns:
        q = quote(c)
        parts.append(f"SUM(CASE WHEN {q} IS NOT NULL AND NOT {number_sql(q)} THEN {rows} ELSE 0 END)")
        parts.append(f"SUM(CASE WHEN regexp_matches({q}, {literal(_ZERO)}) THEN {rows} ELSE 0 END)")
        keys += [(c, "not numbers"), (c, "leading zeros")]
        if c in count_distinct:
            parts.append(f"COUNT(DISTINCT {q})")
            keys.append((c, "distinct"))
    for c in whole:  # the kept text of a float column reads back as the same double
        x = f"TRY_CAST({quote(c)} AS DOUBLE)"
        parts.append(f"COALESCE(bool_and(CASE WHEN isfinite({x}) THEN {x} = floor({x}) AND "
                     f"abs({x}) < {_INT_LIMIT} ELSE TRUE END), TRUE)")
        keys.append((c, "whole"))
    out: dict[str, dict] = {c: {} for c in [*columns, *whole]}
    if not parts:
        return out
    row = run(f"SELECT {', '.join(parts)} FROM {relation}")[0]
    for (c, what), v in zip(keys, row):
        out[c][what] = bool(v) if what == "whole" else int(v or 0)
    return out


def infer_kind(facts: dict, sample_distinct: int) -> str:
    """`coltypes`' rule from the whole-file facts (distinct values from the sample when it already has more
    than NUMERIC_MIN_DISTINCT)."""
    distinct = facts.get("distinct", sample_distinct)
    numeric = distinct > coltypes.NUMERIC_MIN_DISTINCT and not facts["not numbers"] and not facts["leading zeros"]
    return "numeric" if numeric else "categorical"


class SqlFacts(ColumnFacts):
    """The role rules' facts counted exactly over the kept rows of a large table (`src`), one query per column
    asked (only columns whose name decides nothing are asked: a few)."""

    def __init__(self, table, kinds: dict[str, str]):
        self.table, self.kinds = table, kinds
        self._distinct: dict[str, tuple[int, int]] = {}

    def rows(self) -> int:
        return self.table.n_rows

    def distinct(self, name: str, exact: bool = True) -> tuple[int, int]:
        if name not in self._distinct:  # a numeric column's values are numbers ('1.0' and '1' are one)
            v = f"CAST({quote(name)} AS DOUBLE)" if self.kinds.get(name) == "numeric" else quote(name)
            base, weight = self.table.weighted("src")
            present = f"SUM(CASE WHEN {v} IS NOT NULL THEN {weight} ELSE 0 END)" if weight else f"COUNT({v})"
            d, n = self.table.run(f"SELECT COUNT(DISTINCT {v}), {present} FROM {base}")[0]
            self._distinct[name] = (int(d), int(n or 0))
        return self._distinct[name]

    def sample(self, name: str) -> pd.Series:
        """The in-memory rule's sample: at most SAMPLE_VALUES present values, strided over the rows in file
        order (row_number() over one scan keeps it, as the Mondrian first-appearance query relies on)."""
        n = self.distinct(name)[1]
        step = n // SAMPLE_VALUES if n > SAMPLE_VALUES else 1
        q = quote(name)
        got = self.table.run(f"SELECT v FROM (SELECT {q} AS v, row_number() OVER () AS rn FROM src "
                             f"WHERE {q} IS NOT NULL) WHERE (rn - 1) % {int(step)} = 0 ORDER BY rn")
        return pd.Series([r[0] for r in got], dtype=object)

    def whole(self, name: str, kind: str) -> bool:
        if kind != "numeric":
            return True
        x = f"CAST({quote(name)} AS DOUBLE)"
        got = self.table.run(f"SELECT bool_and({x} = floor({x})), COUNT({x}) FROM {self.table.weighted('src')[0]}")[0]
        return bool(got[1]) and bool(got[0])


def example_non_numbers(run, column: str, limit: int = 3) -> list[str]:
    q = quote(column)
    got = run(f"SELECT {q} FROM kept WHERE {q} IS NOT NULL AND NOT {number_sql(q)} LIMIT {int(limit)}")
    return [str(r[0]) for r in got]
