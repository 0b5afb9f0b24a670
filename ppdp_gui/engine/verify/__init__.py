"""The statistical DP verifier (the trust suite's audit of what leaves the machine).

For each ε-DP mechanism it releases small neighbouring tables (`neighbours.py`, `scenarios.py`) thousands of
times with seeded noise, turns every released table and release note into features (`output.py`), chooses events
on half of the runs and bounds their privacy loss on the other half with Clopper–Pearson intervals and a
Bonferroni correction (`stats.py`), and compares the bound with the claimed ε (`audit.py`). It also checks that
a seed fixes the release and that the mechanism's source draws randomness only from engine/noise.
`ScaledNoise` (noise.py) plants a wrong noise scale from outside a mechanism, for the verifier's own tests.

`ppdp verify MECHANISM [--quick]` and the window's Tools → Self-check run `verify`.
"""

from ppdp_gui.engine.verify.audit import ALPHA, Check, ScenarioResult, Verdict, run_verification, verify
from ppdp_gui.engine.verify.noise import ScaledNoise, with_factor

__all__ = ["ALPHA", "Check", "ScenarioResult", "Verdict", "run_verification", "verify", "ScaledNoise",
           "with_factor"]
