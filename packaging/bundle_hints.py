"""What PyInstaller cannot find by following `import` statements, for packaging/ppdp_gui.spec (and its test).

- hidden imports: the mechanism modules the registry names by strings (engine.mechanisms.registry.modules()) and
  the modules the worker processes' fork server preloads by name (gui.workers.process.PRELOAD);
- data files: everything in the package that is not Python (the sample table, the ARX and ICD taxonomies, the
  help page), so importlib.resources finds them inside the bundle exactly as in a wheel;
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


def data_files(package_root: Path) -> list[tuple[str, str]]:
    """(source file, folder inside the bundle) for every non-Python file under ppdp_gui/ (no caches)."""
    out = []
    for path in sorted(package_root.rglob("*")):
        if path.is_dir() or path.suffix in (".py", ".pyc", ".pyo") or "__pycache__" in path.parts:
            continue
        out.append((str(path), str(Path(package_root.name) / path.parent.relative_to(package_root))))
    return out
