"""Long work off the GUI thread: engine generators run in a worker, the window only reacts to signals."""

from ppdp_gui.gui.workers.jobs import JobRunner, JobThread

__all__ = ["JobRunner", "JobThread"]
