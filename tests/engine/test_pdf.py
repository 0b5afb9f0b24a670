"""PDF copies of the release note and the custodian record: rendered to images and read back as text.

The note's PDF must state the guarantee, ε, the claims and each file's hash — and, like the JSON note, nothing
computed from the records (no source path, no row counts of the source); the record's PDF states the source,
the budget and the figures."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pypdfium2 as pdfium
import pytest

from ppdp_gui.engine.data.domains import Domain
from ppdp_gui.engine.data.schema import ColumnSpec, Dataset, Role, SourceInfo
from ppdp_gui.engine.noise import NoiseSource
from ppdp_gui.engine.pipeline import export, plan, run_release
from ppdp_gui.engine.privacy.ledger import Ledger
from ppdp_gui.engine.taxonomy import Taxonomy


def ward(n=500, seed=0) -> Dataset:
    r = np.random.default_rng(seed)
    frame = pd.DataFrame({"age": r.integers(0, 100, n), "sex": r.choice(["F", "M"], n),
                          "outcome": r.choice(["home", "readmitted"], n)})
    schema = (ColumnSpec("age", "numeric", Role.QUASI_IDENTIFIER, domain=Domain(low=0, high=120, integer=True)),
              ColumnSpec("sex", "categorical", Role.QUASI_IDENTIFIER, Taxonomy.flat("sex", ["F", "M"])),
              ColumnSpec("outcome", "categorical", Role.CLASS, domain=Domain(categories=("home", "readmitted"))))
    return Dataset(frame, schema, SourceInfo(path="/secret/ward9.csv", sha256="ab" * 32, n_rows_read=n + 3,
                                             n_rows_dropped=3))


def pdf_text(path) -> tuple[str, int]:
    doc = pdfium.PdfDocument(str(path))
    texts = []
    for page in doc:
        image = page.render(scale=0.5).to_pil()
        assert image.getextrema() != ((255, 255), (255, 255), (255, 255))  # something is drawn
        texts.append(page.get_textpage().get_text_range())
    return " ".join(" ".join(texts).split()), len(doc)


@pytest.mark.parametrize("mechanism, params", [("DiffGen", {"epsilon": 1, "h": 4}), ("Mondrian", {"k": 10})])
def test_note_and_record_render_as_pdf(tmp_path, mechanism, params):
    ledger = Ledger(tmp_path / "ledger" / "ledger.sqlite")
    published = list(run_release(plan(ward(), mechanism, params, ledger=ledger), ledger=ledger,
                                 rng=NoiseSource.for_tests(1)))[-1]
    ex = export(published, tmp_path / "out.csv", note_path=tmp_path / "out.release-note.json", ledger=ledger,
                pdf=True)
    note, pages = pdf_text(tmp_path / "out.release-note.pdf")
    assert pages >= 1 and "Release note" in note and published.release_id in note
    assert published.guarantee_line().split(" (")[0] in note
    assert ex.checks and "Recounted on the written file" in note
    assert ex.note_doc["files"][0]["sha256"][:16] in note.replace(" ", "")
    assert "/secret/ward9.csv" not in note and "rows read" not in note  # nothing the note does not hold
    record, _ = pdf_text(ex.record.with_suffix(".pdf"))
    assert "Custodian record" in record and "/secret/ward9.csv" in record and "503" in record
    if published.cost.is_dp:
        assert "ε spent on this table in total" in record
    else:
        assert "k-anonymity" in record and "holds" in record
