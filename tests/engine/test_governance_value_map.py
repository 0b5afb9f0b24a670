"""The value-mapping table (issue 31, Deliver 6): `ppdp value-map` after a global-recoding release of the Adult
sample maps every value to the label the release shows, marked never to publish."""

from __future__ import annotations

import pandas as pd

from ppdp_gui import cli
from ppdp_gui.engine.package_files import sample_table
from ppdp_gui.engine.persistence.project import Recipe, write_recipe


def test_value_map_of_global_recoding(tmp_path):
    project = tmp_path / "adult.ppdp.json"
    write_recipe(Recipe(source=str(sample_table()), bundled="adult"), project)
    record, out = tmp_path / "rec.json", tmp_path / "release.csv"
    assert cli.main(["run", "Global recoding", "--recipe", str(project), "--param", "k=10", "--output", str(out),
                     "--record", str(record), "--ledger", str(tmp_path / "l.sqlite")]) == 0
    mapped = tmp_path / "map.csv"
    assert cli.main(["value-map", "--record", str(record), "--recipe", str(project), "--out", str(mapped)]) == 0
    table = pd.read_csv(mapped, dtype=str, keep_default_na=False)
    assert tuple(table.iloc[0][["original value", "released value"]]) == ("custodian only", "NEVER PUBLISH")
    released = pd.read_csv(out, dtype=str, keep_default_na=False)
    source = pd.read_csv(sample_table(), dtype=str, keep_default_na=False, skipinitialspace=True)
    for col in ("age", "education"):
        mapping = dict(zip(*table.loc[table["column"] == col, ["original value", "released value"]].T.to_numpy()))
        assert set(mapping) == set(source[col].str.strip())
        # every released value of the column is the image of some source value (or the suppression marker)
        assert set(released[col]) - {"*"} <= set(mapping.values())
        # the mapped source, label by label, holds the release's rows plus the suppressed ones
        expected = source[col].str.strip().map(mapping).value_counts()
        got = released.loc[released[col] != "*", col].value_counts()
        assert (got <= expected.reindex(got.index)).all()
        assert int((expected.sum() - got.sum())) == int((released[col] == "*").sum()) + len(source) - len(released)
