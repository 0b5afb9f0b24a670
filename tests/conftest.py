"""Shared fixtures: paths to ../shared/data and the Qt platform (set before any QApplication exists)."""

import os
from pathlib import Path

import pytest

from ppdp_gui.engine.package_files import sample_table

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


@pytest.fixture(autouse=True)
def _private_ledger(tmp_path_factory, monkeypatch):
    """Tests never write to the user's real budget ledger (~/.local/share/ppdp_gui)."""
    monkeypatch.setenv("PPDP_LEDGER", str(tmp_path_factory.mktemp("ledger") / "ledger.sqlite"))

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.fail(f"../shared/data not found at {SHARED_DATA}: the tests read the real datasets from there")
    return SHARED_DATA


@pytest.fixture
def adult_sample() -> Path:
    path = sample_table()
    if not path.is_file():
        pytest.fail(f"the bundled Adult sample is missing: {path}")
    return path
