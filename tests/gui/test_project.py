"""Project files: versioned JSON that round-trips the session, migrates old files and refuses bad ones."""

from __future__ import annotations

import json

import pytest

from ppdp_gui.engine.data.reader import read_table
from ppdp_gui.engine.data.schema import Role
from ppdp_gui.engine.errors import DataError
from ppdp_gui.engine.taxonomy.arx_io import read_arx_hierarchy
from ppdp_gui.gui import project
from ppdp_gui.gui.session import Session


@pytest.fixture
def session(adult_sample, shared_data):
    s = Session()
    ds = read_table(adult_sample).with_roles({"race": Role.INSENSITIVE})
    tax = read_arx_hierarchy(shared_data / "adult" / "hierarchies" / "arx" / "adult_hierarchy_education.csv",
                             "education")
    s.set_dataset(ds.with_column("education", taxonomy=tax))
    s.set_mechanism("Mondrian", {"k": 25, "mode": "relaxed", "l": 0, "diversity": "distinct", "sensitive": None,
                                 "grid_width": 0.0})
    return s


def test_round_trip(session, tmp_path):
    path = project.save_project(session, tmp_path / "p.ppdp.json")
    raw = json.loads(path.read_text())
    assert raw["schema_version"] == project.SCHEMA_VERSION
    obj = project.read_project(path)
    ds = session.dataset
    assert obj["source"] == {"path": ds.source.path, "sha256": ds.source.sha256, "format": "csv"}
    assert project.roles_of(obj) == {c.name: c.role for c in ds.schema}
    assert obj["kinds"]["age"] == "numeric"
    taxes = project.taxonomies_of(obj)
    assert list(taxes) == ["education"]
    assert taxes["education"].to_paths() == ds.spec("education").taxonomy.to_paths()
    assert obj["mechanism"] == {"name": "Mondrian", "params": session.params}
    assert project.na_policy_of(obj) == ds.source.na_policy
    assert not project.source_changed(obj)


def test_changed_source_is_noticed(session, tmp_path):
    copy = tmp_path / "adult.csv"
    copy.write_bytes(open(session.dataset.source.path, "rb").read())
    obj = project.project_dict(session)
    obj["source"]["path"] = str(copy)
    assert not project.source_changed(obj)
    copy.write_bytes(copy.read_bytes() + b"Male,20,White,Divorced,HS-grad,Cuba,Private,Sales,<=50K\n")
    assert project.source_changed(obj)


def test_migrate_from_unversioned_draft():
    old = {"source_path": "/data/t.csv", "roles": {"age": "quasi-identifier"}, "mechanism": "Mondrian",
           "params": {"k": 5}}
    new = project.migrate(old)
    assert new["schema_version"] == project.SCHEMA_VERSION
    assert new["source"]["path"] == "/data/t.csv" and new["mechanism"] == {"name": "Mondrian", "params": {"k": 5}}
    assert project.roles_of(new) == {"age": Role.QUASI_IDENTIFIER}
    assert project.migrate(new) == new  # current files pass unchanged


@pytest.mark.parametrize("obj, words", [
    ({"schema_version": 99, "source": {"path": "x"}}, "newer version"),
    ({"schema_version": "one"}, "not a version number"),
    ([1, 2], "not a JSON object"),
])
def test_bad_versions_are_refused(obj, words):
    with pytest.raises(DataError, match=words):
        project.migrate(obj)


def test_malformed_file_names_line_and_column(tmp_path):
    bad = tmp_path / "bad.ppdp.json"
    bad.write_text('{"schema_version": 1,\n  "source": {"path": "x"\n')
    with pytest.raises(DataError) as err:
        project.read_project(bad)
    assert err.value.line == 3 and err.value.column is not None
    (tmp_path / "nosrc.ppdp.json").write_text('{"schema_version": 1, "source": {}}')
    with pytest.raises(DataError, match="which table"):
        project.read_project(tmp_path / "nosrc.ppdp.json")
