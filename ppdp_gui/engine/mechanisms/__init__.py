"""Mechanisms (one module or package each) behind one protocol, and the registry that names them."""

from ppdp_gui.engine.mechanisms.base import (Mechanism, ParamSpec, PrivacyCost, Problem, Progress, Release,
                                             run_to_release)

__all__ = ["Mechanism", "ParamSpec", "PrivacyCost", "Problem", "Progress", "Release", "run_to_release"]
