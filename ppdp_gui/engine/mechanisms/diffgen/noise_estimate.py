"""DiffGen's share of noise, before the run, from its public plan (engine/mechanisms/noise_share.py).

DiffGen's leaf partitions are the product of each quasi-identifier's cut, times the classes, and every one gets a
noisy count (scale 2/ε). The cut is chosen at random during the run, so before it only the most cells it can have
is known: h specialisations shared among the columns, a numeric split adding one interval, a categorical one
replacing a value by its children (at most the s largest families of its taxonomy after s of them, never more than
its leaves). Read from the plan's public parts only: taxonomies, bounds and grid steps, the list of classes, h, ε.
"""

from __future__ import annotations

from typing import Any

from ppdp_gui.engine.mechanisms.diffgen.grid import Grid
from ppdp_gui.engine.mechanisms.noise_share import NoiseEstimate, most_cells, positive_noise_mean

FIXES = ("a smaller h (Mechanism step)", "coarser taxonomies (Taxonomies step)",
         "fewer quasi-identifiers (Data step: make some insensitive or leave them out)", "a larger ε")


def growth(sizes_after: list[int], h: int) -> list[int]:
    return sizes_after[: h + 1] + [sizes_after[-1]] * max(0, h + 1 - len(sizes_after))


def categorical_sizes(tax, h: int) -> list[int]:
    """The most values a column's cut can have after 0 … h specialisations (its s largest families)."""
    gains = sorted((len(tax.children(n)) - 1 for n in range(len(tax)) if not tax.is_leaf(n)), reverse=True)
    leaves = len(tax.leaves())
    out, size = [1], 1
    for g in gains[:h]:
        size = min(leaves, size + g)
        out.append(size)
    return growth(out, h)


def numeric_sizes(lo: float, hi: float, step: float, integer: bool, h: int) -> list[int]:
    n = Grid.make(lo, hi, step, integer).n_cells
    return [min(n, 1 + s) for s in range(h + 1)]


def estimate(plan, params: dict[str, Any]) -> NoiseEstimate:
    h, eps = int(params["h"]), float(params["epsilon"])
    sizes = []
    for col in plan.columns:
        if col in plan.bounds:
            lo, hi = plan.bounds[col]
            sizes.append(numeric_sizes(lo, hi, plan.steps[col], col in plan.integer, h))
        else:
            sizes.append(categorical_sizes(plan.taxonomies[col], h))
    product, chosen = most_cells(sizes, h)
    scale = 2.0 / eps
    k = len(plan.classes)
    return NoiseEstimate(cells=int(product) * k, per_empty_cell=positive_noise_mean(scale), scale=scale,
                         columns=tuple(zip(plan.columns, (max(s) for s in sizes))) + ((plan.class_column, k),),
                         exact=False, fixes=FIXES)
