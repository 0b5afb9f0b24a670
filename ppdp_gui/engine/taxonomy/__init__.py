"""Taxonomy trees: model, ARX hierarchy CSV in/out, auto-builders, coverage and generalisation."""

from ppdp_gui.engine.taxonomy.arx_io import ArxFormat, read_arx_hierarchy, write_arx_hierarchy
from ppdp_gui.engine.taxonomy.builders import grouped, masking, numeric_intervals
from ppdp_gui.engine.taxonomy.bundled import bundled_adult_taxonomies, taxonomies_dir
from ppdp_gui.engine.taxonomy.coverage import Coverage, check_coverage
from ppdp_gui.engine.taxonomy.tree import Taxonomy

__all__ = [
    "ArxFormat", "Coverage", "Taxonomy", "bundled_adult_taxonomies", "check_coverage", "grouped", "masking",
    "numeric_intervals", "read_arx_hierarchy", "taxonomies_dir", "write_arx_hierarchy",
]
