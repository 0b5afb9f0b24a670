"""The bundle's quick checks, without PyInstaller: the sample and taxonomies travel inside the package and are
found through importlib.resources from an installed layout; the bundler's hidden-import list covers every
mechanism; both entry points call multiprocessing.freeze_support before anything else. (The slow build and its
smoke test: bash packaging/build.sh && bash packaging/smoke.sh.)"""

from __future__ import annotations

import importlib
import importlib.util
import json
import multiprocessing
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

from ppdp_gui.engine.mechanisms import registry
from ppdp_gui.engine.mechanisms.base import Mechanism
from ppdp_gui.engine.package_files import sample_table, taxonomies_folder

REPO = Path(__file__).resolve().parents[1]


def load_hints():
    spec = importlib.util.spec_from_file_location("bundle_hints", REPO / "packaging" / "bundle_hints.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_one_copy_at_the_top_of_the_checkout():
    """The design card's layout: resources/ and taxonomies/ at the repository's top level, one copy only; a
    source checkout finds them there."""
    assert sample_table() == REPO / "resources" / "samples" / "adult_sample.csv" and sample_table().is_file()
    assert taxonomies_folder() == REPO / "taxonomies"
    assert len(list((taxonomies_folder() / "adult").glob("adult_hierarchy_*.csv"))) == 9
    assert sorted(p.name for p in (taxonomies_folder() / "icd").glob("*.csv")) == [
        "icd10_who_categories.csv", "icd9cm_categories.csv"]
    assert not (REPO / "ppdp_gui" / "resources").exists() and not (REPO / "ppdp_gui" / "taxonomies").exists()


CHILD = """
import json, sys
import ppdp_gui
from ppdp_gui.engine.package_files import sample_table
from ppdp_gui.engine.taxonomy import bundled_adult_taxonomies, icd_categories, taxonomies_dir
from ppdp_gui.engine.taxonomy.discover import find_hierarchies
found = find_hierarchies(sample_table(), ["age", "education", "sex"])
print(json.dumps({"package": ppdp_gui.__file__, "sample": str(sample_table()), "rows": sum(1 for _ in
    open(sample_table(), encoding="utf-8")) - 1, "taxonomies": str(taxonomies_dir()),
    "adult": sorted(bundled_adult_taxonomies()), "icd9": len(icd_categories("icd9").leaf_values()),
    "found": {c: str(p) for c, p in found.items()}}))
"""


def test_the_wheel_carries_them_and_they_load_from_the_installed_package(tmp_path):
    """`pip wheel` builds the wheel (hatchling maps the top-level folders into the package); unpacked as pip
    installs it, a fresh interpreter importing ppdp_gui from there must find every shipped file inside it, the
    bundled hierarchies loading the same way as in a checkout."""
    import zipfile
    wheels = tmp_path / "wheels"
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                            str(REPO), "-w", str(wheels)], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr[-2000:]
    wheel = next(wheels.glob("ppdp_gui-*.whl"))
    lib = tmp_path / "lib"
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        z.extractall(lib)
    for path in ("resources/samples/adult_sample.csv", "resources/governance/restricted_zip3.csv",
                 "taxonomies/README.md", "taxonomies/icd/icd9cm_categories.csv", "gui/help/guide.html"):
        assert f"ppdp_gui/{path}" in names, path
    assert len([n for n in names if n.startswith("ppdp_gui/taxonomies/adult/")]) == 9
    assert not any(n.startswith(("resources/", "taxonomies/")) for n in names)  # inside the package only
    env = {"PYTHONPATH": str(lib), "PATH": "/usr/bin:/bin", "PPDP_LEDGER": str(tmp_path / "l.sqlite")}
    run = subprocess.run([sys.executable, "-c", CHILD], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    got = json.loads(run.stdout)
    inside = str(lib / "ppdp_gui")
    assert got["package"].startswith(inside) and got["sample"].startswith(inside)
    assert got["taxonomies"] == str(lib / "ppdp_gui" / "taxonomies")
    assert got["rows"] == 30162
    assert got["adult"] == ["age", "education", "marital-status", "native-country", "occupation", "race",
                            "salary-class", "sex", "workclass"]
    assert got["icd9"] == 1247
    assert set(got["found"]) == {"age", "education", "sex"}
    assert all(p.startswith(str(lib / "ppdp_gui" / "taxonomies" / "adult")) for p in got["found"].values())


def _mechanism_classes() -> dict[str, type]:
    """Every concrete mechanism class defined under engine/mechanisms (public, with its own `name`)."""
    import ppdp_gui.engine.mechanisms as root
    found = {}
    for info in pkgutil.walk_packages(root.__path__, root.__name__ + "."):
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if (isinstance(value, type) and issubclass(value, Mechanism) and value.__module__ == module.__name__
                    and not value.__name__.startswith("_") and "name" in vars(value)):
                found[value.name] = value
    return found


def test_hidden_imports_cover_every_registered_mechanism():
    hidden = load_hints().hidden_imports()
    assert len(registry.names()) >= 12
    for name in registry.names():
        assert registry.get(name).__module__.startswith(tuple(hidden)), name
    for module in registry.modules():
        assert module in hidden
    # and the registry knows every mechanism there is (an unregistered one would silently be left out)
    classes = _mechanism_classes()
    assert set(classes) == set(registry.names())
    assert all(registry.get(n) is cls for n, cls in classes.items())
    from ppdp_gui.gui.workers.process import PRELOAD
    assert set(PRELOAD) <= set(hidden)  # the fork server imports these by name


def test_bundle_data_files_hold_every_resource():
    """The bundle reads the top-level folders (one copy) and places them inside the package, as the wheel does."""
    datas = load_hints().data_files(REPO)
    shipped = {Path(dest) / Path(src).name for src, dest in datas}
    for folder in (REPO / "resources", REPO / "taxonomies"):
        for path in folder.rglob("*"):
            if path.is_file():
                assert Path("ppdp_gui") / path.relative_to(REPO) in shipped, path
    assert Path("ppdp_gui/gui/help/guide.html") in shipped
    assert not any(src.endswith(".py") or "__pycache__" in src for src, _ in datas)
    spec = (REPO / "packaging" / "ppdp_gui.spec").read_text()
    assert "bundle_hints.hidden_imports()" in spec and "bundle_hints.data_files(ROOT)" in spec


class _Called(Exception):
    pass


def _refuse(*_a, **_k):
    raise _Called


@pytest.mark.parametrize("entry", ["ppdp_gui.gui.app", "ppdp_gui.cli"])
def test_entry_points_call_freeze_support_first(entry, monkeypatch):
    """In the bundle a worker helper process starts this same executable: freeze_support must run (and exit
    there) before any window or argument parsing."""
    monkeypatch.setattr(multiprocessing, "freeze_support", _refuse)
    main = importlib.import_module(entry).main
    with pytest.raises(_Called):
        main(["mechanisms"] if entry == "ppdp_gui.cli" else ["ppdp-gui", "--sample"])
    for script in ("entry_gui.py", "entry_cli.py"):
        text = (REPO / "packaging" / script).read_text()
        assert "main()" in text and ("ppdp_gui.gui.app" in text or "ppdp_gui.cli" in text)
