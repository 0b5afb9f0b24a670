"""The release note and the custodian record as PDF documents, for people who will not read JSON.

Made from the same dictionaries as the JSON documents (`engine.pipeline.published.release_note` and
`custodian_record`), so the PDF can never say more than the JSON: the note's PDF holds only what the note holds.
Written with fpdf2 (pure Python, well kept; Qt's PDF writer would tie the CLI to Qt, which the layering forbids).
Text uses DejaVu Sans when the system has it (ε, δ, ≤ …), else the PDF core font with those few symbols spelled
out. Pages are A4 portrait; long values are wrapped, long lists shortened with a count.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Iterable

FONT_DIRS = ("/usr/share/fonts/truetype/dejavu", "/usr/share/fonts/dejavu", "/usr/local/share/fonts",
             "/Library/Fonts", "C:/Windows/Fonts")
_SPELLED = {"ε": "epsilon", "δ": "delta", "≤": "<=", "≥": ">=", "×": "x", "—": "-", "–": "-", "…": "...",
            "’": "'", "‘": "'", "“": '"', "”": '"', "→": "->", "·": "*", "≈": "~", "√": "sqrt", "Σ": "sum"}
MAX_ITEMS = 40  # items of a list shown before "… and N more"


def _font_file(name: str) -> Path | None:
    for folder in FONT_DIRS:
        p = Path(folder) / name
        if p.is_file():
            return p
    return None


class _Doc:
    """A thin layer over fpdf2: headings, paragraphs, key–value tables and a bar chart, Unicode-safe."""

    def __init__(self, title: str, subtitle: str):
        from fpdf import FPDF
        self.pdf = FPDF(format="A4")
        self.pdf.set_auto_page_break(auto=True, margin=15)
        self.pdf.set_title(title)
        regular, bold = _font_file("DejaVuSans.ttf"), _font_file("DejaVuSans-Bold.ttf")
        if regular is not None and bold is not None:
            self.pdf.add_font("Body", "", str(regular))
            self.pdf.add_font("Body", "B", str(bold))
            self.family, self.unicode = "Body", True
        else:
            self.family, self.unicode = "Helvetica", False
        self.pdf.add_page()
        self.font(16, bold=True)
        self.pdf.multi_cell(0, 9, self.text(title), new_x="LMARGIN", new_y="NEXT")
        self.font(9)
        self.pdf.multi_cell(0, 5, self.text(subtitle), new_x="LMARGIN", new_y="NEXT")
        self.pdf.ln(2)

    def text(self, value: Any) -> str:
        s = value if isinstance(value, str) else _plain(value)
        if not self.unicode:
            for k, v in _SPELLED.items():
                s = s.replace(k, v)
            s = s.encode("latin-1", "replace").decode("latin-1")
        return s

    def font(self, size: float, bold: bool = False) -> None:
        self.pdf.set_font(self.family, "B" if bold else "", size)

    def heading(self, text: str) -> None:
        self.pdf.ln(2)
        self.font(12, bold=True)
        self.pdf.multi_cell(0, 7, self.text(text), new_x="LMARGIN", new_y="NEXT")
        self.font(10)

    def paragraph(self, text: str, size: float = 10, bold: bool = False) -> None:
        self.font(size, bold)
        self.pdf.multi_cell(0, 5.2, self.text(text), new_x="LMARGIN", new_y="NEXT", align="L")
        self.font(10)

    def bullets(self, items: Iterable[str]) -> None:
        for item in items:
            self.paragraph("•  " + str(item) if self.unicode else "-  " + str(item))

    def pairs(self, rows: Iterable[tuple[str, Any]]) -> None:
        """Two columns: a key on the left (bold), its value wrapped on the right (fpdf2's table breaks pages)."""
        rows = [(self.text(k), self.text(_plain(v))) for k, v in rows]
        if not rows:
            return
        from fpdf.fonts import FontFace
        self.font(9)
        with self.pdf.table(col_widths=(32, 68), first_row_as_headings=False, borders_layout="NONE",
                            text_align=("LEFT", "LEFT"), line_height=4.8, padding=(0.6, 1, 0.6, 0)) as table:
            for key, value in rows:
                row = table.row()
                row.cell(key, style=FontFace(emphasis="BOLD"))
                row.cell(value)
        self.font(10)

    def bars(self, title: str, values: dict[str, float], unit: str = "", top: float | None = None) -> None:
        """A horizontal bar chart of a few named values on one scale (drawn with the PDF's own lines; no
        plotting library). `top` fixes the scale (100 for percentages)."""
        values = {k: float(v) for k, v in values.items() if v is not None and math.isfinite(float(v))}
        if not values:
            return
        self.paragraph(title, 9, bold=True)
        top = top or max(abs(v) for v in values.values()) or 1.0
        left, width = self.pdf.l_margin, self.pdf.epw
        label_w, bar_w = width * 0.45, width * 0.4
        for name, v in values.items():
            if self.pdf.get_y() > self.pdf.h - 25:
                self.pdf.add_page()
            y = self.pdf.get_y()
            self.font(8)
            self.pdf.set_xy(left, y)
            self.pdf.cell(label_w, 5, self.text(name)[:60])
            self.pdf.set_fill_color(70, 110, 170)
            self.pdf.rect(left + label_w, y + 1, max(bar_w * abs(v) / top, 0.3), 3, style="F")
            self.pdf.set_xy(left + label_w + bar_w + 2, y)
            self.pdf.cell(0, 5, self.text(f"{v:,.4g}{unit}"))
            self.pdf.set_y(y + 5)
        self.pdf.set_fill_color(255, 255, 255)
        self.font(10)

    def save(self, path) -> bytes:
        return bytes(self.pdf.output())


def _epsilon(value: Any) -> Any:
    """An ε the record stores exactly ("1/2") in the one spelling of every document (claims.epsilon_text)."""
    if value in (None, "", "None"):
        return value
    from ppdp_gui.engine.claims import epsilon_text
    try:
        return epsilon_text(value if isinstance(value, str) else str(value))
    except (ValueError, ZeroDivisionError):
        return value


def _plain(value: Any) -> str:
    """A JSON value in one readable line: lists shortened, dicts as 'key: value; …'."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:,.6g}"
    if isinstance(value, (int, str)):
        return str(value)
    if isinstance(value, list):
        shown = [_plain(v) for v in value[:MAX_ITEMS]]
        more = f" … and {len(value) - MAX_ITEMS} more" if len(value) > MAX_ITEMS else ""
        return ", ".join(shown) + more
    if isinstance(value, dict):
        return "; ".join(f"{k}: {_plain(v)}" for k, v in list(value.items())[:MAX_ITEMS])
    return json.dumps(value, ensure_ascii=False, default=str)


def note_pdf(note: dict) -> bytes:
    """The release note as a PDF (everything in it comes from the note itself)."""
    mech, guarantee = note.get("mechanism", {}), note.get("guarantee", {})
    doc = _Doc("Release note", f"Release {note.get('release_id')} · {note.get('created')} · ppdp_gui "
                               f"{note.get('software', {}).get('ppdp_gui', '')} · publish this with the file")
    doc.heading("What was released")
    doc.pairs([("Mechanism", f"{mech.get('name')} ({mech.get('guarantee')})"), ("How it works", mech.get("summary")),
               ("Guarantee", guarantee.get("statement")),
               ("Guarantee holds", "yes" if guarantee.get("holds") else "NO — see the caveats")])
    if guarantee.get("caveats"):
        doc.paragraph("Caveats: " + "; ".join(guarantee["caveats"]), bold=True)
    meaning = note.get("what this means", {})
    doc.heading("What this means")
    doc.bullets(meaning.get("means", []))
    if meaning.get("does not mean"):
        doc.heading("What it does not mean")
        doc.bullets(meaning["does not mean"])
    doc.heading("Privacy cost and parameters")
    cost = note.get("privacy cost", {})
    doc.pairs([(k, v) for k, v in cost.items() if v is not None] + list(note.get("parameters", {}).items()))
    doc.heading("Promises (typed claims)")
    for claim in guarantee.get("claims", []):
        doc.pairs([(claim.get("claim", "claim"), {k: v for k, v in claim.items() if k != "claim"})])
    doc.heading("Files")
    for f in note.get("files", []):
        doc.pairs([(f.get("file") or f.get("table"), f"{f.get('rows', 0):,} rows; sha256 {f.get('sha256', '—')}")])
    checked = note.get("checked on the written file", [])
    if checked:
        doc.paragraph("Recounted on the written file: " + "; ".join(
            f"{c['claim']} ({c['table']}): {'holds' if c['ok'] else 'FAILED'}" for c in checked))
    doc.heading("Details of the release")
    doc.pairs(list(note.get("details", {}).items()))
    return doc.save(None)


def record_pdf(record: dict) -> bytes:
    """The custodian record as a PDF: source, budget, checks, warnings, figures and a chart of them."""
    doc = _Doc("Custodian record — keep on this computer, do not publish",
               f"Release {record.get('release_id')} · {record.get('created')} · {record.get('mechanism')}")
    doc.heading("Guarantee")
    doc.paragraph(record.get("guarantee", ""))
    if record.get("caveats"):
        doc.paragraph("Caveats: " + "; ".join(record["caveats"]), bold=True)
    doc.heading("Source")
    doc.pairs(list((record.get("source") or {}).items()))
    budget, entry = record.get("budget after this release"), (record.get("ledger") or {}).get("entry")
    doc.heading("Privacy budget")
    rows = []
    if entry:
        rows += [("ε spent by this release", _epsilon(entry.get("epsilon"))), ("ledger entry", entry.get("id"))]
    if budget:
        rows += [("ε spent on this table in total", _epsilon(budget.get("spent"))), ("cap", _epsilon(budget.get("cap"))),
                 ("releases of this table", budget.get("releases"))]
    dataset = record.get("dataset") or {}
    if dataset.get("near_copy_of"):
        rows.append(("near copy of", f"{dataset['near_copy_of']} (similarity {dataset.get('similarity')})"))
    doc.pairs(rows or [("budget", "not charged: syntactic guarantee")])
    if budget and budget.get("cap") not in (None, "None"):
        try:
            from fractions import Fraction
            doc.bars("ε against the cap", {"spent": float(Fraction(str(budget["spent"]))),
                                           "cap": float(Fraction(str(budget["cap"])))})
        except (ValueError, ZeroDivisionError):
            pass
    doc.heading("Checks (recounted on the written files)")
    for c in record.get("claims recounted on the written files") or record.get("claims recounted in memory", []):
        doc.pairs([(c["claim"].get("claim", "claim"), f"{'holds' if c['ok'] else 'FAILED'}: {c['message']}")])
    if record.get("warnings"):
        doc.heading("Warnings (for you)")
        doc.bullets(record["warnings"])
    figures = record.get("figures (against the true data)") or {}
    if figures:
        doc.heading("Utility and risk figures (against the true data)")
        doc.pairs(list(figures.items()))
        shares = {k: v for k, v in figures.items() if str(k).endswith("%")}
        doc.bars("Shares and risks (%)", shares, " %", top=100.0)
    doc.heading("Columns")
    for c in record.get("columns", []):
        doc.pairs([(c["name"], f"{c['kind']}, {c['role']}; taxonomy: {_plain(c['taxonomy'])}; "
                               f"domain: {_plain(c['domain'])}")])
    if record.get("exports"):
        doc.heading("Exports")
        doc.bullets(e.get("file", "") for e in record["exports"])
    return doc.save(None)


def write_pdf(data: bytes, path, *, protected=()) -> Path:
    """Write PDF bytes atomically (never over a protected file)."""
    from ppdp_gui.engine.data.writer import write_bytes_atomic
    return write_bytes_atomic(data, path, protected=protected)
