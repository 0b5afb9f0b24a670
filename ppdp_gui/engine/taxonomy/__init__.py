"""Taxonomy trees: model, ARX hierarchy CSV in/out, auto-builders, coverage and generalisation."""

from ppdp_gui.engine.taxonomy.arx_io import ArxFormat, read_arx_hierarchy, write_arx_hierarchy
from ppdp_gui.engine.taxonomy.builders import (DEFAULT_INTERVAL_WIDTH, grouped, masking, numeric_intervals,
                                               ordered_intervals)
from ppdp_gui.engine.taxonomy.bundled import bundled_adult_taxonomies, taxonomies_dir
from ppdp_gui.engine.taxonomy.coverage import Coverage, check_coverage
from ppdp_gui.engine.taxonomy.dates import date_hierarchy
from ppdp_gui.engine.taxonomy.icd import icd_categories, icd_taxonomy
from ppdp_gui.engine.taxonomy.order import natural_key, natural_sorted
from ppdp_gui.engine.taxonomy.tree import Taxonomy

__all__ = [
    "ArxFormat", "Coverage", "DEFAULT_INTERVAL_WIDTH", "Taxonomy", "bundled_adult_taxonomies", "check_coverage",
    "date_hierarchy", "grouped", "icd_categories", "icd_taxonomy", "masking", "natural_key", "natural_sorted",
    "numeric_intervals", "ordered_intervals", "read_arx_hierarchy", "taxonomies_dir", "write_arx_hierarchy",
]
