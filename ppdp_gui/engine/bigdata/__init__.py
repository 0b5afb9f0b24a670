"""Tables larger than memory: DuckDB-backed sources and the SQL counting passes of DiffGen and global
recoding (see docs/big_tables.md)."""
