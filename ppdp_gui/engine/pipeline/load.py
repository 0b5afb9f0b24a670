"""Step 1 of the publish path: a recipe becomes a Dataset — the same way for the window and for `ppdp`.

Order (later steps win): read the table with the recipe's missing-value policy, kinds and roles; attach the ARX
hierarchies named after the table (`<stem>_hierarchy_<column>.csv[.gz]` beside it, or the bundled Adult ones
for the bundled sample) to every column that has one; the bundled Adult hierarchies if asked for by name;
hierarchy files named in the recipe; the taxonomies the recipe asks to build from the table (`taxonomy_builds`,
built by taxonomy/from_spec.py as the window's buttons build them, then kept in `recipe.taxonomies`); the
recipe's own taxonomies; the recipe's public domains. Whatever could
not be attached is a note, not a failed load.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ppdp_gui.engine.data.reader import read_table
from ppdp_gui.engine.data.schema import Dataset
from ppdp_gui.engine.errors import DataError, PpdpError
from ppdp_gui.engine.persistence.project import Recipe, source_changed


@dataclass
class Loaded:
    """The dataset, the hierarchy files attached by name ({column: path}) and notes for the custodian."""

    dataset: Dataset
    attached: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    taxonomies: dict = field(default_factory=dict)  # column -> Taxonomy attached from a file found by name


#: how a table is read: "memory" (the reader: the whole table as a DataFrame) or "duckdb" (engine/bigdata: the
#: file stays on disk and the counting passes are SQL; DiffGen, Global recoding and strict Mondrian) or "spark" (the
#: same passes on Apache Spark: engine/bigdata/spark_source.py)
ENGINES = ("memory", "duckdb", "spark")


#: `choose_engine`: a Parquet file with more rows than this, or any file larger than the reader's byte limit,
#: goes to DuckDB when the mechanism can run there
AUTO_ROWS = 5_000_000


def choose_engine(path, mechanism, *, max_rows: int = AUTO_ROWS, max_bytes: int | None = None) -> str:
    """"duckdb" for a table too large to load comfortably (see AUTO_ROWS) whose mechanism runs on large tables
    (`Mechanism.large_tables`), else "memory". Reads only the file's size and a Parquet footer."""
    from ppdp_gui.engine.data.reader import DEFAULT_MAX_BYTES
    from ppdp_gui.engine.pipeline.plan import resolve_mechanism
    try:
        mech = resolve_mechanism(mechanism) if mechanism else None
    except PpdpError:
        return "memory"
    if mech is None or not getattr(mech, "large_tables", False):
        return "memory"
    from ppdp_gui.engine.data.prechecks import check_regular
    p = Path(path).expanduser()
    try:
        size = check_regular(p).st_size  # a FIFO's footer would be waited for: the reader says why it is refused
    except PpdpError:
        return "memory"
    if size > (DEFAULT_MAX_BYTES if max_bytes is None else max_bytes):
        return "duckdb"
    if p.suffix.lower() in (".parquet", ".pq"):
        try:
            import pyarrow.parquet as pq
            if pq.ParquetFile(p).metadata.num_rows > max_rows:
                return "duckdb"
        except Exception:  # noqa: BLE001 - not readable as Parquet: the reader will say why
            return "memory"
    return "memory"


def load(recipe: Recipe, *, max_bytes: int | None = None, engine: str = "memory",
         spark_master: str | None = None) -> Loaded:
    """Read `recipe.source` and apply the recipe to it (see the module docstring). `engine`: see ENGINES;
    `spark_master`: the Spark master URL for engine "spark" (default local[2] or $PPDP_SPARK_MASTER)."""
    if engine not in ENGINES:
        raise DataError(f"unknown engine {engine!r}: choose one of {', '.join(ENGINES)}")
    from ppdp_gui.engine.data.outputs import remember_inputs
    remember_inputs(recipe.source, *recipe.taxonomy_files.values())  # no writer of this process may replace them
    if engine in ("duckdb", "spark"):
        from ppdp_gui.engine.bigdata.large_dataset import open_large
        data = open_large(recipe.source, na_policy=recipe.na_policy, kinds=recipe.kinds or None,
                          roles=recipe.roles or None, engine=engine, master=spark_master)
    else:
        kwargs = {} if max_bytes is None else {"max_bytes": max_bytes}
        data = read_table(recipe.source, na_policy=recipe.na_policy, kinds=recipe.kinds or None,
                          roles=recipe.roles or None, **kwargs)
    data = _mark_guesses(data, recipe.guessed)
    out = Loaded(data)
    out.notes += list(data.source.notes)  # how the file was read (formulas, merged cells, the sheet chosen)
    if recipe.source_sha256 and source_changed(recipe):
        out.notes.append("The table file has changed since this project was saved: check the roles, domains and "
                         "taxonomies before releasing.")
    columns = list(data.frame.columns)
    from ppdp_gui.engine.taxonomy.discover import attach_hierarchies
    data, attached, notes = attach_hierarchies(data, recipe.source, columns)
    out.attached = {c: str(f) for c, (f, _t) in attached.items()}
    out.taxonomies = {c: t for c, (_f, t) in attached.items()}
    out.notes += notes
    if recipe.bundled == "adult":
        from ppdp_gui.engine.taxonomy import bundled_adult_taxonomies
        for col, tax in bundled_adult_taxonomies().items():
            if col in data.frame.columns:
                data = data.with_column(col, taxonomy=tax)
    if recipe.taxonomy_files:
        from ppdp_gui.engine.taxonomy.arx_io import read_arx_hierarchy
        for col, file in recipe.taxonomy_files.items():
            _known(data, col, "a taxonomy file")
            data = data.with_column(col, taxonomy=read_arx_hierarchy(file, column=col))
    if recipe.taxonomy_builds:
        from ppdp_gui.engine.taxonomy.from_spec import build_taxonomy, recoded_values
        for col, spec in list(recipe.taxonomy_builds.items()):
            _known(data, col, "a taxonomy to build")
            data = _recoded(data, col, lambda values, c=col, s=spec: recoded_values(c, values, s, keep=_keep(data)),
                            out)
            recipe.taxonomies[col] = build_taxonomy(col, column_values(data, col), spec)
            del recipe.taxonomy_builds[col]
    for col, tax in recipe.taxonomies.items():
        _known(data, col, "a taxonomy")
        from ppdp_gui.engine.taxonomy.icd import categories_version, to_categories
        version = categories_version(tax)
        if version is not None:  # the public ICD tree of categories: the column is written at that level
            data = _recoded(data, col, lambda values, c=col, v=version: to_categories(c, values, v, keep=_keep(data)),
                            out)
        data = data.with_column(col, taxonomy=tax)
    data, notes = _room_for_missing(data)
    out.notes += notes
    for col, domain in recipe.domains.items():
        _known(data, col, "a domain")
        spec = data.spec(col)
        if domain.is_numeric and spec.kind != "numeric":
            raise DataError(f"column {col!r} is categorical but its domain gives numeric bounds", column=col)
        data = data.with_column(col, domain=domain)
    out.dataset = data
    return out


def _room_for_missing(data: Dataset) -> tuple[Dataset, list[str]]:
    """Blanks are kept as the value "(missing)" by default; a taxonomy attached from a file that has no leaf for
    it gets one directly under its root, so the k-anonymity family keeps working, and the custodian is told.
    The tree so extended is marked as read from the data (origin "data"): whether the table has a blank decided
    its shape, so a differentially private release does not take its values as public (add "(missing)" to the
    hierarchy file, or state the column's domain, to make it public)."""
    from ppdp_gui.engine.bigdata.large_dataset import is_large
    from ppdp_gui.engine.data.schema import MISSING_LABEL
    from ppdp_gui.engine.taxonomy.from_spec import with_missing_leaf
    notes: list[str] = []
    if is_large(data) or data.source.na_policy.action != "category":
        return data, notes
    for spec in data.schema:
        tax = spec.taxonomy
        if tax is None or spec.kind != "categorical" or tax.has_value(MISSING_LABEL):
            continue
        if not (data.frame[spec.name] == MISSING_LABEL).any():
            continue
        grown = with_missing_leaf(tax)
        grown.origin = "data"
        data = data.with_column(spec.name, taxonomy=grown)
        notes.append(f"The taxonomy of {spec.name} has no place for missing values, which are kept as "
                     f"“{MISSING_LABEL}”: that value was added directly under its root. Add it to the hierarchy "
                     "file to make the tree public for a differentially private release.")
    return data, notes


def _mark_guesses(data: Dataset, guessed: dict) -> Dataset:
    """The recipe's record of what is still a guess (roles and kinds the window saved without confirmation) put
    back on the columns, besides what the reader itself guessed now."""
    from dataclasses import replace
    if not guessed:
        return data
    schema = tuple(replace(c, guessed=c.guessed | frozenset(guessed.get(c.name, ()))) for c in data.schema)
    return replace(data, schema=schema)


def _keep(data: Dataset) -> tuple[str, ...]:
    """Labels a recoding leaves alone: the missing-value category."""
    label = getattr(data.source.na_policy, "category_label", None)
    return (label,) if label else ()


def _recoded(data: Dataset, column: str, recode, out: Loaded) -> Dataset:
    """`data` with `column`'s values written as `recode(values)` gives them (None: unchanged), and a note."""
    from ppdp_gui.engine.bigdata.large_dataset import is_large
    if is_large(data):
        recoded = recode(column_values(data, column).astype(str))
        if recoded is not None and not recoded.equals(column_values(data, column).astype(str).astype(object)):
            raise DataError(f"column {column!r} would have to be written at the ICD category level, which a table "
                            "left on disk cannot be; load it in memory (--engine memory)", column=column)
        return data
    values = data.frame[column]
    recoded = recode(values)
    if recoded is None:
        return data
    if data.spec(column).kind != "categorical":
        raise DataError(f"column {column!r} is read as numbers; for ICD codes set its kind to categorical (Data "
                        f"step, or --kind {column}=categorical) before building its tree", column=column)
    present = values.notna()
    changed = int((recoded[present].astype(str) != values[present].astype(str)).sum())
    if not changed:
        return data
    frame = data.frame.copy()
    frame[column] = recoded
    out.notes.append(f"{column}: codes written as their 3-character category (250.83 → 250), the level of the "
                     "public ICD list its tree holds; the release shows categories, never full codes.")
    return data.with_frame(frame, data.schema)


def _known(data: Dataset, column: str, what: str) -> None:
    if column not in data.frame.columns:
        raise DataError(f"{what} is given for column {column!r}, which the table does not have "
                        f"(columns: {', '.join(map(str, data.frame.columns))})", column=column)


def column_values(data: Dataset, column: str):
    """A column's values for a taxonomy builder: the frame's column, or a large table's distinct values (every
    builder keeps only the distinct values, so the tree is the same either way)."""
    from ppdp_gui.engine.bigdata.large_dataset import distinct_typed, is_large
    if is_large(data):
        return distinct_typed(data, column)  # typed as in memory, so the leaves are spelled the same
    return data.frame[column]


__all__ = ["Loaded", "load", "PpdpError"]
