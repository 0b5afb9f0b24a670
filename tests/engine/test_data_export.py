"""Export: atomic, never over the source, spreadsheet formulas neutralised (text only), JSON/text helpers."""

import json
import os
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from ppdp_gui.engine.data import Role, SourceInfo, read_table
from ppdp_gui.engine.data import writer
from ppdp_gui.engine.data.writer import export_table, neutralise_formulas, write_json_atomic, write_text_atomic
from ppdp_gui.engine.errors import DataError

RISKY = ["=1+1", "+SUM(A1)", "-2+3", "@cmd", "\tx", "\rx", "=HYPERLINK(\"http://e\")"]
SAFE = ["-5", "+3", "-2.5e3", "ok", "a=b", ""]


@pytest.fixture
def frame():
    text = RISKY + SAFE
    n = len(text)
    return pd.DataFrame({"text": pd.Series(text, dtype="str"), "obj": pd.Series(text, dtype=object),
                         "num": np.arange(n) - 5, "real": np.linspace(-1, 1, n)})


def test_neutralise_only_risky_text(frame):
    out = neutralise_formulas(frame)
    for col in ("text", "obj"):
        assert out[col].tolist() == ["'" + v for v in RISKY] + SAFE
    assert out["num"].dtype == np.int64 and out["num"].iloc[0] == -5
    assert out["real"].equals(frame["real"])
    assert frame["text"].iloc[0] == "=1+1"  # input untouched
    assert list(neutralise_formulas(pd.DataFrame({"=bad": [1], "-5": [2]})).columns) == ["'=bad", "-5"]


@pytest.mark.parametrize("suffix", [".csv", ".tsv"])
def test_text_export_round_trip(tmp_path, frame, suffix):
    out = export_table(frame, tmp_path / f"r{suffix}")
    assert out == tmp_path / f"r{suffix}"
    back = pd.read_csv(out, sep="\t" if suffix == ".tsv" else ",", dtype=str, keep_default_na=False)
    assert back["text"].tolist() == ["'" + v for v in RISKY] + SAFE
    assert back["num"].tolist()[:2] == ["-5", "-4"]  # numbers stay plain numbers
    assert os.listdir(tmp_path) == [out.name]


def test_xlsx_cells_are_text_not_formulas(tmp_path, frame):
    import openpyxl

    out = export_table(frame, tmp_path / "r.xlsx")
    sheet = openpyxl.load_workbook(out).active
    cells = [row for row in sheet.iter_rows(min_row=2, values_only=False)]
    first = cells[0]
    assert first[0].data_type == "s" and first[0].value == "'=1+1"
    assert first[2].data_type == "n" and first[2].value == -5
    assert all(row[0].data_type != "f" for row in cells)


def test_parquet_keeps_values_verbatim(tmp_path, frame):
    out = export_table(frame, tmp_path / "r.parquet")
    back = pd.read_parquet(out)
    assert back["text"].tolist() == RISKY + SAFE  # not a spreadsheet format: no apostrophes


def test_refuses_to_overwrite_source(tmp_path):
    src = tmp_path / "data.csv"
    src.write_text("a,b\n" + "".join(f"{i},{i % 2}\n" for i in range(20)), encoding="utf-8")
    ds = read_table(src)
    before = src.read_bytes()
    with pytest.raises(DataError, match="never overwrite"):
        export_table(ds.frame, src, source=ds.source)
    (tmp_path / "sub").mkdir()
    with pytest.raises(DataError, match="never overwrite"):  # same file by another spelling
        export_table(ds.frame, tmp_path / "sub" / ".." / "data.csv", source=ds.source)
    link = tmp_path / "hard.csv"
    os.link(src, link)  # same inode, different name
    with pytest.raises(DataError, match="never overwrite"):
        export_table(ds.frame, link, source=ds.source)
    sym = tmp_path / "sym.csv"
    sym.symlink_to(src)
    with pytest.raises(DataError, match="never overwrite"):
        export_table(ds.frame, sym, source=ds.source)
    assert src.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["data.csv", "hard.csv", "sub", "sym.csv"]
    export_table(ds.frame, tmp_path / "release.csv", source=ds.source)  # any other name is fine


def test_failure_leaves_old_file_and_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "release.csv"
    target.write_text("old\n", encoding="utf-8")

    def broken_replace(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(writer.os, "replace", broken_replace)
    with pytest.raises(DataError, match="No space left"):
        export_table(pd.DataFrame({"a": [1, 2]}), target)
    assert target.read_text(encoding="utf-8") == "old\n"
    assert os.listdir(tmp_path) == ["release.csv"]


def test_xlsx_control_character_is_a_clear_error(tmp_path):
    with pytest.raises(DataError, match="control character"):
        export_table(pd.DataFrame({"a": ["ok", "bad\x01"]}), tmp_path / "r.xlsx")
    assert os.listdir(tmp_path) == []


def test_bad_targets(tmp_path):
    df = pd.DataFrame({"a": [1]})
    with pytest.raises(DataError, match=".doc"):
        export_table(df, tmp_path / "r.doc")
    with pytest.raises(DataError, match="folder"):
        export_table(df, tmp_path)
    with pytest.raises(DataError, match="does not exist"):
        export_table(df, tmp_path / "missing" / "r.csv")
    assert os.listdir(tmp_path) == []


def test_exported_release_reads_back_as_same_dataset(tmp_path, shared_data):
    ds = read_table(shared_data / "iris" / "iris.csv")
    source = SourceInfo(path=str(shared_data / "iris" / "iris.csv"))
    for suffix in (".csv", ".tsv", ".xlsx", ".parquet"):
        back = read_table(export_table(ds.frame, tmp_path / f"iris{suffix}", source=source))
        pd.testing.assert_frame_equal(back.frame, ds.frame)


def test_json_and_text_atomic(tmp_path):
    path = write_json_atomic({"epsilon": Fraction(1, 3), "k": np.int64(5), "role": Role.CLASS,
                              "values": np.array([1.5, 2.0]), "where": tmp_path, "cols": ("a", "b")},
                             tmp_path / "report.json")
    assert json.loads(path.read_text(encoding="utf-8")) == {
        "epsilon": "1/3", "k": 5, "role": "class", "values": [1.5, 2.0], "where": str(tmp_path), "cols": ["a", "b"]}
    with pytest.raises(DataError, match="JSON"):
        write_json_atomic({"x": float("nan")}, tmp_path / "bad.json")
    with pytest.raises(DataError, match="JSON"):
        write_json_atomic({"x": object()}, tmp_path / "bad.json")
    text = write_text_atomic("héllo\n", tmp_path / "note.txt")
    assert text.read_text(encoding="utf-8") == "héllo\n"
    write_text_atomic("second\n", text)
    assert text.read_text(encoding="utf-8") == "second\n"
    assert sorted(os.listdir(tmp_path)) == ["note.txt", "report.json"]


def test_categorical_cells_are_neutralised_like_text():
    """Released tables are mostly categorical: their formula-like values must be neutralised too."""
    from ppdp_gui.engine.data.writer import neutralise_formulas
    col = pd.Series(pd.Categorical(["=SUM(A1)", "ok", "-5", "@x", "ok"]))
    out = neutralise_formulas(pd.DataFrame({"c": col}))
    assert out["c"].astype(str).tolist() == ["'=SUM(A1)", "ok", "-5", "'@x", "ok"]
