"""privacy for ppdp_gui (Qt-free)."""
