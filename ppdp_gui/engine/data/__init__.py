"""Tables: safe reading, column typing and roles, missing-value policy, atomic export.

The names below are imported on first use (PEP 562): importing one light module of the package (the schema, the
domains) must not pull in the reader's and writer's libraries, so that the window appears before them
(benchmarks/bench_start.py)."""

from typing import TYPE_CHECKING

from ppdp_gui.engine.lazy_names import lazy_getattr

if TYPE_CHECKING:  # seen by static analysis (type checkers, the bundler's import graph); not run
    from ppdp_gui.engine.data import coltypes, reader, roles, schema, writer  # noqa: F401

_WHERE = {
    "kind_rule_text": "coltypes",
    "DEFAULT_MAX_BYTES": "reader", "dataset_from_frame": "reader", "read_table": "reader",
    "guess_roles": "roles", "role_rule_text": "roles",
    "ColumnSpec": "schema", "Dataset": "schema", "NAPolicy": "schema", "Role": "schema", "SourceInfo": "schema",
    "export_table": "writer", "neutralise_formulas": "writer", "write_json_atomic": "writer",
    "write_text_atomic": "writer",
}
__all__ = list(_WHERE)


__getattr__ = lazy_getattr(__name__, _WHERE, globals())
