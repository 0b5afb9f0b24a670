"""Column names the large-table engine uses for itself (issue 28, hostile inputs): a file whose columns are named
like the engine's helper columns (`n`, the count of a histogram; `rid`, `cnt`, `h`, `ppdp_rows__`, …) gives the
same releases on `--engine duckdb` as in memory. Before, a typed column named `n` with a blank raised a traceback
and a text one gave a frame with two `n` columns."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ppdp_gui.engine.bigdata.large_dataset import open_large
from ppdp_gui.engine.data.domains import Domain
from ppdp_gui.engine.data.reader import read_table
from ppdp_gui.engine.data.schema import Role
from ppdp_gui.engine.package_files import sample_table
from ppdp_gui.engine.pipeline import export, plan, run_release
from ppdp_gui.engine.taxonomy import bundled_adult_taxonomies

#: Adult's columns renamed after the engine's helper names (quasi-identifiers, sensitive and class columns)
RENAMED = {"age": "count", "workclass": "cnt", "education": "rid", "marital-status": "row_number",
           "occupation": "hash", "race": "weight", "sex": "n", "native-country": "s", "salary-class": "g"}
#: more columns, released as they are: helper names of the SQL (counts, keys, aliases)
EXTRA = ["h", "n__", "rows__", "kept__", "ppdp_rows__", "ppdp_key__", "ppdp_n__", "ppdp_i__", "ppdp_p__",
         "k0", "v0", "q0", "l0", "s0", "p", "v", "first", "rn", "x$count", "cell$count", "c0$count"]


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    folder = tmp_path_factory.mktemp("names")
    frame = pd.read_csv(sample_table(), dtype=str, keep_default_na=False).head(1200).rename(columns=RENAMED)
    r = np.random.default_rng(4)
    frame["rows"] = pd.array(r.integers(0, 5, len(frame)), dtype="Int64")  # typed, with blanks
    frame.loc[[2, 40, 41], "rows"] = pd.NA
    for name in EXTRA:
        frame[name] = [f"{name}{v}" for v in r.integers(0, 3, len(frame))]
    paths = {"parquet": folder / "t.parquet", "csv": folder / "t.csv"}
    frame.to_parquet(paths["parquet"], index=False)
    frame.astype(str).replace({"<NA>": ""}).to_csv(paths["csv"], index=False)
    return paths


def prepared(data, dp: bool, sensitive: bool = False):
    data = data.confirm_guesses()
    taxes = bundled_adult_taxonomies()
    for old, new in RENAMED.items():
        if old in taxes and not (dp and old == "age"):
            data = data.with_column(new, role=Role.QUASI_IDENTIFIER, taxonomy=taxes[old])
    data = data.with_column("g", role=Role.SENSITIVE if sensitive else Role.CLASS)
    data = data.with_column("rows", role=Role.INSENSITIVE)
    for name in EXTRA:
        data = data.with_column(name, role=Role.INSENSITIVE)
    if dp:
        data = data.with_column("count", role=Role.QUASI_IDENTIFIER, taxonomy=None,
                                domain=Domain(low=0, high=100, integer=True))
        data = data.with_column("g", domain=Domain(categories=("<=50K", ">50K")))
    return data


def release(data, mechanism, params):
    planned = plan(data, mechanism, params)
    assert not planned.errors, planned.errors
    return list(run_release(planned, seed=3))[-1]


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
@pytest.mark.parametrize("mechanism, params", [("DiffGen", {"epsilon": 1.0, "h": 6}),
                                               ("Global recoding", {"k": 5, "suppression": 3.0}),
                                               ("Global recoding", {"k": 4, "suppression": 5.0, "l": 2, "t": 0.5,
                                                                    "sensitive": "g"}),
                                               ("Mondrian", {"k": 6})])
def test_columns_named_like_the_engines_helpers(hostile, tmp_path, fmt, mechanism, params):
    dp, sensitive = mechanism == "DiffGen", "sensitive" in params
    memory = release(prepared(read_table(hostile[fmt]), dp, sensitive), mechanism, params)
    large = release(prepared(open_large(hostile[fmt]), dp, sensitive), mechanism, params)
    assert memory.release.note == large.release.note
    if dp:
        pd.testing.assert_frame_equal(memory.table, large.table)
        assert memory.output_hash == large.output_hash
        return
    out = tmp_path / f"out.{fmt}"
    exported = export(large, out)
    assert exported.checks and all(c.ok for c in exported.checks), [c.message for c in exported.checks]
    written = (pd.read_csv(out, dtype=str, keep_default_na=False) if fmt == "csv"
               else pd.read_parquet(out).astype(str))
    expected = memory.table.astype(str)
    if fmt == "parquet":
        written, expected = written.replace({"nan": "", "None": "", "<NA>": ""}), expected.replace(
            {"nan": "", "None": "", "<NA>": ""})
    key = list(expected.columns)
    assert list(written.columns) == key
    pd.testing.assert_frame_equal(written.sort_values(key).reset_index(drop=True),
                                  expected.sort_values(key).reset_index(drop=True))


@pytest.mark.parametrize("typed", [True, False])
def test_a_histogram_of_a_column_named_n(tmp_path, typed):
    """The count of a histogram is not the column `n`: typed with blanks (a traceback before) or text (a frame
    with two `n` columns before)."""
    from ppdp_gui.engine.bigdata.source import N, TableSource
    values = pd.array([1, 2, None, 2, 1, 2], dtype="Int64") if typed else ["1", "2", "", "2", "1", "2"]
    path = tmp_path / "n.parquet"
    pd.DataFrame({"n": values, "cnt": list("aabbab")}).to_parquet(path, index=False)
    src = TableSource(path)
    src.apply_kinds({"n": "categorical", "cnt": "categorical"})
    got = src.histogram(("n", "cnt"))
    assert list(got.columns) == ["n", "cnt", N] and got[N].sum() == 6
    assert src.group_counts({"n": '"n"'})[N].sum() == 6


def test_a_parquet_column_name_with_edge_spaces_is_refused_in_one_line(tmp_path):
    """The engine's own columns start with a space, which no column of the file may (the reader strips names)."""
    from ppdp_gui.engine.bigdata.columns import HELPER
    from ppdp_gui.engine.bigdata.source import TableSource
    from ppdp_gui.engine.errors import DataError
    path = tmp_path / "s.parquet"
    pd.DataFrame({HELPER + "n": ["a", "b"], "x": ["1", "2"]}).to_parquet(path, index=False)
    with pytest.raises(DataError, match="starts or ends with a space"):
        TableSource(path)

