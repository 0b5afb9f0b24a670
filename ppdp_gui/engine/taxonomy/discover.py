"""Find the ARX hierarchy files that belong to a table, so opening the table can attach them without asking.

ARX's own convention: beside ``<stem>.csv`` lie ``<stem>_hierarchy_<column>.csv`` (or ``.csv.gz``), one per
attribute (e.g. ``adult.csv`` + ``adult_hierarchy_age.csv``). The bundled Adult sample
(resources/samples/adult_sample.csv) uses the bundled ARX Adult hierarchies (taxonomies/adult).
Only paths are returned: reading them (engine.taxonomy.arx_io.read_arx_hierarchy) and checking their coverage stay
with the caller, who reports problems instead of failing the load.
"""

from __future__ import annotations

from pathlib import Path

from ppdp_gui.engine.errors import PpdpError
from ppdp_gui.engine.package_files import samples_folder
from ppdp_gui.engine.taxonomy.bundled import taxonomies_dir

_TABLE_SUFFIXES = {".csv", ".tsv", ".txt", ".xlsx", ".xlsm", ".parquet", ".pq"}
_HIERARCHY_SUFFIXES = (".csv", ".csv.gz")


def samples_dir() -> Path:
    """The bundled sample tables (resources/samples, found through importlib.resources)."""
    return samples_folder()


def table_stem(path: Path) -> str:
    """'adult.csv.gz' -> 'adult', 'test2.csv' -> 'test2' (the name ARX puts before '_hierarchy_')."""
    name = path.name
    if name.lower().endswith(".gz"):
        name = name[:-3]
    stem, dot, suffix = name.rpartition(".")
    return stem if dot and "." + suffix.lower() in _TABLE_SUFFIXES else name


def _bundled_prefix(path: Path) -> Path | None:
    """Folder/stem of the hierarchies shipped for a bundled sample table, if `path` is one."""
    try:
        if path.resolve().parent != samples_dir().resolve():
            return None
    except OSError:
        return None
    if table_stem(path) == "adult_sample":
        return taxonomies_dir() / "adult" / "adult"
    return None


def find_hierarchies(data_path, columns) -> dict[str, Path]:
    """column -> hierarchy file for each of `columns` that has one by ARX's naming convention (exact column
    name first, then ignoring case). Missing folders or files simply give fewer entries."""
    data_path = Path(data_path)
    prefixes = [data_path.parent / table_stem(data_path)]
    bundled = _bundled_prefix(data_path)
    if bundled is not None:
        prefixes.append(bundled)
    found: dict[str, Path] = {}
    for prefix in prefixes:
        try:
            files = [p for p in prefix.parent.iterdir() if p.is_file()]
        except OSError:
            continue
        start = prefix.name + "_hierarchy_"
        by_column: dict[str, Path] = {}
        for f in sorted(files, key=lambda f: f.name.lower().endswith(".gz")):  # plain .csv wins over .csv.gz
            name, lower = f.name, f.name.lower()
            if not name.startswith(start):
                continue
            for suffix in _HIERARCHY_SUFFIXES[::-1]:
                if lower.endswith(suffix):
                    by_column.setdefault(name[len(start):len(name) - len(suffix)], f)
                    break
        lowered = {k.lower(): v for k, v in by_column.items()}
        for column in columns:
            if column in found:
                continue
            match = by_column.get(column) or lowered.get(str(column).lower())
            if match is not None:
                found[column] = match
    return found


def attach_hierarchies(dataset, data_path, columns=None):
    """`dataset` with the hierarchies found for `columns` (default: its quasi-identifiers) attached.

    Returns (dataset, {column: (file path, taxonomy)}, notes). A file that cannot be read is a note, not a
    failed load; coverage gaps are left to the caller to show like any other."""
    from ppdp_gui.engine.taxonomy.arx_io import read_arx_hierarchy
    columns = dataset.quasi_identifiers if columns is None else list(columns)
    attached, notes = {}, []
    for column, file in find_hierarchies(data_path, columns).items():
        try:
            tax = read_arx_hierarchy(file, column)
            dataset = dataset.with_column(column, taxonomy=tax)
        except PpdpError as exc:
            notes.append(f"{Path(file).name} was not attached to {column}: {exc}")
            continue
        attached[column] = (str(file), tax)
    return dataset, attached, notes
