"""Issue 29, Deliver 2 in the window: the Run step sends the plan it showed to the worker; the file named for the
release is checked by the engine's output guard before anything is charged (as `ppdp run -o` is); the Data step
is not a green tick while roles and kinds still wait for "Confirm roles and kinds"; a project keeps the near-copy
confirmation (separate_dataset), so a reopened project makes the same release."""

from __future__ import annotations

from PySide6.QtCore import Qt

from ppdp_gui.engine.persistence.project import read_recipe, write_recipe
from ppdp_gui.gui.views.common import DONE, WARN

LAPLACE = "Laplace histogram"


def choose_counts(w) -> None:
    w.go_to(w.mechanism_view)
    w.mechanism_view.combo.setCurrentText(LAPLACE)
    w.mechanism_view.panel.editor("columns").findItems("sex", Qt.MatchExactly)[0].setCheckState(Qt.Checked)


def test_the_worker_gets_the_plan_the_window_showed(loaded_window, qtbot, monkeypatch):
    w = loaded_window
    choose_counts(w)
    w.go_to(w.run_view)
    qtbot.waitUntil(lambda: w.run_view.run_button.isEnabled(), timeout=10000)
    sent = []
    monkeypatch.setattr(w.run_view.runner, "start_process", lambda task, args, **kw: sent.append(args))
    qtbot.mouseClick(w.run_view.run_button, Qt.LeftButton)
    assert len(sent) == 1
    assert sent[0][0] is w.session.preview()  # the very plan shown, with its resolved parameters
    assert sent[0][0].params["epsilon"] == 1.0 and sent[0][0].params["columns"] == ("sex",)


def test_a_release_aimed_at_the_source_is_refused_before_anything_is_charged(loaded_window, qtbot, adult_sample,
                                                                             tmp_path):
    w = loaded_window
    choose_counts(w)
    w.go_to(w.export_view)
    assert w.export_view.path_edit.isEnabled()  # the file can be named before the run
    w.export_view.path_edit.clear()
    qtbot.keyClicks(w.export_view.path_edit, str(adult_sample))
    assert w.session.output_path == str(adult_sample)
    w.go_to(w.run_view)
    qtbot.waitUntil(lambda: w.run_view.run_button.isEnabled(), timeout=10000)
    qtbot.mouseClick(w.run_view.run_button, Qt.LeftButton)
    assert not w.run_view.running and w.session.releases == []
    assert "Not run:" in w.run_view.message.text() and "Export step" in w.run_view.message.text()
    assert w.session.ledger.entries() == []  # nothing charged
    assert w.run_view.state()[1] == "not run: choose another file in the Export step"
    # another name: the run goes ahead, and the Export step offers the file named
    w.go_to(w.export_view)
    target = str(tmp_path / "ward_release.csv")
    w.export_view.path_edit.clear()
    qtbot.keyClicks(w.export_view.path_edit, target)
    w.go_to(w.run_view)
    qtbot.mouseClick(w.run_view.run_button, Qt.LeftButton)
    qtbot.waitUntil(lambda: not w.run_view.running, timeout=60000)
    assert len(w.session.releases) == 1 and len(w.session.ledger.entries()) == 1
    assert w.export_view.path_edit.text() == target


def test_the_data_step_needs_attention_until_roles_are_confirmed(make_window, qtbot, adult_sample):
    w = make_window()
    w.open_path(str(adult_sample))
    qtbot.waitUntil(lambda: w.session.dataset is not None, timeout=30000)
    assert w.session.dataset.guessed_columns
    choose_counts(w)  # a differentially private mechanism
    kind, text = w.data_view.state()
    assert kind == WARN and "Confirm roles and kinds" in text
    w.data_view.confirm_button.click()
    assert w.data_view.state()[0] == DONE


def test_a_project_keeps_the_near_copy_confirmation(loaded_window, qtbot, tmp_path):
    w = loaded_window
    choose_counts(w)
    w.session.set_opt_ins(separate_dataset=True)
    path = write_recipe(w.session.recipe(), tmp_path / "ward.ppdp.json")
    assert read_recipe(path).separate_dataset is True
    w.session.set_opt_ins(separate_dataset=False)
    w.open_project(str(path))
    qtbot.waitUntil(lambda: w.session.mechanism_name == LAPLACE and w.session.separate_dataset, timeout=30000)
    assert w.session.preview().separate_dataset
