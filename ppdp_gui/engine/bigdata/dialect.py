"""One SQL text for both engines: the DuckDB spelling the large-table path writes, transpiled to Spark SQL.

The queries of engine/bigdata are written once, in DuckDB's SQL. Spark runs them through sqlglot's DuckDB → Spark
transpiler (quoting, `VARCHAR` → `STRING`, `regexp_matches` → `RLIKE`, `strftime` → `date_format`, `random()` →
`rand()`, string literals escaped for Spark's parser), plus the few spellings sqlglot leaves as they are:

- `regexp_full_match(s, p)` → `s RLIKE '^(?:p)$'` (Java's regex, which reads the patterns used here alike);
- `isfinite(x)` → NULL for NULL, else not NaN and not ±Infinity;
- `HUGEINT` (the digest's sum) → `DECIMAL(38, 0)`;
- `row_number() OVER ()` (file order) → ordered by `monotonically_increasing_id()`, increasing in file order
  within a file read by Spark;
- `CREATE OR REPLACE VIEW` → a temporary view (of the session only).

No hand-kept second dialect: a query that reaches Spark is always the DuckDB text, transpiled here.
"""

from __future__ import annotations

from functools import lru_cache


def _rewrite(node):
    from sqlglot import exp
    if isinstance(node, exp.RegexpFullMatch) or (isinstance(node, exp.Anonymous)
                                                 and node.name.lower() == "regexp_full_match"):
        args = [node.this, node.expression] if isinstance(node, exp.RegexpFullMatch) else node.expressions
        pattern = args[1]
        if isinstance(pattern, exp.Literal) and pattern.is_string:
            pattern = exp.Literal.string(f"^(?:{pattern.this})$")
        else:
            pattern = exp.Concat(expressions=[exp.Literal.string("^(?:"), pattern, exp.Literal.string(")$")])
        return exp.RegexpLike(this=args[0], expression=pattern)
    if isinstance(node, exp.Anonymous) and node.name.lower() == "isfinite":
        x = node.expressions[0]
        inf = exp.cast(exp.Literal.string("Infinity"), "DOUBLE")
        test = exp.and_(exp.not_(exp.func("isnan", x.copy())), exp.LT(this=exp.Abs(this=x.copy()), expression=inf))
        return exp.Case(ifs=[exp.If(this=exp.Is(this=x.copy(), expression=exp.Null()), true=exp.Null())],
                        default=test)
    if isinstance(node, exp.DataType) and node.this == exp.DataType.Type.INT128:
        return exp.DataType.build("DECIMAL(38, 0)")
    if isinstance(node, exp.Window) and isinstance(node.this, exp.RowNumber) and not node.args.get("order") \
            and not node.args.get("partition_by"):
        node = node.copy()
        node.set("order", exp.Order(expressions=[exp.Ordered(this=exp.func("monotonically_increasing_id"))]))
        return node
    return node


@lru_cache(maxsize=512)
def to_spark(sql: str) -> str:
    """The DuckDB text of one statement as Spark SQL (see the module docstring)."""
    import sqlglot
    from sqlglot import exp
    tree = sqlglot.parse_one(sql, read="duckdb").transform(_rewrite)
    if isinstance(tree, exp.Create) and tree.args.get("kind", "").upper() == "VIEW":
        props = tree.args.get("properties") or exp.Properties(expressions=[])
        props.append("expressions", exp.TemporaryProperty())
        tree.set("properties", props)
    return tree.sql(dialect="spark")
