"""Compiled inner loops of KRIMP (numba): the partial cover, the candidate test, post-acceptance pruning.

Why compiled: KRIMP tests every candidate (373,363 of them on chess) one after the other, each decision depending
on all the previous ones, so there is no batch for numpy to vectorise; a Python loop would take minutes.

How a candidate X is tested without visiting every row that contains it (no per-candidate row lists):
- Element ids follow the cover order (length descending, equal lengths in candidate order, singletons last), so
  "e comes before X" is simply e < X. Each row records, per attribute, which element covers its item (`own`; an
  item left to its singleton is covered by the singleton). X of length L can be used in row r iff all X's items
  are in r and none is covered by an element before X; X is the newest element of its length (candidates come in
  candidate order), so "before X" is exactly "of length >= L": X fits iff every item's cover is shorter than L.
- So each item keeps, for each length L, the bitmap of the rows where it occurs and is covered by something
  shorter than L (`V[item, level]`, one bit per row, 64 rows a word). The rows where X fits are the AND of its
  items' bitmaps at level L — a branch-free loop over words that compiles to SIMD — and only those rows are
  visited; most candidates fit nowhere and cost just the AND. Where memory allows (LEVEL_BYTES) every length has
  a level; otherwise a length uses the next level above (a superset) and each such row is checked against `own`.
  The last level, "longer than any element", is the rows containing the item.
- In a row where X fits, the cover changes only from X's place on ("coverpartial"). The row's slots (`rowct`: the
  code-table elements contained in the row, in cover order, each stored as 2·id + used) give the items not
  covered by elements before X (the singletons plus the items of the used elements after X's place); X takes its
  items and the later elements are re-covered greedily.
  Accepting X writes the changes back (flags, owners, the level bits that changed, singleton bits `left`) and
  gives X a slot in every row containing it: in a row where X is blocked the slot is only appended (`npend`
  counts such unsorted, unused slots at a row's end) and put in its place when the row is next walked.
- Pruning Y visits only the rows where each of Y's items is covered by an element of Y's length (level L+1 and not
  level L), and there those where `own` says Y. A pruned element is only marked dead: its slots are skipped and
  squeezed out when a row is walked on commit or is full.
Rows and itemsets are also bitsets of W 64-bit words over the internal item ids (for the subset tests).

Why `_nrt=False` on every kernel of the cover: with numba's runtime (NRT) each array passed to a function — and to
every inlined helper, at every call site inside the loops — gets an atomic reference count up and down (two
`lock`-prefixed instructions per array). The helpers take many arrays and run per row and per slot, so on
mushroom and adult these atomics were ~65 % of the compression time (perf: two instructions of NRT_incref /
NRT_decref). The kernels allocate nothing, so they need no NRT: the caller (`compress`) allocates the scratch
arrays, and only `cover_usage` and `element_arrays`, which allocate their results, keep it.

Sizes follow the original release (`_sizes`: L(D, CT) and its exact change): a candidate is kept iff it shrinks
the encoded size, an element pruned iff removing it does not grow it.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from ppdp_gui.engine.mechanisms.krimp._sizes import ONE, ZERO, _apply, _clear, _singletons, _size_change, _touch

# status codes returned by run_candidates
DONE = 0
GROW = 1  # a row's slot array is full: enlarge `rowct` and call again from `next`


@njit(cache=True, inline="always", _nrt=False)
def _subset(a, b, W):
    for w in range(W):
        if a[w] & ~b[w]:
            return False
    return True


# ---- the cover of one row ---------------------------------------------------------------------------------------
# A row's slots (`rowct[r, :rowlen[r]]`) hold 2·e + used for the code-table elements e contained in the row, in
# cover order. A pruned element is only marked `dead` (its slots are skipped, and squeezed out when a row is full).
# Level bitmaps V[item, level, word]: an item's levels side by side, each level's words contiguous, so the AND
# over a level is a straight (vectorised) loop over words and an owner change flips bits close together.
@njit(cache=True, inline="always", _nrt=False)
def _and_rows(V, k, eit, a0, a1, out):
    """out := the AND of level k's bitmaps of items eit[a0:a1] (branch-free: compiles to SIMD)."""
    NW = out.shape[0]
    v = V[eit[a0], k]
    for wd in range(NW):
        out[wd] = v[wd]
    for z in range(a0 + 1, a1):
        v = V[eit[z], k]
        for wd in range(NW):
            out[wd] &= v[wd]


@njit(cache=True, inline="always", _nrt=False)
def _own(r, i, e, own, iattr, elen, V, lvl):
    """Item i of row r is now covered by e: record it, and flip the row's bit in i's level bitmaps whose
    "covered by something shorter than the level" answer changed."""
    a = iattr[i]
    o = own[r, a]
    if o == e:
        return
    own[r, a] = e
    lo = elen[o]
    ln = elen[e]
    if lo == ln:
        return
    wd = r >> 6
    bit = ONE << np.uint64(r & 63)
    for k in range(lvl.shape[0] - 1):
        if (lo < lvl[k]) != (ln < lvl[k]):
            V[i, k, wd] ^= bit


@njit(cache=True, inline="always", _nrt=False)
def _uncovered_from(r, first, ebits, dead, rowct, rowlen, left, buf):
    """buf := row r's items not taken by an element before slot `first`: its singletons and the items of the
    used elements from that slot on (the cover splits a row's items among them)."""
    W = buf.shape[0]
    for w in range(W):
        buf[w] = left[r, w]
    for s in range(first, rowlen[r]):
        v = rowct[r, s]
        if v & 1 and not dead[v >> 1]:
            e = v >> 1
            for w in range(W):
                buf[w] |= ebits[e, w]


@njit(cache=True, inline="always", _nrt=False)
def _slot(r, key, rowct, rowlen):
    """First slot of row r whose element is at or after cover position `key` (slots are in cover order)."""
    return _first_at(r, key, rowct, rowlen[r])


@njit(cache=True, inline="always", _nrt=False)
def _first_at(r, key, rowct, hi):
    """Binary search among row r's first `hi` slots (in cover order) for the first at or after `key`."""
    lo = 0
    while lo < hi:
        mid = (lo + hi) >> 1
        if rowct[r, mid] >> 1 < key:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, inline="always", _nrt=False)
def _merge_pending(r, rowct, rowlen, npend):
    """Put row r's pending slots (elements accepted while blocked in the row, appended unsorted and unused) in
    their cover-order places: done only when the row is walked, so a blocked row costs an append."""
    p = npend[r]
    if p == 0:
        return
    n = rowlen[r]
    for q in range(n - p, n):
        v = rowct[r, q]
        lo = _first_at(r, v >> 1, rowct, q)
        for s in range(q, lo, -1):
            rowct[r, s] = rowct[r, s - 1]
        rowct[r, lo] = v
    npend[r] = 0


@njit(cache=True, inline="always", _nrt=False)
def _recover(r, first, commit, ebits, eip, eit, dead, rowct, rowlen, left, own, iattr, elen, V, lvl, delta,
             touched, nt, buf):
    """Greedy cover of row r's uncovered items `buf` over its slots first..end; counts usage changes against
    the flags; with `commit` writes flags, owners (and level bitmaps) and the singleton bits, and squeezes the dead
    slots out of the walked part."""
    W = ebits.shape[1]
    out = first
    for s in range(first, rowlen[r]):
        v = rowct[r, s]
        e = v >> 1
        if dead[e]:
            continue
        nu = _subset(ebits[e], buf, W)
        if nu:
            for w in range(W):
                buf[w] &= ~ebits[e, w]
        if nu != ((v & 1) == 1):
            nt = _touch(e, 1 if nu else -1, delta, touched, nt)
            v ^= 1
        if commit:
            rowct[r, out] = v
            out += 1
            if nu:
                for z in range(eip[e], eip[e + 1]):
                    _own(r, eit[z], e, own, iattr, elen, V, lvl)
    if commit:
        rowlen[r] = out
    s0 = ebits.shape[0] - iattr.shape[0]  # the first singleton's element id
    nt = _singletons(left[r], buf, W, s0, delta, touched, nt)
    if commit:
        for w in range(W):
            left[r, w] = buf[w]
            x = buf[w]
            while x:
                i = w * 64 + trailing_zeros(x)
                _own(r, i, s0 + i, own, iattr, elen, V, lvl)
                x &= x - ONE
    return nt


# ---- a candidate in, an element out -------------------------------------------------------------------------------
@njit(cache=True, _nrt=False)
def _add(X, commit, iattr, own, ebits, elen, eip, eit, dead, V, lvl, levof, rowct, rowlen, npend, left,
         delta, touched, buf, fit, rest):
    """Cover change when X joins the code table: only the rows where X fits (the AND of its items' level
    bitmaps), and there only from X's place on. Returns the number of touched elements; with `commit` X also
    takes a slot in every row containing it, and the rows' flags, owners, bitmaps and singleton bits change."""
    W = ebits.shape[1]
    NW = fit.shape[0]
    top = lvl.shape[0] - 1
    kx = X
    k = levof[elen[X]]
    exact = lvl[k] == elen[X]
    a0 = eip[X]
    a1 = eip[X + 1]
    nt = 0
    if commit:  # every row containing X gets a slot; where X fits it is used
        _and_rows(V, top, eit, a0, a1, rest)
        if exact:
            _and_rows(V, k, eit, a0, a1, fit)
            for wd in range(NW):
                rest[wd] &= ~fit[wd]
        else:
            for wd in range(NW):
                fit[wd] = ZERO
    else:
        _and_rows(V, k, eit, a0, a1, fit)
        some = ZERO
        for wd in range(NW):
            some |= fit[wd]
        if some == ZERO:  # X fits nowhere (most candidates): no scan
            return 0
        for wd in range(NW):
            rest[wd] = ZERO
    for wd in range(NW):
        f = fit[wd]
        g = rest[wd]
        while f | g:
            usable = True
            if f:
                r = wd * 64 + trailing_zeros(f)
                f &= f - ONE
            else:
                r = wd * 64 + trailing_zeros(g)
                g &= g - ONE
                usable = not exact
            if not exact:  # a level above X's length: check the owners
                for z in range(a0, a1):
                    i = eit[z]
                    if own[r, iattr[i]] < kx:
                        usable = False
                        break
                if not (usable or commit):
                    continue
            if not usable:  # commit, X blocked here: its slot waits at the end until the row is next walked
                n = rowlen[r]
                rowct[r, n] = 2 * X
                rowlen[r] = n + 1
                npend[r] += 1
                continue
            _merge_pending(r, rowct, rowlen, npend)
            pos = _slot(r, kx, rowct, rowlen)
            if commit:  # X's slot, the dead slots after it squeezed out
                n = pos
                for s in range(pos, rowlen[r]):
                    v = rowct[r, s]
                    if not dead[v >> 1]:
                        rowct[r, n] = v
                        n += 1
                for s in range(n, pos, -1):
                    rowct[r, s] = rowct[r, s - 1]
                rowct[r, pos] = 2 * X + (1 if usable else 0)
                rowlen[r] = n + 1
                pos += 1
            if not usable:
                continue
            _uncovered_from(r, pos, ebits, dead, rowct, rowlen, left, buf)
            for w in range(W):
                buf[w] &= ~ebits[X, w]
            nt = _touch(X, 1, delta, touched, nt)
            if commit:
                for z in range(a0, a1):
                    _own(r, eit[z], X, own, iattr, elen, V, lvl)
            nt = _recover(r, pos, commit, ebits, eip, eit, dead, rowct, rowlen, left, own, iattr, elen, V, lvl,
                          delta, touched, nt, buf)
    return nt


@njit(cache=True, _nrt=False)
def _remove(Y, commit, iattr, own, ebits, elen, eip, eit, dead, V, lvl, levof, rowct, rowlen, npend, left,
            delta, touched, buf, fit, rest):
    """Cover change when Y leaves the code table: only rows whose cover uses Y change. Those are among the rows
    where each of Y's items is covered by an element of Y's length (level L+1 and not level L), then `own`
    decides. With `commit` Y is marked dead (its other slots are skipped from now on)."""
    NW = fit.shape[0]
    L = elen[Y]
    ky = Y
    a0 = eip[Y]
    a1 = eip[Y + 1]
    _and_rows(V, levof[L + 1], eit, a0, a1, fit)  # covered by something shorter than L + 1 (or a superset)
    lo = levof[L]
    if lvl[lo] == L:  # and not by something shorter than L
        for z in range(a0, a1):
            v = V[eit[z], lo]
            for wd in range(NW):
                fit[wd] &= ~v[wd]
    fa = iattr[eit[a0]]
    nt = 0
    for wd in range(NW):
        f = fit[wd]
        while f:
            r = wd * 64 + trailing_zeros(f)
            f &= f - ONE
            if own[r, fa] != Y:
                continue
            _merge_pending(r, rowct, rowlen, npend)
            sy = _slot(r, ky, rowct, rowlen) + 1
            _uncovered_from(r, sy - 1, ebits, dead, rowct, rowlen, left, buf)  # Y's items included
            nt = _touch(Y, -1, delta, touched, nt)
            nt = _recover(r, sy, commit, ebits, eip, eit, dead, rowct, rowlen, left, own, iattr, elen, V, lvl,
                          delta, touched, nt, buf)
    if commit:
        dead[Y] = 1
    return nt


@njit(cache=True, _nrt=False)
def _room(X, V, lvl, eip, eit, dead, rowct, rowlen, npend, rest):
    """Whether every row containing X has a free slot (a full row first loses its dead slots)."""
    cap = rowct.shape[1]
    _and_rows(V, lvl.shape[0] - 1, eit, eip[X], eip[X + 1], rest)
    for wd in range(rest.shape[0]):
        f = rest[wd]
        while f:
            r = wd * 64 + trailing_zeros(f)
            f &= f - ONE
            if rowlen[r] < cap:
                continue
            n = 0
            kept = 0  # of the pending slots at the end
            first_pending = rowlen[r] - npend[r]
            for s in range(rowlen[r]):
                if not dead[rowct[r, s] >> 1]:
                    rowct[r, n] = rowct[r, s]
                    n += 1
                    if s >= first_pending:
                        kept += 1
            rowlen[r] = n
            npend[r] = kept
            if n >= cap:
                return False
    return True


@njit(cache=True, _nrt=False)
def _ct_remove(ct, ctn, e):
    """Drop e from the cover-ordered code table list; returns its old position."""
    n = ctn[0]
    p = -1
    for i in range(n):
        if ct[i] == e:
            p = i
            break
    for i in range(p, n - 1):
        ct[i] = ct[i + 1]
    ctn[0] = n - 1
    return p


@njit(cache=True, _nrt=False)
def run_candidates(start, stop, prune, xs, iattr, own, ebits, elen, eip, eit, dead, V, lvl, levof,
                   estd, usage, rowct, rowlen, npend, left, ct, ctn, tot, delta, touched, mark, plist, counters, buf, fit, rest):
    """Test candidates start..stop-1 (element ids xs[j]) in order. Returns (status, next candidate index).

    tot = [S, k] (total usage, elements in use); counters = [candidates accepted, elements pruned]. A row
    with no free slot for an accepted X stops the loop with GROW before anything is changed.
    """
    state = (iattr, own, ebits, elen, eip, eit, dead, V, lvl, levof, rowct, rowlen, npend, left, delta,
             touched, buf, fit, rest)
    for j in range(start, stop):
        X = xs[j]
        nt = _add(X, False, *state)
        gain = delta[X] > 0
        dL = _size_change(delta, touched, nt, usage, estd, tot) if gain else 0.0
        _clear(delta, touched, nt)
        if not (gain and dL < 0.0):
            continue
        if not _room(X, V, lvl, eip, eit, dead, rowct, rowlen, npend, rest):
            return GROW, j
        nt = _add(X, True, *state)
        _apply(delta, touched, nt, usage, tot)
        counters[0] += 1
        # the code table list, in cover order
        n = ctn[0]
        q = n
        for i in range(n):
            if ct[i] > X:
                q = i
                break
        for i in range(n, q, -1):
            ct[i] = ct[i - 1]
        ct[q] = X
        ctn[0] = n + 1
        if not prune:
            _clear(delta, touched, nt)
            continue
        # prune list: elements after X whose usage dropped, in cover order
        pn = 0
        for i in range(q + 1, ctn[0]):
            if delta[ct[i]] < 0:
                plist[pn] = ct[i]
                pn += 1
        _clear(delta, touched, nt)
        i = 0
        while i < pn:
            Y = plist[i]
            if usage[Y] == 0:
                ntz = _remove(Y, True, *state)
                _clear(delta, touched, ntz)
                _ct_remove(ct, ctn, Y)
                counters[1] += 1
                i += 1
                continue
            ntr = _remove(Y, False, *state)
            dLr = _size_change(delta, touched, ntr, usage, estd, tot)
            _clear(delta, touched, ntr)
            if dLr <= 0.0:
                ntr = _remove(Y, True, *state)
                _apply(delta, touched, ntr, usage, tot)
                p = _ct_remove(ct, ctn, Y)
                counters[1] += 1
                # the rest of the list re-ordered by usage as the release does it: bubble passes that each start
                # one place further right and stop after a pass without a swap. That is not a full sort (a small
                # usage far right moves left only so far), and the release's prune order, hence its code table,
                # depends on it (../shared/reference/krimp_crosscheck: musk1_8x5 differs with a full sort)
                rest0 = i + 1
                for a in range(rest0, pn - 1):
                    changed = False
                    for b in range(a, pn - 1):
                        if usage[plist[b]] > usage[plist[b + 1]]:
                            v = plist[b]
                            plist[b] = plist[b + 1]
                            plist[b + 1] = v
                            changed = True
                    if not changed:
                        break
                for a in range(rest0, pn):
                    mark[plist[a]] = 1
                # elements whose usage dropped through this removal join it (the release's scan starts two
                # positions after Y's old place, so the element right after Y is never added)
                for c in range(p + 1, ctn[0]):
                    e = ct[c]
                    if delta[e] < 0 and mark[e] == 0:
                        b = pn
                        for a in range(rest0, pn):
                            if usage[plist[a]] > usage[e]:
                                b = a
                                break
                        for a in range(pn, b, -1):
                            plist[a] = plist[a - 1]
                        plist[b] = e
                        pn += 1
                        mark[e] = 1
                for a in range(rest0, pn):
                    mark[plist[a]] = 0
                _clear(delta, touched, ntr)
            i += 1
    return DONE, stop


@njit(cache=True)
def cover_usage(rows, elems):
    """Usage of each element of a code table (bitsets in cover order, singletons excluded) and of each item
    left to singletons, when covering `rows` greedily. Returns (element usage, item usage)."""
    n, W = rows.shape
    E = elems.shape[0]
    use = np.zeros(E, dtype=np.int64)
    single = np.zeros(W * 64, dtype=np.int64)
    buf = np.empty(W, dtype=np.uint64)
    for r in range(n):
        for w in range(W):
            buf[w] = rows[r, w]
        for e in range(E):
            if _subset(elems[e], buf, W):
                use[e] += 1
                for w in range(W):
                    buf[w] &= ~elems[e, w]
        for w in range(W):
            x = buf[w]
            b = 0
            while x:
                if x & ONE:
                    single[w * 64 + b] += 1
                x >>= ONE
                b += 1
    return use, single


@njit(cache=True)
def element_arrays(perm, cptr, cids, std_int, m, W):
    """The code-table elements' arrays: candidates perm[0], perm[1], … (CSR cptr / cids of internal ids) as
    elements 0.. then the m singletons. Returns (eip, eit with each element's items rarest first — descending
    internal id —, ebits, estd, elen)."""
    C = perm.shape[0]
    E = C + m
    eip = np.zeros(E + 1, dtype=np.int64)
    for e in range(C):
        c = perm[e]
        eip[e + 1] = eip[e] + cptr[c + 1] - cptr[c]
    for i in range(m):
        eip[C + i + 1] = eip[C + i] + 1
    eit = np.empty(eip[E], dtype=np.int64)
    ebits = np.zeros((E, W), dtype=np.uint64)
    estd = np.zeros(E)
    elen = np.ones(E, dtype=np.int16)
    for e in range(C):
        c = perm[e]
        a = eip[e]
        n = cptr[c + 1] - cptr[c]
        elen[e] = n
        s = 0.0
        for q in range(n):  # insertion sort, descending: itemsets are short
            x = cids[cptr[c] + q]
            s += std_int[x]
            ebits[e, x >> 6] |= ONE << np.uint64(x & 63)
            p = a + q
            while p > a and eit[p - 1] < x:
                eit[p] = eit[p - 1]
                p -= 1
            eit[p] = x
        estd[e] = s
    for i in range(m):
        eit[eip[C + i]] = i
        ebits[C + i, i >> 6] = ONE << np.uint64(i & 63)
        estd[C + i] = std_int[i]
    return eip, eit, ebits, estd, elen
