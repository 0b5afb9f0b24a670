"""KRIMP against the C++ release on the cross-check configurations of ../shared/reference/krimp_crosscheck.

The smallest configuration, musk1_8x5 (all candidates, min_sup 10), is the one that showed the release's prune
order (its partial bubble re-ordering of the prune list, `_kernels.py`): with a full sort ours gave 15,543.4609
bits and 74 elements against the release's 15,510.9201 and 73. Here its bits, its code table element by element
with usages, and its accepted/pruned sequence are checked against the release's own files (`final.ct`). The other
configurations (up to 812,472 candidates) are checked by `benchmarks/bench_krimp_crosscheck.py`.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from ppdp_gui.engine.mechanisms.krimp import compress as C
from ppdp_gui.engine.mechanisms.krimp.encoding import read_num
from ppdp_gui.engine.mechanisms.krimp.mining import internal_ids, item_supports, mine

CROSSCHECK = Path(__file__).resolve().parents[2].parent / "shared" / "reference" / "krimp_crosscheck"


@pytest.fixture(scope="module")
def musk1_8x5(tmp_path_factory):
    if not (CROSSCHECK / "prepare.py").exists():
        pytest.fail(f"../shared/reference/krimp_crosscheck not found at {CROSSCHECK}")
    spec = importlib.util.spec_from_file_location("krimp_prepare", CROSSCHECK / "prepare.py")
    prepare = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(prepare)
    out = tmp_path_factory.mktemp("krimp_crosscheck")
    prepare.musk(str(out), 1, 8, 5)
    return read_num(out / "musk1_8x5.dat")


def read_final_ct(path: Path) -> dict[tuple[int, ...], int]:
    """The release's code table file: {non-singleton itemset in internal ids: usage}."""
    lines = path.read_text().splitlines()
    n_sets = int(lines[1].split()[0])
    out = {}
    for line in lines[2:2 + n_sets]:
        items, counts = line.split("(")
        out[tuple(sorted(int(x) for x in items.split()))] = int(counts.split(",")[0])
    return out


def test_musk1_8x5_equals_the_release(musk1_8x5):
    t = musk1_8x5
    cands = mine(t, 10, "all")
    assert len(cands) == 3523
    ct = C.compress(t, cands)
    assert ct.total == pytest.approx(15510.92013525304, abs=5e-5)
    assert ct.n_used == 73
    internal = internal_ids(item_supports(t), t.item_numbers)
    ours = {tuple(sorted(int(internal[i]) for i in e)): int(u) for e, u in zip(ct.elements, ct.usage) if u > 0}
    assert ours == read_final_ct(CROSSCHECK / "cpp_runs" / "musk1_8x5-all-10" / "final.ct")


def test_musk1_8x5_without_pruning(musk1_8x5):
    ct = C.compress(musk1_8x5, mine(musk1_8x5, 10, "all"), prune=False)
    assert ct.total == pytest.approx(16155.660420191518, abs=5e-5)
    assert ct.n_used == 119
