"""Each planted bug (tests/engine/verify_mutants.py) must make the verifier report FAIL: the share caught is 100 %.

Each test runs only the audit tables meant to catch its bug (quick size), to keep the suite short;
`benchmarks/audit_dp.py` runs every mutant against every audit table and prints the share caught. The same audit
tables pass on the shipped mechanisms (test_verify.py), so a FAIL here is the bug's doing.
"""

import pytest

from ppdp_gui.engine.verify import run_verification
from tests.engine.verify_mutants import MUTANTS

KINDS = {"noise scale halved", "budget spent twice", "InfoGain sensitivity ln K",
         "a count copied un-noised into the note", "a domain taken from the data", "numpy's unseeded global RNG"}


def test_every_kind_of_bug_is_planted():
    assert {m.bug for m in MUTANTS} == KINDS
    assert {m.mechanism for m in MUTANTS} == {"Laplace histogram", "DiffGen"}


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.tag for m in MUTANTS])
def test_the_verifier_catches_the_planted_bug(mutant):
    verdict = run_verification(mutant.load(), size="quick", only=mutant.audits, noise_factor=mutant.noise_factor)
    assert not verdict.passed, f"{mutant.tag} ({mutant.words}) was not caught:\n" + "\n".join(verdict.lines())
    assert verdict.plain_words().startswith("Self-check FAILED")
