"""The statistical DP verifier: audits what leaves the machine (released tables + release note) on neighbouring
tables. `ScaledNoise` (noise.py) plants a wrong noise scale from outside a mechanism."""

from ppdp_gui.engine.verify.noise import ScaledNoise, with_factor

__all__ = ["ScaledNoise", "with_factor"]
