"""KRIMP: itemset encoding, candidate mining, MDL compression matched to the original C++ release, and the
data generator of seed 004 as the mechanism "KRIMP synthetic"."""

from ppdp_gui.engine.mechanisms.krimp.mechanism import GUARANTEE, KrimpSynthetic

__all__ = ["GUARANTEE", "KrimpSynthetic"]
