"""KRIMP synthetic: the itemset encoding's conventions, the generator's distribution, the paper's anonymity
score by hand, and the mechanism on the publish path (no formal guarantee said plainly, figures kept local)."""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ppdp_gui.cli import main as cli_main
from ppdp_gui.engine.data.reader import dataset_from_frame
from ppdp_gui.engine.data.schema import Role
from ppdp_gui.engine.mechanisms import registry
from ppdp_gui.engine.mechanisms.krimp import GUARANTEE, KrimpSynthetic
from ppdp_gui.engine.mechanisms.krimp.compress import CodeTable
from ppdp_gui.engine.mechanisms.krimp.encoding import (ColumnCoding, encode_frame, equal_frequency_edges,
                                                       from_codes, infer_attributes, read_num)
from ppdp_gui.engine.mechanisms.krimp.generate import generate_codes
from ppdp_gui.engine.mechanisms.krimp.mechanism import measure_names
from ppdp_gui.engine.mechanisms.krimp.mining import internal_ids, mine, mine_table, standard_order
from ppdp_gui.engine.metrics import synthetic as S
from ppdp_gui.engine.noise import NoiseSource
from ppdp_gui.engine.pipeline import export, plan, run_release
from ppdp_gui.engine.pipeline.sweep import run_sweep

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benchmarks.krimp_data import frame as shared_frame, load  # noqa: E402

NAMES = measure_names()


# ---- encoding and orders --------------------------------------------------------------------------------------
def test_items_are_numbered_column_by_column_values_ascending():
    t = encode_frame(pd.DataFrame({"rank": ["10", "9", "2", "10"], "file": ["b", "a", "c", "a"]}))
    assert [t.item_label(i) for i in range(t.n_items)] == ["rank=2", "rank=9", "rank=10", "file=a", "file=b",
                                                           "file=c"]  # numbers numerically, text as text
    assert t.item_numbers.tolist() == [1, 2, 3, 4, 5, 6]
    assert t.codes.tolist() == [[2, 4], [1, 3], [0, 5], [2, 3]]
    back = t.decode()
    assert back["file"].tolist() == ["b", "a", "c", "a"]


def test_internal_ids_and_candidate_order():
    # supports 5, 3, 3, 1: equal supports by original number descending
    ids = internal_ids(np.array([3, 5, 1, 3]), np.array([1, 2, 3, 4]))
    assert ids.tolist() == [2, 0, 3, 1]
    from ppdp_gui.engine.mechanisms.krimp.mining import from_lists
    cands = from_lists([(0,), (1, 3), (0, 1), (1,), (0, 3), (0, 1, 3)], [3, 2, 2, 5, 2, 2])
    order = standard_order(cands, ids)
    # support desc; length desc; then lexicographic on sorted internal ids: {1,3} = (0,1) < {0,1} = (0,2)
    assert [cands.itemset(i) for i in order] == [(1,), (0,), (0, 1, 3), (1, 3), (0, 1), (0, 3)]


def test_numbers_with_many_values_are_cut_into_equal_frequency_bins():
    x = pd.Series(np.arange(100, dtype=float))
    t = encode_frame(pd.DataFrame({"x": x, "y": ["a"] * 100}), numeric=["x"], bins=4)
    col = t.columns[0]
    assert col.how == "equal-frequency bins" and len(col.labels) == 4
    assert np.bincount(t.codes[:, 0]).tolist() == [25, 25, 25, 25]
    assert equal_frequency_edges(np.array([1, 1, 1, 1, 2.0]), 4).tolist() == [1.0, 2.0]  # ties stay together
    out = t.decode(numeric_output="uniform value", rng=NoiseSource.for_tests(0))
    lo, hi = np.asarray(col.edges)[t.codes[:, 0]], np.asarray(col.edges)[t.codes[:, 0] + 1]
    assert ((out["x"] >= lo) & (out["x"] <= hi)).all()


@pytest.mark.parametrize("seed", range(12))
def test_bins_are_pandas_qcut(seed):
    """One binning rule, the reproduction's: pandas' qcut with duplicate edges dropped; a value on an inner edge
    goes to the lower bin (on a held-back table the upper-bin rule moved NAS from 0.68 to 0.55)."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, [3, 8, 30, 1000][seed % 4], size=rng.integers(5, 400)).astype(float)
    bins = int(rng.integers(2, 8))
    t = encode_frame(pd.DataFrame({"x": pd.Series(x)}), numeric=["x"], bins=bins, max_values=0)
    expected = pd.qcut(x, bins, labels=False, duplicates="drop") if np.unique(x).size > 1 else np.zeros(x.size)
    assert t.codes[:, 0].tolist() == np.asarray(expected, dtype=int).tolist()


def test_a_value_on_an_edge_goes_to_the_lower_bin():
    x = np.array([1.0, 2, 3, 4, 5, 6, 7, 8, 9])  # the median, 5, is an edge at 2 bins
    t = encode_frame(pd.DataFrame({"x": pd.Series(x)}), numeric=["x"], bins=2, max_values=0)
    assert t.codes[:, 0].tolist() == [0, 0, 0, 0, 0, 1, 1, 1, 1]
    assert t.columns[0].labels == ("[1, 5]", "(5, 9]")


def test_lucs_attributes_are_recovered(shared_data):
    iris = read_num(shared_data / "iris" / "lucs_kdd" / "iris.D19.N150.C3.reconstructed.num")
    assert iris.n_attributes == 5 and (iris.codes >= 0).all()
    mush = load("mushroom")
    assert mush.n_attributes == 23 and (mush.codes < 0).any(axis=0).sum() == 1  # stalk-root is missing in some
    assert infer_attributes([[0, 2], [1, 3], [0, 3]], 4) == [[0, 1], [2, 3]]


def test_own_miner_agrees_with_pyfim_on_shared_tables():
    for name, min_sup in (("led7", 1), ("pima", 10)):
        t = load(name)
        for kind in ("all", "closed"):
            assert mine_table(t, min_sup, kind).as_set() == mine(t, min_sup, kind).as_set()


# ---- the generator ---------------------------------------------------------------------------------------------
def exact_distribution(sets, weight, item_attr, A):
    """The generator's distribution over complete rows, by enumerating its choices (tiny code tables only)."""
    out = {}

    def walk(filled: dict, p: float):
        open_attrs = [a for a in range(A) if a not in filled]
        if not open_attrs:
            key = tuple(filled[a] for a in range(A))
            out[key] = out.get(key, 0.0) + p
            return
        for a in open_attrs:
            ok = [(s, w) for s, w in zip(sets, weight) if any(item_attr[i] == a for i in s)
                  and not any(item_attr[i] in filled for i in s)]
            total = sum(w for _, w in ok)
            for s, w in ok:
                nf = dict(filled)
                for i in s:
                    nf[item_attr[i]] = i
                walk(nf, p / len(open_attrs) * w / total)

    walk({}, 1.0)
    return out


def test_generator_draws_rows_with_the_algorithms_probabilities():
    # the paper's Figure 1 shape: three attributes of two values, a code table with pairs and singletons
    cols = [ColumnCoding(n, ("0", "1")) for n in "ABC"]
    t = from_codes([np.zeros(1, dtype=np.int64)] * 3, cols)  # items A0 A1 B0 B1 C0 C1 = 0..5
    ct = CodeTable(elements=[(1, 3), (0, 2), (2, 4)], usage=np.array([3, 2, 1]), element_support=np.zeros(3),
                   singleton_usage=np.array([1, 0, 0, 2, 3, 3]), std_lengths=np.zeros(6), n_items=6, L_D_ST=0,
                   L_ST_total=1, L_CT_D=0, L_D_CT=0, n_candidates=0, accepted=0, pruned=0)
    lap = 0.5
    sets = [(1, 3), (0, 2), (2, 4)] + [(i,) for i in range(6)]
    weight = [3 + lap, 2 + lap, 1 + lap] + [u + lap for u in (1, 0, 0, 2, 3, 3)]
    exact = exact_distribution(sets, weight, t.item_attr.tolist(), 3)
    assert sum(exact.values()) == pytest.approx(1.0)
    n = 200_000
    codes, pieces = generate_codes(ct, t, n, NoiseSource.for_tests(3), laplace=lap)
    assert ((codes >= 0).all() and (t.item_attr[codes] == np.arange(3)).all())  # one value per attribute
    seen = pd.Series(map(tuple, codes.tolist())).value_counts() / n
    for row, p in exact.items():
        assert seen.get(row, 0.0) == pytest.approx(p, abs=4 * np.sqrt(p * (1 - p) / n) + 1e-4), row
    assert set(seen.index) <= set(exact)
    assert 1 <= pieces.min() and pieces.max() <= 3


# ---- the paper's scores ------------------------------------------------------------------------------------------
def test_anonymity_score_by_hand():
    orig = np.array([[0, 0], [0, 0], [1, 1], [2, 2]])  # support 2: r1; support 1: r2, r3
    gen = np.array([[0, 0], [1, 1], [5, 5], [5, 5]])
    # AS = 1/2 · P(r1 copied) + 1/1 · P(a support-1 row copied) = 1/2 · 1 + 1 · 1/2
    assert S.anonymity_score(orig, gen) == pytest.approx(1.0)
    assert S.anonymity_score(orig, orig) == pytest.approx(1.5)
    assert S.normalised_anonymity_score(orig, gen) == pytest.approx(2 / 3)
    assert S.normalised_anonymity_score(orig, np.array([[9, 9]])) == 0.0
    leak = S.disclosure(orig, gen, min_sup=2)
    assert leak == {"rare": 25.0, "unique": 25.0, "any": 50.0}
    cmp = S.itemset_comparison({(0,): 4, (1,): 2}, {(0,): 2, (2,): 1}, 4, 4)
    assert cmp["equal %"] == 50.0 and cmp["avg support difference of equal itemsets %"] == pytest.approx(50.0)
    assert cmp["avg support of new itemsets %"] == pytest.approx(25.0)


def test_led7_as_in_table_1():
    """One run on led7 (min_sup 1, all candidates): the paper reports NAS 0.66 and 89 % equal itemsets."""
    ds = dataset_from_frame(shared_frame("led7"))
    mech = KrimpSynthetic()
    rel = list(mech.run(ds, rng=NoiseSource.for_tests(7), min_sup=1, candidates="all"))[-1]
    figs = mech.measures(rel, ds, None)
    assert abs(figs[NAMES["nas"]] - 0.66) <= 0.1
    assert abs(figs[NAMES["equal"]] - 89) <= 10
    assert rel.record["code table"]["L(D,CT) bits"] == pytest.approx(31105.0010, abs=1e-3)
    assert len(rel.table) == 3200 and list(rel.table.columns) == list(ds.frame.columns)


# ---- the mechanism on the publish path ----------------------------------------------------------------------------
def ward(n=600, seed=0):
    r = np.random.default_rng(seed)
    age = r.integers(18, 95, n)
    frame = pd.DataFrame({"patient id": [f"P{i:05d}" for i in range(n)], "age": age,
                          "sex": r.choice(["F", "M"], n),
                          "ward": np.where(age > 60, "geriatrics", r.choice(["surgery", "cardiology"], n)),
                          "outcome": r.choice(["home", "readmitted"], n, p=[0.8, 0.2])})
    return dataset_from_frame(frame, roles={"patient id": Role.IDENTIFIER})


def test_registered_and_says_no_formal_guarantee():
    assert "KRIMP synthetic" in registry.names()
    cls = registry.get("KRIMP synthetic")
    assert cls.guarantee == GUARANTEE == "synthetic, no formal privacy guarantee"
    cost = cls().privacy_cost(min_sup=5)
    assert not cost.is_dp and cost.k is None and cost.describe() == "no formal guarantee"
    problems = cls().validate(ward(), min_sup=5)
    assert any("no formal privacy guarantee" in p.message and p.level == "warning" for p in problems)
    assert any(p.param == "min_sup" for p in cls().validate(ward(50), min_sup=100))


def test_release_note_says_it_plainly_and_keeps_figures_local(tmp_path):
    data = ward()
    planned = plan(data, "KRIMP synthetic", {"min_sup": 5, "candidates": "closed"})
    published = list(run_release(planned, rng=NoiseSource.for_tests(2)))[-1]
    table = published.table
    assert list(table.columns) == ["age", "sex", "ward", "outcome"]  # the identifier is left out
    assert len(table) == data.n_rows
    assert set(table["ward"]) <= {"geriatrics", "surgery", "cardiology"}
    assert table["age"].astype(str).str.match(r"[\[(]\d+, \d+\]$").all()  # many ages: equal-frequency bins
    assert published.guarantee_line() == GUARANTEE and published.cost.describe() == "no formal guarantee"
    assert NAMES["nas"] in published.figures and NAMES["rare"] in published.figures
    ex = export(published, tmp_path / "out.csv", note_path=tmp_path / "note.json",
                record_path=tmp_path / "record.json")
    note_text = (tmp_path / "note.json").read_text()
    note = json.loads(note_text)
    assert note["mechanism"]["guarantee"] == GUARANTEE
    assert "no formal privacy guarantee" in note["details"]["privacy"]
    assert "anonymity" not in note_text and "L(D,CT)" not in note_text and "bins" not in note["details"]
    record = json.loads((tmp_path / "record.json").read_text())
    assert NAMES["nas"] in record["figures (against the true data)"]
    assert record["details"]["code table"]["L(D,CT) bits"] > 0
    assert ex is not None


def test_cli_lists_and_runs_it(tmp_path, capsys):
    src = tmp_path / "ward.csv"
    ward(300).frame.to_csv(src, index=False)
    assert cli_main(["mechanisms"]) == 0
    out = capsys.readouterr().out
    assert "KRIMP synthetic  [synthetic, no formal privacy guarantee]" in out
    code = cli_main(["run", "KRIMP synthetic", "--input", str(src), "--output", str(tmp_path / "syn.csv"),
                     "--role", "patient id=identifier", "--param", "min_sup=5", "--report",
                     str(tmp_path / "note.json")])
    out = capsys.readouterr().out
    assert code == 0 and "no formal" in out
    assert len(pd.read_csv(tmp_path / "syn.csv")) == 300


def test_sweep_over_min_sup_draws_anonymity_against_utility():
    data = ward(600)
    gen = run_sweep("KRIMP synthetic", data, {"candidates": "all"}, {"min_sup": [1, 100]}, repeats=1, seed=4,
                    holdout=0)
    result = [x for x in gen][-1]
    summary = result.summary()
    assert len(summary) == 2
    nas = summary[(NAMES["nas"], "mean")]
    assert ((0 <= nas) & (nas <= 1)).all()
    assert summary[(NAMES["rare"], "mean")].loc[1] == 0  # no original row has support below 1
    assert NAMES["equal"] in result.measure_names and NAMES["rare"] in result.measure_names


def test_numbers_generalised_to_a_taxonomy_level():
    from ppdp_gui.engine.taxonomy import Taxonomy
    data = ward(300)
    paths = [[str(a), f"{a // 10 * 10}-{a // 10 * 10 + 9}", "*"] for a in range(0, 120)]
    data = data.with_column("age", taxonomy=Taxonomy.from_paths("age", paths))
    rel = list(KrimpSynthetic().run(data, rng=NoiseSource.for_tests(6), min_sup=3, taxonomy_level=1))[-1]
    assert set(rel.table["age"]) <= {f"{d}-{d + 9}" for d in range(10, 100, 10)}
    assert rel.note["numbers"] == {"age": "taxonomy level 1"}


def test_more_records_and_uniform_numbers():
    data = ward(300)
    mech = KrimpSynthetic()
    rel = list(mech.run(data, rng=NoiseSource.for_tests(5), min_sup=3, n_records=1000,
                        numbers_as="uniform value"))[-1]
    assert len(rel.table) == 1000
    assert pd.api.types.is_float_dtype(rel.table["age"]) and rel.table["age"].between(18, 94).all()
