"""A corpus of hostile and damaged input files, generated (nothing is downloaded or stored in the repository).

Used by tests/engine/test_hostile_inputs.py (every file, in-process) and scripts/trust_report.py (every file in
its own process, with peak memory and a time limit). Each `Case` says what kind of file it is (a table, an ARX
hierarchy, a project) and what must happen: "refuse" (a PpdpError naming the file), "load", or "either" (a
random mutation may still be a valid file). Never a traceback, a hang, or more than 2 GB of memory.

The random part is seeded (`random.Random(seed)`), so the corpus is the same on every machine.
"""

from __future__ import annotations

import gzip
import io
import json
import random
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq


@dataclass(frozen=True)
class Case:
    name: str
    path: Path
    kind: str  # "table" | "taxonomy" | "project"
    expect: str  # "refuse" | "load" | "either"
    words: tuple[str, ...] = ()  # the refusal message must contain these (case-insensitive)
    column: str | None = None  # taxonomy cases: the column the hierarchy is for
    group: str = ""  # the class of attack it belongs to (docs/trust.md counts per class)
    duckdb: str | None = None  # what the large-table engine must do with it (None: not a file it reads)


#: files the large-table engine (`--engine duckdb`) reads: every such table case runs on both engines
DUCKDB_SUFFIXES = (".csv", ".tsv", ".csv.gz", ".tsv.gz", ".parquet")
#: where the large-table engine rightly differs, or a case is too slow for it in CI
DUCKDB_EXPECT = {
    "wide_20k": None,  # 20,000 columns: minutes of SQL, a table this engine is not for
    "pq_cells_bomb": None,  # 25 million rows is a large table, not a bomb, for this engine (and 10 s in CI)
    "pq_text_bomb": None,  # 800 MB of text in dictionary pages: streamed by DuckDB within its memory limit
}
#: refused by both engines, but in the large-table engine's own words (DuckDB names the line, not the parser's
#: field counts): the file must still be named
DUCKDB_OWN_WORDS = {"ragged", "unclosed_quote", "only_delimiters", "wide_1m", "gz_named_not_gz", "pq_zero_rows",
                    "pq_binary_raw"}


GOOD_CSV = b"age,sex,zip,diagnosis\n34,F,02139,flu\n51,M,02140,asthma\n29,F,02141,flu\n63,M,02142,copd\n"


# ---- XLSX ----------------------------------------------------------------------------------------------------
_CT = (b'<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/'
       b'content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships'
       b'+xml"/><Default Extension="xml" ContentType="application/xml"/></Types>')
_ROOT_RELS = (b'<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/'
              b'relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
              b'relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>')
_NS = b'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'
_R_NS = b'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"'


def _book_rels(n_sheets: int, shared: bool, styles: bool) -> bytes:
    rels = [f'<Relationship Id="rId{i + 1}" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
            f'relationships/worksheet" Target="worksheets/sheet{i + 1}.xml"/>' for i in range(n_sheets)]
    if shared:
        rels.append('<Relationship Id="rIdS" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
                    'relationships/sharedStrings" Target="sharedStrings.xml"/>')
    if styles:
        rels.append('<Relationship Id="rIdT" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
                    'relationships/styles" Target="styles.xml"/>')
    return ('<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/'
            'relationships">' + "".join(rels) + "</Relationships>").encode()


def xlsx(sheets: list[bytes], *, shared: bytes | None = None, styles: bytes | None = None, names=None,
         extra: dict[str, bytes] | None = None, date1904: bool = False, level: int = 6) -> bytes:
    """A workbook from raw sheet XML bodies (what goes inside <sheetData>, or a whole document if it starts
    with '<?xml')."""
    names = names or [f"Sheet{i + 1}" for i in range(len(sheets))]
    pr = b'<workbookPr date1904="1"/>' if date1904 else b""
    wb = (b'<?xml version="1.0"?><workbook ' + _NS + b" " + _R_NS + b">" + pr + b"<sheets>"
          + b"".join(f'<sheet name="{n}" sheetId="{i + 1}" r:id="rId{i + 1}"/>'.encode() for i, n in enumerate(names))
          + b"</sheets></workbook>")
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=level) as z:
        z.writestr("[Content_Types].xml", _CT)
        z.writestr("_rels/.rels", _ROOT_RELS)
        z.writestr("xl/workbook.xml", wb)
        z.writestr("xl/_rels/workbook.xml.rels", _book_rels(len(sheets), shared is not None, styles is not None))
        for i, body in enumerate(sheets):
            doc = body if body.startswith(b"<?xml") else (
                b'<?xml version="1.0"?><worksheet ' + _NS + b"><sheetData>" + body + b"</sheetData></worksheet>")
            z.writestr(f"xl/worksheets/sheet{i + 1}.xml", doc)
        if shared is not None:
            z.writestr("xl/sharedStrings.xml", b'<?xml version="1.0"?><sst ' + _NS + b">" + shared + b"</sst>")
        if styles is not None:
            z.writestr("xl/styles.xml", b'<?xml version="1.0"?><styleSheet ' + _NS + b">" + styles + b"</styleSheet>")
        for name, data in (extra or {}).items():
            z.writestr(name, data)
    return out.getvalue()


def _row(r: int, cells: list[str]) -> bytes:
    return f'<row r="{r}">{"".join(cells)}</row>'.encode()


def _n(ref: str, v) -> str:
    return f'<c r="{ref}"><v>{v}</v></c>'


def _s(ref: str, text: str) -> str:
    return f'<c r="{ref}" t="inlineStr"><is><t>{text}</t></is></c>'


def _simple_sheet(rows: int = 4) -> bytes:
    body = [_row(1, [_s("A1", "age"), _s("B1", "sex")])]
    body += [_row(r, [_n(f"A{r}", 20 + r), _s(f"B{r}", "F" if r % 2 else "M")]) for r in range(2, rows + 2)]
    return b"".join(body)


def _zip_bomb_member(size: int, unit: bytes) -> bytes:
    """A sheet document whose XML expands to about `size` bytes (written compressed, streamed)."""
    head = b'<?xml version="1.0"?><worksheet ' + _NS + b"><sheetData>"
    return head + unit * (size // len(unit)) + b"</sheetData></worksheet>"


# ---- the corpus ------------------------------------------------------------------------------------------------
def build(folder: Path, *, heavy: bool = True, n_random: int = 150, seed: int = 17) -> list[Case]:
    """Write the corpus into `folder`; `heavy=False` leaves out the few files that take seconds to make."""
    folder.mkdir(parents=True, exist_ok=True)
    cases: list[Case] = []

    group = {"name": ""}

    def add(name: str, data: bytes | None, suffix: str, expect: str, *words: str, kind: str = "table",
            column: str | None = None, path: Path | None = None) -> None:
        path = path or folder / f"{len(cases):03d}_{name}{suffix}"
        if data is not None:
            path.write_bytes(data)
        duck = DUCKDB_EXPECT.get(name, expect) if kind == "table" and path.name.endswith(DUCKDB_SUFFIXES) else None
        cases.append(Case(name, path, kind, expect, tuple(words), column, group["name"], duck))

    for name, make in (("tables", lambda: _tables(add, heavy)), ("workbooks", lambda: _workbooks(add, heavy)),
                       ("parquet", lambda: _parquets(add, heavy)), ("hierarchies", lambda: _taxonomies(add)),
                       ("projects", lambda: _projects(add, folder)),
                       ("special files", lambda: _special_files(add, folder)),
                       ("small file, big memory", lambda: _budgets(add)),
                       ("random mutations", lambda: _random_mutations(add, n_random, seed))):
        group["name"] = name
        make()
    return cases


def _tables(add, heavy: bool) -> None:
    add("good", GOOD_CSV, ".csv", "load")
    add("good_gz", gzip.compress(GOOD_CSV), ".csv.gz", "load")
    add("empty", b"", ".csv", "refuse", "empty")
    add("blank_lines", b"\n\n \n", ".csv", "refuse", "empty")
    add("header_only", b"a,b,c\n", ".csv", "refuse", "no data rows")
    add("nul_byte", b"a,b\n1,\x002\n", ".csv", "refuse", "NUL")
    add("utf16", "a,b\n1,2\n".encode("utf-16"), ".csv", "refuse", "UTF-16")
    add("bad_utf8", b"a,b\n1,caf\xe9\n", ".csv", "refuse", "0xe9", "line 2")
    add("bad_utf8_late", b"a,b\n" + b"1,x\n" * 200_000 + b"2,\xff\n", ".csv", "refuse", "0xff", "line 200002")
    add("ragged", b"a,b\n1,2\n3,4,5\n", ".csv", "refuse", "expected 2", "line 3")
    add("unclosed_quote", b'a,b\n1,"x\n2,3\n', ".csv", "refuse", "quoted field")
    add("only_delimiters", b",,,\n,,,\n", ".csv", "refuse", "no columns")
    add("crlf_mixed", b"a,b\r\n1,2\n3,4\r5,6\n", ".csv", "either")
    add("formula_cells", b"name,note\nann,=1+1\nbob,@SUM(A1)\ncid,+cmd|' /C calc'!A0\n", ".csv", "load")
    add("huge_number", b"a,b\n1e400,x\n-1e400,y\n", ".csv", "load")
    add("long_cell", b"a,b\n" + b"x" * 5_000_000 + b",1\n", ".csv", "load")
    add("many_distinct", b"id,v\n" + b"".join(b"%d,c%d\n" % (i, i) for i in range(100_000)), ".csv", "load")
    add("wide_20k", _wide(20_000, rows=1), ".csv", "load")
    add("wide_100k", _wide(100_000, rows=1), ".csv", "refuse", "100,000 columns")
    add("wide_1m", _wide(1_000_000, rows=1), ".csv", "refuse", "1,000,000 columns")
    add("wide_60k_tsv", _wide(60_000, rows=2, sep=b"\t"), ".tsv", "refuse", "columns")
    # look-alike and invisible header names
    for label, header in [("zwsp", "age,age\u200b"), ("zwsp_single", "a\u200bge,sex"), ("bom_inside", "age,\ufeffsex"),
                          ("bidi", "age,\u202esex"), ("nfkc_fullwidth", "age,\uff41\uff47\uff45"),
                          ("case_dup", "Age,age"), ("cyrillic", "age,\u0430ge"), ("nbsp_dup", "age group,age\u00a0group"),
                          ("soft_hyphen", "age,se\u00adx"), ("word_joiner", "age,s\u2060ex"),
                          ("hangul_filler", "age,\u3164"), ("greek", "zip,\u03bf\u03c1"), ("tab_dup", "a b,a\tb")]:
        expect = "load" if label == "greek" else "refuse"
        add(f"header_{label}", (header + "\n1,2\n").encode(), ".csv", expect)
    # gzip: damaged, and decompression bombs by size and by ratio
    good = gzip.compress(GOOD_CSV)
    add("gz_truncated", good[: len(good) // 2], ".csv.gz", "refuse", "gzip")
    add("gz_not_gzip", b"\x1f\x8bnot really", ".csv.gz", "refuse", "gzip")
    add("gz_named_not_gz", GOOD_CSV, ".csv.gz", "refuse", "not gzip")
    add("gz_multi_member", gzip.compress(b"a,b\n1,2\n") + gzip.compress(b"3,4\n"), ".csv.gz", "load")
    add("gz_bomb_zeros", _gzip_stream(b"\x00" * (1 << 20), 200), ".csv.gz", "refuse", "bomb")
    add("gz_bomb_cells", _gzip_stream(b"a,a,a,a,a,a,a,a\n" * 65536, 150, head=b"c1,c2,c3,c4,c5,c6,c7,c8\n"),
        ".csv.gz", "refuse", "bomb")
    if heavy:
        add("gz_bomb_1g", _gzip_stream(b"1,2\n" * 262144, 1100, head=b"a,b\n"), ".csv.gz", "refuse")
    add("gz_of_binary", gzip.compress(bytes(range(256)) * 100), ".csv.gz", "refuse")
    add("xls_old", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 600, ".xls", "refuse", ".xlsx")
    add("xlsx_not_zip", GOOD_CSV, ".xlsx", "refuse", "Excel")
    add("parquet_not_parquet", GOOD_CSV, ".parquet", "refuse", "Parquet")
    add("folder_like_name", b"a\n1\n", ".csv", "load")


def _wide(n: int, rows: int, sep: bytes = b",") -> bytes:
    head = sep.join(b"c%d" % i for i in range(n)) + b"\n"
    return head + b"".join(sep.join(b"%d" % ((i + r) % 7) for i in range(n)) + b"\n" for r in range(rows))


def _gzip_stream(unit: bytes, megabytes: int, head: bytes = b"") -> bytes:
    comp = zlib.compressobj(9, zlib.DEFLATED, 31)
    out = [comp.compress(head)]
    reps = max(1, (megabytes << 20) // len(unit))
    for _ in range(reps):
        out.append(comp.compress(unit))
    out.append(comp.flush())
    return b"".join(out)


def _workbooks(add, heavy: bool) -> None:
    add("xlsx_good", xlsx([_simple_sheet()]), ".xlsx", "load")
    add("xlsx_shared_strings", xlsx([_row(1, ['<c r="A1" t="s"><v>0</v></c>', '<c r="B1" t="s"><v>1</v></c>'])
                                     + _row(2, ['<c r="A2" t="s"><v>2</v></c>', _n("B2", 3)])],
                                    shared=b"<si><t>name</t></si><si><r><t>sc</t></r><r><t>ore</t></r></si>"
                                           b"<si><t>Ann &amp; Bob</t></si>"), ".xlsx", "load")
    add("xlsx_bad_shared_index", xlsx([_row(1, ['<c r="A1" t="s"><v>7</v></c>']) + _row(2, [_n("A2", 1)])],
                                      shared=b"<si><t>x</t></si>"), ".xlsx", "refuse", "shared string")
    add("xlsx_formula_cached", xlsx([_row(1, [_s("A1", "a"), _s("B1", "b")]) + _row(2, [_n("A2", 2),
                                    '<c r="B2"><f>A2*2</f><v>4</v></c>'])]), ".xlsx", "load")
    add("xlsx_formula_no_value", xlsx([_row(1, [_s("A1", "a"), _s("B1", "b")]) + _row(2, [_n("A2", 2),
                                       '<c r="B2"><f>A2*2</f></c>'])]), ".xlsx", "refuse", "B2", "formula")
    add("xlsx_shared_formula", xlsx([_row(1, [_s("A1", "a")]) + _row(2, ['<c r="A2"><f t="shared" si="0"/></c>'])]),
        ".xlsx", "refuse", "A2", "formula")
    add("xlsx_macros", xlsx([_simple_sheet()], extra={"xl/vbaProject.bin": b"\x00" * 512}), ".xlsm", "load")
    add("xlsx_merged", xlsx([b'<?xml version="1.0"?><worksheet ' + _NS + b"><sheetData>" + _simple_sheet()
                             + b'</sheetData><mergeCells count="1"><mergeCell ref="A2:A3"/></mergeCells></worksheet>']),
        ".xlsx", "load")
    styles = (b'<numFmts count="1"><numFmt numFmtId="164" formatCode="yyyy-mm-dd"/></numFmts>'
              b'<cellXfs count="3"><xf numFmtId="0"/><xf numFmtId="164"/><xf numFmtId="14"/></cellXfs>')
    add("xlsx_dates", xlsx([_row(1, [_s("A1", "born"), _s("B1", "seen")]) + b"".join(
        _row(r, [f'<c r="A{r}" s="1"><v>{30000 + r}</v></c>', f'<c r="B{r}" s="2"><v>{40000.5 + r}</v></c>'])
        for r in range(2, 14))], styles=styles), ".xlsx", "load")
    add("xlsx_dates_1904", xlsx([_row(1, [_s("A1", "d")]) + _row(2, ['<c r="A2" s="1"><v>1</v></c>'])],
                                styles=styles, date1904=True), ".xlsx", "load")
    add("xlsx_three_sheets", xlsx([_simple_sheet(), _simple_sheet(2), b""], names=["data", "notes", "empty"]),
        ".xlsx", "load")
    add("xlsx_empty_sheet", xlsx([b""]), ".xlsx", "refuse", "empty")
    add("xlsx_header_only", xlsx([_row(1, [_s("A1", "a")])]), ".xlsx", "refuse", "no data rows")
    add("xlsx_bool_error_str", xlsx([_row(1, [_s("A1", "a"), _s("B1", "b"), _s("C1", "c")]) + _row(2, [
        '<c r="A2" t="b"><v>1</v></c>', '<c r="B2" t="e"><v>#N/A</v></c>', '<c r="C2" t="str"><v>x</v></c>'])]),
        ".xlsx", "load")
    add("xlsx_no_refs", xlsx([b"<row><c t=\"inlineStr\"><is><t>a</t></is></c><c t=\"inlineStr\"><is><t>b</t>"
                              b"</is></c></row><row><c><v>1</v></c><c><v>2</v></c></row>"]), ".xlsx", "load")
    add("xlsx_prefixed", xlsx([b'<?xml version="1.0"?><x:worksheet xmlns:x="http://schemas.openxmlformats.org/'
                               b'spreadsheetml/2006/main"><x:sheetData><x:row r="1"><x:c r="A1" t="inlineStr">'
                               b'<x:is><x:t>a</x:t></x:is></x:c></x:row><x:row r="2"><x:c r="A2"><x:v>5</x:v>'
                               b"</x:c></x:row></x:sheetData></x:worksheet>"]), ".xlsx", "load")
    add("xlsx_ref_out_of_sheet", xlsx([_row(1, [_s("A1", "a")]) + _row(2, ['<c r="ZZZZ2"><v>1</v></c>'])]),
        ".xlsx", "refuse")
    add("xlsx_row_out_of_sheet", xlsx([_row(1, [_s("A1", "a")]) + _row(2, ['<c r="A9999999"><v>1</v></c>'])]),
        ".xlsx", "refuse", "outside")
    add("xlsx_bad_xml", xlsx([_row(1, [_s("A1", "a")]) + b"<row r=\"2\"><c r=\"A2\"><v>1</c>"]), ".xlsx", "either")
    add("xlsx_doctype_entities", xlsx([b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaaaaaaaa">'
                                       b'<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><worksheet ' + _NS +
                                       b"><sheetData>" + _simple_sheet() + b"</sheetData></worksheet>"]),
        ".xlsx", "refuse", "DOCTYPE")
    add("xlsx_no_workbook", _zip({"a.txt": b"hello"}), ".xlsx", "refuse", "Excel")
    add("xlsx_truncated", xlsx([_simple_sheet(50)])[:-200], ".xlsx", "refuse", "Excel")
    add("xlsx_encrypted_flag", _flag_encrypted(xlsx([_simple_sheet()])), ".xlsx", "refuse")
    add("xlsx_many_members", _zip({f"junk/{i}.xml": b"" for i in range(12_000)}), ".xlsx", "refuse", "zip")
    # bombs: by declared dimension, sparse-wide, diagonal, expanded size, shared strings
    add("xlsx_declared_huge", xlsx([b'<?xml version="1.0"?><worksheet ' + _NS + b'><dimension ref="A1:XFD1048576"/>'
                                    b"<sheetData>" + _simple_sheet() + b"</sheetData></worksheet>"]),
        ".xlsx", "refuse", "declared")
    add("xlsx_sparse_wide", xlsx([_row(1, [_s("A1", "a"), _s("XFD1", "z")]) + b"".join(
        _row(r, [_n(f"A{r}", r % 5), f'<c r="XFD{r}"><v>1</v></c>']) for r in range(2, 20_000))]), ".xlsx", "load")
    add("xlsx_sparse_no_header", xlsx([_row(1, [_s("A1", "a")]) + b"".join(
        _row(r, [_n(f"A{r}", r % 5), f'<c r="XFD{r}"><v>1</v></c>']) for r in range(2, 20_000))]), ".xlsx",
        "refuse", "no name")
    add("xlsx_diagonal", xlsx([_row(1, [_s("A1", "a")]) + b"".join(
        _row(r, [f'<c r="{_letters(1 + r % 16384)}{r * 60}"><v>1</v></c>']) for r in range(2, 16_000))]),
        ".xlsx", "refuse", "cells")
    add("xlsx_bomb_xml", xlsx([_zip_bomb_member(150 << 20, b'<row><c t="inlineStr"><is><t>aaaaaaaa</t></is></c></row>')],
                              level=9), ".xlsx", "refuse", "bomb")
    add("xlsx_bomb_shared", xlsx([_simple_sheet()], shared=b"<si><t>a</t></si>" * (10 << 20), level=9),
        ".xlsx", "refuse", "bomb")
    if heavy:
        add("xlsx_many_cells", xlsx([_row(1, [_s("A1", "a"), _s("B1", "b")]) + b"".join(
            _row(r, [_n(f"A{r}", r % 97), _n(f"B{r}", r % 89)]) for r in range(2, 400_000))], level=9), ".xlsx", "load")


def _letters(index: int) -> str:
    out = ""
    while index:
        index, rem = divmod(index - 1, 26)
        out = chr(65 + rem) + out
    return out


def _zip(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return out.getvalue()


def _flag_encrypted(data: bytes) -> bytes:
    """Set the 'encrypted' bit of every central-directory entry (what a password-protected zip declares)."""
    buf = bytearray(data)
    pos = buf.find(b"PK\x01\x02")
    while pos >= 0:
        buf[pos + 8] |= 0x01
        pos = buf.find(b"PK\x01\x02", pos + 4)
    return bytes(buf)


def _parquet(table: pa.Table) -> bytes:
    out = io.BytesIO()
    pq.write_table(table, out)
    return out.getvalue()


def _parquets(add, heavy: bool) -> None:
    add("pq_good", _parquet(pa.table({"age": [30, 40, 50], "sex": ["F", "M", "F"]})), ".parquet", "load")
    add("pq_zero_rows", _parquet(pa.table({"a": pa.array([], pa.int64())})), ".parquet", "refuse", "no rows")
    add("pq_binary_utf8", _parquet(pa.table({"b": pa.array([b"abc", b"def"], pa.binary())})), ".parquet", "load")
    add("pq_binary_raw", _parquet(pa.table({"ok": [1, 2], "blob": pa.array([b"\xff\xfe\x00", b"x"], pa.binary())})),
        ".parquet", "refuse", "'blob'", "binary")
    add("pq_list", _parquet(pa.table({"l": pa.array([[1, 2], [3]])})), ".parquet", "refuse", "'l'", "flatten")
    add("pq_struct", _parquet(pa.table({"s": pa.array([{"x": 1}, {"x": 2}])})), ".parquet", "refuse", "'s'")
    add("pq_map", _parquet(pa.table({"m": pa.array([[("a", 1)], [("b", 2)]], pa.map_(pa.string(), pa.int64()))})),
        ".parquet", "refuse", "'m'")
    add("pq_types", _parquet(pa.table({
        "ts": pa.array([0, 10**15], pa.timestamp("us", tz="UTC")), "d": pa.array([0, 1000], pa.date32()),
        "dec": pa.array([1, 2], pa.decimal128(10, 2)) if False else pa.array([1.5, 2.5]),
        "dur": pa.array([1, 2], pa.duration("s")), "bool": [True, False],
        "dict": pa.array(["a", "b"]).dictionary_encode(), "f16": pa.array([1.0, 2.0], pa.float32())})),
        ".parquet", "load")
    # an all-missing column is left out (with a note), not a reason to refuse the table
    add("pq_all_null", _parquet(pa.table({"a": [1, 2], "nul": pa.array([None, None], pa.null())})), ".parquet",
        "load")
    add("pq_nan_inf", _parquet(pa.table({"x": [1.0, float("nan"), float("inf")]})), ".parquet", "load")
    add("pq_cells_bomb", _parquet(pa.table({"z": pa.array(np.zeros(25_000_000, dtype=np.int8))})), ".parquet",
        "refuse", "cells")
    add("pq_text_bomb", _parquet(pa.table({"t": pa.DictionaryArray.from_arrays(
        pa.array(np.zeros(400_000, dtype=np.int32)), pa.array(["x" * 2000]))})), ".parquet", "refuse", "bomb")
    add("pq_truncated", _parquet(pa.table({"a": [1, 2, 3]}))[:-30], ".parquet", "refuse", "Parquet")
    add("pq_dup_names", _parquet(pa.Table.from_arrays([pa.array([1]), pa.array([2])], names=["a", "a"])), ".parquet",
        "refuse")
    if heavy:
        add("pq_wide_60k", _parquet(pa.table({f"c{i}": pa.array([i]) for i in range(60_000)})), ".parquet",
            "refuse", "columns")


def _taxonomies(add) -> None:
    def tax(name, text, expect, *words, column="diagnosis", gz=False):
        data = text.encode() if isinstance(text, str) else text
        add(f"tax_{name}", gzip.compress(data) if gz else data, ".csv.gz" if gz else ".csv", expect, *words,
            kind="taxonomy", column=column)

    tax("good", "flu;infection;*\nasthma;lung;*\ncopd;lung;*\n", "load")
    tax("padded", "flu;flu;infection;*\nasthma;lung;lung;*\n", "load")
    tax("cyclic_self", "flu;lung;flu;*\nasthma;air;x;*\n", "refuse", "own ancestor")
    tax("cyclic_two", "flu;A;B;*\nasthma;B;A;*\n", "refuse", "two different groups")
    tax("mixed_level", "flu;G;K;*\nasthma;H;G;*\n", "refuse", "'G'")
    tax("value_is_group", "flu;asthma;*\nasthma;lung;*\n", "refuse")
    tax("ragged", "flu;infection;*\nasthma;*\n", "refuse", "columns")
    tax("two_roots", "flu;a;*\nasthma;b;ROOT\n", "refuse", "root")
    tax("two_parents", "flu;a;*\nflu;b;*\n", "refuse", "'flu'")
    tax("empty_label", "flu;;*\n", "refuse", "empty label")
    tax("one_column", "flu\nasthma\n", "refuse", "delimiter")
    tax("non_covering", "flu;infection;*\n", "load")  # coverage is reported when attached, not a file error
    tax("empty", "", "refuse", "no rows")
    tax("bad_quotes", 'flu;"x;*\n', "refuse")
    tax("latin1_bom", b"\xef\xbb\xbfflu;inf\xe9ction;*\n", "load")
    tax("bomb", b"a;b;*\n" * (12 << 20), "refuse", "bomb", gz=True)
    tax("gz_damaged", gzip.compress(b"flu;x;*\n")[:-6], "refuse", "gzip")
    tax("deep", ";".join(["flu"] + [f"l{i}" for i in range(900)] + ["*"]) + "\n", "load")
    tax("too_deep", ";".join(["flu"] + [f"l{i}" for i in range(3000)] + ["*"]) + "\n", "refuse", "levels",
        "PPDP_MAX_HIERARCHY_LEVELS")
    # 200,000 levels in 6 MB: the tree used to grow with the square of the depth (6.7 GB, then a MemoryError)
    tax("deep_200k", ";".join(["flu"] + [f"level{i:06d}" for i in range(200_000)] + ["*"]) + "\n", "refuse",
        "levels")
    tax("deep_rows", "".join(";".join([f"v{r}"] + [f"g{r}_{i}" for i in range(990)] + ["*"]) + "\n"
                             for r in range(40)), "load")
    tax("many_labels", "".join(f"v{i};*\n" for i in range(2_600_000)), "refuse", "labels",
        "PPDP_MAX_HIERARCHY_CELLS")
    tax("wide", "".join(f"v{i};g{i % 100};*\n" for i in range(20_000)), "load", column="diagnosis")


def _projects(add, folder: Path) -> None:
    table = folder / "project_table.csv"
    table.write_bytes(GOOD_CSV)

    def project(name, obj, expect, *words):
        data = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
        add(f"proj_{name}", data, ".ppdp.json", expect, *words, kind="project")

    base = {"schema_version": 2, "source": {"path": str(table)}, "roles": {"age": "qi"}}
    project("good", base, "load")
    project("deep_nesting", b'{"schema_version": 2, "source": {"path": "t.csv"}, "releases": '
            + b"[" * 5000 + b"]" * 5000 + b"}", "refuse")
    project("huge_int", b'{"schema_version": 2, "source": {"path": "t.csv"}, "x": ' + b"9" * 5000 + b"}", "refuse")
    project("bad_role", {**base, "roles": {"age": "boss"}}, "refuse", "role")
    project("bad_na", {**base, "na_policy": {"action": "explode"}}, "refuse")
    project("bad_kind", {**base, "kinds": {"age": "complex"}}, "refuse", "kinds")
    project("cyclic_taxonomy", {**base, "taxonomies": {"diagnosis": {"rows": [["flu", "a", "b", "*"],
                                                                              ["copd", "b", "a", "*"]]}}},
            "refuse", "diagnosis")
    project("ragged_taxonomy", {**base, "taxonomies": {"diagnosis": {"rows": [["flu", "a", "*"], ["copd", "*"]]}}},
            "refuse")
    project("future_version", {**base, "schema_version": 99}, "refuse")
    project("not_json", b"{this is not json", "refuse", "line 1")
    project("not_utf8", b'{"a": "\xff"}', "refuse", "UTF-8")
    project("nan_literal", b'{"schema_version": 2, "source": {"path": "t.csv"}, "x": NaN}', "refuse")
    project("array_root", b"[1, 2, 3]", "refuse")
    project("no_source", {"schema_version": 2}, "refuse", "table")
    project("bad_domain", {**base, "domains": {"age": {"low": "x", "high": 3}}}, "refuse")
    project("params_nested", {**base, "mechanism": {"name": "DiffGen", "params": {"epsilon": {"a": [1]}}}}, "refuse")
    project("empty", b"", "refuse")
    project("nesting_14", b'{"schema_version": 2, "source": {"path": "t.csv"}, "x": ' + b"[" * 13 + b"]" * 13 + b"}",
            "refuse", "nested")
    project("nesting_1m", b"[" * 1_000_000 + b"]" * 1_000_000, "refuse", "nested")
    project("brackets_in_strings", {**base, "releases": [{"note": "[" * 5000 + "{" * 5000}]}, "load")
    project("shell_in_param", {**base, "mechanism": {"name": "Mondrian", "params": {"k": "5; rm -rf /"}}}, "load")
    project("fifo_source", {**base, "source": {"path": str(folder / "fifo_table.csv")}}, "load")


def _special_files(add, folder: Path) -> None:
    """Paths that are not regular files: each is refused before it is read, never waited on (a FIFO opened for
    reading waits for a writer forever). Made where the system allows (no FIFOs or sockets on Windows)."""
    import os
    import socket
    made = []
    if hasattr(os, "mkfifo"):
        for kind, suffix in (("table", ".csv"), ("table", ".csv.gz"), ("table", ".parquet"), ("table", ".xlsx"),
                             ("taxonomy", ".csv"), ("project", ".ppdp.json")):
            made.append((f"fifo_{kind}", suffix, kind, "FIFO", lambda p: os.mkfifo(p)))
        os.mkfifo(folder / "fifo_table.csv")  # a project's source (proj_fifo_source): refused when loaded
    made.append(("folder_table", ".csv", "table", "folder", lambda p: p.mkdir()))
    made.append(("folder_taxonomy", ".csv", "taxonomy", "folder", lambda p: p.mkdir()))
    if os.path.exists("/dev/zero"):
        made.append(("device_table", ".csv", "table", "device", lambda p: p.symlink_to("/dev/zero")))
        made.append(("device_project", ".ppdp.json", "project", "device", lambda p: p.symlink_to("/dev/zero")))
    if hasattr(socket, "AF_UNIX"):
        def bind(p):
            with socket.socket(socket.AF_UNIX) as sock:
                sock.bind(str(p))
        made.append(("socket_table", ".csv", "table", "socket", bind))
    for i, (name, suffix, kind, word, make) in enumerate(made):
        path = folder / f"special_{i}_{name}{suffix}"
        if len(str(path)) > 100 and word == "socket":
            continue  # a socket's path is limited to ~107 bytes
        make(path)
        add(name, None, suffix, "refuse", word, kind=kind, column="diagnosis", path=path)


def _budgets(add) -> None:
    """Small files that stand for a lot of memory once their values are copied into cells."""
    big = "x" * (2 << 20)
    cells = b"".join(_row(r, ['<c r="A%d" t="s"><v>0</v></c>' % r]) for r in range(2, 1502))
    add("xlsx_shared_2mb_x1500", xlsx([_row(1, [_s("A1", "note")]) + cells], shared=f"<si><t>{big}</t></si>".encode(),
                                      level=9), ".xlsx", "refuse", "bomb", "PPDP_MAX_EXPANDED_MB")
    cells = b"".join(_row(r, ['<c r="A%d" t="s"><v>%d</v></c>' % (r, r % 40)]) for r in range(2, 20_002))
    add("xlsx_shared_40x100k_x20000", xlsx([_row(1, [_s("A1", "note")]) + cells],
                                           shared=b"".join(f"<si><t>{i}{'y' * 100_000}</t></si>".encode()
                                                           for i in range(40)), level=9), ".xlsx", "refuse", "bomb")
    # 160 distinct 1 MB strings in ~100 KB: refused from the footer's declared sizes, before a page is read
    strings = pa.array([chr(65 + i % 26) * (1 << 20) + str(i) for i in range(160)])
    out = io.BytesIO()
    pq.write_table(pa.table({"t": strings}), out, compression="zstd")
    add("pq_distinct_1mb_strings", out.getvalue(), ".parquet", "refuse", "bomb", "declare")
    add("pq_fixed_size_binary", _parquet(pa.table({"id": [1, 2, 3], "code": pa.array([b"ab", b"cd", b"ef"],
                                                                                     pa.binary(2))})),
        ".parquet", "load")
    add("csv_nul_late", b"a,b\n" + b"1,2\n" * 50_000 + b"3,\x004\n", ".csv", "refuse", "NUL", "line 50002")
    add("csv_latin1", b"name,town\nann,K\xf6ln\n", ".csv", "refuse", "0xf6", "line 2")


def _random_mutations(add, n: int, seed: int) -> None:
    """Seeded random damage to valid files: flipped bytes, cuts, inserted quotes, delimiters, NULs, BOMs."""
    rng = random.Random(seed)
    bases = [(GOOD_CSV * 20, ".csv"), (gzip.compress(GOOD_CSV * 20), ".csv.gz"),
             (xlsx([_simple_sheet(30)]), ".xlsx"), (_parquet(pa.table({"a": list(range(50)), "b": ["x"] * 50})),
                                                   ".parquet"), (GOOD_CSV.replace(b",", b"\t") * 10, ".tsv")]
    inserts = [b'"', b",", b"\n", b"\r", b"\x00", b"\xef\xbb\xbf", b"\xff", b"\t", b";", b"\xe2\x80\x8b", b"=", b"|"]
    for i in range(n):
        data, suffix = bases[i % len(bases)]
        buf = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            op = rng.random()
            at = rng.randrange(len(buf)) if buf else 0
            if op < 0.35:
                buf[at:at] = rng.choice(inserts)
            elif op < 0.6 and buf:
                buf[at] = rng.randrange(256)
            elif op < 0.8:
                del buf[at:at + rng.randint(1, 40)]
            else:
                buf = buf[: rng.randrange(len(buf) + 1)]
        add(f"mutant_{i}", bytes(buf), suffix, "either")


def run_case(case: Case, engine: str = "memory") -> tuple[str, str]:
    """Load one case the way the app does: ("load", ""), ("refused", message) or ("traceback", text). A table
    is read by `engine`: "memory" (the reader) or "duckdb" (the large-table engine, `open_large`); a project is
    read and its table loaded, as the window does."""
    import traceback

    import pandas as pd

    from ppdp_gui.engine.errors import PpdpError
    try:
        if case.kind == "table" and engine == "duckdb":
            from ppdp_gui.engine.bigdata.large_dataset import open_large
            open_large(case.path, hashes=False).table.close()
        elif case.kind == "table":
            from ppdp_gui.engine.data import read_table
            read_table(case.path)
        elif case.kind == "taxonomy":
            from ppdp_gui.engine.data import dataset_from_frame
            from ppdp_gui.engine.taxonomy.arx_io import read_arx_hierarchy
            from ppdp_gui.engine.taxonomy.coverage import check_coverage
            tax = read_arx_hierarchy(case.path, case.column)
            data = dataset_from_frame(pd.DataFrame({case.column: ["flu", "asthma", "copd"]}))
            data = data.with_column(case.column, taxonomy=tax)  # attaching checks the tree again
            check_coverage(tax, data.frame[case.column])
        else:
            from ppdp_gui.engine.persistence.project import read_recipe
            recipe = read_recipe(case.path)
            if case.name == "proj_fifo_source":
                from ppdp_gui.engine.pipeline.load import load
                try:
                    load(recipe)
                except PpdpError as exc:
                    return ("load", "") if "FIFO" in str(exc) else ("refused", str(exc))
                return "refused", "the FIFO source was read"
    except PpdpError as exc:
        return "refused", str(exc)
    except Exception:  # noqa: BLE001 - the point: any other exception is a bug
        return "traceback", traceback.format_exc()
    return "load", ""


def verdict(case: Case, outcome: str, message: str, engine: str = "memory") -> str | None:
    """What is wrong with `outcome` for `case` (read by `engine`), or None when it is right."""
    expect = case.duckdb if engine == "duckdb" else case.expect
    if outcome == "traceback":
        return f"traceback:\n{message}"
    if expect == "load" and outcome != "load":
        return f"expected a load, got: {message}"
    if expect == "refuse" and outcome != "refused":
        return "expected a refusal, but it loaded"
    if outcome == "refused":
        if case.path.name not in message:
            return f"the message does not name the file: {message}"
        words = () if engine == "duckdb" and case.name in DUCKDB_OWN_WORDS else case.words
        missing = [w for w in words if w.lower() not in message.lower()]
        if missing:
            return f"the message lacks {missing}: {message}"
    return None
