"""Taxonomies shipped with the app (the ARX Adult hierarchies, ICD categories) in ``taxonomies``.

The folder is found through ``importlib.resources`` (engine/package_files.py), the same way in a source checkout,
a wheel and the PyInstaller bundle. ``PPDP_TAXONOMIES`` overrides it (e.g. to try other hierarchies).
"""

from __future__ import annotations

import os
from pathlib import Path

from ppdp_gui.engine.errors import TaxonomyError
from ppdp_gui.engine.package_files import taxonomies_folder
from ppdp_gui.engine.taxonomy.arx_io import column_from_filename, read_arx_hierarchy
from ppdp_gui.engine.taxonomy.tree import Taxonomy


def taxonomies_dir() -> Path:
    override = os.environ.get("PPDP_TAXONOMIES")
    return Path(override) if override else taxonomies_folder()


def bundled_adult_taxonomies() -> dict[str, Taxonomy]:
    """Column name (as in ARX's adult.csv) -> its ARX hierarchy: age, education, marital-status, …"""
    folder = taxonomies_dir() / "adult"
    files = sorted(folder.glob("adult_hierarchy_*.csv"))
    if not files:
        raise TaxonomyError(f"the bundled Adult taxonomies are not in {folder}")
    return {column_from_filename(f): read_arx_hierarchy(f) for f in files}
