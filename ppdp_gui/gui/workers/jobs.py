"""Run an engine generator (yielding `Progress`, then a result) in a QThread, with throttled progress and cancel.

The generator is created and driven entirely inside the worker thread; the GUI thread only receives queued
signals. Cancelling sets a flag that is honoured at the next `yield`: the worker then closes the generator there
(so its `finally` blocks run in the thread that runs it) and emits `cancelled`. Any exception is caught and sent
as `failed(exc, traceback_text)`: a failing run can never take the window down.
"""

from __future__ import annotations

import contextlib
import gc
import threading
import time
import traceback
from typing import Any, Callable, Iterator

import shiboken6
from PySide6.QtCore import QObject, QThread, Signal

from ppdp_gui.engine.mechanisms.base import Progress


_GC_LOCK = threading.Lock()
_GC_PAUSES = 0


@contextlib.contextmanager
def gc_paused():
    """Pause Python's cyclic garbage collector while a job runs in a thread.

    A collection runs in whichever thread happens to allocate; if that is a worker thread and the garbage holds
    wrappers of Qt objects (a closed dialog, a replaced view), Qt would destroy them off the GUI thread and can
    crash. Reference counting still frees almost everything meanwhile; the window collects cycles itself, in the
    GUI thread, when a job finishes (JobRunner._finished)."""
    global _GC_PAUSES
    with _GC_LOCK:
        _GC_PAUSES += 1
        gc.disable()
    try:
        yield
    finally:
        with _GC_LOCK:
            _GC_PAUSES -= 1
            if _GC_PAUSES == 0:
                gc.enable()


class JobThread(QThread):
    """One job. `make_gen()` is called in the worker thread and must return an iterator of Progress/results;
    the last non-Progress item (or the generator's return value) is the result."""

    progress = Signal(float, str)
    succeeded = Signal(object)
    failed = Signal(object, str)
    cancelled = Signal()

    def __init__(self, make_gen: Callable[[], Iterator[Any]], *, min_interval: float = 0.05, parent=None):
        super().__init__(parent)
        self._make_gen = make_gen
        self._cancel = threading.Event()
        self._min_interval = min_interval

    def cancel(self) -> None:
        self._cancel.set()

    def run(self) -> None:  # runs in the worker thread
        with gc_paused():
            self._drive()

    def _drive(self) -> None:
        gen = None
        try:
            gen = self._make_gen()
            result, last_emit, pending = None, 0.0, None
            while True:
                if self._cancel.is_set():
                    if hasattr(gen, "close"):
                        gen.close()
                    self.cancelled.emit()
                    return
                try:
                    item = next(gen)
                except StopIteration as stop:
                    if stop.value is not None:
                        result = stop.value
                    break
                if isinstance(item, Progress):
                    now = time.monotonic()
                    if now - last_emit >= self._min_interval:
                        self.progress.emit(float(item.fraction), item.message)
                        last_emit, pending = now, None
                    else:
                        pending = item  # shown later unless a newer one supersedes it
                else:
                    result = item
            if pending is not None:
                self.progress.emit(float(pending.fraction), pending.message)
            if self._cancel.is_set():
                self.cancelled.emit()
                return
            self.succeeded.emit(result)
        except BaseException as exc:  # noqa: BLE001 - every failure becomes a message, never a crash
            self.failed.emit(exc, traceback.format_exc())


class JobRunner(QObject):
    """Starts jobs, keeps them alive until they finish and lets the owner cancel or wait for them.

    `start` runs a generator in a thread (reading and writing files: short GIL holds, shared objects);
    `start_process` runs a module-level generator function in a worker process (table loads, releases, sweeps,
    exports: engine code that would hold the GIL and stall the window)."""

    busy_changed = Signal(bool)

    def __init__(self, parent=None):
        super().__init__(parent)
        self._jobs: set = set()

    def start(self, make_gen: Callable[[], Iterator[Any]], *, on_done: Callable[[Any], None],
              on_error: Callable[[BaseException, str], None] | None = None,
              on_progress: Callable[[float, str], None] | None = None,
              on_cancelled: Callable[[], None] | None = None) -> JobThread:
        return self._launch(JobThread(make_gen), on_done, on_error, on_progress, on_cancelled)

    def start_process(self, func: Callable[..., Iterator[Any]], args: tuple = (), *,
                      on_done: Callable[[Any], None], on_error: Callable[[BaseException, str], None] | None = None,
                      on_progress: Callable[[float, str], None] | None = None,
                      on_cancelled: Callable[[], None] | None = None):
        """`func(*args)` in a worker process; func and args must be picklable (func by module and name)."""
        from ppdp_gui.gui.workers.process import ProcessJob
        return self._launch(ProcessJob(func, args), on_done, on_error, on_progress,
                            on_cancelled)

    def _launch(self, job, on_done, on_error, on_progress, on_cancelled):
        job.succeeded.connect(self._guarded(on_done))
        if on_error is not None:
            job.failed.connect(self._guarded(on_error))
        if on_progress is not None:
            job.progress.connect(self._guarded(on_progress))
        if on_cancelled is not None:
            job.cancelled.connect(self._guarded(on_cancelled))
        job.finished.connect(self._guarded(lambda j=job: self._finished(j)))
        self._jobs.add(job)
        job.start()
        self.busy_changed.emit(True)
        return job

    def _guarded(self, slot):
        """`slot`, unless this runner (and so the window whose views the slots belong to) is deleted by then: a
        job that ends after its window was closed has nobody left to tell."""
        def call(*args):
            if shiboken6.isValid(self):
                slot(*args)
        return call

    def _finished(self, job) -> None:
        self._jobs.discard(job)
        job.deleteLater()
        if not _GC_PAUSES:
            gc.collect()  # cycles freed here, in the GUI thread (see gc_paused)
        self.busy_changed.emit(bool(self._jobs))

    @property
    def busy(self) -> bool:
        return bool(self._jobs)

    def cancel_all(self) -> None:
        for job in list(self._jobs):
            job.cancel()

    def wait_all(self, msecs: int = 30000) -> bool:
        """Block until every job has stopped (used when the window closes); True if all stopped."""
        ok = True
        for job in list(self._jobs):
            ok = job.wait(msecs) and ok
        return ok
