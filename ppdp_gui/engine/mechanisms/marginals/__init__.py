"""Marginal synthesizer: an MST-style ε-DP synthetic table from noisy low-order marginals (see mechanism.py)."""

from ppdp_gui.engine.mechanisms.marginals.mechanism import MarginalSynthesizer

__all__ = ["MarginalSynthesizer"]
