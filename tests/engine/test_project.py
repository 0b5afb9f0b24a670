"""Project files (recipes): versioned JSON that round-trips, migrates old files and refuses bad ones with one
clear error naming the file and the field — never a traceback."""

from __future__ import annotations

import json

import pytest

from ppdp_gui.engine.data.domains import Domain
from ppdp_gui.engine.data.schema import NAPolicy, Role
from ppdp_gui.engine.errors import DataError
from ppdp_gui.engine.persistence import project
from ppdp_gui.engine.persistence.project import Recipe
from ppdp_gui.engine.pipeline.load import load
from ppdp_gui.engine.taxonomy import Taxonomy


@pytest.fixture
def recipe(adult_sample):
    flat = Taxonomy.flat("race", ["White", "Black", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other"],
                         origin="data")
    return Recipe(source=str(adult_sample), na_policy=NAPolicy(action="category"), kinds={"age": "numeric"},
                  roles={"race": Role.INSENSITIVE, "salary-class": Role.CLASS}, taxonomies={"race": flat},
                  domains={"age": Domain(low=0, high=120, integer=True),
                           "salary-class": Domain(categories=("<=50K", ">50K"))},
                  mechanism="DiffGen", params={"epsilon": 0.5, "h": 8}, allow_data_domains=True)


def test_round_trip(recipe, tmp_path):
    path = project.write_recipe(recipe, tmp_path / "p.ppdp.json")
    raw = json.loads(path.read_text())
    assert raw["schema_version"] == project.SCHEMA_VERSION
    back = project.read_recipe(path)
    assert back.source == recipe.source and back.na_policy == recipe.na_policy and back.kinds == recipe.kinds
    assert back.roles == recipe.roles and back.domains == recipe.domains
    assert back.taxonomies["race"].to_paths() == recipe.taxonomies["race"].to_paths()
    assert back.taxonomies["race"].origin == "data"  # a tree built from the data stays marked
    assert (back.mechanism, back.params, back.allow_data_domains) == ("DiffGen", {"epsilon": 0.5, "h": 8}, True)


def test_loading_a_recipe_applies_everything(recipe):
    data = load(recipe).dataset
    assert data.spec("age").domain == Domain(low=0, high=120, integer=True)
    assert data.spec("race").role == Role.INSENSITIVE and data.spec("race").taxonomy.origin == "data"
    assert data.spec("education").taxonomy is not None  # the bundled ARX hierarchies named after the sample
    assert data.spec("salary-class").taxonomy is not None  # attached to every column that has a file


def test_changed_source_is_noticed(recipe, tmp_path):
    copy = tmp_path / "adult.csv"
    copy.write_bytes(open(recipe.source, "rb").read())
    import hashlib
    recipe.source, recipe.source_sha256 = str(copy), hashlib.sha256(copy.read_bytes()).hexdigest()
    assert not project.source_changed(recipe) and not load(recipe).notes
    copy.write_bytes(copy.read_bytes() + b"Male,20,White,Divorced,HS-grad,Cuba,Private,Sales,<=50K\n")
    assert project.source_changed(recipe) and "changed since" in load(recipe).notes[0]


def test_migrate_from_unversioned_draft_and_version_1():
    old = {"source_path": "/data/t.csv", "roles": {"age": "quasi-identifier"}, "mechanism": "Mondrian",
           "params": {"k": 5}}
    new = project.migrate(old)
    assert new["schema_version"] == project.SCHEMA_VERSION
    back = project.recipe_from_json(old)
    assert back.source == "/data/t.csv" and back.mechanism == "Mondrian" and back.params == {"k": 5}
    assert back.roles == {"age": Role.QUASI_IDENTIFIER}
    v1 = {"schema_version": 1, "source": {"path": "/d/t.csv"}, "taxonomies": {"sex": [["F", "*"], ["M", "*"]]},
          "mechanism": {"name": "DiffGen", "params": {}}}
    back = project.recipe_from_json(v1)
    assert back.taxonomies["sex"].origin == "data"  # unknown provenance: the safe side
    assert project.migrate(project.migrate(v1)) == project.migrate(v1)


@pytest.mark.parametrize("obj, words", [
    ({"schema_version": 99, "source": {"path": "x"}}, "newer version"),
    ({"schema_version": "one"}, "not a version number"),
    ([1, 2], "not a JSON object"),
    ({"schema_version": 2, "source": {}}, "which table"),
    ({"schema_version": 2, "source": {"path": "x"}, "roles": {"a": "boss"}}, "roles\\['a'\\]: unknown role"),
    ({"schema_version": 0, "source_path": "x", "roles": {"a": "qi"}, "taxonomies": {"a": [["1", "*"]]}}, None),
    ({"schema_version": 2, "source": {"path": "x"}, "na_policy": {"action": "explode"}}, "na_policy.action"),
    ({"schema_version": 2, "source": {"path": "x"}, "taxonomies": {"a": "oops"}}, "taxonomies\\['a'\\]"),
    ({"schema_version": 2, "source": {"path": "x"}, "taxonomies": {"a": [["v", "g1", "*"], ["v", "g2", "*"]]}},
     "taxonomies\\['a'\\]"),
    ({"schema_version": 2, "source": {"path": "x"}, "kinds": {"a": "complex"}}, "kinds\\['a'\\]"),
    ({"schema_version": 2, "source": {"path": "x"}, "domains": {"a": {"low": 5}}}, "domains\\['a'\\]"),
    ({"schema_version": 2, "source": {"path": "x"}, "mechanism": {"params": {"k": {"nested": 1}}}}, "params"),
    ({"schema_version": 2, "source": {"path": "x"}, "mechanism": {"publish_as_is": "patient_nbr"}},
     "mechanism.publish_as_is"),
])
def test_bad_projects_are_refused_with_the_field(obj, words):
    if words is None:  # version 0 'qi' roles are understood
        assert project.recipe_from_json(obj).roles == {"a": Role.QUASI_IDENTIFIER}
        return
    with pytest.raises(DataError, match=words):
        project.recipe_from_json(obj)


def test_malformed_files_name_line_column_or_reason(tmp_path):
    bad = tmp_path / "bad.ppdp.json"
    bad.write_text('{"schema_version": 2,\n  "source": {"path": "x"\n')
    with pytest.raises(DataError) as err:
        project.read_recipe(bad)
    assert err.value.line == 3 and err.value.column is not None
    deep = tmp_path / "deep.ppdp.json"
    deep.write_text('{"schema_version": 2, "source": {"path": "x"}, "releases": ' + "[" * 5000 + "]" * 5000 + "}")
    with pytest.raises(DataError, match="nested|not a valid"):
        project.read_recipe(deep)
    huge = tmp_path / "huge.ppdp.json"
    huge.write_text('{"schema_version": 2, "source": {"path": "x"}, "mechanism": {"params": {"k": '
                    + "9" * 4300 + "}}}")
    with pytest.raises(DataError, match="digits"):
        project.read_recipe(huge)
    nan = tmp_path / "nan.ppdp.json"
    nan.write_text('{"schema_version": 2, "source": {"path": "x"}, "mechanism": {"params": {"k": NaN}}}')
    with pytest.raises(DataError):
        project.read_recipe(nan)
    binary = tmp_path / "bin.ppdp.json"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(DataError, match="not a project"):
        project.read_recipe(binary)


def test_publish_as_is_round_trips_and_old_projects_have_none(tmp_path):
    """The window's "publish as is" ticks are part of the recipe, so `ppdp run --recipe` makes the same release."""
    saved = Recipe(source="t.csv", mechanism="Mondrian", params={"k": 10}, publish_as_is=("patient_nbr",))
    path = project.write_recipe(saved, tmp_path / "p.ppdp.json")
    assert json.loads(path.read_text())["mechanism"]["publish_as_is"] == ["patient_nbr"]
    assert project.read_recipe(path).publish_as_is == ("patient_nbr",)
    assert project.recipe_from_json({"schema_version": 2, "source": {"path": "x"}}).publish_as_is == ()
