"""Fragmentation-based anonymisation of high-dimensional data (seed 002): FMRMR fragments, Mondrian per fragment,
non-reconstructability of joins on the class (naive, dependency graph, ρ-selectivity) and the l-diversity
extension."""

from ppdp_gui.engine.mechanisms.fragmentation.measures import fragment_tables
from ppdp_gui.engine.mechanisms.fragmentation.mechanism import Fragmentation

__all__ = ["Fragmentation", "fragment_tables"]
