"""The encoded size of the database under a code table, kept exactly as KRIMP's release computes it (compiled).

With usage u_e > 0 for the k used elements, S = Σ u_e:
L(D, CT) = Σ_e [stdlen(e) − (u_e + 1)·log2 u_e] + (S + k)·log2 S.
A candidate's test or a prune records each element's usage change (`_touch`, `_singletons`), asks the exact change
of that sum (`_size_change`), then keeps (`_apply`) or forgets (`_clear`) it. The cover itself is in `_kernels`.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

ONE = np.uint64(1)
ZERO = np.uint64(0)


@njit(cache=True, inline="always", _nrt=False)
def _g(u, std):
    if u <= 0:
        return 0.0
    return std - (u + 1.0) * np.log2(u)


@njit(cache=True, inline="always", _nrt=False)
def _f(S, k):
    if S <= 0:
        return 0.0
    return (S + k) * np.log2(S)


@njit(cache=True, inline="always", _nrt=False)
def _touch(e, d, delta, touched, nt):
    """Add d to e's usage change; `touched` lists each changed element once (touched[-1 - e] marks it)."""
    if touched[touched.shape[0] - 1 - e] == 0:
        touched[touched.shape[0] - 1 - e] = 1
        touched[nt] = e
        nt += 1
    delta[e] += d
    return nt


@njit(cache=True, inline="always", _nrt=False)
def _singletons(old, new, W, s0, delta, touched, nt):
    """Items left to singletons before (old) and after (new) a row's recover: count them in/out."""
    for w in range(W):
        gone = old[w] & ~new[w]
        came = new[w] & ~old[w]
        while gone:
            nt = _touch(s0 + w * 64 + trailing_zeros(gone), -1, delta, touched, nt)
            gone &= gone - ONE
        while came:
            nt = _touch(s0 + w * 64 + trailing_zeros(came), 1, delta, touched, nt)
            came &= came - ONE
    return nt


@njit(cache=True, _nrt=False)
def _clear(delta, touched, nt):
    for i in range(nt):
        e = touched[i]
        delta[e] = 0
        touched[touched.shape[0] - 1 - e] = 0


@njit(cache=True, inline="always", _nrt=False)
def _in_use_change(u, v):
    """+1 when an element's usage goes from 0 to more, -1 when it falls to 0: the change of k (elements in use)
    that both the trial (`_size_change`) and the commit (`_apply`) of a usage change count."""
    if u == 0 and v > 0:
        return 1
    if u > 0 and v == 0:
        return -1
    return 0


@njit(cache=True, _nrt=False)
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
        dk += _in_use_change(u, v)
    S = tot[0]
    k = tot[1]
    return dL + _f(S + dS, k + dk) - _f(S, k)


@njit(cache=True, _nrt=False)
def _apply(delta, touched, nt, usage, tot):
    for i in range(nt):
        e = touched[i]
        d = delta[e]
        if d == 0:
            continue
        u = usage[e]
        v = u + d
        tot[0] += d
        tot[1] += _in_use_change(u, v)
        usage[e] = v


@njit(cache=True, _nrt=False)
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
