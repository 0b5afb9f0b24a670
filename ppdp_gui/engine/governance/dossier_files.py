"""The dossier written to disk: Markdown (to edit) or PDF (made with the same layer as the release note's PDF,
`persistence/pdf.py`, from the same `Dossier` structure, so both say the same). Written atomically; never over
the source table, the ledger or its key."""

from __future__ import annotations

from pathlib import Path

from ppdp_gui.engine.errors import ParameterError
from ppdp_gui.engine.governance.dossier import Dossier


def dossier_pdf(dossier: Dossier) -> bytes:
    from fpdf.fonts import FontFace

    from ppdp_gui.engine.persistence.pdf import _Doc
    doc = _Doc(dossier.title, dossier.subtitle)
    doc.paragraph("Sections marked “for governance only” hold figures measured on the source table, the release "
                  "context or the ledger's history: they must not be published with the release.", 9, bold=True)
    for i, section in enumerate(dossier.sections, 1):
        if doc.pdf.will_page_break(40):  # a heading never stands alone at the foot of a page
            doc.pdf.add_page()
        doc.heading(section.heading(i))
        for block in section.blocks:
            if block[0] == "p":
                doc.paragraph(block[1])
            elif block[0] == "list":
                doc.bullets(block[1])
            else:
                _, headers, rows = block
                if len(headers) == 2:
                    doc.pairs([(r[0], r[1]) for r in rows])
                    continue
                doc.font(8)
                with doc.pdf.table(line_height=4.2, padding=(0.5, 1, 0.5, 1), text_align="LEFT",
                                   headings_style=FontFace(emphasis="BOLD")) as table:
                    for r in [headers] + rows:
                        row = table.row()
                        for c in r:
                            row.cell(doc.text(str(c)))
                doc.font(10)
                doc.pdf.ln(2)
    return doc.save(None)


def write_dossier(dossier: Dossier, path, *, protected=()) -> Path:
    """Markdown for a .md (or .markdown / .txt) name, PDF for a .pdf name."""
    from ppdp_gui.engine.data.writer import write_bytes_atomic, write_text_atomic
    p = Path(path).expanduser()
    suffix = p.suffix.lower()
    if suffix == ".pdf":
        return write_bytes_atomic(dossier_pdf(dossier), p, protected=protected)
    if suffix in (".md", ".markdown", ".txt"):
        return write_text_atomic(dossier.markdown(), p, protected=protected)
    raise ParameterError(f"{p.name}: the dossier is written as .md (Markdown, to edit) or .pdf")
