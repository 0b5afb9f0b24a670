"""The CSV writer (data/csv_writer.py) writes the bytes pandas' `to_csv` writes (issue 32, item 4): quotes,
delimiters, line breaks and carriage returns inside values, formulas (neutralised before), unicode, blanks and
missing values, numbers with many digits, categoricals, booleans, TSV — compared byte for byte with pandas,
through the export path too. And why it is not pyarrow's writer: its quoting differs."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

from ppdp_gui.engine.data import csv_rows, csv_writer
from ppdp_gui.engine.data.writer import export_table, neutralise_formulas


def tricky() -> pd.DataFrame:
    texts = ["plain", "", None, "a,b", 'say "hi"', "two\nlines", "cr\ronly", "crlf\r\nend", " lead", "trail ",
             "=SUM(A1)", "+1", "-x", "@me", "'quoted", "ünïcødé ✓", "日本語", "\t tab", "tab\tin", "x;y"]
    n = len(texts)
    floats = [0.1 + 0.2, 1e20, -0.0, 1e-7, 123456789.123456789, np.nan, 1.0, 2 ** 53 + 1.0, 5e-324, 3.0,
              -1.5, 100.0, 1e16, 12345678901234567890.0, 0.5, np.nan, 7.25, 1 / 3, 2.0 / 3, 99.99]
    return pd.DataFrame({
        "text": pd.Series(texts, dtype=object),
        "str dtype": pd.Series(texts, dtype="str"),
        "category": pd.Categorical(texts[::-1]),
        "int": np.arange(n, dtype=np.int64) * 10 ** 17 - 5,
        "uint": np.arange(n, dtype=np.uint64) + np.uint64(2 ** 63),
        "float": floats,
        "float32": np.array(floats, dtype=np.float32),
        "bool": [i % 3 == 0 for i in range(n)],
        "name, with comma": ["x"] * n,
        'quote"name': ["y"] * n,
        "number category": pd.Categorical([1.5, 2.0, np.nan, 4.25] * (n // 4)),
    })


def pandas_bytes(frame: pd.DataFrame, sep: str = ",") -> bytes:
    buf = io.BytesIO()
    frame.to_csv(buf, sep=sep, index=False, lineterminator="\r\n", encoding="utf-8")
    return buf.getvalue()


@pytest.mark.parametrize("sep", [",", "\t"])
def test_same_bytes_as_pandas_on_tricky_values(tmp_path, sep):
    frame = neutralise_formulas(tricky())
    assert csv_writer.coded_columns(frame) is not None  # the fast path, not the fallback
    out = tmp_path / "t.csv"
    csv_writer.write_csv(frame, out, sep=sep)
    assert out.read_bytes() == pandas_bytes(frame, sep)


def test_same_bytes_over_several_chunks(tmp_path, monkeypatch):
    monkeypatch.setattr(csv_rows, "CHUNK_BYTES", 7)
    frame = neutralise_formulas(pd.concat([tricky()] * 3, ignore_index=True))
    csv_writer.write_csv(frame, tmp_path / "t.csv")
    assert (tmp_path / "t.csv").read_bytes() == pandas_bytes(frame)


@pytest.mark.parametrize("frame", [
    pd.DataFrame({"only": ["a", "", None]}),  # one column: the csv module writes an empty field as ""
    pd.DataFrame({"when": pd.to_datetime(["2020-01-02 00:00", "2021-03-04 10:30"]), "x": [1, 2]}),
    pd.DataFrame({"nullable": pd.array([1, None], dtype="Int64"), "x": ["a", "b"]}),
    pd.DataFrame({"mixed": pd.Series([1, "a"], dtype=object), "x": ["a", "b"]}),
    pd.DataFrame({1: ["a", "b"], "x": ["a", "b"]}),
])
def test_other_kinds_go_through_pandas_with_the_same_bytes(tmp_path, frame):
    assert csv_writer.coded_columns(frame) is None
    csv_writer.write_csv(frame, tmp_path / "t.csv")
    assert (tmp_path / "t.csv").read_bytes() == pandas_bytes(frame)


def test_export_writes_the_csv_writers_bytes(tmp_path):
    frame = tricky()
    export_table(frame, tmp_path / "release.csv")
    export_table(frame, tmp_path / "release.tsv")
    assert (tmp_path / "release.csv").read_bytes() == pandas_bytes(neutralise_formulas(frame))
    assert (tmp_path / "release.tsv").read_bytes() == pandas_bytes(neutralise_formulas(frame), "\t")


def test_pyarrow_writer_would_not_give_the_same_bytes():
    """Why this writer exists: pyarrow's "needed" quoting encloses every text value in quotes."""
    import pyarrow as pa
    import pyarrow.csv as pacsv
    frame = pd.DataFrame({"sex": ["F", "M"], "zip": ["130", "148"]})
    buf = io.BytesIO()
    pacsv.write_csv(pa.Table.from_pandas(frame, preserve_index=False), buf,
                    pacsv.WriteOptions(quoting_style="needed", eol="\r\n"))
    assert buf.getvalue() != pandas_bytes(frame)


def test_object_columns_coded_by_object_then_by_value():
    """Equal texts held by different objects get one code, as pandas' factorize gives; None and NaN are missing."""
    same = "ab"
    other = "".join(["a", "b"])
    assert other is not same
    values = np.array([same, other, None, same, np.nan, "c", other] * 3, dtype=object)
    codes, uniques = csv_writer.factorize_objects(values)
    expected_codes, expected_uniques = pd.factorize(values)
    assert list(uniques) == list(expected_uniques) == ["ab", "c"]
    assert codes.tolist() == expected_codes.tolist()
