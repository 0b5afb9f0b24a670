"""k-anonymity by generalisation: global recoding (full-domain generalisation with suppression, the optimal
lattice search, ARX's privacy and quality models), local recoding (cheapest classes first), Mondrian
(multidimensional partitioning) and TDS (top-down specialisation), on shared helpers.

Shared pieces: `common` (parameters, checks, the released frame), `data/qi_coding` (quasi-identifiers as leaf
positions or grid cells, groups back to published labels; below metrics, whose F-measure uses it),
`mondrian_core` (the vectorised partitioning), `lattice` (levels, the lattice, the input as distinct tuples),
`models` and `quality` (privacy and quality models of a node), `search` (the optimal / heuristic search). The
modules are imported by the registry on first use, not
here, so start-up stays fast.
"""
