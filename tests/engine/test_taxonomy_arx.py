"""ARX hierarchy files: exact round trip on every shared hierarchy, clear errors on malformed ones."""

import gzip
from pathlib import Path

import pandas as pd
import pytest

from ppdp_gui.engine.errors import TaxonomyError
from ppdp_gui.engine.taxonomy import bundled_adult_taxonomies, read_arx_hierarchy, write_arx_hierarchy
from ppdp_gui.engine.taxonomy.arx_io import arx_bytes, column_from_filename
from ppdp_gui.engine.package_files import taxonomies_folder



def _hierarchy_files(shared: Path) -> list[Path]:
    files = sorted((shared / "adult" / "hierarchies" / "arx").glob("adult_hierarchy_*.csv"))
    files += sorted((shared / "arx_examples").glob("*hierarchy*"))
    return files


def _raw(path: Path) -> bytes:
    data = path.read_bytes()
    return gzip.decompress(data) if path.suffix == ".gz" else data


def test_every_shared_hierarchy_round_trips_byte_for_byte(shared_data, tmp_path):
    files = _hierarchy_files(shared_data)
    assert len(files) == 15
    layouts = set()
    for path in files:
        tax = read_arx_hierarchy(path)
        out = write_arx_hierarchy(tax, tmp_path / path.name)
        assert _raw(out) == _raw(path), path.name
        fmt = tax.source_format
        layouts.add((fmt.newline, fmt.final_newline))
    # the corpus really exercises both line endings and a missing final newline
    assert layouts >= {("\n", True), ("\n", False), ("\r\n", True), ("\r\n", False)}


def test_adult_hierarchy_shapes(shared_data):
    # sizes stated in shared/data/README.md: leaves x levels
    expected = {"age": (100, 5), "education": (16, 4), "marital-status": (7, 3), "native-country": (41, 3),
                "occupation": (14, 3), "workclass": (8, 3), "race": (5, 2), "sex": (2, 2), "salary-class": (2, 2)}
    for column, (leaves, levels) in expected.items():
        tax = read_arx_hierarchy(shared_data / "adult" / "hierarchies" / "arx" / f"adult_hierarchy_{column}.csv")
        assert tax.column == column
        assert (len(tax.leaf_values()), tax.height + 1) == (leaves, levels)
    age = read_arx_hierarchy(shared_data / "adult" / "hierarchies" / "arx" / "adult_hierarchy_age.csv")
    chain = [age.label(n) for n in age.ancestors(age.leaf_node("39"))]
    assert chain == ["39", "35-39", "30-39", "20-39", "*"]


def test_bundled_copies_equal_the_arx_originals_and_cover_adult(shared_data):
    taxes = bundled_adult_taxonomies()
    assert sorted(taxes) == ["age", "education", "marital-status", "native-country", "occupation", "race",
                             "salary-class", "sex", "workclass"]
    for path in sorted((taxonomies_folder() / "adult").glob("*.csv")):
        assert path.read_bytes() == (shared_data / "adult" / "hierarchies" / "arx" / path.name).read_bytes()
    frame = pd.read_csv(shared_data / "adult" / "hierarchies" / "arx" / "adult.csv.gz", sep=";", dtype=str,
                        keep_default_na=False)
    for column, tax in taxes.items():
        assert set(frame[column]) <= set(tax.leaf_values()), column
    assert "Apache" in (taxonomies_folder() / "README.md").read_text()


def test_gzip_in_and_out(shared_data, tmp_path):
    tax = read_arx_hierarchy(shared_data / "arx_examples" / "test_hierarchy_zipcode.csv.gz")
    assert tax.column == "zipcode" and len(tax.leaf_values()) == 10000
    out = write_arx_hierarchy(tax, tmp_path / "z.csv.gz")
    assert gzip.decompress(out.read_bytes()) == _raw(shared_data / "arx_examples" / "test_hierarchy_zipcode.csv.gz")


def test_duplicate_rows_are_merged_but_exported_as_they_were(tmp_path):
    text = b"Private;Non-Government;*\nFederal-gov;Government;*\nPrivate;Non-Government;*\n"
    src = tmp_path / "h_hierarchy_workclass.csv"
    src.write_bytes(text)
    tax = read_arx_hierarchy(src)
    assert sorted(tax.leaf_values()) == ["Federal-gov", "Private"]
    assert arx_bytes(tax) == text


def test_bom_latin1_and_quoted_cells_round_trip(tmp_path):
    for i, text in enumerate([b"\xef\xbb\xbfa;*\nb;*\n", "Zürich;CH;*\nGenève;CH;*".encode("cp1252"),
                              b'"a;1";g;*\r\nb;g;*\r\n']):
        src = tmp_path / f"t{i}.csv"
        src.write_bytes(text)
        assert arx_bytes(read_arx_hierarchy(src)) == text
    assert read_arx_hierarchy(tmp_path / "t2.csv").has_value("a;1")


def test_edited_taxonomy_exports_its_tree_in_the_same_layout(shared_data, tmp_path):
    from ppdp_gui.engine.taxonomy.editing import EditTree, Rename
    tree = EditTree.from_taxonomy(read_arx_hierarchy(shared_data / "arx_examples" / "test_hierarchy_gender.csv"))
    tree.apply(Rename(tree.find("male"), "M"))
    out = write_arx_hierarchy(tree.to_taxonomy(), tmp_path / "g.csv")
    assert out.read_bytes() == b"M;*\r\nfemale;*\r\n"
    assert sorted(read_arx_hierarchy(out).leaf_values()) == ["M", "female"]


@pytest.mark.parametrize("text, words", [
    ("a;g;*\nb;*\n", ["row 2", "2 columns", "3"]),
    ("a;g;*\nb;;*\n", ["row 2", "column 2", "empty label"]),
    ("a;g;*\nb;h;ROOT\n", ["row 2", "root", "'ROOT'"]),
    ("a;g;*\nb;h;*\na;h;*\n", ["row 3", "'a'", "row 1"]),
    ("a;g;x;*\nb;g;y;*\n", ["row 2", "'g'", "'y'", "'x'"]),
    ("a;*\n\nb;*\n", ["row 2", "empty row"]),
    ("a\nb\n", ["row 1", "delimiter"]),
    ('a;"g;*\n', ["row"]),
    ("", ["no rows"]),
])
def test_malformed_hierarchies_name_the_row(tmp_path, text, words):
    src = tmp_path / "bad_hierarchy_x.csv"
    src.write_text(text)
    with pytest.raises(TaxonomyError) as info:
        read_arx_hierarchy(src)
    message = str(info.value)
    assert "bad_hierarchy_x.csv" in message
    for word in words:
        assert word in message


def test_unreadable_files_raise_taxonomy_error(tmp_path):
    with pytest.raises(TaxonomyError, match="cannot read"):
        read_arx_hierarchy(tmp_path / "missing.csv")
    broken = tmp_path / "b.csv.gz"
    broken.write_bytes(gzip.compress(b"a;*\n")[:-6])
    with pytest.raises(TaxonomyError, match="gzip"):
        read_arx_hierarchy(broken)


def test_column_names_from_file_names():
    assert column_from_filename("adult_hierarchy_marital-status.csv") == "marital-status"
    assert column_from_filename("/x/test_hierarchy_zipcode.csv.gz") == "zipcode"
    assert column_from_filename("ages.csv") == "ages"
