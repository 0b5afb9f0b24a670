"""Hierarchies found beside a table by ARX's naming convention (<stem>_hierarchy_<column>.csv[.gz]), and the
bundled ones for the bundled Adult sample; each found file reads as a taxonomy that covers its column."""

from __future__ import annotations

import shutil

from ppdp_gui.engine.data.reader import read_table
from ppdp_gui.engine.taxonomy.arx_io import read_arx_hierarchy
from ppdp_gui.engine.taxonomy.coverage import check_coverage
from ppdp_gui.engine.taxonomy.discover import attach_hierarchies, find_hierarchies, table_stem
from ppdp_gui.engine.package_files import sample_table, taxonomies_folder



def test_arx_example_test2(shared_data):
    folder = shared_data / "arx_examples"
    found = find_hierarchies(folder / "test2.csv", ["ZIPCode", "Age", "Salary", "Disease"])
    assert found == {c: folder / f"test2_hierarchy_{c}.csv" for c in ("ZIPCode", "Age", "Disease")}
    data = read_table(folder / "test2.csv").frame
    for column, path in found.items():
        tax = read_arx_hierarchy(path, column)
        assert not check_coverage(tax, data[column]).missing


def test_gzip_hierarchy_and_other_tables_hierarchies_are_not_mixed(shared_data):
    folder = shared_data / "arx_examples"
    found = find_hierarchies(folder / "test.csv", ["age", "gender", "zipcode", "Disease"])
    assert found == {"age": folder / "test_hierarchy_age.csv", "gender": folder / "test_hierarchy_gender.csv",
                     "zipcode": folder / "test_hierarchy_zipcode.csv.gz"}  # never test2's files
    assert find_hierarchies(folder / "test.csv", ["ZIPCode"]) == {"ZIPCode": folder / "test_hierarchy_zipcode.csv.gz"}
    assert len(read_arx_hierarchy(found["zipcode"], "zipcode").leaf_values()) > 0


def test_adult_arx_files_beside_compressed_table(shared_data):
    arx = shared_data / "adult" / "hierarchies" / "arx"
    columns = ["age", "workclass", "education", "marital-status", "occupation", "race", "sex",
               "native-country", "salary-class", "fnlwgt"]
    found = find_hierarchies(arx / "adult.csv.gz", columns)
    assert set(found) == set(columns) - {"fnlwgt"} and table_stem(arx / "adult.csv.gz") == "adult"


def test_case_differences_and_missing_folder(tmp_path):
    (tmp_path / "ward.csv").write_text("Sex;Age\nf;3\n")
    (tmp_path / "ward_hierarchy_sex.csv").write_text("f;*\nm;*\n")
    (tmp_path / "other_hierarchy_Age.csv").write_text("3;*\n")
    assert find_hierarchies(tmp_path / "ward.csv", ["Sex", "Age"]) == {"Sex": tmp_path / "ward_hierarchy_sex.csv"}
    assert find_hierarchies(tmp_path / "nowhere" / "ward.csv", ["Sex"]) == {}


def test_bundled_adult_sample_gets_the_bundled_taxonomies():
    sample = sample_table()
    data = read_table(sample)
    found = find_hierarchies(sample, list(data.frame.columns))
    assert set(found) == set(data.frame.columns)  # all nine Adult attributes ship with a hierarchy
    assert all(p.parent == taxonomies_folder() / "adult" for p in found.values())
    assert not check_coverage(read_arx_hierarchy(found["education"], "education"), data.frame["education"]).missing


def test_a_copy_of_the_sample_elsewhere_is_not_the_bundled_sample(tmp_path):
    shutil.copy(sample_table(), tmp_path / "adult_sample.csv")
    assert find_hierarchies(tmp_path / "adult_sample.csv", ["age", "sex"]) == {}


def test_attach_reads_what_it_finds_and_reports_a_broken_file_as_a_note(tmp_path):
    """Only quasi-identifiers get hierarchies by default; an unreadable file is a note, never a failed load."""
    (tmp_path / "t.csv").write_text("age;sex;dx\n30;m;flu\n31;f;cold\n", encoding="utf-8")
    (tmp_path / "t_hierarchy_sex.csv").write_text("m;*\nf;*\n", encoding="utf-8")
    (tmp_path / "t_hierarchy_age.csv").write_text("30;30-39;*\n31;*\n", encoding="utf-8")  # ragged
    (tmp_path / "t_hierarchy_dx.csv").write_text("flu;*\ncold;*\n", encoding="utf-8")
    from ppdp_gui.engine.data.schema import Role
    ds = read_table(tmp_path / "t.csv", roles={"age": Role.QUASI_IDENTIFIER, "sex": Role.QUASI_IDENTIFIER,
                                              "dx": Role.SENSITIVE})
    ds, attached, notes = attach_hierarchies(ds, tmp_path / "t.csv")
    assert list(attached) == ["sex"] and ds.spec("sex").taxonomy.leaf_values() == ["m", "f"]
    assert ds.spec("dx").taxonomy is None and ds.spec("age").taxonomy is None
    assert len(notes) == 1 and "t_hierarchy_age.csv" in notes[0]
