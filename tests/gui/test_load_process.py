"""A table can load in the worker process (workers/tasks.load_job through ProcessJob; the window loads in a thread,
see load_job) with the same outcome as in this process: the same frame and Opened fields, the recipe's own taxonomy objects back (not copies), the ledger
opened on this side, a bad file's error naming its file, line and column, and no Qt in the child."""

from __future__ import annotations

import multiprocessing

import pandas as pd
import pytest

from ppdp_gui.engine.errors import DataError
from ppdp_gui.engine.package_files import sample_table
from ppdp_gui.engine.persistence.project import Recipe
from ppdp_gui.engine.taxonomy import bundled_adult_taxonomies
from ppdp_gui.gui.workers import JobRunner, child
from ppdp_gui.gui.workers.tasks import Opened, load_job, with_default_ledger


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


def test_load_in_the_worker_process_matches_the_thread_load(qtbot, tmp_path, monkeypatch):
    monkeypatch.setenv("PPDP_LEDGER", str(tmp_path / "ledger.sqlite"))
    recipe, column = _recipe()
    tax = recipe.taxonomies[column]
    job, done, errors = _run(qtbot, recipe, shared=(tax,), then=with_default_ledger)
    assert not errors
    opened = done[0]
    here = list(load_job(_recipe()[0]))[-1]
    assert isinstance(opened, Opened) and job.qt_modules_in_child == []
    pd.testing.assert_frame_equal(opened.loaded.dataset.frame, here.loaded.dataset.frame)
    assert opened.distinct == here.distinct and opened.reasons == here.reasons
    assert opened.first_runnable == here.first_runnable and opened.not_covered == here.not_covered
    assert opened.loaded.notes == here.loaded.notes and opened.loaded.attached == here.loaded.attached
    assert opened.loaded.dataset.spec(column).taxonomy is tax  # the window's own object, not a copy
    assert opened.ledger is not None and str(opened.ledger.path) == str(tmp_path / "ledger.sqlite")


def test_without_shared_the_taxonomy_comes_back_as_a_copy(qtbot):
    recipe, column = _recipe()
    _job, done, _errors = _run(qtbot, recipe)
    back = done[0].loaded.dataset.spec(column).taxonomy
    assert back is not recipe.taxonomies[column] and done[0].ledger is None


def test_a_bad_file_fails_with_file_line_and_column(qtbot, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n3,4,5\n")
    _job, done, errors = _run(qtbot, Recipe(source=str(bad)))
    assert not done
    exc = errors[0]
    assert type(exc) is DataError
    assert (exc.path, exc.line, exc.column) == (str(bad), 3, 3) and "expected 2 fields" in exc.reason
    assert str(exc).startswith(f"{bad}, line 3, column 3: expected 2 fields")


def test_shared_objects_go_back_as_references():
    reader, writer = multiprocessing.Pipe(duplex=False)
    mine, other = {"tree": [1, 2]}, {"tree": [3]}
    child.send(writer, {"x": mine, "y": other, "frame": pd.DataFrame({"a": [1, 2]})}, {id(mine): 0})
    back = child.receive(reader, (mine,))
    assert back["x"] is mine and back["y"] == other and back["y"] is not other
    assert back["frame"]["a"].tolist() == [1, 2]
    with pytest.raises(IndexError):  # a reference the receiver does not hold cannot be resolved
        child.send(writer, [mine], {id(mine): 0})
        child.receive(reader, ())
