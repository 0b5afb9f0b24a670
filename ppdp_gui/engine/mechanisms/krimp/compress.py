"""KRIMP (Siebes, Vreeken & van Leeuwen 2006): the code table that compresses a database best, in bits.

The database is encoded with a code table CT: a list of itemsets in *cover order* (length descending, equal
lengths in candidate order, singletons last); each row is covered greedily — an element is used iff all its items
are still uncovered — and element X gets the optimal code length −log2(u_X / S) from its usage u_X (S = total
usage). L(D, CT) = L(CT | D) + L(D | CT) with, over the elements in use,
L(D | CT) = Σ u_X·(−log2(u_X / S)) and L(CT | D) = Σ [stdlen(X) + (−log2(u_X / S))], where stdlen(X) sums the
standard code lengths −log2(supp(i) / |items in D|) of X's items (the singleton-only *standard* code table ST).

Starting from ST, every candidate (frequent itemsets in the standard candidate order) is tried once and kept iff
L(D, CT ∪ X) < L(D, CT). With pruning ("pop"), after each acceptance the elements whose usage dropped are tried
for removal (kept out iff L(D, CT \\ Y) <= L(D, CT)), in the original release's exact order (see `_kernels`).
With these conventions the sizes equal the original C++ release's (tests/engine/test_krimp_compress.py and
benchmarks/bench_krimp.py print them beside ../shared/reference's figures).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import numpy as np

from ppdp_gui.engine.mechanisms.base import Progress
from ppdp_gui.engine.mechanisms.krimp import _kernels as K
from ppdp_gui.engine.mechanisms.krimp._sizes import total_size
from ppdp_gui.engine.mechanisms.krimp.encoding import ItemTable
from ppdp_gui.engine.mechanisms.krimp.mining import Candidates, internal_ids, item_supports, standard_order

CHUNK = 20_000  # candidates per compiled call (between two progress reports)
LEVEL_BYTES = 256 * 2 ** 20  # memory for the level bitmaps (a bit per row, item and length); above, fewer levels


def to_bits(indptr: np.ndarray, items: np.ndarray, W: int) -> np.ndarray:
    """CSR itemsets (distinct item ids < 64·W per row) as rows of W uint64 words."""
    n = len(indptr) - 1
    bits = np.zeros((n, W), dtype=np.uint64)
    if n == 0 or items.size == 0:
        return bits
    word = items // 64
    bit = np.left_shift(np.uint64(1), (items % 64).astype(np.uint64))
    nonempty = np.diff(indptr) > 0
    starts = indptr[:-1][nonempty]
    for w in range(W):
        vals = np.where(word == w, bit, np.uint64(0))
        bits[nonempty, w] = np.add.reduceat(vals, starts)  # distinct bits: the sum is the union
    return bits


@dataclass(frozen=True)
class CodeTable:
    """The result: the non-singleton elements in cover order (items as ItemTable indices), their usages, the
    singleton usages, and the sizes in bits."""

    elements: list[tuple[int, ...]]  # cover order
    usage: np.ndarray  # of `elements`
    element_support: np.ndarray
    singleton_usage: np.ndarray  # per ItemTable item
    std_lengths: np.ndarray  # per ItemTable item
    n_items: int
    L_D_ST: float  # L(D | ST)
    L_ST_total: float  # L(D, ST) = L(ST) + L(D | ST)
    L_CT_D: float  # L(CT | D)
    L_D_CT: float  # L(D | CT)
    n_candidates: int
    accepted: int
    pruned: int

    @property
    def total(self) -> float:
        """L(D, CT) in bits."""
        return self.L_CT_D + self.L_D_CT

    @property
    def ratio(self) -> float:
        """L(D, CT) / L(D, ST): the share of the standard encoding KRIMP needs (the reference's L%)."""
        return self.total / self.L_ST_total

    @property
    def n_used(self) -> int:
        """Non-singleton elements the cover uses (the reference's non-singleton |CT|)."""
        return int((self.usage > 0).sum())


def sizes_from_usage(usage: np.ndarray, stdlen: np.ndarray) -> tuple[float, float]:
    """(L(CT | D), L(D | CT)) for elements with these usages and standard lengths (zero usages ignored)."""
    u = np.asarray(usage, dtype=float)
    used = u > 0
    u, s = u[used], np.asarray(stdlen, dtype=float)[used]
    S = u.sum()
    if S == 0:
        return 0.0, 0.0
    code = -np.log2(u / S)
    return float((s + code).sum()), float((u * code).sum())


def compress(table: ItemTable, cands: Candidates, *, prune: bool = True, levels: int | None = None) -> CodeTable:
    """KRIMP on `table` with `cands` (any order: they are put in the standard order here). `levels` caps the
    number of level bitmaps (None: as many as LEVEL_BYTES allows; the result is the same either way)."""
    gen = compress_iter(table, cands, prune=prune, levels=levels)
    while True:
        try:
            next(gen)
        except StopIteration as stop:
            return stop.value


def tid_bitmaps(indptr: np.ndarray, items: np.ndarray, m: int, n_words: int) -> np.ndarray:
    """(m, n_words) uint64: bit r of item i's row set when row r (CSR `indptr`, `items` < m) holds item i."""
    out = np.zeros(m * n_words, dtype=np.uint64)
    if items.size == 0:
        return out.reshape(m, n_words)
    row = np.repeat(np.arange(len(indptr) - 1, dtype=np.int64), np.diff(indptr))
    key = items * n_words + (row >> 6)
    bit = np.left_shift(np.uint64(1), (row & 63).astype(np.uint64))
    order = np.argsort(key, kind="stable")
    key, bit = key[order], bit[order]
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    out[key[starts]] = np.add.reduceat(bit, starts)  # distinct bits within a word: the sum is the union
    return out.reshape(m, n_words)


def level_lengths(lengths: np.ndarray, wanted: int) -> tuple[np.ndarray, np.ndarray]:
    """(lvl, levof): the candidate lengths that get a level bitmap — all of them if `wanted` allows, else the
    most frequent — then a last level longer than any element; levof[L] is the first level >= L (X of length L
    uses it: exact when it is L's own, else a superset of the rows checked one by one)."""
    maxlen = int(lengths.max()) if lengths.size else 1
    counts = np.bincount(lengths, minlength=maxlen + 1)
    present = np.flatnonzero(counts[2:]) + 2
    if wanted < present.size:
        present = np.sort(present[np.argsort(-counts[present], kind="stable")[:max(wanted, 0)]])
    lvl = np.append(present, maxlen + 1).astype(np.int64)
    levof = np.searchsorted(lvl, np.arange(maxlen + 2), side="left").astype(np.int64)
    return lvl, levof


def compress_iter(table: ItemTable, cands: Candidates, *, prune: bool = True,
                  levels: int | None = None) -> Iterator[Progress]:
    """The same as `compress`, yielding Progress between chunks of candidates (closing it stops the run); the
    CodeTable is the generator's return value."""
    supp = item_supports(table)
    internal = internal_ids(supp, table.item_numbers)
    m = table.n_items
    n = table.n_rows
    W = max(1, (m + 63) // 64)
    NW = max(1, (n + 63) // 64)
    order = standard_order(cands, internal)
    order = order[cands.lengths[order] >= 2]
    C = int(order.size)
    E = C + m
    # Element ids follow the cover order (length descending, then candidate order), singletons last: an element's
    # id is its cover position, so the kernels compare ids instead of looking keys up. xs[j]: the id of the j-th
    # candidate in candidate order; perm[e]: element e's index in `cands`.
    cover = np.argsort(-cands.lengths[order], kind="stable")
    perm = order[cover]
    xs = np.empty(C, dtype=np.int64)
    xs[cover] = np.arange(C)
    lengths = cands.lengths[perm]
    # rows as bitsets over internal ids, and the elements (items rarest first, bitsets, standard lengths)
    indptr, items = table.transactions()
    rit = internal[items]
    rows = to_bits(indptr, rit, W)
    n_occ = int(supp.sum())
    std_item = np.where(supp > 0, -np.log2(np.maximum(supp, 1) / max(n_occ, 1)), 0.0)  # by ItemTable item
    std_int = np.zeros(m)
    std_int[internal] = std_item
    eip, eit, ebits, estd, elen = K.element_arrays(perm.astype(np.int64), cands.indptr.astype(np.int64),
                                                   internal[cands.items].astype(np.int64), std_int, m, W)
    # who covers each row's item (one item per attribute): at first its singleton
    iattr = np.zeros(m, dtype=np.int64)
    iattr[internal] = table.item_attr
    own = np.where(table.codes >= 0, C + internal[np.maximum(table.codes, 0)], -1).astype(np.int32)
    # level bitmaps: per level L and item, the rows holding the item covered by something shorter than L
    layer = m * NW * 8
    wanted = LEVEL_BYTES // max(layer, 1) if levels is None else levels
    lvl, levof = level_lengths(lengths, int(wanted))
    V = np.empty((m, lvl.size, NW), dtype=np.uint64)  # (item, level, word): see _kernels
    V[:] = tid_bitmaps(indptr, rit, m, NW)[:, None, :]
    # state: the standard code table
    usage = np.zeros(E, dtype=np.int64)
    usage[C:] = supp[np.argsort(internal)]
    cap = 16
    rowct = np.zeros((n, cap), dtype=np.int32)  # 2·element + used, in cover order
    dead = np.zeros(E, dtype=np.uint8)
    rowlen = np.zeros(n, dtype=np.int32)
    npend = np.zeros(n, dtype=np.int32)  # slots appended at a row's end, not yet in cover order (see _kernels)
    left = rows.copy()
    ct = np.zeros(C + 1, dtype=np.int32)
    ctn = np.zeros(1, dtype=np.int64)
    tot = np.array([int(usage.sum()), int((usage > 0).sum())], dtype=np.int64)
    delta = np.zeros(E, dtype=np.int64)
    touched = np.zeros(2 * E, dtype=np.int64)
    mark = np.zeros(E, dtype=np.uint8)
    plist = np.zeros(C + 1, dtype=np.int64)
    counters = np.zeros(2, dtype=np.int64)
    buf = np.empty(W, dtype=np.uint64)  # the kernels' scratch (allocated here: they run without NRT, see _kernels)
    fit = np.empty(NW, dtype=np.uint64)
    rest = np.empty(NW, dtype=np.uint64)
    L_ST = float(total_size(usage, estd))
    start = 0
    yield Progress(0.0, f"compressing: {C:,} candidates")
    while start < C:
        stop = min(C, start + CHUNK)
        status, nxt = K.run_candidates(start, stop, prune, xs, iattr, own, ebits, elen, eip, eit,
                                       dead, V, lvl, levof, estd, usage, rowct, rowlen, npend, left, ct, ctn, tot,
                                       delta, touched, mark, plist, counters, buf, fit, rest)
        if status == K.GROW:
            cap *= 2
            rowct = np.concatenate([rowct, np.zeros_like(rowct)], axis=1)
        start = int(nxt)
        yield Progress(start / max(C, 1), f"compressing: {start:,} of {C:,} candidates, "
                                          f"{int(ctn[0]):,} in the code table")
    members = ct[:int(ctn[0])].astype(np.int64)
    back = np.argsort(internal)  # internal id -> ItemTable item
    elements = [tuple(int(x) for x in sorted(cands.items[cands.indptr[c]:cands.indptr[c + 1]])) for c in perm[members]]
    single = np.zeros(m, dtype=np.int64)
    single[back] = usage[C:]
    all_usage = np.concatenate([usage[members], usage[C:]])
    all_std = np.concatenate([estd[members], estd[C:]])
    L_CT_D, L_D_CT = sizes_from_usage(all_usage, all_std)
    L_D_ST = float((supp * std_item).sum())
    return CodeTable(elements, usage[members].copy(), cands.support[perm[members]].copy(), single, std_item, m,
                     L_D_ST, L_ST, L_CT_D, L_D_CT, C + m, int(counters[0]), int(counters[1]))
