"""Worker jobs: progress reaches the GUI thread, cancel closes the generator in its own thread, errors become
signals (never an exception in the event loop)."""

from __future__ import annotations

import threading
import time

import pytest

from ppdp_gui.engine.errors import ParameterError
from ppdp_gui.engine.mechanisms.base import Progress
from ppdp_gui.gui.workers import JobRunner, JobThread


def test_progress_then_result(qtbot):
    seen = []

    def gen():
        for i in range(5):
            time.sleep(0.06)  # slower than the throttle, so every step is shown
            yield Progress(i / 4, f"step {i}")
        yield "result"

    job = JobThread(gen)
    job.progress.connect(lambda f, m: seen.append((f, m)))
    with qtbot.waitSignal(job.succeeded, timeout=10000) as blocker:
        job.start()
    assert blocker.args == ["result"]
    job.wait()
    assert seen[-1] == (1.0, "step 4") and len(seen) == 5


def test_generator_return_value_is_the_result(qtbot):
    def gen():
        yield Progress(0.5)
        return 42

    job = JobThread(gen)
    with qtbot.waitSignal(job.succeeded, timeout=10000) as blocker:
        job.start()
    job.wait()
    assert blocker.args == [42]


def test_progress_is_throttled_but_last_is_kept(qtbot):
    seen = []

    def gen():
        for i in range(20000):
            yield Progress(i / 19999, "")
        yield "done"

    job = JobThread(gen)
    job.progress.connect(lambda f, m: seen.append(f))
    with qtbot.waitSignal(job.succeeded, timeout=20000):
        job.start()
    job.wait()
    qtbot.wait(20)
    assert 1 <= len(seen) < 2000 and seen[-1] == 1.0


def test_cancel_closes_the_generator_in_the_worker(qtbot):
    state = {"closed_in": None, "steps": 0}
    started = threading.Event()

    def gen():
        try:
            while True:
                state["steps"] += 1
                started.set()
                time.sleep(0.01)
                yield Progress(0.1, "working")
        finally:
            state["closed_in"] = threading.current_thread()

    runner = JobRunner()
    done = []
    job = runner.start(gen, on_done=done.append, on_cancelled=lambda: done.append("cancelled"))
    assert started.wait(5)
    job.cancel()
    qtbot.waitUntil(lambda: done == ["cancelled"], timeout=5000)
    assert runner.wait_all(5000)
    assert state["closed_in"] is not None and state["closed_in"] is not threading.main_thread()
    qtbot.waitUntil(lambda: not runner.busy, timeout=5000)


def test_errors_arrive_as_signals(qtbot):
    def gen():
        yield Progress(0.2, "checking")
        raise ParameterError("k: 1 is below the minimum 2")

    errors = []
    runner = JobRunner()
    runner.start(gen, on_done=lambda r: pytest.fail("no result expected"),
                 on_error=lambda exc, tb: errors.append((exc, tb)))
    qtbot.waitUntil(lambda: bool(errors), timeout=5000)
    exc, tb = errors[0]
    assert isinstance(exc, ParameterError) and "below the minimum" in str(exc) and "Traceback" in tb
    assert runner.wait_all(5000)
