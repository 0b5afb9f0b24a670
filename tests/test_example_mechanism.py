"""The example of docs/adding_a_mechanism.md (tests/example_mechanism.py) really is a working ε-DP mechanism: it
runs through the publish path and the verifier's statistical audit passes it on the audit tables its registry
line names — and fails it when its noise is planted too small. The rest of the checklist is the conformance kit
(tests/test_conformance.py), which runs the example too."""

from __future__ import annotations

import sys
from fractions import Fraction
from pathlib import Path

import pytest

from ppdp_gui.engine.mechanisms import registry
from ppdp_gui.engine.verify import audit

sys.path.insert(0, str(Path(__file__).resolve().parent))
from example_mechanism import EXAMPLE, registered  # noqa: E402


@pytest.fixture
def example(monkeypatch):
    """The example registered: the verifier reads its audit tables from the registry line alone."""
    with registered(monkeypatch):
        yield EXAMPLE


def test_the_verifier_passes_the_example(example):
    verdict = audit.run_verification(example, size="quick", seed=0)
    assert verdict.passed, verdict.lines()


def test_the_verifier_fails_the_example_with_too_little_noise(example):
    verdict = audit.run_verification(example, size="quick", seed=0, noise_factor=Fraction(1, 4))
    assert not verdict.passed
