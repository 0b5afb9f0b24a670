"""KRIMP compression: a hand-computed example, the compiled cover against a plain re-implementation of the
original release's rules on random tables, and the bits of the original C++ release on the shared data."""

from __future__ import annotations

import math
import os
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

from ppdp_gui.engine.mechanisms.krimp import compress as C
from ppdp_gui.engine.mechanisms.krimp.encoding import ColumnCoding, from_codes
from ppdp_gui.engine.mechanisms.krimp.mining import (internal_ids, item_supports, mine, mine_table,
                                                     standard_order)

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benchmarks.krimp_data import REFERENCE, load  # noqa: E402


def table_of(rows: list[tuple[int, ...]], cards: list[int]):
    cols = [ColumnCoding(f"c{a}", tuple(str(v) for v in range(k))) for a, k in enumerate(cards)]
    codes = np.array(rows, dtype=np.int64).reshape(len(rows), len(cards))
    return from_codes([codes[:, a] for a in range(len(cards))], cols)


# ---- the cover's bitmaps (issue 32: no per-candidate row lists) ----------------------------------------------
def test_cover_kernels_run_without_reference_counting():
    """With numba's runtime every array argument of the cover's kernels and of each inlined helper costs two atomic
    reference-count operations per call — most of the compression time on mushroom and adult. The kernels allocate
    nothing, so they are compiled without it (issue 32: KRIMP at or under the C++ release's time)."""
    from ppdp_gui.engine.mechanisms.krimp import _kernels as K
    from ppdp_gui.engine.mechanisms.krimp import _sizes as S
    kernels = [K.run_candidates, K._add, K._remove, K._room, K._ct_remove, K._own, K._recover, K._merge_pending,
               K._and_rows, K._subset, S._size_change, S._apply, S._clear, S._touch, S._singletons, S.total_size]
    assert [f.py_func.__name__ for f in kernels if f.targetoptions.get("_nrt", True)] == []


def test_tid_bitmaps_hold_each_items_rows():
    # rows 0, 2 and 70 hold item 1; 70 is in the second 64-row word
    indptr = np.array([0, 2, 3, 5] + [5] * 67 + [7], dtype=np.int64)
    items = np.array([0, 1, 2, 1, 2, 0, 1], dtype=np.int64)
    bits = C.tid_bitmaps(indptr, items, 3, 2)
    assert bits.dtype == np.uint64 and bits.shape == (3, 2)
    assert int(bits[1, 0]) == 0b101 and int(bits[1, 1]) == 1 << (70 - 64)
    assert int(bits[0, 0]) == 0b1 and int(bits[0, 1]) == 1 << 6
    assert int(bits[2, 0]) == 0b110 and int(bits[2, 1]) == 0


def test_level_lengths_give_every_length_a_level_or_the_next_one_above():
    lengths = np.array([2, 2, 3, 5, 5, 5], dtype=np.int64)
    lvl, levof = C.level_lengths(lengths, 10)
    assert lvl.tolist() == [2, 3, 5, 6]  # every length present, then "longer than any element"
    assert [int(lvl[levof[L]]) for L in (2, 3, 4, 5)] == [2, 3, 5, 5]
    lvl, levof = C.level_lengths(lengths, 1)  # memory for one level: the most frequent length gets it
    assert lvl.tolist() == [5, 6]
    assert [int(lvl[levof[L]]) for L in (2, 3, 5)] == [5, 5, 5]
    lvl, levof = C.level_lengths(lengths, 0)
    assert lvl.tolist() == [6] and set(levof.tolist()) == {0}


@pytest.mark.parametrize("name", ["led7", "pima"])
def test_the_cover_is_the_same_with_fewer_level_bitmaps(name):
    # a length without its own level uses the next one above and checks each row: same code table, same usages
    t = load(name)
    cands = mine(t, 1, "all")
    full = C.compress(t, cands)
    for levels in (0, 2):
        few = C.compress(t, cands, levels=levels)
        assert few.elements == full.elements and few.usage.tolist() == full.usage.tolist()
        assert few.total == full.total


# ---- a database small enough to compute by hand --------------------------------------------------------------
def test_hand_computed_sizes():
    # X in {x1, x2}, Y in {y1, y2}: (x1, y1) three times, (x2, y2) once; items x1 x2 y1 y2, 8 occurrences
    t = table_of([(0, 0)] * 3 + [(1, 1)], [2, 2])
    ct = C.compress(t, mine(t, 1, "all"))
    s3, s1 = -math.log2(3 / 8), -math.log2(1 / 8)  # standard code lengths of x1/y1 and x2/y2
    assert ct.L_D_ST == pytest.approx(2 * (3 * s3 + s1))
    assert ct.L_ST_total == pytest.approx(ct.L_D_ST + 2 * (2 * s3 + 2 * s1))
    # both pairs are accepted: the data is then 3 × {x1,y1} + 1 × {x2,y2}, S = 4, k = 2
    assert sorted(ct.elements) == [(0, 2), (1, 3)]
    l3, l1 = -math.log2(3 / 4), -math.log2(1 / 4)
    assert ct.L_D_CT == pytest.approx(3 * l3 + l1)
    assert ct.L_CT_D == pytest.approx((2 * s3 + l3) + (2 * s1 + l1))
    assert ct.total == pytest.approx(14.490225, abs=1e-6)
    assert ct.ratio < 1


def test_items_in_every_row_are_candidates_too():
    # pyfim leaves out itemsets of items every row has; the miner adds them back (all: every subset; closed: one)
    t = table_of([(0, 0, 0), (0, 0, 1), (0, 0, 1)], [1, 1, 2])
    assert mine(t, 1, "all").as_set() == mine_table(t, 1, "all").as_set()
    assert mine(t, 1, "closed").as_set() == mine_table(t, 1, "closed").as_set() == {(0, 1): 3, (0, 1, 3): 2,
                                                                                    (0, 1, 2): 1}


def test_a_candidate_that_does_not_help_is_rejected():
    # independent uniform attributes: no pair compresses, the code table stays the standard one
    t = table_of([(a, b) for a in range(2) for b in range(2)], [2, 2])
    ct = C.compress(t, mine(t, 1, "all"))
    assert ct.elements == [] and ct.total == pytest.approx(ct.L_ST_total)


# ---- the rules of the original release, written plainly -------------------------------------------------------
def release_order(rest, usage):
    """The release's re-ordering of the prune list after a prune: bubble passes by usage, each starting one place
    further right, stopping after a pass with no swap (not a full sort: a small usage far right moves left only
    so far)."""
    rest = list(rest)
    for a in range(len(rest) - 1):
        changed = False
        for b in range(a, len(rest) - 1):
            if usage[rest[b]] > usage[rest[b + 1]]:
                rest[b], rest[b + 1] = rest[b + 1], rest[b]
                changed = True
        if not changed:
            break
    return rest


def test_release_order_is_not_a_full_sort():
    usage = {"a": 3, "b": 1, "c": 2, "d": 0}
    assert release_order("abcd", usage) == ["b", "d", "c", "a"]  # a full sort would put d first


def naive_krimp(t, cands, prune=True):
    """KRIMP by the reference's description (../shared/reference, section 1), covering everything from scratch.
    Returns (elements in cover order, L(D,CT)), or None when a decision is a near-tie (float noise decides)."""
    indptr, items = t.transactions()
    rows = [frozenset(items[indptr[r]:indptr[r + 1]].tolist()) for r in range(t.n_rows)]
    supp = item_supports(t)
    n_occ = supp.sum()
    std = {i: -math.log2(supp[i] / n_occ) for i in range(t.n_items) if supp[i]}
    order = standard_order(cands, internal_ids(supp, t.item_numbers))
    cand_list = [frozenset(cands.itemset(i)) for i in order if cands.lengths[i] >= 2]
    rank = {x: j for j, x in enumerate(cand_list)}

    def cover(ct):
        usage = Counter()
        for r in rows:
            unc = set(r)
            for x in ct:
                if x <= unc:
                    usage[x] += 1
                    unc -= x
            for i in unc:
                usage[frozenset([i])] += 1
        return usage

    def size(usage):
        S = sum(usage.values())
        return sum(u * -math.log2(u / S) + sum(std[i] for i in x) - math.log2(u / S)
                   for x, u in usage.items() if u > 0)

    def sort(ct):
        return sorted(ct, key=lambda x: (-len(x), rank[x]))

    ct: list = []
    usage = cover(ct)
    cur = size(usage)
    for x in cand_list:
        trial = sort(ct + [x])
        nu = cover(trial)
        new = size(nu)
        if abs(new - cur) < 1e-7 and nu[x] > 0:
            return None
        if not (nu[x] > 0 and new < cur):
            continue
        before, ct, usage, cur = usage, trial, nu, new
        if not prune:
            continue
        q = ct.index(x)
        plist = [y for y in ct[q + 1:] if usage[y] < before[y]]
        i = 0
        while i < len(plist):
            y = plist[i]
            if usage[y] == 0:
                ct.remove(y)
                i += 1
                continue
            trial = [e for e in ct if e != y]
            nu = cover(trial)
            new = size(nu)
            if abs(new - cur) < 1e-7:
                return None
            if new <= cur:
                p = ct.index(y)
                before, ct, usage, cur = usage, trial, nu, new
                rest = release_order(plist[i + 1:], usage)
                for e in ct[p + 1:]:  # the release skips the element right after y
                    if usage[e] < before[e] and e not in rest:
                        at = next((j for j, o in enumerate(rest) if usage[o] > usage[e]), len(rest))
                        rest.insert(at, e)
                plist = plist[:i + 1] + rest
            i += 1
    return [tuple(sorted(x)) for x in ct], cur


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(2, 40), cards=st.lists(st.integers(1, 3), min_size=2, max_size=4),
       min_sup=st.integers(1, 3), kind=st.sampled_from(["all", "closed"]), prune=st.booleans(),
       levels=st.sampled_from([None, 0, 1]))
def test_compiled_krimp_equals_the_plain_rules(seed, n, cards, min_sup, kind, prune, levels):
    r = np.random.default_rng(seed)
    skew = r.random(len(cards)) < 0.5  # some attributes depend on the first, so there is something to find
    rows = []
    for _ in range(n):
        row = [int(r.integers(0, k)) for k in cards]
        for a in range(1, len(cards)):
            if skew[a]:
                row[a] = row[0] % cards[a]
        rows.append(tuple(row))
    t = table_of(rows, cards)
    cands = mine(t, min_sup, kind)
    expected = naive_krimp(t, cands, prune)
    assume(expected is not None)
    ct = C.compress(t, cands, prune=prune, levels=levels)  # every length its level bitmap, or checked row by row
    # the own miner finds the same candidates as pyfim
    assert mine_table(t, min_sup, kind).as_set() == cands.as_set()
    assert [tuple(sorted(e)) for e in ct.elements] == expected[0]
    assert ct.total == pytest.approx(expected[1], abs=1e-6)


# ---- the original C++ release's figures ----------------------------------------------------------------------
# the larger datasets take some seconds each: in the suite with PPDP_SLOW=1, and always in benchmarks/bench_krimp.py
SLOW = ("chess", "mushroom", "mushroom-raw", "adult")
FULL = os.environ.get("PPDP_SLOW", "") not in ("", "0")


@pytest.mark.parametrize("name", [n if n not in SLOW else pytest.param(n, marks=[pytest.mark.slow, pytest.mark.skipif(
    not FULL, reason="set PPDP_SLOW=1 (or run benchmarks/bench_krimp.py)")]) for n in REFERENCE])
def test_bits_equal_the_original_release(name):
    kind, min_sup, rows, items, n_cands, ldst, ld_st, ldct, pct, n_ct, _sec = REFERENCE[name]
    t = load(name)
    assert (t.n_rows, t.n_items) == (rows, items)
    cands = mine(t, min_sup, kind)
    assert len(cands) == n_cands
    ct = C.compress(t, cands, levels=1 if name in ("led7", "nursery") else None)  # both cover paths
    assert ct.L_D_ST == pytest.approx(ldst, abs=5e-5)
    assert ct.L_ST_total == pytest.approx(ld_st, abs=5e-5)
    assert abs(ct.total - ldct) / ldct <= 1e-4  # the bar: 0.01 %
    assert ct.total == pytest.approx(ldct, abs=5e-4)  # in fact to the last printed digit
    assert 100 * ct.ratio == pytest.approx(pct, abs=0.005)
    assert len(ct.elements) == ct.n_used == n_ct
