"""k-anonymity by generalisation: Mondrian (multidimensional local recoding), TDS (top-down specialisation) and
global recoding (full-domain generalisation with suppression, the optimal lattice search), on shared helpers.

Shared pieces: `common` (parameters, checks, the released frame), `qi_coding` (quasi-identifiers as leaf
positions or grid cells, groups back to published labels), `mondrian_core` (the vectorised partitioning).
The modules are imported by the registry on first use, not here, so start-up stays fast.
"""
