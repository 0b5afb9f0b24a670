"""The streaming XLSX writer: every value reads back as the reader shows it (with calamine and with openpyxl),
texts never become formulas, Excel's own escapes survive, one table gives one file, and each export keeps its note.
Speed is printed by benchmarks/bench_export.py, never asserted here."""

import datetime as dt
import json
import zipfile

import numpy as np
import pandas as pd
import pytest

from ppdp_gui.engine.data import NAPolicy, Role, dataset_from_frame, read_table
from ppdp_gui.engine.data.writer import export_table
from ppdp_gui.engine.data.xlsx_stream import column_letters, factorize_exact, read_xlsx_text, write_xlsx
from ppdp_gui.engine.errors import DataError
from ppdp_gui.engine.noise import NoiseSource
from ppdp_gui.engine.pipeline import default_note_path, export, plan, run_release

TEXTS = ["_x0041_", "a\rb", "a\r\nb", " lead", "trail ", "tab\tx", "é€😀", "<&>\"'", "", "x_x00zz_y", "'=1"]


def tricky() -> pd.DataFrame:
    n = len(TEXTS)
    return pd.DataFrame({
        "text": TEXTS,
        "flag": [True, False] * 5 + [True],
        "big": [2**60, 5, -3, 2**53, 2**53 - 1, 0, 1, 2, 3, 4, 5],
        "real": [1.0, 0.1, float("inf"), float("-inf"), np.nan, 1e20, 1e-7, 2.5, 3.0, 123456789.125, -7.25],
        "band": pd.Categorical(["[0, 10)", None, "[10, 20)"] * 3 + ["[0, 10)", "[10, 20)"]),
        "count": pd.array([1, None, 3] * 3 + [1, 2], dtype="Int64"),
        "when": [dt.date(2020, 1, 2), dt.datetime(2020, 1, 2, 10, 30), dt.datetime(2020, 1, 3)] * 3 + [None, None],
        "mixed": [1, 1.0, True, "1", None, 2.5, "a", 3, 4, 5, 6],
    }, index=range(100, 100 + n))


EXPECTED = {
    "text": TEXTS,
    "flag": ["True", "False"] * 5 + ["True"],
    "big": [str(2**60), "5", "-3", str(2**53), str(2**53 - 1), "0", "1", "2", "3", "4", "5"],
    "real": ["1", "0.1", "inf", "-inf", "", "1e+20", "1e-07", "2.5", "3", "123456789.125", "-7.25"],
    "band": ["[0, 10)", "", "[10, 20)"] * 3 + ["[0, 10)", "[10, 20)"],
    "count": ["1", "", "3"] * 3 + ["1", "2"],
    "when": ["2020-01-02", "2020-01-02 10:30:00", "2020-01-03"] * 3 + ["", ""],
    "mixed": ["1", "1", "True", "1", "", "2.5", "a", "3", "4", "5", "6"],
}


def test_every_value_reads_back_as_text(tmp_path):
    path = tmp_path / "t.xlsx"
    write_xlsx(tricky(), path)
    back = read_xlsx_text(path)
    assert list(back.columns) == list(EXPECTED)
    for col, want in EXPECTED.items():
        assert back[col].tolist() == want, col


def test_openpyxl_sees_the_same_cells_and_types(tmp_path):
    import openpyxl

    path = tmp_path / "t.xlsx"
    write_xlsx(tricky(), path)
    sheet = openpyxl.load_workbook(path).active
    assert sheet.title == "release"
    rows = list(sheet.iter_rows(min_row=2, values_only=False))
    assert [r[0].value for r in rows] == TEXTS  # _x0041_, CR, spaces and tabs survive Excel's unescaping
    assert all(r[0].data_type == "s" for r in rows if r[0].value)  # text, never a formula
    assert rows[0][1].value is True and rows[1][2].value == 5
    assert rows[0][2].value == str(2**60) and rows[3][2].value == str(2**53)  # beyond 2^53: exact text
    assert rows[1][3].value == 0.1 and rows[4][3].value is None and rows[2][3].value == "inf"
    assert [rows[i][7].value for i in range(3)] == [1, 1.0, True]  # 1, 1.0 and True are not merged


def test_read_table_reads_it_like_before(tmp_path):
    frame = tricky().drop(columns=["when", "mixed"])
    frame["real"] = frame["real"].replace([np.inf, -np.inf], np.nan)  # the exporter refuses infinities (a '-inf' formula)
    out = export_table(frame, tmp_path / "r.xlsx")
    back = read_table(out, na_policy=NAPolicy(tokens=(), action="category"), kinds={"big": "categorical"})
    assert back.frame["text"].tolist()[:3] == ["_x0041_", "a\rb", "a\r\nb"]  # openpyxl, the reader's engine
    assert back.frame["big"].tolist()[:4] == [str(2**60), "5", "-3", str(2**53)]


def test_factorize_exact_keeps_types_apart():
    codes, uniques = factorize_exact(np.array([1, 1.0, True, 1, None, np.nan, "1"], dtype=object))
    assert [type(u).__name__ for u in uniques] == ["int", "float", "bool", "str"]
    assert codes.tolist()[:4] == [0, 1, 2, 0] and codes[4] == -1 and codes[5] == -1


def test_column_letters():
    assert [column_letters(i) for i in (0, 25, 26, 51, 52, 701, 702, 16383)] == \
        ["A", "Z", "AA", "AZ", "BA", "ZZ", "AAA", "XFD"]


def test_same_table_same_bytes_and_chunks_do_not_matter(tmp_path):
    frame = pd.DataFrame({"a": np.arange(1000) % 7, "b": [f"v{i % 13}" for i in range(1000)]})
    write_xlsx(frame, tmp_path / "one.xlsx")
    write_xlsx(frame, tmp_path / "two.xlsx")
    steps = []
    write_xlsx(frame, tmp_path / "chunked.xlsx", chunk_rows=64, progress=steps.append)
    assert (tmp_path / "one.xlsx").read_bytes() == (tmp_path / "two.xlsx").read_bytes()
    with zipfile.ZipFile(tmp_path / "one.xlsx") as a, zipfile.ZipFile(tmp_path / "chunked.xlsx") as b:
        assert a.read("xl/worksheets/sheet1.xml") == b.read("xl/worksheets/sheet1.xml")
    assert len(steps) == 16 and steps[-1] == 1.0 and steps == sorted(steps)


def test_progress_can_cancel(tmp_path):
    frame = pd.DataFrame({"a": np.arange(100)})

    def stop(fraction):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_xlsx(frame, tmp_path / "c.xlsx", chunk_rows=10, progress=stop)


@pytest.mark.parametrize("bad, match", [("bad\x01", "row 2 holds a control character"),
                                        ("x" * 40_000, "longer than Excel")])
def test_what_excel_cannot_hold_is_refused_by_row(tmp_path, bad, match):
    with pytest.raises(DataError, match=match):
        export_table(pd.DataFrame({"a": ["ok", bad]}), tmp_path / "r.xlsx")
    assert list(tmp_path.iterdir()) == []


def test_empty_table_is_a_header_only_sheet(tmp_path):
    path = tmp_path / "e.xlsx"
    write_xlsx(pd.DataFrame({"a": pd.Series([], dtype=object), "b": pd.Series([], dtype=float)}), path)
    import openpyxl
    assert [c.value for c in next(openpyxl.load_workbook(path).active.iter_rows())] == ["a", "b"]


# ---- release notes: one per exported file; an earlier release's note is kept, never lost ------------------------
def _release(seed):
    r = np.random.default_rng(0)
    frame = pd.DataFrame({"age": r.integers(0, 100, 400), "sex": r.choice(["F", "M"], 400)})
    data = dataset_from_frame(frame, roles={"age": Role.QUASI_IDENTIFIER, "sex": Role.QUASI_IDENTIFIER})
    planned = plan(data, "Mondrian", {"k": 20})
    return list(run_release(planned, rng=NoiseSource.for_tests(seed), seed=seed))[-1]


def test_note_name_follows_the_file():
    assert default_note_path("/x/release.csv").name == "release.csv.release-note.json"
    assert default_note_path("/x/release.xlsx").name == "release.xlsx.release-note.json"


def test_csv_and_xlsx_of_one_release_keep_both_notes(tmp_path):
    published = _release(1)
    for suffix in (".csv", ".xlsx"):
        out = tmp_path / f"release{suffix}"
        export(published, out, note_path=default_note_path(out))
    notes = {p.name: json.loads(p.read_text()) for p in tmp_path.glob("*.release-note.json")}
    assert sorted(notes) == ["release.csv.release-note.json", "release.xlsx.release-note.json"]
    assert {n["files"][0]["file"] for n in notes.values()} == {"release.csv", "release.xlsx"}
    export(published, tmp_path / "release.csv", note_path=default_note_path(tmp_path / "release.csv"))
    assert len(list(tmp_path.glob("*.json"))) == 2  # the same release again: its own note rewritten


def test_a_later_release_keeps_the_earlier_note_under_its_id(tmp_path):
    first, second = _release(1), _release(2)
    assert first.release_id != second.release_id
    out, note = tmp_path / "release.csv", tmp_path / "release.csv.release-note.json"
    export(first, out, note_path=note)
    earlier = note.read_bytes()
    ex = export(second, out, note_path=note)
    kept = tmp_path / f"release.csv.release-note.{first.release_id}.json"
    assert ex.kept_notes == [kept] and kept.read_bytes() == earlier
    assert json.loads(note.read_text())["release_id"] == second.release_id


def test_an_unrelated_file_is_never_replaced_by_a_note(tmp_path):
    mine = tmp_path / "notes.json"
    mine.write_text('{"my": "own file"}')
    with pytest.raises(DataError, match="not a release note"):
        export(_release(1), tmp_path / "r.csv", note_path=mine)
    assert mine.read_text() == '{"my": "own file"}' and not (tmp_path / "r.csv").exists()


def test_no_zip64_records_in_ordinary_files(tmp_path):
    """Excel has refused workbooks with needless ZIP64 records: an ordinary release has none."""
    path = tmp_path / "r.xlsx"
    write_xlsx(pd.DataFrame({"a": np.arange(2000), "b": ["x"] * 2000}), path)
    raw = path.read_bytes()
    assert b"PK\x06\x06" not in raw and b"PK\x06\x07" not in raw  # ZIP64 end records
    with zipfile.ZipFile(path) as book:
        infos = book.infolist()
    assert infos[0].filename == "[Content_Types].xml"
    for info in infos:  # the local headers' extra-field length (bytes 28-29) is 0: no ZIP64 field
        header = raw[info.header_offset: info.header_offset + 30]
        assert header[:4] == b"PK\x03\x04" and int.from_bytes(header[28:30], "little") == 0, info.filename
