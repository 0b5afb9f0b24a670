"""No merge-conflict markers in what the repository ships: one reached docs/architecture.md unnoticed once."""

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MARKER = re.compile(r"^(<{7} |>{7} |={7}$)", re.MULTILINE)


def test_no_tracked_text_file_holds_a_conflict_marker():
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    found = []
    for name in files:
        if not name.endswith((".py", ".md", ".toml", ".cfg", ".sh", ".json", ".txt", ".yml", ".yaml")):
            continue
        path = ROOT / name
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if MARKER.search(text):
            found.append(name)
    assert not found, found
