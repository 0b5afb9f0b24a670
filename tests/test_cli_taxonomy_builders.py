"""`ppdp run --build-taxonomy COL=SPEC`: the command line builds the taxonomies the window builds.

Each spec must give the very tree the engine builder gives when called directly, with the defaults the Taxonomies
step uses (the one default interval width, the date format read from the values); a bad spec or values a builder
refuses is one line naming the column, never a traceback; the built tree is kept in the recipe, so a saved project
holds it with its origin; a tree built from the table's own values is no public domain for an ε-DP release.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from ppdp_gui.cli import build_parser, load_dataset, main
from ppdp_gui.engine.persistence.project import read_recipe, write_recipe
from ppdp_gui.engine.pipeline.load import load
from ppdp_gui.engine.taxonomy.builders import (default_width, masking, numeric_intervals, ordered_intervals)
from ppdp_gui.engine.taxonomy.dates import date_format_of, date_hierarchy
from ppdp_gui.engine.taxonomy.icd import icd_taxonomy
from ppdp_gui.engine.taxonomy.tree import Taxonomy

N = 600
ROLES = ["admitted=qi", "age=qi", "dx9=insensitive", "dx10=insensitive", "zip=insensitive", "sex=qi",
         "charges=insensitive"]


@pytest.fixture
def ward(tmp_path):
    """A ward table: day-first admission dates, ages with a top code '90+', ICD-9 and ICD-10 codes, ZIP codes
    whose leading zero a spreadsheet dropped ('2134'), sex, and charges ranging over 0 to about 100,000."""
    rng = np.random.default_rng(7)
    days = pd.Timestamp("2015-01-01") + pd.to_timedelta(rng.integers(0, 3000, N), unit="D")
    ages = rng.integers(18, 96, N)
    frame = pd.DataFrame({
        "admitted": days.strftime("%d/%m/%Y"),
        "age": np.where(ages >= 90, "90+", ages.astype(str)),
        "dx9": rng.choice(["250.83", "401.9", "428.0", "V45.81", "E909.3", "038.9"], N),
        "dx10": rng.choice(["E11.9", "I10", "J18.9", "S72.001A"], N),
        "zip": rng.choice(["47677", "47602", "2134", "47905"], N),
        "sex": rng.choice(["F", "M"], N),
        "charges": rng.integers(0, 100_000, N),
    })
    path = tmp_path / "ward.csv"
    frame.to_csv(path, index=False)
    return path


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def loaded_with(ward, *builds, extra=()):
    """The recipe and dataset `ppdp run` would make with these --build-taxonomy options."""
    argv = ["run", "Mondrian", "-i", str(ward), "-o", str(ward.with_name("out.csv"))]
    for role in ROLES:
        argv += ["--role", role]
    for b in builds:
        argv += ["--build-taxonomy", b]
    recipe, loaded = load_dataset(build_parser().parse_args(argv + list(extra)))
    return recipe, loaded.dataset


def window_builds(frame: pd.DataFrame) -> dict[str, Taxonomy]:
    """The engine builders called directly, with the calls and defaults of the Taxonomies step (and of the
    builders' own defaults for those the step has no button for)."""
    charges = pd.to_numeric(frame["charges"].dropna().unique())
    return {
        "sex=flat": Taxonomy.flat("sex", frame["sex"].dropna().astype(str).unique(), origin="data"),
        "charges=intervals": numeric_intervals("charges", frame["charges"],
                                               default_width(float(charges.min()), float(charges.max()))),
        "age=intervals:5": numeric_intervals("age", frame["age"], 5),
        "admitted=dates": date_hierarchy("admitted", frame["admitted"],
                                         date_format=date_format_of("admitted", frame["admitted"])),
        "zip=mask:0": masking("zip", frame["zip"], pad="0"),
        "dx9=icd9": icd_taxonomy("dx9", frame["dx9"], version="icd9"),
        "dx10=icd10": icd_taxonomy("dx10", frame["dx10"], version="icd10"),
    }


@pytest.mark.parametrize("spec", ["sex=flat", "charges=intervals", "age=intervals:5", "admitted=dates",
                                  "zip=mask:0", "dx9=icd9", "dx10=icd10"])
def test_each_builder_gives_the_engines_tree(ward, spec):
    recipe, data = loaded_with(ward, spec)
    column = spec.split("=")[0]
    expected = window_builds(data.frame)[spec]
    got = data.spec(column).taxonomy
    assert got is not None and got.to_paths() == expected.to_paths()
    assert got.origin == expected.origin == "data"  # every one of these has the records' values as leaves
    assert recipe.taxonomies[column] is got and not recipe.taxonomy_builds  # kept in the recipe, spec consumed
    assert set(pd.unique(data.frame[column].dropna().astype(str))) <= set(got.leaf_values())


def test_intervals_default_to_the_windows_width(ward):
    """Charges span 0 to ~100,000: the one default width (10) would make ~10,000 intervals, so the builder's
    `default_width` (the width the window's box starts at) picks 10,000; an explicit width is kept."""
    _, data = loaded_with(ward, "charges=intervals", "age=intervals")
    charges, age = data.spec("charges").taxonomy, data.spec("age").taxonomy
    level1 = {charges.label(n) for n in charges.nodes_at_level(1)}
    assert "[0, 10000)" in level1
    assert age.generalise(pd.Series(["90+", "18"]), age.nodes_at_level(1)).tolist() == \
        ["[90, 100)", "[10, 20)"]


def test_bands_are_public_and_built_from_the_bounds(ward, tmp_path):
    frame = pd.read_csv(ward, dtype=str)
    frame["age"] = frame["age"].replace("90+", "95")
    frame.to_csv(ward, index=False)
    _, data = loaded_with(ward, "age=bands:0:120:10")
    expected = ordered_intervals("age", 0, 120, 10, step=1, values=data.frame["age"])
    got = data.spec("age").taxonomy
    assert got.to_paths() == expected.to_paths() and got.origin == "public"
    assert len(got.leaf_values()) == 121  # every age 0..120, not only those in the table


@pytest.mark.parametrize("spec, words", [
    ("age=bogus", ["'age'", "unknown taxonomy builder", "intervals[:WIDTH]"]),
    ("charges=intervals:wide", ["'charges'", "must be a number", "charges=intervals:5"]),
    ("charges=intervals:-3", ["'charges'", "must be positive"]),
    ("age=bands:0", ["'age'", "bands:LOW:HIGH", "age=bands:0:120:10"]),
    ("dx9=icd9:3", ["'dx9'", "icd9:codes or icd9:categories"]),
    ("zip=mask:00", ["'zip'", "one padding character"]),
    ("admitted=dates:dmy", ["'admitted'", "not a date format", "%d/%m/%Y"]),
    ("flat", ["--build-taxonomy expects NAME=VALUE"]),
    ("nope=flat", ["'nope'", "the table does not have"]),
    # values the builder refuses: named with an example value
    ("dx9=icd10", ["'dx9'", "not ICD-10 codes", "'250.83'"]),
    ("zip=mask", ["'zip'", "different lengths", "'2134'"]),
    ("sex=intervals", ["'sex'", "not numbers", "'F'"]),
    ("sex=dates", ["'sex'", "not dates", "'F'"]),
    ("age=bands:0:80:10", ["'age'", "not among", "'81'"]),
])
def test_a_bad_spec_is_one_line_naming_the_column(ward, tmp_path, capsys, spec, words):
    code, _out, err = run(capsys, "run", "Mondrian", "-i", ward, "-o", tmp_path / "out.csv",
                         "--ledger", tmp_path / "l.sqlite", "--build-taxonomy", spec, "-p", "k=5")
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err and err.startswith("ppdp: error:")
    for w in words:
        assert w in err, (w, err)
    assert not (tmp_path / "out.csv").exists()


def test_a_file_and_a_build_for_one_column_is_refused(ward, tmp_path, capsys):
    arx = tmp_path / "sex.csv"
    arx.write_text("F;*\nM;*\n")
    code, _, err = run(capsys, "run", "Mondrian", "-i", ward, "-o", tmp_path / "out.csv", "--ledger",
                       tmp_path / "l.sqlite", "--taxonomy", f"sex={arx}", "--build-taxonomy", "sex=flat")
    assert code == 2 and "give one of them" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("mechanism", ["Mondrian", "Global recoding"])
def test_k_anonymity_with_a_built_date_taxonomy_keeps_years(ward, tmp_path, capsys, mechanism):
    """Without a taxonomy the dates (about 540 distinct) can only be kept or starred: every row is '*'. With
    --build-taxonomy admitted=dates they come out as months, years or decades — never '*'."""
    base = ["run", mechanism, "-i", ward, "--ledger", tmp_path / "l.sqlite", "-p", "k=5"]
    for role in ("age", "dx9", "dx10", "zip", "sex"):
        base += ["--role", f"{role}=insensitive"]
    base += ["--role", "admitted=qi", "--role", "charges=identifier"]
    code, _, err = run(capsys, *base, "-o", tmp_path / "plain.csv")
    assert code == 0, err
    assert (pd.read_csv(tmp_path / "plain.csv", dtype=str)["admitted"] == "*").mean() > 0.9
    assert "In ppdp: --build-taxonomy COL=dates" in err  # the warning says how, on the command line too
    code, _, err = run(capsys, *base, "-o", tmp_path / "dates.csv", "--build-taxonomy", "admitted=dates")
    assert code == 0, err
    released = pd.read_csv(tmp_path / "dates.csv", dtype=str)["admitted"]
    assert (released != "*").mean() >= 0.95  # at most the suppressed rows are starred
    kept = released[released != "*"]
    assert kept.str.fullmatch(r"\d{4}(-\d{2})?|\d{4}-\d{4}").all(), kept.unique()[:5]
    assert kept.str.fullmatch(r"\d{4}").any() or kept.str.fullmatch(r"\d{4}-\d{2}").any()


def _diffgen(ward, tmp_path, out, *extra):
    return ["run", "DiffGen", "-i", ward, "-o", tmp_path / out, "--ledger", tmp_path / "l.sqlite",
            "--role", "admitted=insensitive", "--role", "age=insensitive", "--role", "charges=insensitive",
            "--role", "dx10=insensitive", "--role", "sex=qi", "--role", "zip=qi", "--role", "dx9=class",
            "--domain", "sex=F,M", "--domain", "dx9=250.83,401.9,428.0,V45.81,E909.3,038.9",
            "-p", "class_column=dx9", "-p", "epsilon=0.5", "--confirm-roles", *extra]


def test_dp_release_refuses_a_flat_tree_built_from_the_data(ward, tmp_path, capsys):
    code, _, err = run(capsys, *_diffgen(ward, tmp_path, "refused.csv", "--build-taxonomy", "zip=flat"))
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "zip" in err and "built from the table's own values" in err and "--allow-data-domains" in err
    assert not (tmp_path / "refused.csv").exists()
    code, out, err = run(capsys, *_diffgen(ward, tmp_path, "allowed.csv", "--build-taxonomy", "zip=flat",
                                           "--allow-data-domains"))
    assert code == 0, err
    assert "NOT differentially private" in out and "zip taken from the data" in out
    # the same column with a public domain stated by the custodian: a real ε-DP release
    code, out, err = run(capsys, *_diffgen(ward, tmp_path, "public.csv", "--build-taxonomy", "zip=flat",
                                           "--domain", "zip=47677,47602,2134,47905"))
    assert code == 0, err
    assert "NOT" not in out.splitlines()[0]


def test_a_saved_project_round_trips_the_built_tree(ward, tmp_path, capsys):
    recipe, data = loaded_with(ward, "admitted=dates", "sex=flat", "charges=intervals")
    saved = write_recipe(recipe, tmp_path / "ward.ppdp.json")
    on_disk = json.loads(saved.read_text())
    assert on_disk["taxonomies"]["sex"]["origin"] == "data" and "taxonomy_builds" not in on_disk
    back = read_recipe(saved)
    again = load(back).dataset
    for col in ("admitted", "sex", "charges"):
        assert again.spec(col).taxonomy.to_paths() == data.spec(col).taxonomy.to_paths()
        assert again.spec(col).taxonomy.origin == "data"
    # the command line wins over the project's tree for the column it builds
    _, data2 = loaded_with(ward, "charges=intervals:50000", extra=["--recipe", str(saved)])
    level1 = {data2.spec("charges").taxonomy.label(n) for n in data2.spec("charges").taxonomy.nodes_at_level(1)}
    assert level1 == {"[0, 50000)", "[50000, 100000)"}
    assert data2.spec("admitted").taxonomy.to_paths() == data.spec("admitted").taxonomy.to_paths()


def test_sweep_takes_built_taxonomies(ward, tmp_path, capsys):
    code, out, err = run(capsys, "sweep", "Mondrian", "-i", ward, *[a for r in ROLES for a in ("--role", r)],
                         "--build-taxonomy", "admitted=dates", "--build-taxonomy", "age=intervals",
                         "--build-taxonomy", "sex=flat", "-g", "k=5,20", "--repeats", "1", "--seed", "1")
    assert code == 0, err
    assert "sweep of Mondrian" in out
    assert re.search(r"\b20\b", out)


def test_inspect_describes_the_trees_run_would_build(ward, capsys):
    frame = pd.read_csv(ward, dtype=str)
    frame["age"] = frame["age"].replace("90+", "95")
    frame.to_csv(ward, index=False)
    code, out, err = run(capsys, "inspect", ward, "--build-taxonomy", "admitted=dates",
                         "--build-taxonomy", "dx9=icd9", "--build-taxonomy", "age=bands:0:120:10")
    assert code == 0, err
    lines = {line.split(" = ")[0].strip(): line for line in out.splitlines() if " = " in line}
    assert "4 levels above" in lines["admitted"] and "not a public domain" in lines["admitted"]
    assert re.search(r"e\.g\. \d\d/\d\d/\d{4} → \d{4}-\d\d → \d{4} → \d{4}-\d{4} → \*", lines["admitted"])
    assert "Infectious and parasitic diseases" in lines["dx9"] and "not a public domain" in lines["dx9"]
    assert lines["age"].endswith("; public") and "121 values" in lines["age"]
    code, out, err = run(capsys, "inspect", ward, "--build-taxonomy", "admitted=icd9")
    assert code == 2 and out == "" and "'admitted'" in err and len(err.strip().splitlines()) == 1


def test_large_table_engine_builds_the_same_trees(ward):
    """With --engine duckdb the builders see a column's distinct values from SQL, typed as in memory: same trees."""
    specs = ("admitted=dates", "age=intervals", "sex=flat", "zip=mask:0", "dx9=icd9", "charges=intervals")
    _, memory = loaded_with(ward, *specs, extra=["--engine", "memory"])
    _, large = loaded_with(ward, *specs, extra=["--engine", "duckdb"])
    assert len(large.frame) == 0  # the rows stayed in the file
    for spec in specs:
        col = spec.split("=")[0]
        assert large.spec(col).taxonomy.to_paths() == memory.spec(col).taxonomy.to_paths(), col
