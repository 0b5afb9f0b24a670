"""How close, and how revealing, a generated table is to the original it was learnt from (custodian only).

Figures of Vreeken, van Leeuwen & Siebes (ICDM 2007, seed 004), computed on rows given as integer codes (one
column per attribute, the same coding for both tables):

- anonymity score AS(gen, orig) = Σ over support levels s of the original's rows of (1/s) · P(an original row of
  support s also occurs in the generated table) (Definition 1), and the normalised score NAS = AS(gen, orig) /
  AS(orig, orig) between 0 (no original row reappears) and 1 (every one does) (Definition 2);
- the frequent-pattern comparison of the paper's Table 1: the share of the original's frequent itemsets that are
  also frequent in the generated table, the mean support difference of those (in % of the rows) and the mean
  support of the itemsets only the generated table has;
- a disclosure check: the share of generated rows that equal an original row of support below min_sup — rows
  KRIMP could not have learnt as a pattern, so a copy is either chance or a leak.

Everything here is computed from the records: it belongs in the custodian record, never in the release note.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def row_keys(*tables: np.ndarray) -> list[np.ndarray]:
    """One integer per distinct row, shared across the tables (rows equal in every column get the same key)."""
    stacked = np.vstack([np.asarray(t, dtype=np.int64) for t in tables])
    if stacked.shape[1] == 0:
        keys = np.zeros(len(stacked), dtype=np.int64)
    else:
        _, keys = np.unique(stacked, axis=0, return_inverse=True)
    keys = np.asarray(keys).ravel()
    out, start = [], 0
    for t in tables:
        out.append(keys[start:start + len(t)])
        start += len(t)
    return out


def anonymity_score(original: np.ndarray, generated: np.ndarray) -> float:
    """AS(generated, original): Definition 1 of the paper."""
    ko, kg = row_keys(original, generated)
    uniq, support = np.unique(ko, return_counts=True)
    present = np.isin(uniq, kg)
    frame = pd.DataFrame({"s": support, "present": present})
    per_level = frame.groupby("s")["present"].mean()
    return float((per_level / per_level.index.to_numpy(dtype=float)).sum())


def normalised_anonymity_score(original: np.ndarray, generated: np.ndarray) -> float:
    """NAS = AS(generated, original) / AS(original, original) (Definition 2): 0 best privacy, 1 none."""
    best = anonymity_score(original, original)
    return anonymity_score(original, generated) / best if best else 0.0


def disclosure(original: np.ndarray, generated: np.ndarray, min_sup: int) -> dict[str, float]:
    """Shares (in %) of generated rows equal to an original row: of support < min_sup, of support 1, of any."""
    ko, kg = row_keys(original, generated)
    uniq, support = np.unique(ko, return_counts=True)
    pos = np.searchsorted(uniq, kg)
    pos = np.clip(pos, 0, max(len(uniq) - 1, 0))
    hit = (uniq[pos] == kg) if len(uniq) else np.zeros(len(kg), dtype=bool)
    s = np.where(hit, support[pos] if len(uniq) else 0, 0)
    n = max(len(kg), 1)
    return {"rare": 100.0 * float((hit & (s < min_sup)).sum()) / n,
            "unique": 100.0 * float((hit & (s == 1)).sum()) / n,
            "any": 100.0 * float(hit.sum()) / n}


def itemset_comparison(original: dict[tuple, int], generated: dict[tuple, int], n_original: int,
                       n_generated: int) -> dict[str, float]:
    """The paper's frequent pattern set comparison; supports are absolute, differences in % of the rows."""
    equal = original.keys() & generated.keys()
    new = generated.keys() - original.keys()
    diff = [abs(original[x] / n_original - generated[x] / n_generated) for x in equal]
    new_sup = [generated[x] / n_generated for x in new]
    return {"equal %": 100.0 * len(equal) / max(len(original), 1),
            "avg support difference of equal itemsets %": 100.0 * float(np.mean(diff)) if diff else 0.0,
            "avg support of new itemsets %": 100.0 * float(np.mean(new_sup)) if new_sup else 0.0,
            "original itemsets": float(len(original)), "generated itemsets": float(len(generated))}
