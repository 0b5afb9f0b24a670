"""The worker process's wire (workers/child.py through ProcessJob): what the table loader yields (workers/
tasks.load_job; the window runs it in a thread) comes back from a worker process equal to the same load here, a
bad file's error keeps its file, line and column, and the child loads no Qt."""

from __future__ import annotations

import pandas as pd
from ppdp_gui.engine.errors import DataError
from ppdp_gui.engine.package_files import sample_table
from ppdp_gui.engine.persistence.project import Recipe
from ppdp_gui.engine.taxonomy import bundled_adult_taxonomies
from ppdp_gui.gui.workers import JobRunner
from ppdp_gui.gui.workers.tasks import Opened, load_job


def _recipe():
    taxes = bundled_adult_taxonomies()
    column = next(c for c in taxes if c in pd.read_csv(sample_table(), nrows=1).columns)
    return Recipe(source=str(sample_table()), taxonomies={column: taxes[column]}), column


def _run(qtbot, recipe, **kw):
    runner = JobRunner()
    done, errors = [], []
    job = runner.start_process(load_job, (recipe, False), on_done=done.append,
                               on_error=lambda exc, tb: errors.append(exc), **kw)
    qtbot.waitUntil(lambda: bool(done or errors), timeout=60000)
    assert runner.wait_all(10000)
    return job, done, errors


def test_load_in_the_worker_process_matches_the_thread_load(qtbot):
    recipe, column = _recipe()
    job, done, errors = _run(qtbot, recipe)
    assert not errors
    opened = done[0]
    here = list(load_job(_recipe()[0]))[-1]
    assert isinstance(opened, Opened) and job.qt_modules_in_child == []
    pd.testing.assert_frame_equal(opened.loaded.dataset.frame, here.loaded.dataset.frame)
    assert opened.distinct == here.distinct and opened.reasons == here.reasons
    assert opened.first_runnable == here.first_runnable and opened.not_covered == here.not_covered
    assert opened.loaded.notes == here.loaded.notes and opened.loaded.attached == here.loaded.attached
    assert opened.loaded.dataset.spec(column).taxonomy.to_paths() == recipe.taxonomies[column].to_paths()


def test_a_bad_file_fails_with_file_line_and_column(qtbot, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n3,4,5\n")
    _job, done, errors = _run(qtbot, Recipe(source=str(bad)))
    assert not done
    exc = errors[0]
    assert type(exc) is DataError
    assert (exc.path, exc.line, exc.column) == (str(bad), 3, 3) and "expected 2 fields" in exc.reason
    assert str(exc).startswith(f"{bad}, line 3, column 3: expected 2 fields")
