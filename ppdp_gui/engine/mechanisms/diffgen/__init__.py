"""DiffGen (Mohammed, Chen, Fung & Yu, KDD 2011): ε-DP generalisation of a table for classification."""

from ppdp_gui.engine.mechanisms.diffgen.mechanism import DiffGen, expand_counts, predictor_columns

__all__ = ["DiffGen", "expand_counts", "predictor_columns"]
