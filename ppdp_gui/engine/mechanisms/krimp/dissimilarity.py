"""Database dissimilarity through code tables (Vreeken, van Leeuwen & Siebes, KDD 2007, used in seed 004).

Each database is compressed with its own KRIMP code table and with the other's; if they follow the same
distribution, the foreign code table encodes a database almost as well as its own:
DS(D1, D2) = max{ (L(D2 | CT1) − L(D2 | CT2)) / L(D2 | CT2), (L(D1 | CT2) − L(D1 | CT1)) / L(D1 | CT1) },
with L(D | CT) the encoded size of the data alone. So that a code table can encode an item it never saw, every
element's usage is increased by one (a Laplace correction) before its code length −log2(u / S) is taken — in
both encodings, so that the two are compared on the same footing.
"""

from __future__ import annotations

import numpy as np

from ppdp_gui.engine.mechanisms.krimp import _kernels as K
from ppdp_gui.engine.mechanisms.krimp.compress import CodeTable, to_bits
from ppdp_gui.engine.mechanisms.krimp.encoding import ItemTable


def encoded_size(rows: ItemTable, ct: CodeTable) -> float:
    """L(rows | ct) in bits, with Laplace-corrected code lengths (the data part of the encoding only)."""
    m = ct.n_items
    W = max(1, (m + 63) // 64)
    lengths = np.array([len(e) for e in ct.elements], dtype=np.int64)
    indptr = np.zeros(len(ct.elements) + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    flat = np.array([i for e in ct.elements for i in e], dtype=np.int64)
    elems = to_bits(indptr, flat, W) if len(ct.elements) else np.zeros((0, W), dtype=np.uint64)
    rindptr, ritems = rows.transactions()
    use, single = K.cover_usage(to_bits(rindptr, ritems, W), elems)
    counts = np.concatenate([ct.usage, ct.singleton_usage]).astype(float) + 1.0
    code = -np.log2(counts / counts.sum())
    return float(np.dot(np.concatenate([use, single[:m]]), code))


def dissimilarity(d1: ItemTable, ct1: CodeTable, d2: ItemTable, ct2: CodeTable) -> float:
    """DS(D1, D2) (same item coding in both)."""
    own1, own2 = encoded_size(d1, ct1), encoded_size(d2, ct2)
    a = (encoded_size(d2, ct1) - own2) / own2 if own2 else 0.0
    b = (encoded_size(d1, ct2) - own1) / own1 if own1 else 0.0
    return max(a, b)
