"""DiffGen's share of noise, before the run, from its public plan (engine/mechanisms/noise_share.py).

DiffGen's leaf partitions are the product of each quasi-identifier's cut, times the classes, and every one gets a
noisy count (scale 2/ε). The cut is chosen at random during the run, so before it two figures are known:

- the most cells it can have (`at_most`): h specialisations shared among the columns, a numeric split adding one
  interval, a categorical one replacing a value by its children (at most the s largest families of its taxonomy
  after s of them, never more than its leaves) — rarely reached;
- the likely number (`cells`): the number three draws in four stay below, over `RUNS` random draws of the h
  specialisations, each value that can still be split chosen with a weight of its number of children (DiffGen's
  scores favour splits into many children; a numeric interval counts two and splits at a uniform point of its
  grid). On the bundled Adult sample (ε = 1) this gives 23,040 leaf partitions at h = 10 (three seeded runs made
  9,000 to 52,000; 966,000 at most) and 369,000 at h = 15.

Read from the plan's public parts only — taxonomies, bounds and grid steps, the list of classes, h, ε — never the
rows; the draws use a fixed seed (not DP randomness: nothing of it is released), so the estimate is the same for the
same settings.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ppdp_gui.engine.mechanisms.diffgen.grid import Grid
from ppdp_gui.engine.mechanisms.noise_share import NoiseEstimate, most_cells, positive_noise_mean
from ppdp_gui.engine.noise import NoiseSource

RUNS = 101  # random draws of the h specialisations for the typical number of cells
SEED = 26

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


def typical_partitions(plan, h: int, runs: int = RUNS) -> int:
    """The number of leaf partitions three draws in four stay below, over `runs` random draws of the h
    specialisations (a value chosen with a weight of its number of children: see the module docstring)."""
    rng = NoiseSource(SEED)  # the engine's generator, seeded: an estimate for the custodian, nothing released
    trees = [None if col in plan.bounds else plan.taxonomies[col] for col in plan.columns]
    grid = [Grid.make(*plan.bounds[col], plan.steps[col], col in plan.integer).n_cells if col in plan.bounds else 0
            for col in plan.columns]
    products = []
    for _run in range(runs):
        # each column's cut: numeric interval widths (grid cells), or taxonomy nodes
        cuts = [[g] if tax is None else [0] for tax, g in zip(trees, grid)]
        sizes = [1] * len(cuts)
        for _step in range(h):
            open_ = [(a, i, 2 if tax is None else len(tax.children(v)))
                     for a, (tax, cut) in enumerate(zip(trees, cuts)) for i, v in enumerate(cut)
                     if (v > 1 if tax is None else not tax.is_leaf(v))]
            if not open_:
                break
            weights = np.array([w for _a, _i, w in open_], dtype=float)
            a, i, _w = open_[int(rng.choice(len(open_), p=weights / weights.sum()))]
            value = cuts[a].pop(i)
            if trees[a] is None:
                left = int(rng.integers(1, value))
                cuts[a] += [left, value - left]
                sizes[a] += 1
            else:
                kids = trees[a].children(value)
                cuts[a] += kids
                sizes[a] += len(kids) - 1
        products.append(int(np.prod(sizes, dtype=np.int64)))
    return int(np.percentile(products, 75))


def estimate(plan, params: dict[str, Any]) -> NoiseEstimate:
    h, eps = int(params["h"]), float(params["epsilon"])
    sizes = []
    for col in plan.columns:
        if col in plan.bounds:
            lo, hi = plan.bounds[col]
            sizes.append(numeric_sizes(lo, hi, plan.steps[col], col in plan.integer, h))
        else:
            sizes.append(categorical_sizes(plan.taxonomies[col], h))
    product, _chosen = most_cells(sizes, h)
    scale = 2.0 / eps
    k = len(plan.classes)
    return NoiseEstimate(cells=typical_partitions(plan, h) * k, per_empty_cell=positive_noise_mean(scale),
                         scale=scale, columns=tuple(zip(plan.columns, (max(s) for s in sizes)))
                         + ((plan.class_column, k),), exact=False, fixes=FIXES, at_most=int(product) * k)
