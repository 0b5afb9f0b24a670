"""Compiled inner loops of KRIMP (numba): the partial cover, the candidate test, post-acceptance pruning.

Why compiled: KRIMP tests every candidate (373,363 of them on chess) one after the other, each on the rows that
contain it, and each decision depends on all the previous ones, so there is no batch for numpy to vectorise;
a Python loop would take minutes. Each row keeps the code-table elements that are subsets of it, in cover order
(`rowct`), with a flag per slot saying whether the cover uses it, and the items its cover leaves to singletons
(`left`). A candidate X only changes rows that contain X, and there only from X's slot on ("coverpartial"), so
testing it costs a few word operations per such row. Rows and itemsets are bitsets of W 64-bit words over the
internal item ids.

Sizes follow the original release: with usage u_e > 0 for the k used elements, S = Σ u_e,
L(D, CT) = Σ_e [stdlen(e) − (u_e + 1)·log2 u_e] + (S + k)·log2 S, and the tests below compare the exact change of
that sum (a candidate is kept iff it shrinks, an element pruned iff removing it does not grow it).
"""

from __future__ import annotations

import numpy as np
from numba import njit

ONE = np.uint64(1)
ZERO = np.uint64(0)

# status codes returned by run_candidates
DONE = 0
GROW = 1  # a row's slot array is full: enlarge `rowct` / `used` and call again from `next`


@njit(cache=True, inline="always")
def _g(u, std):
    if u <= 0:
        return 0.0
    return std - (u + 1.0) * np.log2(u)


@njit(cache=True, inline="always")
def _f(S, k):
    if S <= 0:
        return 0.0
    return (S + k) * np.log2(S)


@njit(cache=True, inline="always")
def _subset(a, b, W):
    for w in range(W):
        if a[w] & ~b[w]:
            return False
    return True


@njit(cache=True, inline="always")
def _touch(e, d, delta, touched, nt):
    """Add d to e's usage change; `touched` lists each changed element once (touched[-1 - e] marks it)."""
    if touched[touched.shape[0] - 1 - e] == 0:
        touched[touched.shape[0] - 1 - e] = 1
        touched[nt] = e
        nt += 1
    delta[e] += d
    return nt


@njit(cache=True, inline="always")
def _singletons(old, new, W, delta, touched, nt):
    """Items left to singletons before (old) and after (new) a row's recover: count them in/out."""
    for w in range(W):
        gone = old[w] & ~new[w]
        came = new[w] & ~old[w]
        b = 0
        while gone:
            if gone & ONE:
                nt = _touch(w * 64 + b, -1, delta, touched, nt)
            gone >>= ONE
            b += 1
        b = 0
        while came:
            if came & ONE:
                nt = _touch(w * 64 + b, 1, delta, touched, nt)
            came >>= ONE
            b += 1
    return nt


@njit(cache=True)
def _clear(delta, touched, nt):
    for i in range(nt):
        e = touched[i]
        delta[e] = 0
        touched[touched.shape[0] - 1 - e] = 0


@njit(cache=True)
def _size_change(delta, touched, nt, usage, estd, tot):
    """Exact change of L(D, CT) for the usage changes in `delta` (tot = [S, k])."""
    dL = 0.0
    dS = 0
    dk = 0
    for i in range(nt):
        e = touched[i]
        d = delta[e]
        if d == 0:
            continue
        u = usage[e]
        v = u + d
        dL += _g(v, estd[e]) - _g(u, estd[e])
        dS += d
        if u == 0 and v > 0:
            dk += 1
        elif u > 0 and v == 0:
            dk -= 1
    S = tot[0]
    k = tot[1]
    return dL + _f(S + dS, k + dk) - _f(S, k)


@njit(cache=True)
def _apply(delta, touched, nt, usage, tot):
    for i in range(nt):
        e = touched[i]
        d = delta[e]
        if d == 0:
            continue
        u = usage[e]
        v = u + d
        tot[0] += d
        if u == 0 and v > 0:
            tot[1] += 1
        elif u > 0 and v == 0:
            tot[1] -= 1
        usage[e] = v


@njit(cache=True, inline="always")
def _recover(r, first, commit, rows, ebits, eip, eit, rowct, used, rowlen, left, owner, delta, touched, nt,
             buf):
    """Greedy cover of row r's uncovered items `buf` over its slots first..end; counts usage changes against
    the flags; with `commit` writes flags, owners and the singleton bits."""
    W = rows.shape[1]
    for s in range(first, rowlen[r]):
        e = rowct[r, s]
        nu = _subset(ebits[e], buf, W)
        if nu:
            for w in range(W):
                buf[w] &= ~ebits[e, w]
        if nu != (used[r, s] == 1):
            nt = _touch(e, 1 if nu else -1, delta, touched, nt)
            if commit:
                used[r, s] = 1 if nu else 0
        if commit and nu and owner.shape[1] > 0:
            for z in range(eip[e], eip[e + 1]):
                owner[r, eit[z]] = e
    nt = _singletons(left[r], buf, W, delta, touched, nt)
    if commit:
        for w in range(W):
            left[r, w] = buf[w]
            if owner.shape[1] == 0:
                continue
            x = buf[w]
            b = 0
            while x:
                if x & ONE:
                    owner[r, w * 64 + b] = -1
                x >>= ONE
                b += 1
    return nt


@njit(cache=True)
def _add(X, commit, rows, elo, ehi, pool, ebits, ekey, eip, eit, rip, rit, rowct, used, rowlen, left, owner,
         delta, touched, buf):
    """Cover change when X joins the code table: only rows containing X whose items X needs are not taken by an
    element before X (`owner`), and there only from X's slot on. Returns the number of touched elements; with
    `commit` the rows' slots, flags, owners and singleton bits are updated too."""
    W = rows.shape[1]
    track = owner.shape[1] > 0
    nt = 0
    xb = ebits[X]
    kx = ekey[X]
    for idx in range(elo[X], ehi[X]):
        r = pool[idx]
        if not _subset(xb, rows[r], W):
            continue
        usable = True
        if track:  # X needs items an earlier element took: nothing changes in this row
            for z in range(eip[X], eip[X + 1]):
                o = owner[r, eit[z]]
                if o >= 0 and ekey[o] < kx:
                    usable = False
                    break
            if not (usable or commit):
                continue
        # X's slot, and the items left by the elements before it (a short scan: rows hold few elements)
        n = rowlen[r]
        for w in range(W):
            buf[w] = rows[r, w]
        pos = n
        for s in range(n):
            e = rowct[r, s]
            if ekey[e] > kx:
                pos = s
                break
            if used[r, s]:
                for w in range(W):
                    buf[w] &= ~ebits[e, w]
        if not track:
            usable = _subset(xb, buf, W)
        if commit:
            for s in range(n, pos, -1):
                rowct[r, s] = rowct[r, s - 1]
                used[r, s] = used[r, s - 1]
            rowct[r, pos] = X
            used[r, pos] = 1 if usable else 0
            rowlen[r] = n + 1
        if not usable:
            continue
        for w in range(W):
            buf[w] &= ~xb[w]
        nt = _touch(X, 1, delta, touched, nt)
        if commit and track:
            for z in range(eip[X], eip[X + 1]):
                owner[r, eit[z]] = X
        nt = _recover(r, pos + 1 if commit else pos, commit, rows, ebits, eip, eit, rowct, used, rowlen, left,
                      owner, delta, touched, nt, buf)
    return nt


@njit(cache=True)
def _remove(Y, commit, rows, elo, ehi, pool, ebits, ekey, eip, eit, rip, rit, rowct, used, rowlen, left, owner,
            delta, touched, buf):
    """Cover change when Y leaves the code table (only rows whose cover uses Y change)."""
    W = rows.shape[1]
    track = owner.shape[1] > 0
    nt = 0
    yb = ebits[Y]
    first_item = eit[eip[Y]]
    for idx in range(elo[Y], ehi[Y]):
        r = pool[idx]
        if not _subset(yb, rows[r], W):
            continue
        was_used = True
        if track:
            was_used = owner[r, first_item] == Y
            if not (was_used or commit):
                continue
        n = rowlen[r]
        sy = -1
        for w in range(W):
            buf[w] = rows[r, w]
        for s in range(n):
            e = rowct[r, s]
            if e == Y:
                sy = s
                break
            if used[r, s]:
                for w in range(W):
                    buf[w] &= ~ebits[e, w]
        if not track:
            was_used = used[r, sy] == 1
        if commit:
            for s in range(sy, n - 1):
                rowct[r, s] = rowct[r, s + 1]
                used[r, s] = used[r, s + 1]
            rowlen[r] = n - 1
        if not was_used:
            continue
        nt = _touch(Y, -1, delta, touched, nt)
        nt = _recover(r, sy if commit else sy + 1, commit, rows, ebits, eip, eit, rowct, used, rowlen, left,
                      owner, delta, touched, nt, buf)
    return nt


@njit(cache=True)
def _room(X, rows, elo, ehi, pool, ebits, rowlen, cap):
    W = rows.shape[1]
    for idx in range(elo[X], ehi[X]):
        r = pool[idx]
        if rowlen[r] >= cap and _subset(ebits[X], rows[r], W):
            return False
    return True


@njit(cache=True)
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


@njit(cache=True)
def run_candidates(start, stop, prune, m, rows, elo, ehi, pool, ebits, ekey, eip, eit, rip, rit, estd, usage,
                   rowct, used, rowlen, left, owner, ct, ctn, tot, delta, touched, mark, plist, counters):
    """Test candidates start..stop-1 (element ids m + j) in order. Returns (status, next candidate index).

    tot = [S, k] (total usage, elements in use); counters = [candidates accepted, elements pruned]. A row
    with no free slot for an accepted X stops the loop with GROW before anything is changed.
    """
    W = rows.shape[1]
    cap = rowct.shape[1]
    buf = np.empty(W, dtype=np.uint64)
    state = (rows, elo, ehi, pool, ebits, ekey, eip, eit, rip, rit, rowct, used, rowlen, left, owner, delta, touched,
             buf)
    for j in range(start, stop):
        X = m + j
        nt = _add(X, False, *state)
        gain = delta[X] > 0
        dL = _size_change(delta, touched, nt, usage, estd, tot) if gain else 0.0
        _clear(delta, touched, nt)
        if not (gain and dL < 0.0):
            continue
        if not _room(X, rows, elo, ehi, pool, ebits, rowlen, cap):
            return GROW, j
        nt = _add(X, True, *state)
        _apply(delta, touched, nt, usage, tot)
        counters[0] += 1
        # the code table list, in cover order
        n = ctn[0]
        q = n
        for i in range(n):
            if ekey[ct[i]] > ekey[X]:
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
def total_size(usage, estd):
    """L(D, CT) from scratch: Σ over used elements of stdlen − (u+1)·log2 u, plus (S + k)·log2 S."""
    S = 0
    k = 0
    L = 0.0
    for e in range(usage.shape[0]):
        u = usage[e]
        if u > 0:
            S += u
            k += 1
            L += _g(u, estd[e])
    return L + _f(S, k)


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
def candidate_rows(order, cptr, citems, rows, iptr, irows, total):
    """Rows of every candidate, computed depth-first in `order` (lexicographic on the items, rarest first), each
    from the rows of the longest prefix already computed (else of its rarest item): (lo, hi) into the pool.

    For all frequent itemsets every prefix is a candidate, so each list is filtered from its parent's, a few
    times the candidate's own support instead of its rarest item's."""
    C = cptr.shape[0] - 1
    W = rows.shape[1]
    pool = np.empty(total, dtype=np.int32)
    lo = np.zeros(C, dtype=np.int64)
    hi = np.zeros(C, dtype=np.int64)
    stack = np.zeros(64, dtype=np.int64)
    depth = 0
    bits = np.zeros(W, dtype=np.uint64)
    pos = 0
    for oi in range(C):
        c = order[oi]
        a, b = cptr[c], cptr[c + 1]
        # pop what is not a prefix of c
        while depth > 0:
            t = stack[depth - 1]
            ta, tb = cptr[t], cptr[t + 1]
            if tb - ta < b - a:
                ok = True
                for q in range(tb - ta):
                    if citems[ta + q] != citems[a + q]:
                        ok = False
                        break
                if ok:
                    break
            depth -= 1
        for w in range(W):
            bits[w] = ZERO
        for q in range(a, b):
            it = citems[q]
            bits[it // 64] |= ONE << np.uint64(it % 64)
        start = pos
        if depth > 0:
            t = stack[depth - 1]
            for idx in range(lo[t], hi[t]):
                r = pool[idx]
                if _subset(bits, rows[r], W):
                    pool[pos] = r
                    pos += 1
        else:
            it = citems[a]  # rarest first
            for idx in range(iptr[it], iptr[it + 1]):
                r = irows[idx]
                if _subset(bits, rows[r], W):
                    pool[pos] = r
                    pos += 1
        lo[c] = start
        hi[c] = pos
        if depth == stack.shape[0]:
            stack = np.concatenate((stack, np.zeros(depth, dtype=np.int64)))
        stack[depth] = c
        depth += 1
    return pool[:pos], lo, hi
