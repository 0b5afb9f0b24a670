"""Which data values a column's taxonomy does not cover, remembered per (taxonomy, table, column).

Qt-free: the Taxonomies step and the step list ask for it often (every redraw of the list), and the table loader
(workers/tasks.load_job, in the worker thread) works it out for the taxonomies attached when a table opens, so the
window only looks it up (`remember`) instead of scanning a column in the GUI thread.
"""

from __future__ import annotations

_CACHE: list[tuple[object, object, str, list[str]]] = []
SIZE = 32


def missing_values(tax, series) -> list[str]:
    """Data values the tree does not cover (these would block a generalisation)."""
    from ppdp_gui.engine.taxonomy.coverage import check_coverage
    return list(check_coverage(tax, series).missing)


def remember(tax, frame, column: str, missing: list[str]) -> None:
    _CACHE.insert(0, (tax, frame, column, list(missing)))
    del _CACHE[SIZE:]


def keep_only(frame) -> None:
    """Forget what was worked out for any other table than `frame` (called when a table is opened): a new
    table's coverage is never looked up among an earlier table's, and the earlier frames are not kept alive."""
    _CACHE[:] = [entry for entry in _CACHE if frame is not None and entry[1] is frame]


def cached_missing_values(tax, frame, column: str) -> list[str]:
    """missing_values, remembered for the last few (taxonomy, table, column) by identity."""
    for t, f, c, result in _CACHE:
        if t is tax and f is frame and c == column:
            return result
    result = missing_values(tax, frame[column])
    remember(tax, frame, column, result)
    return result
