"""The de-identification dossier (issue 31, Deliver 2), made with `ppdp dossier` from a real release of a
diabetes-shaped table and read back: its sections, its figures (equal to the custodian record's), the
“for governance only” marks, the NIST SP 800-226 statements of a DP release with the ledger's history, and the
PDF (a valid PDF with the same text)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pandas as pd
import pypdfium2 as pdfium
import pytest

from diabetes_shaped import diabetes_shaped
from ppdp_gui import cli
from ppdp_gui.engine.data.schema import Role
from ppdp_gui.engine.persistence.project import Recipe, write_recipe

ROLES = ["--role", "patient_nbr=person", "--role", "encounter_id=identifier", "--role", "gender=qi",
         "--role", "age=qi", "--role", "race=qi", "--role", "readmitted=sensitive", "--na", "category"]


@pytest.fixture
def released(tmp_path):
    src = tmp_path / "diabetes.csv"
    diabetes_shaped(800).to_csv(src, index=False)
    project = tmp_path / "diabetes.ppdp.json"
    write_recipe(Recipe(source=str(src), roles={"patient_nbr": Role.PERSON, "encounter_id": Role.IDENTIFIER,
                                               "gender": Role.QUASI_IDENTIFIER, "age": Role.QUASI_IDENTIFIER,
                                               "race": Role.QUASI_IDENTIFIER, "readmitted": Role.SENSITIVE}),
                 project)
    assert cli.main(["context", "--recipe", str(project), "--out", str(project), "--release", "internal",
                     "--recipient", "Diabetes registry", "--agreement", "DUA-2026-14",
                     "--intruder-test", "Searched obituaries: no match", "--review-date", "2027-06-30"]) == 0
    record = tmp_path / "rec.json"
    assert cli.main(["run", "Mondrian", "--recipe", str(project), "--output", str(tmp_path / "out.csv"),
                     "--param", "k=5", *ROLES, "--record", str(record),
                     "--ledger", str(tmp_path / "ledger.sqlite")]) == 0
    return src, project, record


def sections(markdown: str) -> dict[str, str]:
    parts = re.split(r"^## ", markdown, flags=re.M)[1:]
    return {p.split("\n", 1)[0]: p.split("\n", 1)[1] for p in parts}


def table_value(text: str, key: str) -> str:
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells and cells[0] == key:
            return cells[1]
    raise AssertionError(f"{key!r} not in the table")


def table_cell(text: str, key: str, column: int) -> str:
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells and cells[0] == key:
            return cells[column]
    raise AssertionError(f"{key!r} not in the table")


def test_residual_risk_is_per_patient_when_the_table_has_a_person_column(released, tmp_path):
    """Patients with several encounters: a group of 5 rows may hold 3 patients. The dossier's initial and residual
    risk are both per patient (each patient once, their largest risk), said so, and differ from the per-row
    figures the record also holds."""
    src, project, record_path = released
    out = tmp_path / "dossier.md"
    assert cli.main(["dossier", "--record", str(record_path), "--recipe", str(project), "--layout", "hipaa",
                     "--out", str(out)]) == 0
    got = {re.sub(r"^\d+\. ", "", t): b for t, b in sections(out.read_text(encoding="utf-8")).items()}
    residual = got["Results after de-identification (for governance only)"]
    figures = json.loads(record_path.read_text(encoding="utf-8"))["figures (against the true data)"]
    assert "per patient (patient_nbr)" in residual and "each patient counts once" in residual
    assert "these figures are per row" not in residual
    frame = pd.read_csv(src, dtype=str, keep_default_na=False)
    assert int(table_cell(residual, "patients", 2)) == frame["patient_nbr"].nunique()
    average = float(table_cell(residual, "average risk", 2))
    share = float(table_cell(residual, "share of patients above 10 %", 2))
    assert average == pytest.approx(figures["average re-identification risk per patient %"] / 100, rel=1e-5)
    assert share == pytest.approx(figures["share of patients with risk above 10 %"] / 100, rel=1e-5)
    # per patient is not per row here: patients with several rows make the two differ
    assert abs(average - figures["average re-identification risk %"] / 100) > 0.005
    assert abs(share - figures["share of records with risk above 10 %"] / 100) > 0.01
    # the initial column, counted here independently in the same way
    persons = frame.groupby(["race", "gender", "age"])["patient_nbr"].transform("nunique")
    per_person = (1 / persons).groupby(frame["patient_nbr"]).max()
    assert float(table_cell(residual, "average risk", 1)) == pytest.approx(per_person.mean(), rel=1e-5)
    assert float(table_cell(residual, "share of patients above 10 %", 1)) == pytest.approx(
        (per_person > 0.1).mean(), rel=1e-5)


def test_release_figures_per_patient_recounted():
    """The record's per-patient figures, recounted from the released rows and their patients (in memory)."""
    from ppdp_gui.engine.data.reader import dataset_from_frame
    from ppdp_gui.engine.pipeline import plan, run_release
    frame = diabetes_shaped(600)
    data = dataset_from_frame(frame, roles={"patient_nbr": Role.PERSON, "encounter_id": Role.IDENTIFIER,
                                            "gender": Role.QUASI_IDENTIFIER, "age": Role.QUASI_IDENTIFIER,
                                            "race": Role.QUASI_IDENTIFIER})
    published = list(run_release(plan(data, "Mondrian", {"k": 4})))[-1]
    table, ids = published.release.table, published.person_ids["table"]
    groups = table.groupby(["race", "gender", "age"], dropna=False).ngroup()
    persons = pd.Series(ids).groupby(groups.to_numpy()).transform("nunique").to_numpy()
    per_patient = pd.Series(1 / persons).groupby(ids).max()
    fig = published.figures
    assert fig["patients in the release"] == per_patient.size
    assert fig["highest re-identification risk %"] == pytest.approx(100 * per_patient.max())
    assert fig["average re-identification risk per patient %"] == pytest.approx(100 * per_patient.mean())
    assert fig["share of patients with risk above 10 %"] == pytest.approx(100 * (per_patient > 0.1).mean())


def test_ema_dossier_sections_figures_and_marks(released, tmp_path):
    src, project, record_path = released
    out = tmp_path / "dossier.md"
    assert cli.main(["dossier", "--record", str(record_path), "--recipe", str(project), "--layout", "ema",
                     "--out", str(out)]) == 0
    md = out.read_text(encoding="utf-8")
    record = json.loads(record_path.read_text(encoding="utf-8"))
    got = sections(md)
    titles = [re.sub(r"^\d+\. ", "", t) for t in got]
    for expected in ("Summary of the release", "Methodology", "Initial risk (for governance only)",
                     "Residual risk (for governance only)", "Risk threshold and its justification (for governance only)",
                     "Utility of the release (for governance only)", "Attestations and review date (for governance only)",
                     "Motivated-intruder test (for governance only)"):
        assert expected in titles, expected
    by_title = dict(zip(titles, got.values()))
    # the residual figures are the record's per-patient ones, to the digits written
    residual = by_title["Residual risk (for governance only)"]
    figures = record["figures (against the true data)"]
    assert float(table_cell(residual, "highest risk", 2)) == pytest.approx(
        figures["highest re-identification risk %"] / 100, rel=1e-5)
    utility = by_title["Utility of the release (for governance only)"]
    assert float(table_value(utility, "NCP %")) == pytest.approx(record["figures (against the true data)"]["NCP %"],
                                                                 rel=1e-5)
    # initial risk per person, recounted here independently: distinct patients per combination
    frame = pd.read_csv(src, dtype=str, keep_default_na=False)
    persons = frame.groupby(["race", "gender", "age"])["patient_nbr"].transform("nunique")
    per_person = (1 / persons).groupby(frame["patient_nbr"]).max()
    initial = by_title["Initial risk (for governance only)"]
    row = next(line for line in initial.splitlines() if line.startswith("| source table, person (patient_nbr)"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert int(cells[1]) == frame["patient_nbr"].nunique()
    assert float(cells[3]) == pytest.approx(per_person.max(), rel=1e-5)
    assert float(cells[4]) == pytest.approx(per_person.mean(), rel=1e-5)
    # the context and the threshold with its source
    assert "Diabetes registry" in md and "DUA-2026-14" in md and "2027-06-30" in md
    assert "Searched obituaries" in by_title["Motivated-intruder test (for governance only)"]
    assert "0.333333" in by_title["Risk threshold and its justification (for governance only)"]
    assert "El Emam" in md
    # techniques in ISO/IEC 20889 words; removed identifiers only in a marked section
    released_table = by_title["Direct and indirect identifiers in the release, and the technique applied"]
    assert "| age | indirect identifier | generalisation |" in released_table
    assert "| readmitted | sensitive | retained |" in released_table
    removed = by_title["Columns removed from the release (for governance only)"]
    assert "| patient_nbr |" in removed and "removal of direct identifiers" in removed
    # nothing the release note may not hold appears in an unmarked section
    public = "\n".join(body for title, body in by_title.items() if "for governance only" not in title)
    note = json.dumps(record["release note"], ensure_ascii=False)
    for name in ("patient_nbr", "encounter_id"):  # removed columns: named in public only if the note names them
        assert name not in public or name in note
    assert "encounter_id" not in public and str(src) not in public and "DUA-2026-14" not in public
    for value in record["figures (against the true data)"].values():
        if float(value) != int(value):
            assert f"{float(value):.6g}" not in public


def test_pdf_dossier_is_a_pdf_with_the_same_text(released, tmp_path):
    _, project, record_path = released
    out = tmp_path / "dossier.pdf"
    assert cli.main(["dossier", "--record", str(record_path), "--recipe", str(project), "--layout", "hipaa",
                     "--out", str(out)]) == 0
    assert out.read_bytes()[:5] == b"%PDF-"
    doc = pdfium.PdfDocument(str(out))
    if os.environ.get("PPDP_SCREENSHOTS"):  # the README's picture of the dossier's first page, on request only
        shots = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
        doc[0].render(scale=1.1).to_pil().convert("P", palette=1, colors=64).save(str(shots / "9_dossier_page1.png"))
    text = " ".join(" ".join(page.get_textpage().get_text_range() for page in doc).split())
    assert len(doc) >= 2
    for words in ("HIPAA Expert Determination", "Threat model", "Results before de-identification",
                  "for governance only", "Conditions of the determination", "Diabetes registry"):
        assert words in text, words


def test_dp_dossier_states_nist_items_and_the_ledger_history(tmp_path):
    src = tmp_path / "diabetes.csv"
    diabetes_shaped(500).to_csv(src, index=False)
    ledger = str(tmp_path / "ledger.sqlite")
    common = ["--input", str(src), "--role", "patient_nbr=person", "--role", "encounter_id=identifier",
              "--domain", "gender=Female,Male", "--param", "columns=gender", "--ledger", ledger,
              "--confirm-roles"]
    assert cli.main(["run", "Laplace histogram", *common, "--param", "epsilon=0.25",
                     "--output", str(tmp_path / "a.csv")]) == 0
    record = tmp_path / "rec.json"
    assert cli.main(["run", "Laplace histogram", *common, "--param", "epsilon=0.5", "--output",
                     str(tmp_path / "b.csv"), "--record", str(record)]) == 0
    out = tmp_path / "dp.md"
    assert cli.main(["dossier", "--record", str(record), "--layout", "hipaa", "--out", str(out)]) == 0
    got = {re.sub(r"^\d+\. ", "", t): b for t, b in sections(out.read_text(encoding="utf-8")).items()}
    nist = got["Differential privacy statements (NIST SP 800-226)"]
    assert table_value(nist, "ε (epsilon)") == "0.5" and table_value(nist, "δ (delta)") == "0"
    assert table_value(nist, "neighbouring relation") == ("neighbouring tables differ in all rows of one patient "
                                                          "(added or removed)")
    assert table_value(nist, "unit of privacy") == "one patient (patient_nbr), up to 1 row each"
    assert "stated by the custodian" in table_value(nist, "domain provenance")
    assert "±" in table_value(nist, "error bars")
    history = got["Composition with earlier releases of this table (for governance only)"]
    rows = [line for line in history.splitlines() if re.match(r"\| \d+ \|", line)]
    assert [r.split("|")[4].strip() for r in rows] == ["0.25", "0.5"]
    assert "Total ε spent on this table after this release: 0.75" in history
    assert "ppdp verify" in got["Evidence of testing"]


def test_dossier_refuses_what_is_not_a_record(tmp_path):
    note = tmp_path / "note.json"
    note.write_text(json.dumps({"document": "release note"}), encoding="utf-8")
    assert cli.main(["dossier", "--record", str(note), "--out", str(tmp_path / "d.md")]) == 2
    assert not (tmp_path / "d.md").exists()
