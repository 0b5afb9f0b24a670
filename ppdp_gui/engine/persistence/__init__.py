"""persistence for ppdp_gui (Qt-free)."""
