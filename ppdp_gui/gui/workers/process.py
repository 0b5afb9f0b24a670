"""Run an engine job in a separate worker process; a small reader thread turns its messages into Qt signals.

The GUI thread never pickles, unpickles or waits: the reader thread starts the process (the first start of the
fork server takes a second), sends nothing but the job's arguments, and only emits `progress`, `succeeded`,
`failed`, `cancelled` and `finished` — the same signals as `JobThread`, so views treat both alike.

The child runs `workers.child.child_main`, which imports the engine only (never Qt). Cancelling terminates the
child at once; anything it had reserved in the budget ledger stays spent (the ledger never refunds). Errors come
back as (type name, message) and are rebuilt as the same engine error class for the dialog.

Start method: "forkserver" where available (a warm server that has imported numpy, pandas and the engine forks
each worker in milliseconds), else "spawn". Both start from a clean interpreter, never a fork of the GUI.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import tempfile
import threading
import traceback
from typing import Any, Callable

from PySide6.QtCore import QObject, Signal

from ppdp_gui.engine.errors import MechanismError
from ppdp_gui.gui.workers import child

PRELOAD = ["ppdp_gui.gui.workers.child", "ppdp_gui.gui.workers.tasks", "ppdp_gui.engine.pipeline.release",
           "ppdp_gui.engine.pipeline.sweep"]
_CONTEXT = None
_CONTEXT_LOCK = threading.Lock()


def context():
    """The multiprocessing context of every worker process (chosen once)."""
    global _CONTEXT
    with _CONTEXT_LOCK:
        if _CONTEXT is None:
            if "forkserver" in multiprocessing.get_all_start_methods():
                _CONTEXT = multiprocessing.get_context("forkserver")
                _CONTEXT.set_forkserver_preload(PRELOAD)
            else:  # pragma: no cover - Windows
                _CONTEXT = multiprocessing.get_context("spawn")
        return _CONTEXT


def warm_up() -> None:
    """Start the fork server in the background so that the first run starts quickly: the window calls it once it
    is on screen (MainWindow.after_start), so the first release does not wait ~0.5 s for it."""
    ctx = context()
    if ctx.get_start_method() == "forkserver":
        def work() -> None:
            try:  # a no-op worker: returns once the server has imported PRELOAD and can fork
                proc = ctx.Process(target=os.getpid, name="ppdp-warm-up", daemon=True)
                proc.start()
                proc.join(60)
                proc.close()
            except Exception:  # noqa: BLE001 - the first job then starts the server itself and reports any error
                pass
        threading.Thread(target=work, name="ppdp-forkserver-warm-up", daemon=True).start()


class ProcessJob(QObject):
    """One job: `func(*args)` (a module-level generator function, picklable by reference) in a worker process.

    Signals are emitted from the reader thread; this object lives in the GUI thread, so Qt queues them and every
    slot runs in the GUI thread."""

    progress = Signal(float, str)
    succeeded = Signal(object)
    failed = Signal(object, str)
    cancelled = Signal()
    finished = Signal()

    def __init__(self, func: Callable[..., Any], args: tuple = (), parent=None):
        super().__init__(parent)
        self._func, self._args = func, tuple(args)
        self._cancel = threading.Event()
        self._thread = threading.Thread(target=self._read, name="ppdp-job-reader", daemon=True)
        self.process = None
        self.pid: int | None = None
        self.qt_modules_in_child: list[str] | None = None  # the child reports which Qt modules it loaded

    def start(self) -> None:
        self._thread.start()

    def cancel(self) -> None:
        self._cancel.set()

    def wait(self, msecs: int = 30000) -> bool:
        """Block until the reader thread (and so the process) has ended; True if it has."""
        if self._thread.ident is None:
            return True
        self._thread.join(msecs / 1000)
        return not self._thread.is_alive()

    # -- reader thread ------------------------------------------------------------------------------------------
    def _read(self) -> None:
        folder = tempfile.mkdtemp(prefix="ppdp_job_")  # private (0700): big result tables are written here
        reader = proc = None
        try:
            ctx = context()
            reader, writer = ctx.Pipe(duplex=False)
            candidate = ctx.Process(target=child.child_main, args=(writer, self._func, self._args, folder),
                                    name="ppdp-worker", daemon=True)
            candidate.start()
            proc = candidate
            writer.close()
            self.process = proc
            self._loop(reader, proc)
        except BaseException as exc:  # noqa: BLE001 - a failure to start is shown like any other
            self.failed.emit(exc, traceback.format_exc())
        finally:
            if reader is not None:
                reader.close()
            if proc is not None:
                self._stop(proc)
                proc.close()
            shutil.rmtree(folder, ignore_errors=True)
            self.finished.emit()

    def _loop(self, reader, proc) -> None:
        while True:
            if self._cancel.is_set():
                self._stop(proc)
                self.cancelled.emit()
                return
            if not reader.poll(0.05):
                if not proc.is_alive() and not reader.poll(0):
                    break
                continue
            try:
                message = child.receive(reader)
            except (EOFError, OSError):
                break  # the child went away without a last word
            kind = message[0]
            if kind == "started":
                self.pid, self.qt_modules_in_child = message[1], list(message[2])
            elif kind == "progress":
                if not self._cancel.is_set():
                    self.progress.emit(message[1], message[2])
            elif kind == "result":
                result = child.load_tables(message[1])
                if self._cancel.is_set():
                    self.cancelled.emit()
                else:
                    self.succeeded.emit(result)
                return
            elif kind == "error":
                if self._cancel.is_set():
                    self.cancelled.emit()
                else:
                    self.failed.emit(child.rebuild_error(message[1], message[2], message[4]), message[3])
                return
        proc.join(5)
        if self._cancel.is_set():
            self.cancelled.emit()
            return
        code = proc.exitcode
        hint = " It may have run out of memory." if code is not None and code < 0 else ""
        self.failed.emit(MechanismError(f"The worker process stopped unexpectedly (exit code {code}).{hint} "
                                        "Nothing was released."), "")

    @staticmethod
    def _stop(proc) -> None:
        if proc.is_alive():
            proc.terminate()
            proc.join(5)
            if proc.is_alive():  # pragma: no cover - SIGTERM ignored
                proc.kill()
                proc.join(5)
        proc.join(1)
