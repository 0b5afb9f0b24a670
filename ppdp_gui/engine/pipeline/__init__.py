"""Running mechanisms: one charged release (`run_release`) or an uncharged simulation sweep (`run_sweep`)."""

from ppdp_gui.engine.pipeline.release import run_release
from ppdp_gui.engine.pipeline.sweep import SweepResult, run_sweep

__all__ = ["run_release", "run_sweep", "SweepResult"]
