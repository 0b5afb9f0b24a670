"""Clinical taxonomy builders (issue 18): natural order of bands, ordered bands from public bounds, masking codes of
different lengths, dates, and ICD-9 / ICD-10 chapters → blocks → categories from the bundled public structure."""

import numpy as np
import pandas as pd
import pytest
from clinical_helpers import ICD9, diabetes_like

from ppdp_gui.engine.data import Role, dataset_from_frame
from ppdp_gui.engine.errors import TaxonomyError
from ppdp_gui.engine.noise import NoiseSource
from ppdp_gui.engine.pipeline import plan, run_release
from ppdp_gui.engine.taxonomy import numeric_intervals
from ppdp_gui.engine.taxonomy.arx_io import read_arx_hierarchy
from ppdp_gui.engine.taxonomy.bundled import taxonomies_dir
from ppdp_gui.engine.taxonomy.builders import DEFAULT_INTERVAL_WIDTH, masking, ordered_intervals
from ppdp_gui.engine.taxonomy.dates import date_hierarchy
from ppdp_gui.engine.taxonomy.icd import FILES, category_rows, code_category, icd_categories, icd_taxonomy
from ppdp_gui.engine.taxonomy.icd_tables import ICD9_CHAPTERS, ICD10_CHAPTERS
from ppdp_gui.engine.taxonomy.order import natural_key, natural_sorted


def chain(tax, value):
    return [tax.label(n) for n in tax.ancestors(tax.leaf_node(value))]


# ---- natural order -------------------------------------------------------------------------------------------
def test_bands_sort_by_their_numbers():
    assert natural_sorted(["10-14", "5-9", "0-4", "*", "100-104"]) == ["0-4", "5-9", "10-14", "100-104", "*"]
    assert natural_sorted(["[100, 200)", "[20, 30)", "[-10, 0)", "[0, 10)"]) == \
        ["[-10, 0)", "[0, 10)", "[20, 30)", "[100, 200)"]
    assert natural_sorted(["E11", "E9", "250.83", "250.9", "V45", "<30", ">30", "NO"]) == \
        ["250.83", "250.9", "<30", ">30", "E9", "E11", "NO", "V45"]
    assert natural_key("a") < natural_key("B") < natural_key("c")  # text ignores case, then keeps it apart
    assert natural_key("x") != natural_key("X")


# ---- ordered bands from public bounds ------------------------------------------------------------------------
def test_ordered_intervals_are_public_and_in_order():
    tax = ordered_intervals("age", 0, 120, width=5, style="range")
    assert tax.origin == "public" and len(tax.leaf_values()) == 121
    assert chain(tax, "7") == ["7", "5-9", "0-9", "0-19", "0-39", "0-79", "*"]
    assert [tax.label(n) for n in tax.nodes_at_level(1)][:4] == ["0-4", "5-9", "10-14", "15-19"]
    intervals = ordered_intervals("age", 0, 99, fan_out=5)
    assert chain(intervals, "42") == ["42", "[40, 50)", "[0, 50)", "*"]
    halves = ordered_intervals("score", 0, 2, width=1, step=0.5)
    assert halves.leaf_values() == ["0", "0.5", "1", "1.5", "2"]


def test_ordered_intervals_check_the_column():
    ages = pd.Series([3, 40, 77])
    assert ordered_intervals("age", 0, 120, values=ages).has_value("77")
    with pytest.raises(TaxonomyError, match="not among 0, 1"):
        ordered_intervals("age", 0, 120, values=[3, 130, 40.5])
    with pytest.raises(TaxonomyError, match="whole number of steps"):
        ordered_intervals("x", 0, 10, width=2.5, step=1)
    with pytest.raises(TaxonomyError, match="whole-number"):
        ordered_intervals("x", 0, 10, width=1, step=0.5, style="range")


def test_one_default_width():
    assert DEFAULT_INTERVAL_WIDTH == 10
    a = numeric_intervals("age", [3, 17, 44])
    b = ordered_intervals("age", 0, 49)
    assert a.label(a.parent(a.leaf_node("17"))) == b.label(b.parent(b.leaf_node("17"))) == "[10, 20)"


# ---- masking codes of different lengths ----------------------------------------------------------------------
def test_masking_refuses_mixed_lengths_by_example_or_pads():
    with pytest.raises(TaxonomyError, match=r"4 to 5 characters, e.g. '2134' and '12345'"):
        masking("zip", ["2134", "12345"])
    tax = masking("zip", ["2134", "12345", "02139"], pad="0")
    assert chain(tax, "2134") == ["2134", "0213*", "021**", "02***", "0****", "*****"]
    assert chain(tax, "02139")[1] == "0213*"  # the padded short code shares its parent with 02139
    col = pd.Series(["2134", "12345"])
    assert tax.generalise(col, tax.nodes_at_level(1)).tolist() == ["0213*", "1234*"]


# ---- dates ---------------------------------------------------------------------------------------------------
def test_dates_from_the_column_and_from_public_bounds():
    values = pd.Series(["2020-03-07", "2019-12-31", "2020-03-07 10:30:00", "2011-01-01"])
    tax = date_hierarchy("admitted", values)
    assert tax.origin == "data"
    assert chain(tax, "2020-03-07") == ["2020-03-07", "2020-03", "2020", "2020-2029", "*"]
    assert chain(tax, "2020-03-07 10:30:00")[1] == "2020-03"
    assert tax.leaf_values()[0] == "2011-01-01"  # in date order
    public = date_hierarchy("admitted", start="2019-01-01", end="2020-12-31", levels=("month", "year"))
    assert public.origin == "public" and len(public.leaf_values()) == 731
    assert chain(public, "2020-02-29") == ["2020-02-29", "2020-02", "2020", "*"]
    swapped = date_hierarchy("d", ["07/03/2020"], date_format="%d/%m/%Y")
    assert chain(swapped, "07/03/2020")[1] == "2020-03"


def test_dates_refuse_what_is_not_a_date():
    with pytest.raises(TaxonomyError, match=r"not ISO dates .*'07/03/2020'"):
        date_hierarchy("d", ["2020-01-01", "07/03/2020", "n/a"])
    with pytest.raises(TaxonomyError, match="decades"):
        date_hierarchy("d", ["2020-01-01"], levels=("decades",))
    with pytest.raises(TaxonomyError, match="not days between"):
        date_hierarchy("d", ["2021-01-01"], start="2020-01-01", end="2020-12-31")


# ---- ICD ------------------------------------------------------------------------------------------------------
def test_icd9_codes_map_to_category_block_chapter():
    tax = icd_taxonomy("diag_1", ICD9 + ["8", "25083"])
    assert tax.origin == "data"
    assert chain(tax, "250.83") == ["250.83", "250", "249-259 Diseases of other endocrine glands",
                                    "240-279 Endocrine, nutritional, metabolic and immunity", "*"]
    assert chain(tax, "V45")[2:4] == ["V40-V49 Conditions influencing health status",
                                     "V01-V91 Factors influencing health status and contact with health services"]
    assert chain(tax, "E909")[2] == "E900-E909 Accidents due to natural and environmental factors"
    assert chain(tax, "8")[1] == "008" and chain(tax, "25083")[1] == "250"
    assert chain(tax, "038")[3].startswith("001-139")


def test_icd10_codes_map_to_category_block_chapter():
    tax = icd_taxonomy("dx", ["E11.9", "E119", "I21.0", "S72.001A", "W19", "X60"], version="icd10")
    assert chain(tax, "E11.9")[1:4] == ["E11", "E10-E14 Diabetes mellitus",
                                        "E00-E90 Endocrine, nutritional and metabolic diseases"]
    assert chain(tax, "E119")[1] == "E11"
    assert chain(tax, "W19")[2].startswith("W00-X59") and chain(tax, "X60")[2].startswith("X60-X84")


@pytest.mark.parametrize("version, bad", [("icd9", ["E11.9", "019", "?", "2500.1"]),
                                          ("icd10", ["250.83", "E1", "D49.9", "U99"])])
def test_invalid_codes_are_refused_by_name(version, bad):
    with pytest.raises(TaxonomyError, match=r"4 value\(s\) in 4 row\(s\) are not ICD") as err:
        icd_taxonomy("dx", bad + (["250.83"] if version == "icd9" else ["E11.9"]), version=version)
    for code in bad:
        assert repr(code) in str(err.value)


def test_code_category_forms():
    assert [code_category(c) for c in ("250.83", " v45.81", "E909.3", "8", "25083", "E11.9")] == \
        ["250", "V45", "E909", "008", "250", None]
    assert [code_category(c, "icd10") for c in ("e11.9", "S72.001A", "250")] == ["E11", "S72", None]
    with pytest.raises(TaxonomyError, match="unknown ICD version"):
        code_category("E11", "icd11")


@pytest.mark.parametrize("version, chapters", [("icd9", ICD9_CHAPTERS), ("icd10", ICD10_CHAPTERS)])
def test_tables_are_consistent_and_the_bundled_files_match(version, chapters):
    rows = category_rows(version)
    categories = [r[0] for r in rows]
    assert len(categories) == len(set(categories))  # no category in two blocks
    for first, last, _title, blocks in chapters:  # blocks lie inside their chapter, in order
        assert blocks[0][0] == first and blocks[-1][1] == last
        starts = [b[0] for b in blocks]
        assert starts == sorted(starts, key=natural_key)
    bundled = read_arx_hierarchy(taxonomies_dir() / "icd" / FILES[version])
    assert bundled.to_paths() == rows
    public = icd_categories(version)
    assert public.origin == "public" and len(public.leaf_values()) == len(rows)


def test_a_mondrian_release_generalises_diagnoses_by_the_icd_structure():
    frame = diabetes_like(1500)
    data = dataset_from_frame(frame, roles={"diag_1": Role.QUASI_IDENTIFIER})
    data = data.with_column("diag_1", taxonomy=icd_taxonomy("diag_1", frame["diag_1"]))
    published = list(run_release(plan(data, "Mondrian", {"k": 25}), rng=NoiseSource.for_tests(5), seed=5))[-1]
    labels = set(published.table["diag_1"].astype(str))
    structure = {r[i] for r in category_rows("icd9") for i in (0, 1, 2)} | {"*"}
    assert labels <= structure | set(ICD9)
    assert published.table.groupby(data.quasi_identifiers, observed=True).size().min() >= 25
    assert np.all(published.table.columns == [c for c in frame.columns if c not in ("encounter_id", "patient_nbr")])
