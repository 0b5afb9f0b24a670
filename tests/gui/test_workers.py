"""Worker jobs: progress reaches the GUI thread, cancel closes the generator in its own thread, errors become
signals (never an exception in the event loop)."""

from __future__ import annotations

import threading
import time

import pytest

from ppdp_gui.engine.errors import ParameterError
from ppdp_gui.engine.mechanisms.base import Progress
from ppdp_gui.gui.workers import JobRunner, JobThread
from process_jobs import big_table_job, counting_job


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


# -- worker processes (job functions live in the Qt-free module process_jobs) ----------------------------------------------------------------------------------------------
def test_process_job_streams_progress_and_never_loads_qt(qtbot):
    runner = JobRunner()
    seen, done = [], []
    job = runner.start_process(counting_job, (30,), on_done=done.append,
                               on_progress=lambda f, m: seen.append(f))
    qtbot.waitUntil(lambda: bool(done), timeout=60000)
    assert runner.wait_all(10000)
    assert done[0] == {"n": 30, "qt_loaded": []} and job.qt_modules_in_child == []
    assert seen and seen[-1] == 1.0 and job.pid is not None


def test_process_job_error_keeps_its_class(qtbot):
    runner = JobRunner()
    errors = []
    runner.start_process(counting_job, (50, 3), on_done=lambda r: pytest.fail("no result expected"),
                         on_error=lambda exc, tb: errors.append((exc, tb)))
    qtbot.waitUntil(lambda: bool(errors), timeout=60000)
    exc, tb = errors[0]
    assert type(exc) is ParameterError and str(exc) == "k: 1 is below the minimum 2" and "Traceback" in tb
    assert runner.wait_all(10000)


def test_process_job_cancel_terminates_the_child(qtbot):
    import os
    runner = JobRunner()
    events = []
    job = runner.start_process(counting_job, (100_000,), on_done=events.append,
                               on_progress=lambda f, m: events.append("p"),
                               on_cancelled=lambda: events.append("cancelled"))
    qtbot.waitUntil(lambda: "p" in events, timeout=60000)
    pid = job.pid
    job.cancel()
    qtbot.waitUntil(lambda: events[-1:] == ["cancelled"], timeout=10000)
    assert runner.wait_all(10000)
    qtbot.waitUntil(lambda: not runner.busy, timeout=5000)
    with pytest.raises(ProcessLookupError):  # the child is gone (terminated and reaped)
        os.kill(pid, 0)


def test_process_job_big_table_comes_back_through_a_file(qtbot, monkeypatch):
    from ppdp_gui.gui.workers import child
    monkeypatch.setattr(child, "FILE_ROWS", 10)  # only the parent reads this: the child's default is larger
    runner = JobRunner()
    done = []
    runner.start_process(big_table_job, (1000,), on_done=done.append)
    qtbot.waitUntil(lambda: bool(done), timeout=60000)
    release = done[0]
    assert len(release.table) == 1000 and release.table["a"].sum() == 999 * 1000 // 2
    assert release.apply_to is None
    assert runner.wait_all(10000)


def test_packed_tables_round_trip_through_parquet(tmp_path, monkeypatch):
    import numpy as np
    import pandas as pd

    from ppdp_gui.engine.mechanisms.base import PrivacyCost, Release
    from ppdp_gui.gui.workers import child
    monkeypatch.setattr(child, "FILE_ROWS", 5)
    frame = pd.DataFrame({"age": np.arange(10), "sex": pd.array(["f", "m"] * 5, dtype="str")})
    frame["band"] = pd.Categorical(["[0,5)"] * 5 + ["[5,10)"] * 5, categories=["[5,10)", "[0,5)"], ordered=True)
    packed = child.pack_result(Release("t", frame, PrivacyCost(), {}, extra_tables={"x": frame.head(3)}), str(tmp_path))
    assert isinstance(packed.table, child.TableFile) and isinstance(packed.extra_tables["x"], pd.DataFrame)
    back = child.load_tables(packed)
    pd.testing.assert_frame_equal(back.table, frame)
