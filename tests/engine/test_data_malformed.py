"""Malformed files: one DataError that says where (line, column), never a traceback, never a partial load."""

import gzip
import io
import zipfile

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ppdp_gui.engine.data import Dataset, NAPolicy, read_table
from ppdp_gui.engine.errors import DataError

GOOD = "age,sex,zip\n34,F,02139\n51,M,02140\n29,F,02141\n"

# name -> (file bytes, suffix, expected line, expected column, words the message must contain)
CORPUS = {
    "too many fields": (b"age,sex,zip\n34,F,02139\n51,M,02140,extra\n", ".csv", 3, 4, ["expected 3", "found 4"]),
    "too few fields": (b"a;b;c\n1;2;3\n4;5;6\n7;8\n9;9;9\n", ".csv", 4, 3, ["expected 3", "found 2", "semicolon"]),
    "ragged after quoted newline": (b'a,b\n"x\ny",1\n2,3,4\n', ".csv", 4, 3, ["expected 2", "found 3"]),
    "unclosed quote": (b'a,b\n1,2\n3,"oops\n5,6\n', ".csv", 3, None, ["quoted field", "line 3"]),
    "bad utf-8": (b"name,city\nAnn,Paris\nBob,K\xf6ln\n", ".csv", 3, 6, ["0xf6", "UTF-8", "latin-1"]),
    "nul byte (binary)": (b"a,b\n1,2\n3,\x00\x01\x02\n", ".csv", 3, 3, ["NUL", "binary"]),
    "utf-16 text": ("a,b\n1,2\n".encode("utf-16"), ".csv", 1, 4, ["NUL", "UTF-16"]),
    "empty file": (b"", ".csv", 1, None, ["empty"]),
    "blank lines only": (b"\n \r\n\t\n", ".csv", 1, None, ["empty"]),
    "header only": (b"age,sex,zip\n", ".csv", 2, None, ["header", "no data rows"]),
    "header then blank lines": (b"age,sex\n\n\n", ".tsv", 2, None, ["no data rows"]),
    "duplicate header": (b"age,sex,age\n1,F,2\n", ".csv", 1, 3, ["'age'", "column 1", "unique"]),
    "blank header": (b"age,,zip\n1,F,2\n", ".csv", 1, 2, ["no name"]),
    "blank header in tsv": (b"age\t \n1\tF\n", ".tsv", 1, 2, ["no name"]),
}


@pytest.mark.parametrize("name", list(CORPUS))
def test_corpus_message_names_line_and_column(tmp_path, name):
    data, suffix, line, column, words = CORPUS[name]
    path = tmp_path / f"bad{suffix}"
    path.write_bytes(data)
    with pytest.raises(DataError) as err:
        read_table(path)
    exc = err.value
    assert (exc.line, exc.column) == (line, column), str(exc)
    text = str(exc)
    assert str(path) in text and f"line {line}" in text
    if column is not None:
        assert f"column {column}" in text
    for word in words:
        assert word in text, text


def test_trailing_delimiter_column_without_values_is_dropped(tmp_path):
    path = tmp_path / "t.csv"
    path.write_bytes(b"a,b,\n1,x,\n2,y, \n")
    ds = read_table(path)
    assert list(ds.frame.columns) == ["a", "b"] and ds.n_rows == 2
    path.write_bytes(b"a,b,\n1,x,\n2,y,z\n")  # a value without a column name is an error
    with pytest.raises(DataError) as err:
        read_table(path)
    assert (err.value.line, err.value.column) == (1, 3)


def test_gzipped_ragged_file_reports_line(tmp_path):
    path = tmp_path / "bad.csv.gz"
    path.write_bytes(gzip.compress(b"a,b\n1,2\n3\n"))
    with pytest.raises(DataError) as err:
        read_table(path)
    assert err.value.line == 3 and "found 1" in str(err.value)


def test_truncated_gzip(tmp_path):
    path = tmp_path / "cut.csv.gz"
    path.write_bytes(gzip.compress(GOOD.encode() * 50)[:-20])
    with pytest.raises(DataError, match="gzip"):
        read_table(path)


def test_gzip_bomb_limited(tmp_path):
    path = tmp_path / "big.csv.gz"
    path.write_bytes(gzip.compress(b"a,b\n" + b"1,2\n" * 100_000))
    with pytest.raises(DataError, match="unpacks to more than"):
        read_table(path, max_bytes=100_000)


def test_size_limit(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text(GOOD * 100, encoding="utf-8")
    with pytest.raises(DataError, match="more than the limit"):
        read_table(path, max_bytes=1000)


@pytest.mark.parametrize("content, match", [
    (b"PK\x03\x04 this is not a zip", "Excel workbook"),
    (b"not a workbook at all", "not one"),
])
def test_unreadable_xlsx(tmp_path, content, match):
    path = tmp_path / "t.xlsx"
    path.write_bytes(content)
    with pytest.raises(DataError, match=match):
        read_table(path)


def test_zip_that_is_not_a_workbook(tmp_path):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("hello.txt", "hi")
    path = tmp_path / "t.xlsx"
    path.write_bytes(buf.getvalue())
    with pytest.raises(DataError, match="Excel workbook"):
        read_table(path)


def test_xlsx_header_only_and_blank_header(tmp_path):
    import openpyxl

    book = openpyxl.Workbook()
    book.active.append(["age", "sex"])
    book.save(tmp_path / "h.xlsx")
    with pytest.raises(DataError) as err:
        read_table(tmp_path / "h.xlsx")
    assert err.value.line == 2 and "no data rows" in str(err.value)
    book.active.append([30, "F", "extra"])
    book.save(tmp_path / "b.xlsx")
    with pytest.raises(DataError) as err:
        read_table(tmp_path / "b.xlsx")
    assert (err.value.line, err.value.column) == (1, 3)


def test_unreadable_parquet(tmp_path):
    path = tmp_path / "t.parquet"
    path.write_bytes(b"PAR1" + b"\x00garbage" * 10)
    with pytest.raises(DataError, match="Parquet"):
        read_table(path)
    pd.DataFrame({"a": pd.Series([], dtype="int64")}).to_parquet(tmp_path / "empty.parquet")
    with pytest.raises(DataError, match="no rows"):
        read_table(tmp_path / "empty.parquet")


def test_old_xls(tmp_path):
    path = tmp_path / "t.xls"
    path.write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 100)
    with pytest.raises(DataError, match=".xlsx"):
        read_table(path)


def test_missing_file_and_folder(tmp_path):
    with pytest.raises(DataError, match="no such file"):
        read_table(tmp_path / "nope.csv")
    with pytest.raises(DataError, match="folder"):
        read_table(tmp_path)


def test_every_row_missing(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("a,b\n1,?\n?,2\n", encoding="utf-8")
    with pytest.raises(DataError, match="every one of the 2 rows"):
        read_table(path, na_policy=NAPolicy(action="drop"))
    assert read_table(path).n_rows == 2  # kept by default


SUFFIXES = [".csv", ".tsv", ".txt", ".csv.gz", ".xlsx", ".parquet", ""]


def _check_outcome(path):
    try:
        ds = read_table(path)
    except DataError as exc:
        assert str(exc)
        return
    assert isinstance(ds, Dataset) and ds.n_rows + ds.source.n_rows_dropped == ds.source.n_rows_read
    assert ds.n_rows > 0 and list(ds.frame.columns) == [c.name for c in ds.schema]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=400), suffix=st.sampled_from(SUFFIXES))
def test_random_bytes_give_dataset_or_data_error(tmp_path, data, suffix):
    path = tmp_path / f"random{suffix}"
    path.write_bytes(data)
    _check_outcome(path)


CSV_ALPHABET = st.sampled_from(list('ab1 0.5-?,;|\t"\n\r') + ["NA", "é", "\ufeff", "=1+1"])


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pieces=st.lists(CSV_ALPHABET, max_size=80), gz=st.booleans())
def test_random_csv_like_text_gives_dataset_or_data_error(tmp_path, pieces, gz):
    data = "".join(pieces).encode("utf-8")
    path = tmp_path / ("t.csv.gz" if gz else "t.csv")
    path.write_bytes(gzip.compress(data) if gz else data)
    _check_outcome(path)
