"""Taxonomy trees: model, ARX hierarchy CSV in/out, auto-builders, coverage and generalisation.

The names below are imported on first use (PEP 562), so that importing one light module of the package (the
builders' registry) does not pull in numpy and the builders before the window is on screen (bench_start.py)."""

from typing import TYPE_CHECKING

from ppdp_gui.engine.lazy_names import lazy_getattr

if TYPE_CHECKING:  # seen by static analysis (type checkers, the bundler's import graph); not run
    from ppdp_gui.engine.taxonomy import arx_io, builders, bundled, coverage, dates, icd, order, tree  # noqa: F401

_WHERE = {
    "ArxFormat": "arx_io", "read_arx_hierarchy": "arx_io", "write_arx_hierarchy": "arx_io",
    "DEFAULT_INTERVAL_WIDTH": "builders", "grouped": "builders", "masking": "builders",
    "numeric_intervals": "builders", "ordered_intervals": "builders",
    "bundled_adult_taxonomies": "bundled", "taxonomies_dir": "bundled",
    "check_coverage": "coverage",
    "date_hierarchy": "dates",
    "icd_categories": "icd", "icd_taxonomy": "icd",
    "natural_key": "order", "natural_sorted": "order",
    "Taxonomy": "tree",
}
__all__ = sorted(_WHERE)


__getattr__ = lazy_getattr(__name__, _WHERE, globals())
