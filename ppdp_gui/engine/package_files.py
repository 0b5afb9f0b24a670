"""Files shipped inside the package: the sample table(s) and the bundled ARX taxonomies.

They live in ``ppdp_gui/resources/`` and ``ppdp_gui/taxonomies/`` and are found with ``importlib.resources``, so
the same code finds them in a source checkout, an installed wheel and the PyInstaller bundle (packaging/). Callers
get real ``Path``s because the taxonomy discovery compares folders and the readers open files by path; a package
imported from a zip is extracted once to a temporary folder (removed at exit).
"""

from __future__ import annotations

import atexit
import contextlib
from importlib import resources
from pathlib import Path

PACKAGE = "ppdp_gui"
SAMPLE_NAME = "adult_sample.csv"

_EXTRACTED = contextlib.ExitStack()
atexit.register(_EXTRACTED.close)
_CACHE: dict[str, Path] = {}


def package_folder(name: str) -> Path:
    """The folder `name` (e.g. "taxonomies") inside the installed ppdp_gui package, as a file-system path."""
    if name not in _CACHE:
        traversable = resources.files(PACKAGE).joinpath(name)
        if isinstance(traversable, Path):
            _CACHE[name] = traversable
        else:  # pragma: no cover - only for a zipped install
            _CACHE[name] = _EXTRACTED.enter_context(resources.as_file(traversable))
    return _CACHE[name]


def taxonomies_folder() -> Path:
    """``ppdp_gui/taxonomies``: adult/ (ARX Adult hierarchies) and icd/ (ICD-9-CM and ICD-10 categories)."""
    return package_folder("taxonomies")


def samples_folder() -> Path:
    """``ppdp_gui/resources/samples``: the tables a new user can open at once."""
    return package_folder("resources") / "samples"


def sample_table() -> Path:
    """The bundled Adult sample (30,162 rows), opened by `ppdp-gui --sample` and `ppdp demo`."""
    return samples_folder() / SAMPLE_NAME
