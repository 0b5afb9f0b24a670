"""Next month's extract (issue 31, Deliver 5): `ppdp run --recipe P --input NEW` compares the new extract with the
project's table before anything is charged — values its public domains do not cover, roles guessed differently,
risk against the threshold, the same people or not — writes the report, and stops unless --accept-changes."""

from __future__ import annotations

import numpy as np
import pandas as pd

from diabetes_shaped import SPECIALTIES, diabetes_shaped
from ppdp_gui import cli
from ppdp_gui.engine.data.domains import Domain
from ppdp_gui.engine.data.schema import Role
from ppdp_gui.engine.persistence import release_context as cx
from ppdp_gui.engine.persistence.project import Recipe, write_recipe


def test_a_changed_extract_is_reported_and_gated(tmp_path, capsys):
    march = diabetes_shaped(600, seed=3)
    march["ward_code"] = np.asarray([f"W{i % 270:03d}" for i in range(len(march))])  # 45 % distinct
    extra = diabetes_shaped(120, seed=4).assign(ward_code=[f"X{i:03d}" for i in range(120)])
    april = pd.concat([march, extra], ignore_index=True)  # March's rows and 120 more: 54 % distinct codes
    april.loc[len(march):len(march) + 19, "medical_specialty"] = "Oncology"  # not in the public domain
    src, new = tmp_path / "march.csv", tmp_path / "april.csv"
    march.to_csv(src, index=False)
    april.to_csv(new, index=False)
    recipe = Recipe(source=str(src), roles={"patient_nbr": Role.PERSON, "encounter_id": Role.IDENTIFIER,
                                            "gender": Role.QUASI_IDENTIFIER, "age": Role.QUASI_IDENTIFIER,
                                            "ward_code": Role.IDENTIFIER},  # stated: the guess is still made
                    domains={"medical_specialty": Domain(categories=tuple(SPECIALTIES))},
                    mechanism="Mondrian", params={"k": 5})
    cx.store(recipe, cx.ReleaseContext(release="internal"))
    project = tmp_path / "p.ppdp.json"
    write_recipe(recipe, project)
    ledger = str(tmp_path / "ledger.sqlite")
    base = ["run", "--recipe", str(project), "--na", "category", "--ledger", ledger]
    assert cli.main(base + ["--output", str(tmp_path / "march_out.csv")]) == 0
    assert cli.main(["run", "Laplace histogram", "--input", str(src), "--ledger", ledger, "--domain",
                     "gender=Female,Male", "--param", "columns=gender", "--role", "patient_nbr=person",
                     "--confirm-roles", "--output", str(tmp_path / "march_counts.csv")]) == 0  # the ledger now knows March
    capsys.readouterr()
    report = tmp_path / "changes.md"
    out = tmp_path / "april_out.csv"
    assert cli.main(base + ["--input", str(new), "--output", str(out), "--changes", str(report)]) == 2
    err = capsys.readouterr().err
    assert "medical_specialty: 20 row(s)" in err and "--accept-changes" in err and not out.exists()
    text = report.read_text(encoding="utf-8")
    assert "for governance only" in text
    assert "- medical_specialty: 20 row(s), e.g. Oncology" in text
    assert "near copy of a known table" in text
    assert "ward_code: guessed insensitive before, identifier now" in text  # 45 % → 54 % distinct codes
    assert "new extract: highest" in text and "threshold 0.333: not crossed" in text
    assert cli.main(base + ["--input", str(new), "--output", str(out), "--accept-changes"]) == 0
    assert out.exists()
