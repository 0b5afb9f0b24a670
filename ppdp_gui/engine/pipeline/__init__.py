"""The one publish path (load → plan → run → export) and the uncharged simulation sweep.

The window and the `ppdp` command call only these, so they make the same release of the same recipe.
"""

from ppdp_gui.engine.pipeline.export import default_note_path, export
from ppdp_gui.engine.pipeline.load import load
from ppdp_gui.engine.pipeline.plan import Plan, plan, resolve_mechanism
from ppdp_gui.engine.pipeline.published import Published, custodian_record, release_note
from ppdp_gui.engine.pipeline.release import run_release
from ppdp_gui.engine.pipeline.sweep import SweepResult, run_sweep

__all__ = ["Plan", "Published", "SweepResult", "custodian_record", "default_note_path", "export", "load", "plan",
           "release_note", "resolve_mechanism", "run_release", "run_sweep"]
