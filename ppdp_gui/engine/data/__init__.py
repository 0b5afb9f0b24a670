"""Tables: safe reading, column typing and roles, missing-value policy, atomic export."""

from ppdp_gui.engine.data.schema import ColumnSpec, Dataset, NAPolicy, Role, SourceInfo

__all__ = ["ColumnSpec", "Dataset", "NAPolicy", "Role", "SourceInfo"]
