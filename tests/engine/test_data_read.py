"""Reading real tables: row counts from the datasets' README, sniffed delimiters, typing rule, roles, formats."""

import gzip
import hashlib

import numpy as np
import pandas as pd
import pytest

from ppdp_gui.engine.data import (NAPolicy, Role, dataset_from_frame, guess_roles, kind_rule_text, read_table,
                                  role_rule_text)
from ppdp_gui.engine.errors import DataError
from ppdp_gui.engine.package_files import sample_table

ARX_ADULT = ("adult", "hierarchies", "arx", "adult.csv.gz")


def kinds_of(ds):
    return {c.name: c.kind for c in ds.schema}


def roles_of(ds):
    return {c.name: c.role for c in ds.schema}


@pytest.fixture(scope="module")
def adult_all(shared_data):
    return read_table(shared_data / "adult" / "adult_all.csv.gz", na_policy=NAPolicy(action="drop"))


def test_adult_all_drops_rows_with_question_marks(adult_all, shared_data):
    path = shared_data / "adult" / "adult_all.csv.gz"
    src = adult_all.source
    assert (src.n_rows_read, src.n_rows_dropped, adult_all.n_rows) == (48_842, 3_620, 45_222)
    assert src.delimiter == "," and src.file_format == "csv.gz"
    assert src.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert src.path == str(path.resolve())
    assert not adult_all.frame.isin(["?"]).any().any()
    assert list(adult_all.frame.index) == list(range(45_222))
    # train part alone is the classic 30,162 rows
    assert (adult_all.frame["split"] == "train").sum() == 30_162


def test_adult_all_kinds_and_roles(adult_all):
    kinds = kinds_of(adult_all)
    assert {c for c, k in kinds.items() if k == "numeric"} == {
        "age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week"}
    assert adult_all.frame["age"].dtype == np.int64
    assert adult_all.frame["age"].min() == 17 and adult_all.frame["age"].max() == 90
    roles = roles_of(adult_all)
    assert adult_all.class_column == "income"
    assert set(adult_all.frame["income"].unique()) == {"<=50K", ">50K"}
    assert {"age", "sex", "race", "education", "marital-status", "native-country"} <= set(adult_all.quasi_identifiers)
    assert roles["fnlwgt"] == Role.INSENSITIVE and roles["hours-per-week"] == Role.INSENSITIVE


def test_adult_missing_as_category(shared_data):
    ds = read_table(shared_data / "adult" / "adult_all.csv.gz", na_policy=NAPolicy(action="category"))
    assert ds.n_rows == 48_842 and ds.source.n_rows_dropped == 0
    # rows with any '?' = 48,842 - 45,222; the label replaces every one of them
    has_missing = ds.frame.isin(["(missing)"]).any(axis=1)
    assert has_missing.sum() == 48_842 - 45_222
    assert (ds.frame["workclass"] == "(missing)").sum() == 2_799


def test_arx_adult_semicolon_sniffed(shared_data):
    ds = read_table(shared_data.joinpath(*ARX_ADULT))
    assert ds.source.delimiter == ";"
    assert ds.frame.shape == (30_162, 9)
    assert list(ds.frame.columns) == ["sex", "age", "race", "marital-status", "education", "native-country",
                                      "workclass", "occupation", "salary-class"]
    assert kinds_of(ds)["age"] == "numeric"
    assert ds.class_column == "salary-class"
    assert (ds.frame["salary-class"] == ">50K").sum() == 7_508


def test_iris(shared_data):
    ds = read_table(shared_data / "iris" / "iris.csv")
    assert ds.frame.shape == (150, 5)
    assert [c.kind for c in ds.schema] == ["numeric"] * 4 + ["categorical"]
    assert ds.frame["sepal-length"].dtype == np.float64
    assert ds.frame["sepal-length"].sum() == pytest.approx(876.5)
    assert ds.frame["class"].value_counts().tolist() == [50, 50, 50]
    assert ds.class_column == "class"


def test_bundled_sample_matches_arx_adult(shared_data):
    sample = read_table(sample_table())
    arx = read_table(shared_data.joinpath(*ARX_ADULT))
    assert sample.source.delimiter == ","
    pd.testing.assert_frame_equal(sample.frame, arx.frame)
    assert kinds_of(sample) == kinds_of(arx)


@pytest.mark.parametrize("delimiter", [",", ";", "\t", "|"])
def test_delimiters_sniffed(tmp_path, delimiter):
    rows = [["id", "age", "zip", "diagnosis"]] + [[str(i), str(20 + i), f"0213{i % 10}", "flu, mild"] for i in range(30)]
    quoted = [[f'"{v}"' if "," in v else v for v in r] for r in rows]
    path = tmp_path / "t.csv"
    path.write_text("\n".join(delimiter.join(r) for r in quoted) + "\n", encoding="utf-8")
    ds = read_table(path)
    assert ds.source.delimiter == delimiter
    assert ds.frame.shape == (30, 4)
    assert ds.frame["diagnosis"].iloc[0] == "flu, mild"
    k = kinds_of(ds)
    assert k["age"] == "numeric" and k["zip"] == "categorical"  # leading zeros make a code
    r = roles_of(ds)
    assert r["id"] == Role.IDENTIFIER and r["zip"] == Role.QUASI_IDENTIFIER and r["diagnosis"] == Role.SENSITIVE


def test_tsv_gzip_bom_crlf_and_quoted_newlines(tmp_path):
    text = '\ufeffname,note,score\r\n"Ann","line one\r\nline two",1\r\n\r\nBob, spaced ,2\r\n'
    path = tmp_path / "t.tsv.gz"
    path.write_bytes(gzip.compress(text.replace(",", "\t").encode("utf-8")))
    ds = read_table(path)
    assert ds.source.file_format == "tsv.gz" and ds.source.delimiter == "\t"
    assert list(ds.frame.columns) == ["name", "note", "score"]
    assert ds.frame["note"].tolist() == ["line one\r\nline two", "spaced"]
    assert kinds_of(ds)["score"] == "categorical"  # only 2 distinct values


def test_latin1_only_when_asked(tmp_path):
    path = tmp_path / "t.csv"
    path.write_bytes("ville,n\nSète,1\nNîmes,2\n".encode("latin-1"))
    with pytest.raises(DataError) as err:
        read_table(path)
    assert err.value.line == 2 and err.value.column == 2  # the byte after "S"
    ds = read_table(path, encoding="latin-1")
    assert ds.frame["ville"].tolist() == ["Sète", "Nîmes"]


def test_typing_rule_and_overrides(tmp_path):
    n = 40
    frame = pd.DataFrame({
        "age": [str(20 + i) for i in range(n)],
        "grade": [str(i % 5) for i in range(n)],           # few distinct -> categorical
        "zip": [f"{i:05d}" for i in range(n)],             # leading zeros -> categorical
        "weight": [f"{50 + i / 3:.2f}" for i in range(n)],
        "mixed": [str(i) if i else "x" for i in range(n)],  # one non-number -> categorical
    })
    path = tmp_path / "t.csv"
    frame.to_csv(path, index=False)
    ds = read_table(path)
    assert kinds_of(ds) == {"age": "numeric", "grade": "categorical", "zip": "categorical",
                            "weight": "numeric", "mixed": "categorical"}
    assert ds.frame["zip"].iloc[1] == "00001"
    assert ds.frame["weight"].dtype == np.float64
    ds2 = read_table(path, kinds={"grade": "numeric", "age": "categorical"}, roles={"grade": "sensitive"})
    assert ds2.frame["grade"].dtype == np.int64 and ds2.frame["age"].iloc[0] == "20"
    assert ds2.spec("grade").role == Role.SENSITIVE
    with pytest.raises(DataError) as err:
        read_table(path, kinds={"mixed": "numeric"})
    assert err.value.line == 2 and err.value.column == "mixed" and "'x'" in str(err.value)
    with pytest.raises(DataError, match="nope"):
        read_table(path, kinds={"nope": "numeric"})
    text = kind_rule_text()
    assert "numeric" in text and "10" in text and "leading zero" in text
    assert "Quasi-identifier" in role_rule_text()


def test_numeric_column_with_missing_kept_as_category(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("age,city\n" + "".join(f"{20 + i},{'?' if i == 3 else 'c' + str(i % 3)}\n" for i in range(20))
                    + "NA,c1\n", encoding="utf-8")
    ds = read_table(path, na_policy=NAPolicy(action="category"))
    assert ds.spec("age").kind == "numeric" and np.isnan(ds.frame["age"].iloc[20])
    assert ds.frame["city"].iloc[3] == "(missing)"
    assert read_table(path).n_rows == 21  # rows kept by default
    dropped = read_table(path, na_policy=NAPolicy(action="drop"))
    assert dropped.n_rows == 19 and dropped.source.n_rows_dropped == 2 and dropped.frame["age"].dtype == np.int64


def test_xlsx_round_trip(tmp_path, shared_data):
    from ppdp_gui.engine.data.writer import export_table

    src = read_table(shared_data / "iris" / "iris.csv")
    out = export_table(src.frame, tmp_path / "iris.xlsx")
    back = read_table(out)
    assert back.source.file_format == "xlsx"
    pd.testing.assert_frame_equal(back.frame, src.frame)
    assert kinds_of(back) == kinds_of(src)
    with pytest.raises(DataError, match="no sheet named"):
        read_table(out, sheet="Sheet9")
    assert read_table(out, sheet=0).n_rows == 150


def test_parquet_round_trip(tmp_path, adult_all):
    from ppdp_gui.engine.data.writer import export_table

    out = export_table(adult_all.frame, tmp_path / "adult.parquet")
    back = read_table(out)
    assert back.source.file_format == "parquet"
    pd.testing.assert_frame_equal(back.frame, adult_all.frame)
    assert kinds_of(back) == kinds_of(adult_all)


def test_dataset_from_frame_typed_and_strings():
    typed = pd.DataFrame({"age": np.arange(20, 70), "sex": ["M", "F"] * 25, "label": [0, 1] * 25,
                          "score": np.linspace(0, 1, 50), "name": [f"p{i}" for i in range(50)]})
    ds = dataset_from_frame(typed)
    assert kinds_of(ds) == {"age": "numeric", "sex": "categorical", "label": "categorical",
                            "score": "numeric", "name": "categorical"}
    assert ds.frame["label"].tolist()[:2] == ["0", "1"]  # categorical columns hold strings
    assert ds.class_column == "label" and ds.spec("name").role == Role.IDENTIFIER
    as_text = dataset_from_frame(typed.astype(str))
    pd.testing.assert_frame_equal(as_text.frame[["age", "sex", "label"]], ds.frame[["age", "sex", "label"]])
    assert typed["label"].dtype == np.int64  # input untouched
    with_nan = typed.assign(score=typed["score"].where(typed.index != 4), sex=typed["sex"].where(typed.index != 7))
    assert dataset_from_frame(with_nan).n_rows == 50  # rows kept by default
    dropped = dataset_from_frame(with_nan, na_policy=NAPolicy(action="drop"))
    assert dropped.n_rows == 48 and dropped.source.n_rows_dropped == 2
    kept = dataset_from_frame(with_nan, na_policy=NAPolicy(action="category"), kinds={"label": "numeric"},
                              roles={"age": Role.SENSITIVE})
    assert kept.frame["sex"].iloc[7] == "(missing)" and kept.frame["label"].dtype == np.int64
    assert kept.spec("age").role == Role.SENSITIVE
    # re-building from a Dataset's own frame with its kinds is the identity
    again = dataset_from_frame(ds.frame, kinds=kinds_of(ds), roles=roles_of(ds))
    pd.testing.assert_frame_equal(again.frame, ds.frame)
    assert again.schema == ds.schema


def test_dataset_from_frame_rejects_bad_columns():
    with pytest.raises(DataError, match="column 2"):
        dataset_from_frame(pd.DataFrame([[1, 2]], columns=["a", "a"]))
    with pytest.raises(DataError, match="no name"):
        dataset_from_frame(pd.DataFrame({"": [1]}))
    with pytest.raises(DataError, match="role"):
        dataset_from_frame(pd.DataFrame({"a": [1]}), roles={"a": "boss"})


def test_guess_roles_by_name():
    frame = pd.DataFrame(columns=["PatientID", "Full Name", "ZIP code", "Age", "Gender", "Diagnosis",
                                  "salary-class", "income", "hours-per-week", "Date of birth", "education-num"])
    roles = guess_roles(frame)
    assert roles == {
        "PatientID": Role.IDENTIFIER, "Full Name": Role.IDENTIFIER, "ZIP code": Role.QUASI_IDENTIFIER,
        "Age": Role.QUASI_IDENTIFIER, "Gender": Role.QUASI_IDENTIFIER, "Diagnosis": Role.SENSITIVE,
        "salary-class": Role.CLASS, "income": Role.SENSITIVE, "hours-per-week": Role.INSENSITIVE,
        "Date of birth": Role.QUASI_IDENTIFIER, "education-num": Role.QUASI_IDENTIFIER}
    unique = pd.DataFrame({"token": [f"t{i}" for i in range(150)], "v": ["a"] * 150})
    assert guess_roles(unique)["token"] == Role.IDENTIFIER
