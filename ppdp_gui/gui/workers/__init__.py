"""Long work off the GUI thread: engine generators run in a worker process (releases, sweeps) or thread (file
reading, export); the window only reacts to signals.

Qt classes are imported lazily so that the worker process, which imports `workers.child` and `workers.tasks`,
never loads Qt.
"""

__all__ = ["JobRunner", "JobThread", "ProcessJob"]


def __getattr__(name: str):
    if name in ("JobRunner", "JobThread"):
        from ppdp_gui.gui.workers import jobs
        return getattr(jobs, name)
    if name == "ProcessJob":
        from ppdp_gui.gui.workers.process import ProcessJob
        return ProcessJob
    raise AttributeError(name)
