"""pipeline for ppdp_gui (Qt-free)."""
