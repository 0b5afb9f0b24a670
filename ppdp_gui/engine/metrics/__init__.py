"""metrics for ppdp_gui (Qt-free)."""
