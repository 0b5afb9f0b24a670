"""Small builders shared by the k-anonymity tests (tables, taxonomies, Adult)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ppdp_gui.engine.data.schema import ColumnSpec, Dataset, Role
from ppdp_gui.engine.mechanisms.base import run_to_release
from ppdp_gui.engine.noise import NoiseSource
from ppdp_gui.engine.data.reader import read_table
from ppdp_gui.engine.taxonomy.discover import attach_hierarchies
from ppdp_gui.engine.taxonomy.tree import Taxonomy

ADULT_COLUMNS = ("age workclass fnlwgt education education-num marital-status occupation relationship race sex "
                 "capital-gain capital-loss hours-per-week native-country income").split()
ADULT_QIS = ["age", "workclass", "education-num", "marital-status", "occupation", "race", "sex", "native-country"]
ADULT_NUMERIC = {"age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week"}


def two_level_taxonomy(column: str, values: list[str], fan: int = 2) -> Taxonomy:
    """values grouped `fan` at a time under g0, g1, ... under the root."""
    rows = [[v, f"g{i // fan}", "*"] for i, v in enumerate(values)]
    return Taxonomy.from_paths(column, rows)


def random_dataset(rng: np.random.Generator, n: int, n_num: int, n_cat: int, n_values: int = 6) -> Dataset:
    """Numeric QIs without taxonomy, categorical QIs with a two-level taxonomy, a sensitive and a class column."""
    cols, schema = {}, []
    for j in range(n_num):
        cols[f"n{j}"] = rng.integers(0, 60, n)
        schema.append(ColumnSpec(f"n{j}", "numeric", Role.QUASI_IDENTIFIER))
    for j in range(n_cat):
        values = [f"v{i}" for i in range(n_values)]
        cols[f"c{j}"] = rng.choice(values, n)
        schema.append(ColumnSpec(f"c{j}", "categorical", Role.QUASI_IDENTIFIER,
                                 two_level_taxonomy(f"c{j}", values, fan=int(rng.integers(1, 4)))))
    cols["id"] = np.arange(n).astype(str)
    schema.append(ColumnSpec("id", "categorical", Role.IDENTIFIER))
    cols["disease"] = rng.choice(["flu", "hiv", "cold", "ulcer"], n)
    schema.append(ColumnSpec("disease", "categorical", Role.SENSITIVE))
    cols["y"] = rng.choice(["a", "b"], n)
    schema.append(ColumnSpec("y", "categorical", Role.CLASS))
    return Dataset(pd.DataFrame(cols), tuple(schema))


def run(mech, ds: Dataset, **params):
    return run_to_release(mech.run(ds, rng=NoiseSource.for_tests(0), **params))


def load_adult(shared_data: Path) -> pd.DataFrame:
    df = pd.read_csv(shared_data / "adult" / "adult.data.gz", header=None, names=ADULT_COLUMNS,
                     skipinitialspace=True)
    return df[~(df == "?").any(axis=1)].reset_index(drop=True)


def adult_dataset(shared_data: Path) -> Dataset:
    df = load_adult(shared_data)
    schema = tuple(ColumnSpec(c, "numeric" if c in ADULT_NUMERIC else "categorical",
                              Role.QUASI_IDENTIFIER if c in ADULT_QIS else Role.CLASS if c == "income"
                              else Role.INSENSITIVE) for c in ADULT_COLUMNS)
    return Dataset(df, schema)


ARX_QIS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation"]


def arx_adult_dataset(shared_data: Path, salary_role: Role = Role.SENSITIVE) -> Dataset:
    """ARX's adult.csv (30,162 rows) with ARX's own hierarchies for its 8 QIs (age as a 100-leaf taxonomy),
    read and attached by the engine as the window does."""
    path = shared_data / "adult" / "hierarchies" / "arx" / "adult.csv.gz"
    ds = read_table(path, kinds={c: "categorical" for c in ARX_QIS},
                    roles={**{c: Role.QUASI_IDENTIFIER for c in ARX_QIS}, "salary-class": salary_role})
    ds, attached, notes = attach_hierarchies(ds, path)
    assert sorted(attached) == sorted(ARX_QIS) and not notes, notes
    return ds
