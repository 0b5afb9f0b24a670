"""`ppdp verify`: the report, exit 0 on PASS and 1 on FAIL, 2 for a mechanism that has no ε to verify.

The "smoke" size (a hidden option) keeps these tests short; it checks the plumbing, not the statistics
(test_verify.py and test_verify_mutants.py do that at the quick size)."""

from ppdp_gui.cli import main
from ppdp_gui.engine.mechanisms import registry
from tests.engine.verify_mutants import MUTANTS


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_verify_prints_claimed_epsilon_bound_events_and_pass(capsys):
    code, out, err = run(capsys, "verify", "Laplace histogram", "--size", "smoke", "--seed", "3")
    assert code == 0, out + err
    lines = out.splitlines()
    assert lines[0].startswith("Laplace histogram: smoke audit, seed 3")
    assert "claimed ε = 2" in out and "privacy loss ≥" in out and "strongest event:" in out
    assert "same seed, same release" in out and "randomness only from engine/noise" in out
    assert any(line.startswith("PASS: every audit within its allowance") for line in lines)


def test_verify_exits_1_on_a_planted_bug(capsys, monkeypatch):
    mutant = next(m for m in MUTANTS if m.tag == "lap_rng")
    cls = mutant.load()
    monkeypatch.setitem(registry._ENTRIES, "Laplace histogram", f"{cls.__module__}:{cls.__name__}")
    code, out, _ = run(capsys, "verify", "Laplace histogram", "--size", "smoke")
    assert code == 1
    assert "FAIL  same seed, same release" in out and "np.random" in out
    assert out.splitlines()[-2].startswith("FAIL")


def test_verify_refuses_a_mechanism_without_epsilon(capsys):
    code, out, err = run(capsys, "verify", "Mondrian", "--quick")
    assert code == 2 and "not differential privacy" in err and len(err.strip().splitlines()) == 1
    code, _, err = run(capsys, "verify", "Nonesuch")
    assert code == 2 and "unknown mechanism" in err


def test_verify_pipeline_audits_the_whole_path_and_exits_1_on_a_planted_pipeline_bug(capsys, monkeypatch):
    from tests.engine.pipeline_mutants import note_warnings
    note_warnings(monkeypatch)
    code, out, err = run(capsys, "verify", "--pipeline", "DP-PCA", "--size", "smoke")
    assert code == 1, out + err
    assert out.splitlines()[0].startswith("DP-PCA: pipeline smoke audit, seed 0")
    assert "FAIL  row replaced" in out and "a difference no noise covers: note/warnings" in out
    assert "same seed, same written files" in out and "no run crashed" in out


def test_verify_without_a_mechanism_asks_for_one_unless_pipeline(capsys):
    code, _, err = run(capsys, "verify")
    assert code == 2 and "--pipeline" in err and len(err.strip().splitlines()) == 1
