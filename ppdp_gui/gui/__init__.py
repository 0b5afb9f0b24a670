"""PySide6 widgets: thin; everything they do goes through ppdp_gui.engine."""
