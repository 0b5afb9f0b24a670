"""The KRIMP categorical data generator (Vreeken, van Leeuwen & Siebes, ICDM 2007, seed 004), Algorithm 1.

Every code-table element (singletons included) gets a weight: its usage in the cover of the original data plus a
Laplace correction (0.001 in the paper), so every value of every attribute stays possible. A record starts empty;
while an attribute has no value, one of the attributes still empty is picked uniformly, then one element that
gives it a value is drawn with probability proportional to its weight, among the elements that assign no value to
an attribute already filled (they would redefine it); its values are all written. Correlations live inside the
elements: a record is glued together from patterns KRIMP found in the data, so it resembles the original without
(usually) being one of its records. Patterns of fewer than min_sup records are never candidates, so rare
combinations are only produced by chance — the paper's argument for the anonymity it measures; it is no formal
guarantee.

The draws come from the release's NoiseSource (all uniforms at once); the compiled loop only uses them.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ppdp_gui.engine.mechanisms.krimp.compress import CodeTable
from ppdp_gui.engine.mechanisms.krimp.encoding import ItemTable


@njit(cache=True)
def _generate(n_out, A, by_attr_ptr, by_attr, e_ptr, e_items, e_attrs_ptr, e_attrs, weight, item_attr, u_attr,
              u_elem):
    """n_out records of A attributes; element e has items e_items[e_ptr[e]:e_ptr[e+1]] covering the attributes
    e_attrs[...]; by_attr lists the elements giving a value to each attribute. Returns item codes (n_out, A) and
    the number of elements used per record."""
    out = -np.ones((n_out, A), dtype=np.int64)
    pieces = np.zeros(n_out, dtype=np.int64)
    open_attrs = np.empty(A, dtype=np.int64)
    filled = np.zeros(A, dtype=np.uint8)
    cand = np.empty(by_attr.shape[0], dtype=np.int64)
    cum = np.empty(by_attr.shape[0], dtype=np.float64)
    for t in range(n_out):
        for a in range(A):
            open_attrs[a] = a
            filled[a] = 0
        n_open = A
        step = 0
        while n_open > 0:
            pick = int(u_attr[t, step] * n_open)
            if pick >= n_open:
                pick = n_open - 1
            a = open_attrs[pick]
            # elements giving `a` a value that redefine nothing already filled
            nc = 0
            total = 0.0
            for q in range(by_attr_ptr[a], by_attr_ptr[a + 1]):
                e = by_attr[q]
                ok = True
                for z in range(e_attrs_ptr[e], e_attrs_ptr[e + 1]):
                    if filled[e_attrs[z]]:
                        ok = False
                        break
                if ok:
                    total += weight[e]
                    cand[nc] = e
                    cum[nc] = total
                    nc += 1
            x = u_elem[t, step] * total
            chosen = cand[nc - 1]
            for q in range(nc):
                if x < cum[q]:
                    chosen = cand[q]
                    break
            for z in range(e_ptr[chosen], e_ptr[chosen + 1]):
                it = e_items[z]
                out[t, item_attr[it]] = it
            for z in range(e_attrs_ptr[chosen], e_attrs_ptr[chosen + 1]):
                filled[e_attrs[z]] = 1
            # compact the open attributes
            k = 0
            for q in range(n_open):
                if not filled[open_attrs[q]]:
                    open_attrs[k] = open_attrs[q]
                    k += 1
            n_open = k
            pieces[t] += 1
            step += 1
    return out, pieces


def generator_elements(ct: CodeTable, table: ItemTable, laplace: float):
    """Every element (code-table itemsets, then the singletons of every item) with its weight = usage + laplace."""
    sets = [tuple(e) for e in ct.elements] + [(i,) for i in range(table.n_items)]
    weight = np.concatenate([ct.usage.astype(float), ct.singleton_usage.astype(float)]) + float(laplace)
    return sets, weight


def generate_codes(ct: CodeTable, table: ItemTable, n_out: int, rng, laplace: float = 0.001
                   ) -> tuple[np.ndarray, np.ndarray]:
    """`n_out` generated rows as item codes (n_out, attributes), and the number of elements used per row."""
    sets, weight = generator_elements(ct, table, laplace)
    A = table.n_attributes
    lengths = np.array([len(s) for s in sets], dtype=np.int64)
    e_ptr = np.zeros(len(sets) + 1, dtype=np.int64)
    np.cumsum(lengths, out=e_ptr[1:])
    e_items = np.fromiter((i for s in sets for i in s), dtype=np.int64, count=int(e_ptr[-1]))
    e_attr_all = table.item_attr[e_items]
    e_attrs_ptr = e_ptr  # one item per attribute in an element
    e_attrs = e_attr_all
    elem_of = np.repeat(np.arange(len(sets)), lengths)
    order = np.lexsort((elem_of, e_attr_all))
    by_attr = elem_of[order]
    by_attr_ptr = np.zeros(A + 1, dtype=np.int64)
    np.cumsum(np.bincount(e_attr_all, minlength=A), out=by_attr_ptr[1:])
    u_attr = np.asarray(rng.uniform(0.0, 1.0, size=(n_out, A)), dtype=np.float64)
    u_elem = np.asarray(rng.uniform(0.0, 1.0, size=(n_out, A)), dtype=np.float64)
    codes, pieces = _generate(int(n_out), A, by_attr_ptr, by_attr, e_ptr, e_items, e_attrs_ptr, e_attrs,
                              weight, table.item_attr.astype(np.int64), u_attr, u_elem)
    return codes, pieces
