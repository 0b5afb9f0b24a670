"""Files shipped with the application: the sample table(s), the governance lists and the bundled taxonomies.

One copy of each, at the repository's top level (``resources/``, ``taxonomies/``, as the design card draws the
house). The build puts them inside the package: the wheel maps them to ``ppdp_gui/resources`` and
``ppdp_gui/taxonomies`` (pyproject.toml, hatch's ``force-include``), and the PyInstaller bundle the same way
(packaging/bundle_hints.py). So this module looks in two places, in this order:

1. inside the imported package (``importlib.resources``): an installed wheel, the bundle, a zipped install;
2. beside the package, at the top of a source checkout (``<checkout>/resources``): ``pip install -e``, or
   ``PYTHONPATH=<checkout>``.

Callers get real ``Path``s because the taxonomy discovery compares folders and the readers open files by path; a
package imported from a zip is extracted once to a temporary folder (removed at exit).
"""

from __future__ import annotations

import atexit
import contextlib
from importlib import resources
from pathlib import Path

PACKAGE = "ppdp_gui"
SAMPLE_NAME = "adult_sample.csv"
#: the folders shipped with the package, each at the top of the repository in a source checkout
SHIPPED = ("resources", "taxonomies")

_EXTRACTED = contextlib.ExitStack()
atexit.register(_EXTRACTED.close)
_CACHE: dict[str, Path] = {}


def checkout_root() -> Path | None:
    """The source checkout the package was imported from (the folder holding pyproject.toml beside ppdp_gui/),
    or None for an installed package."""
    package = resources.files(PACKAGE)
    if not isinstance(package, Path):  # pragma: no cover - a zipped install is never a checkout
        return None
    root = package.parent
    return root if (root / "pyproject.toml").is_file() and (root / PACKAGE).is_dir() else None


def package_folder(name: str) -> Path:
    """The shipped folder `name` ("resources" or "taxonomies") as a file-system path: inside the installed
    package, else at the top of the source checkout."""
    if name not in _CACHE:
        inside = resources.files(PACKAGE).joinpath(name)
        root = checkout_root()
        if inside.is_dir() or root is None:
            _CACHE[name] = inside if isinstance(inside, Path) else _EXTRACTED.enter_context(resources.as_file(inside))
        else:
            _CACHE[name] = root / name
    return _CACHE[name]


def taxonomies_folder() -> Path:
    """``taxonomies/``: adult/ (ARX Adult hierarchies) and icd/ (ICD-9-CM and ICD-10 categories)."""
    return package_folder("taxonomies")


def samples_folder() -> Path:
    """``resources/samples``: the tables a new user can open at once."""
    return package_folder("resources") / "samples"


def sample_table() -> Path:
    """The bundled Adult sample (30,162 rows), opened by `ppdp-gui --sample` and `ppdp demo`."""
    return samples_folder() / SAMPLE_NAME
