"""Fixtures for the main-window tests: a window with its own ledger and settings, the Adult sample's path."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _collect_in_the_gui_thread(qtbot):
    """After each window test, collect the test's garbage (windows, dialogs) here, in the GUI thread, so that a
    later collection in a worker thread never has Qt objects to destroy."""
    import gc
    yield
    qtbot.wait(1)
    gc.collect()


@pytest.fixture
def make_window(qtbot, tmp_path, monkeypatch):
    """Factory: a shown MainWindow whose ledger and QSettings live in tmp_path (closed by qtbot at the end)."""
    from PySide6.QtCore import QSettings

    from ppdp_gui.gui.main_window import MainWindow

    monkeypatch.setenv("PPDP_LEDGER", str(tmp_path / "ledger.sqlite"))

    def make(**kwargs):
        settings = QSettings(str(tmp_path / "settings.ini"), QSettings.IniFormat)
        window = MainWindow(settings=settings, **kwargs)
        qtbot.addWidget(window)
        window.resize(1200, 800)
        window.show()
        return window
    return make


@pytest.fixture
def loaded_window(make_window, qtbot, adult_sample):
    """A window with the Adult sample loaded (through the worker, as a user would), its roles and kinds
    confirmed with the Data step's "Confirm roles and kinds" (as a custodian does before a DP release)."""
    window = make_window()
    window.open_path(str(adult_sample))
    qtbot.waitUntil(lambda: window.session.dataset is not None, timeout=30000)
    window.data_view.confirm_button.click()
    return window
