"""Tables: safe reading, column typing and roles, missing-value policy, atomic export."""

from ppdp_gui.engine.data.coltypes import kind_rule_text
from ppdp_gui.engine.data.reader import DEFAULT_MAX_BYTES, dataset_from_frame, read_table
from ppdp_gui.engine.data.roles import guess_roles, role_rule_text
from ppdp_gui.engine.data.schema import ColumnSpec, Dataset, NAPolicy, Role, SourceInfo
from ppdp_gui.engine.data.writer import export_table, neutralise_formulas, write_json_atomic, write_text_atomic

__all__ = [
    "ColumnSpec", "Dataset", "NAPolicy", "Role", "SourceInfo",
    "DEFAULT_MAX_BYTES", "dataset_from_frame", "read_table", "guess_roles", "role_rule_text", "kind_rule_text",
    "export_table", "neutralise_formulas", "write_json_atomic", "write_text_atomic",
]
