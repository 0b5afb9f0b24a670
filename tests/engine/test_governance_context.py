"""The release context in the project and the export gate (issue 31, Deliver 1): the questionnaire is saved and
read back (older projects without it still open), it proposes a threshold with its source, and `ppdp run` refuses
to export a release riskier than that unless the custodian overrides it with a reason, which the custodian record
and the dossier keep."""

from __future__ import annotations

import json

import pytest

from diabetes_shaped import diabetes_shaped
from ppdp_gui import cli
from ppdp_gui.engine.data.schema import Role
from ppdp_gui.engine.errors import DataError
from ppdp_gui.engine.persistence import release_context as cx
from ppdp_gui.engine.governance.gate import ThresholdError, check_release, gate
from ppdp_gui.engine.persistence.project import Recipe, read_recipe, recipe_from_json, recipe_to_json, write_recipe


def test_thresholds_are_proposed_with_their_source():
    assert cx.ReleaseContext(release="public").risk_threshold()[0] == 0.09
    assert "EMA" in cx.ReleaseContext(release="public").risk_threshold()[1]
    assert "Health Canada" in cx.ReleaseContext(release="public").risk_threshold()[1]
    assert cx.ReleaseContext(release="controlled").risk_threshold()[0] == 0.2
    assert cx.ReleaseContext(release="internal").risk_threshold()[0] == pytest.approx(1 / 3)
    own = cx.ReleaseContext(release="public", threshold=0.05, threshold_source="board decision 12")
    assert own.risk_threshold() == (0.05, "board decision 12")
    assert cx.ReleaseContext().risk_threshold()[0] is None


def test_context_round_trips_in_the_project_and_old_projects_open(tmp_path):
    recipe = Recipe(source=str(tmp_path / "t.csv"), roles={"age": Role.QUASI_IDENTIFIER})
    old = recipe_to_json(recipe)
    assert "context" not in old
    assert recipe_from_json(old).context == {}
    ctx = cx.ReleaseContext(release="controlled", recipient="Uni X", data_use_agreement="DUA 7",
                            intruder_test="tried", review_date="2027-01-31")
    cx.store(recipe, cx.attest(ctx, "kind", "text", "me"))
    write_recipe(recipe, tmp_path / "p.ppdp.json")
    back = cx.of(read_recipe(tmp_path / "p.ppdp.json"))
    assert back.release == "controlled" and back.recipient == "Uni X" and back.review_date == "2027-01-31"
    assert back.attestations[0]["by"] == "me"


@pytest.mark.parametrize("bad, field", [({"release": "everyone"}, "context.release"),
                                        ({"threshold": 2}, "context.threshold"),
                                        ({"review_date": "next June"}, "context.review_date"),
                                        ({"treshold": 0.1}, "unknown field")])
def test_a_bad_context_is_one_message_naming_the_field(tmp_path, bad, field):
    obj = recipe_to_json(Recipe(source="t.csv"))
    obj["context"] = bad
    path = tmp_path / "p.ppdp.json"
    path.write_text(json.dumps(obj), encoding="utf-8")
    with pytest.raises(DataError, match=field):
        read_recipe(path)


def test_gate_decisions():
    public = cx.ReleaseContext(release="public")
    figures = {"highest re-identification risk %": 20.0}
    assert not check_release(figures, public).allowed
    assert check_release({"highest re-identification risk %": 5.0}, public).allowed
    assert check_release(figures, public, dp=True).allowed  # ε protects a DP release
    assert check_release(figures, cx.ReleaseContext()).allowed  # no context: nothing gated
    with pytest.raises(ThresholdError, match="0.2.*above the threshold 0.09"):
        gate(figures, public, "r1")
    with pytest.raises(ThresholdError, match="reason"):
        gate(figures, public, "r1", override="  ")
    _, kept = gate(figures, public, "r1", override="aggregate use only", by="J. Doe")
    assert kept.overrides[0]["reason"] == "aggregate use only" and kept.overrides[0]["measured"] == 0.2


def _project(tmp_path, release: str) -> tuple:
    src = tmp_path / "diabetes.csv"
    diabetes_shaped(600).to_csv(src, index=False)
    project = tmp_path / "p.ppdp.json"
    recipe = Recipe(source=str(src), roles={"patient_nbr": Role.PERSON, "encounter_id": Role.IDENTIFIER,
                                            "gender": Role.QUASI_IDENTIFIER, "age": Role.QUASI_IDENTIFIER},
                    mechanism="Mondrian", params={"k": 5})
    cx.store(recipe, cx.ReleaseContext(release=release))
    write_recipe(recipe, project)
    return project


def test_ppdp_run_refuses_a_release_above_the_threshold(tmp_path, capsys):
    project = _project(tmp_path, "public")
    out = tmp_path / "out.csv"
    args = ["run", "--recipe", str(project), "--output", str(out), "--na", "category",
            "--ledger", str(tmp_path / "l.sqlite")]
    assert cli.main(args) == 2
    err = capsys.readouterr().err
    assert "above the threshold 0.09" in err and "--override-threshold" in err
    assert not out.exists()
    record = tmp_path / "rec.json"
    assert cli.main(args + ["--override-threshold", "shared with the registry only", "--record", str(record)]) == 0
    assert out.exists()
    warnings = json.loads(record.read_text(encoding="utf-8"))["warnings"]
    assert any("Governance override" in w and "shared with the registry only" in w for w in warnings)
    dossier = tmp_path / "d.md"
    assert cli.main(["dossier", "--record", str(record), "--recipe", str(project), "--out", str(dossier)]) == 0
    text = dossier.read_text(encoding="utf-8")
    assert "EXCEEDS" in text and "shared with the registry only" in text


def test_ppdp_run_passes_within_an_internal_threshold(tmp_path):
    project = _project(tmp_path, "internal")
    assert cli.main(["run", "--recipe", str(project), "--output", str(tmp_path / "out.csv"), "--na", "category",
                     "--ledger", str(tmp_path / "l.sqlite")]) == 0
