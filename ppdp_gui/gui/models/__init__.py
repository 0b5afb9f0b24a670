"""Qt item models over engine objects; they read cells on demand and never copy a table into Qt items."""

from ppdp_gui.gui.models.frame_model import DataFrameModel, fit_columns

__all__ = ["DataFrameModel", "fit_columns"]
