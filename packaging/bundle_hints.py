"""What PyInstaller cannot find by following `import` statements, for packaging/ppdp_gui.spec (and its test).

- hidden imports: the mechanism modules the registry names by strings (engine.mechanisms.registry.modules()) and
  the modules the worker processes' fork server preloads by name (gui.workers.process.PRELOAD);
- data files: everything in the package that is not Python (the help page) and the repository's top-level
  resources/ and taxonomies/ (the sample table, the governance lists, the ARX and ICD taxonomies) placed inside
  the package as the wheel places them (pyproject.toml's force-include), so importlib.resources finds them in the
  bundle exactly as in a wheel (engine/package_files.py);
- excludes: test and notebook tooling that optional imports would otherwise drag in.

Plain functions without PyInstaller, so tests/test_package_files.py can check them without building anything.
"""

from __future__ import annotations

from pathlib import Path

EXCLUDES = ["tkinter", "matplotlib", "IPython", "jupyter_client", "notebook", "pytest", "_pytest", "hypothesis",
            "pytestqt", "opendp", "importlinter", "pypdfium2", "PyInstaller"]


def hidden_imports() -> list[str]:
    from ppdp_gui.engine.mechanisms import registry
    from ppdp_gui.gui.workers.process import PRELOAD
    return list(dict.fromkeys(registry.modules() + list(PRELOAD)))


PACKAGE = "ppdp_gui"
#: top-level folders of the repository that travel inside the package (the same list as pyproject.toml's
#: [tool.hatch.build.targets.wheel.force-include] and engine/package_files.SHIPPED)
SHIPPED = ("resources", "taxonomies")


def data_files(repo_root: Path) -> list[tuple[str, str]]:
    """(source file, folder inside the bundle) for every non-Python file under ppdp_gui/ (no caches), and every
    file of the top-level resources/ and taxonomies/, placed under ppdp_gui/ as in the wheel."""
    out = []
    sources = [(repo_root / PACKAGE, Path(PACKAGE))] + [(repo_root / name, Path(PACKAGE) / name) for name in SHIPPED]
    for folder, inside in sources:
        for path in sorted(folder.rglob("*")):
            if path.is_dir() or path.suffix in (".py", ".pyc", ".pyo") or "__pycache__" in path.parts:
                continue
            out.append((str(path), str(inside / path.parent.relative_to(folder))))
    return out
