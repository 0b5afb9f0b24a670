"""Auto-built taxonomies (intervals, groups, masking), coverage, and the editing API used by the GUI."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ppdp_gui.engine.errors import TaxonomyError
from ppdp_gui.engine.taxonomy import Taxonomy, check_coverage, grouped, masking, numeric_intervals
from ppdp_gui.engine.taxonomy.arx_io import arx_bytes, taxonomy_from_rows, validate_rows


def _chain(tax, value):
    return [tax.label(n) for n in tax.ancestors(tax.leaf_node(value))]


def test_intervals_on_adult_ages(shared_data):
    ages = pd.read_csv(shared_data / "adult" / "adult_all.csv.gz", usecols=["age"])["age"]
    tax = numeric_intervals("age", ages, 10, fan_out=2)
    assert sorted(tax.leaf_values(), key=int) == [str(v) for v in sorted(ages.unique())]
    assert _chain(tax, "39") == ["39", "[30, 40)", "[30, 50)", "[10, 50)", "[10, 90)", "*"]
    assert _chain(tax, "90") == ["90", "[90, 100)", "[90, 110)", "[90, 130)", "[90, 170)", "*"]
    # every leaf at the same depth (a rectangular ARX file) and generalisation is consistent
    assert {tax.depth(leaf) for leaf in tax.leaves()} == {5}
    cut = tax.nodes_at_level(1)
    general = tax.generalise(ages, cut)
    lows = general.astype(str).str.extract(r"\[(\d+), (\d+)\)").astype(int)
    assert ((lows[0] <= ages) & (ages < lows[1])).all()


def test_intervals_bounds_floats_and_errors():
    tax = numeric_intervals("x", [0.3, 0.1, 0.25, 1.0], 0.1, fan_out=5, low=0, high=1)
    assert _chain(tax, "0.3") == ["0.3", "[0.3, 0.4)", "[0, 0.5)", "*"]  # decimal, not the binary 0.2999…
    assert _chain(tax, "0.25")[1] == "[0.2, 0.3)"
    assert _chain(tax, "1.0")[1:] == ["[1, 1.1)", "[1, 1.5)", "*"]
    one = numeric_intervals("x", [21, 22], 10)
    assert one.to_paths() == [["21", "[20, 30)", "*"], ["22", "[20, 30)", "*"]]
    with pytest.raises(TaxonomyError, match="below the lower bound"):
        numeric_intervals("x", [5, 50], 10, low=10)
    with pytest.raises(TaxonomyError, match="above the upper bound"):
        numeric_intervals("x", [5, 50], 10, high=40)
    with pytest.raises(TaxonomyError, match="not numbers"):
        numeric_intervals("x", ["1", "b"], 10)
    with pytest.raises(TaxonomyError, match="fan-out"):
        numeric_intervals("x", [1, 2], 10, fan_out=1)
    with pytest.raises(TaxonomyError, match="width"):
        numeric_intervals("x", [1, 2], 0)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-500, 500), min_size=1, max_size=60), st.integers(1, 40), st.integers(2, 5))
def test_intervals_property(values, width, fan_out):
    tax = numeric_intervals("v", values, width, fan_out=fan_out)
    assert sorted(tax.leaf_values(), key=int) == [str(v) for v in sorted(set(values))]
    depths = {tax.depth(leaf) for leaf in tax.leaves()}
    assert len(depths) == 1
    for value in set(values):
        for label in _chain(tax, str(value))[1:-1]:
            lo, hi = (int(x) for x in label.strip("[)").split(", "))
            assert lo <= value < hi
    # the built tree is a valid ARX hierarchy that reads back to the same rows
    rows = tax.to_paths()
    validate_rows(rows, "built")
    assert taxonomy_from_rows("v", rows).to_paths() == rows


def test_grouped_and_masking():
    tax = grouped("workclass", {"Government": ["Federal-gov", "State-gov"], "Private": ["Private"]})
    assert _chain(tax, "State-gov") == ["State-gov", "Government", "*"]
    with pytest.raises(TaxonomyError, match="'Private'"):
        grouped("w", {"A": ["Private"], "B": ["Private"]})
    with pytest.raises(TaxonomyError, match="no values"):
        grouped("w", {"A": []})
    zips = masking("zip", pd.Series(["47677", "47602", "47678", "47905"]))
    assert _chain(zips, "47677") == ["47677", "4767*", "476**", "47***", "4****", "*****"]
    assert zips.lowest_common_ancestor([zips.leaf_node("47677"), zips.leaf_node("47602")]) != 0
    assert zips.label(zips.lowest_common_ancestor([zips.leaf_node("47677"), zips.leaf_node("47905")])) == "47***"
    assert _chain(masking("zip", ["123"], root_label="*"), "123")[-1] == "*"
    with pytest.raises(TaxonomyError, match="lengths"):
        masking("zip", ["1234", "12345"])


def test_masking_matches_arx_zip_hierarchy(shared_data):
    from ppdp_gui.engine.taxonomy import read_arx_hierarchy

    arx = read_arx_hierarchy(shared_data / "arx_examples" / "test2_hierarchy_ZIPCode.csv")
    built = masking("ZIPCode", arx.leaf_values())
    assert sorted(built.to_paths()) == sorted(arx.to_paths())


def test_coverage_lists_missing_and_unused():
    tax = Taxonomy.flat("sex", ["Female", "Male", "Other"])
    cov = check_coverage(tax, pd.Series(["Male", "Female", "F", "Male", None, "F"]))
    assert cov.missing == ["F"] and cov.unused == ["Other"] and not cov.ok
    assert (cov.missing_rows, cov.na_rows) == (2, 1)
    nums = numeric_intervals("n", [1, 2, 10], 5)
    cov = check_coverage(nums, pd.Series([10, 2, 100, 30]))
    assert cov.missing == ["30", "100"] and cov.unused == ["1"]
    assert check_coverage(nums, pd.Series([1, 2, 10])).ok


def test_editing_model_edits_and_undoes_exactly():
    """The editing model (engine.taxonomy.editing, driven by the GUI editor): group, move, rename, delete and add
    values; every primitive returns its inverse, so replaying the inverses restores the tree exactly."""
    from ppdp_gui.engine.taxonomy.editing import Add, EditTree, Move, Remove, Rename
    tax = grouped("w", {"Gov": ["Federal", "State", "Local"], "Other": ["Private", "Self"]})
    tree = EditTree.from_taxonomy(tax)
    before = tree.paths()
    gov, other = tree.find("Gov"), tree.find("Other")
    state, local = tree.find("State"), tree.find("Local")
    undo = [tree.apply(Rename(state, "State-gov"))]
    sub = tree.next_id
    undo.append(tree.apply(Add(sub, "Non-federal", gov, 1, True)))   # an empty group may exist for a moment
    assert tree.empty_groups() == [sub]
    undo.append(tree.apply(Move(state, sub, 0)))
    undo.append(tree.apply(Move(local, sub, 1)))
    undo.append(tree.apply(Move(tree.find("Self"), sub, 2)))
    with pytest.raises(TaxonomyError, match="into itself"):
        tree.apply(Move(gov, sub, 0))
    with pytest.raises(TaxonomyError, match="empty node"):
        tree.apply(Remove(gov))
    undo.append(tree.apply(Add(tree.next_id, "Without-pay", other, 1, False)))
    edited = tree.to_taxonomy()
    assert edited.ancestors(edited.leaf_node("Local")) and \
        [edited.label(n) for n in edited.ancestors(edited.leaf_node("Local"))] == ["Local", "Non-federal", "Gov", "*"]
    assert sorted(edited.leaf_values()) == ["Federal", "Local", "Private", "Self", "State-gov", "Without-pay"]
    # the edited tree still generalises a column and exports as a rectangle
    g, o = edited.children(0)
    assert list(edited.generalise(pd.Series(["Local", "Private"]), [g, o]).astype(str)) == ["Gov", "Other"]
    assert arx_bytes(edited).count(b"\n") == 6 and np.all([len(r) == 4 for r in edited.to_paths()])
    for inverse in reversed(undo):
        tree.apply(inverse)
    assert tree.paths() == before and tree.to_taxonomy().to_paths() == tax.to_paths()


def test_one_default_width_unless_absurd_for_the_range():
    from ppdp_gui.engine.taxonomy.builders import DEFAULT_INTERVAL_WIDTH, default_width
    assert default_width(0, 100) == DEFAULT_INTERVAL_WIDTH == 10  # ages: 10 intervals of 10
    assert default_width(17, 90) == 10 and default_width(5, 5) == 10
    assert default_width(0, 5) == 0.5  # 0-5 in steps of 10 would be one interval
    assert default_width(0, 250_000) == 50_000  # 25,000 intervals of 10 would be absurd: a round width
