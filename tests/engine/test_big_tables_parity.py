"""The same file gives the same dataset and the same release whichever engine reads it (memory or DuckDB).

A clinical-shaped table with a mostly-missing column (`weight`, 97 % '?'), missing values in a quasi-identifier
(`zip3`, about 6 %: a warning note), a numeric column with a few missing cells (`los`) and a record number, read
as CSV, as a Parquet file of text and as a typed Parquet file (integers, floats with NaN), under the 'drop' and
the 'category' policies: the rows kept, the columns left out, the missing counts, the notes, kinds and role
guesses must be the reader's; DiffGen, global recoding and Mondrian (same seed) must publish the same release,
and the custodian record the same row counts (never the release note).
"""

from __future__ import annotations

import json
from dataclasses import replace
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ppdp_gui.engine.bigdata import large_dataset as big_dataset
from ppdp_gui.engine.bigdata import source as big
from ppdp_gui.engine.bigdata.large_dataset import ENGINE_NOTE, open_large
from ppdp_gui.engine.data.domains import Domain
from ppdp_gui.engine.data.reader import dataset_from_frame, read_table
from ppdp_gui.engine.data.schema import NAPolicy, Role
from ppdp_gui.engine.errors import DataError
from ppdp_gui.engine.pipeline import export, plan, run_release
from ppdp_gui.engine.pipeline.published import custodian_record, release_note
from ppdp_gui.engine.taxonomy import Taxonomy
from ppdp_gui.engine.taxonomy.builders import grouped, ordered_intervals

N = 1500
ZIPS = ["101", "102", "103", "104", "105", "106", "107", "108"]
POLICIES = {"drop": NAPolicy(action="drop"), "category": NAPolicy(action="category"),
            "named": NAPolicy(action="drop", leave_out=("los",)),
            "strict": NAPolicy(action="drop", mostly_missing=None, tokens=("?",))}


def clinical_frame() -> pd.DataFrame:
    r = np.random.default_rng(7)
    frame = pd.DataFrame({
        "patient_nbr": [f"P{i:05d}" for i in r.permutation(N)],
        "age": r.integers(18, 91, N).astype(str),
        "sex": r.choice(["F", "M"], N),
        "zip3": r.choice(ZIPS, N),
        "weight": np.where(r.random(N) < 0.97, "?", r.choice(["[50-75)", "[75-100)"], N)),
        "los": r.integers(1, 31, N).astype(str),
        "diagnosis": r.choice(["I10", "E11", "J45, asthma", "K21 \"GERD\""], N),
        "outcome": r.choice(["no", "yes"], N, p=[0.7, 0.3]),
    })
    frame.loc[r.random(N) < 0.06, "zip3"] = "?"
    frame.loc[r.random(N) < 0.01, "los"] = "NA"
    frame.loc[[3, 9], "sex"] = [" M\u00a0", "\tF "]  # white space the reader strips (NBSP, tab)
    return frame


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("parity")
    frame = clinical_frame()
    frame.to_csv(folder / "t.csv", index=False)
    frame.to_parquet(folder / "text.parquet", index=False)
    typed = frame.copy()
    typed["age"] = typed["age"].astype(np.int64)
    typed["los"] = pd.to_numeric(typed["los"], errors="coerce")  # float64 with NaN: missing for both readers
    typed.to_parquet(folder / "typed.parquet", index=False)
    return {"csv": folder / "t.csv", "text": folder / "text.parquet", "typed": folder / "typed.parquet"}


def rows_of(data) -> pd.DataFrame:
    """A dataset's rows as text, sorted (a large one's through its `src` view, typed by the reader's rules)."""
    if big_dataset.is_large(data):
        raw = data.table.query("SELECT * FROM src")
        kinds = {c.name: c.kind for c in data.schema}
        frame = dataset_from_frame(raw, kinds=kinds, na_policy=NAPolicy(tokens=(), action="category",
                                                                        mostly_missing=None)).frame
    else:
        frame = data.frame
    out = frame.astype(str)
    return out.sort_values(list(out.columns)).reset_index(drop=True)


@pytest.mark.parametrize("fmt", ["csv", "text", "typed"])
@pytest.mark.parametrize("policy", list(POLICIES))
def test_same_dataset_and_notes(files, fmt, policy):
    pol = POLICIES[policy]
    memory, large = read_table(files[fmt], na_policy=pol), open_large(files[fmt], na_policy=pol, hashes=False)
    assert large.source.left_out == memory.source.left_out
    assert large.source.missing == memory.source.missing
    assert (large.source.n_rows_read, large.source.n_rows_dropped, large.n_rows) == \
        (memory.source.n_rows_read, memory.source.n_rows_dropped, memory.n_rows)
    assert large.source.notes == memory.source.notes + (ENGINE_NOTE,)
    assert [(c.name, c.kind, c.role) for c in large.schema] == [(c.name, c.kind, c.role) for c in memory.schema]
    pd.testing.assert_frame_equal(rows_of(large), rows_of(memory))


def test_the_policies_do_what_the_reader_does(files):
    """Golden facts of the fixture (so the parity above is not between two equally wrong readers)."""
    frame = clinical_frame()
    drop = open_large(files["csv"], na_policy=POLICIES["drop"], hashes=False)
    gone = int(((frame["zip3"] == "?") | (frame["los"] == "NA")).sum())
    assert drop.source.left_out == ("weight",) and drop.source.n_rows_dropped == gone
    assert drop.source.missing["weight"] == int((frame["weight"] == "?").sum())
    assert any(t.startswith("Warning") and "'zip3'" in t for t in drop.source.notes)
    assert drop.spec("patient_nbr").role.value == "identifier" and drop.spec("los").kind == "numeric"
    cat = open_large(files["csv"], na_policy=NAPolicy(action="category"), hashes=False)
    assert cat.source.left_out == () and cat.n_rows == N
    counts = cat.table.query("SELECT zip3, COUNT(*) AS n FROM src GROUP BY zip3").set_index("zip3")["n"]
    assert counts["(missing)"] == int((frame["zip3"] == "?").sum())
    assert cat.table.nulls == {"age": 0, "los": int((frame["los"] == "NA").sum())}


def prepared(data, category: bool):
    """Roles, taxonomies and public domains for the three mechanisms (the same on both engines)."""
    zips = ZIPS + (["(missing)"] if category else [])
    roles = {"patient_nbr": "identifier", "age": "quasi-identifier", "sex": "quasi-identifier",
             "zip3": "quasi-identifier", "los": "insensitive", "diagnosis": "insensitive", "outcome": "class"}
    for col, role in roles.items():
        data = data.with_column(col, role=Role(role))
    data = data.confirm_guesses()  # the custodian confirmed the kinds shown (a DP plan asks for it)
    zip_tax = grouped("zip3", {"north": zips[:4], "south": zips[4:]})
    return (data.with_column("zip3", taxonomy=zip_tax, domain=Domain(categories=tuple(zips)))
            .with_column("sex", taxonomy=Taxonomy.flat("sex", ["F", "M"]), domain=Domain(categories=("F", "M")))
            .with_column("outcome", domain=Domain(categories=("no", "yes"))))


def publish(data, mechanism, params, seed=3):
    planned = plan(data, mechanism, params)
    assert not planned.errors, planned.errors
    return list(run_release(planned, seed=seed))[-1]


def released_rows(path: Path) -> pd.DataFrame:
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    return frame.sort_values(list(frame.columns)).reset_index(drop=True)


def same_record_counts(memory, large):
    a, b = custodian_record(memory)["source"], custodian_record(large)["source"]
    for key in ("rows read", "rows dropped for missing values", "rows used", "columns left out", "missing values"):
        assert a[key] == b[key], key
    assert b["notes on reading"] == a["notes on reading"] + [ENGINE_NOTE]


def no_counts_in_note(published, data):
    note = json.dumps(release_note(published), default=str)
    assert not any(text[:40] in note for text in data.source.notes)
    assert "is missing in" not in note and "have a missing value" not in note
    count = data.source.missing["weight"]
    assert count > 1000 and not re.search(rf"(?<![0-9a-f.]){count}(?![0-9a-f.])", note)


@pytest.mark.parametrize("policy", ["drop", "category"])
@pytest.mark.parametrize("fmt", ["csv", "typed"])
def test_diffgen_same_release(files, policy, fmt):
    pol = POLICIES[policy]
    out = []
    for data in (read_table(files[fmt], na_policy=pol), open_large(files[fmt], na_policy=pol, hashes=False)):
        data = prepared(data, policy == "category").with_column("age", domain=Domain(low=0, high=100,
                                                                                    integer=True))
        if data.source.left_out:  # left out for being mostly missing: a DP release asks for it to be named
            refused = plan(data, "DiffGen", {"epsilon": 1.0, "h": 6}).errors
            assert [p.column for p in refused] == ["weight"] and "--leave-out weight" in refused[0].message
            named = replace(pol, leave_out=("weight",))
            data = (read_table(files[fmt], na_policy=named) if len(out) == 0
                    else open_large(files[fmt], na_policy=named, hashes=False))
            data = prepared(data, policy == "category").with_column("age", domain=Domain(low=0, high=100,
                                                                                        integer=True))
        out.append(publish(data, "DiffGen", {"epsilon": 1.0, "h": 6}))
        no_counts_in_note(out[-1], data)
    memory, large = out
    pd.testing.assert_frame_equal(memory.table, large.table)
    assert memory.release.note == large.release.note and memory.output_hash == large.output_hash
    same_record_counts(memory, large)


@pytest.mark.parametrize("policy", ["drop", "category"])
def test_global_recoding_same_release(files, tmp_path, policy):
    pol = POLICIES[policy]
    out = []
    for i, data in enumerate((read_table(files["csv"], na_policy=pol),
                              open_large(files["text"], na_policy=pol, hashes=False))):
        data = prepared(data, policy == "category")
        data = data.with_column("age", taxonomy=ordered_intervals("age", 0, 100, width=10))
        published = publish(data, "Global recoding", {"k": 6, "suppression": 4.0})
        no_counts_in_note(published, data)
        export(published, tmp_path / f"gr{i}.csv")
        out.append(published)
    memory, large = out
    assert memory.release.note == large.release.note
    assert memory.release.record["suppressed rows"] == large.release.record["suppressed rows"]
    pd.testing.assert_frame_equal(released_rows(tmp_path / "gr0.csv"), released_rows(tmp_path / "gr1.csv"))
    same_record_counts(memory, large)
    if policy == "category":  # the label is published like any value (or generalised with its group)
        assert (released_rows(tmp_path / "gr1.csv")["zip3"].isin(["(missing)", "south", "*"])).any()


@pytest.mark.parametrize("policy", ["drop", "category"])
def test_mondrian_same_release(files, tmp_path, policy):
    pol = POLICIES[policy]
    out = []
    for i, data in enumerate((read_table(files["csv"], na_policy=pol),
                              open_large(files["typed"], na_policy=pol, hashes=False))):
        published = publish(prepared(data, policy == "category"), "Mondrian", {"k": 6})
        export(published, tmp_path / f"m{i}.csv")
        out.append(published)
    memory, large = out
    assert memory.release.note == large.release.note
    assert memory.figures == pytest.approx(large.figures)
    pd.testing.assert_frame_equal(released_rows(tmp_path / "m0.csv"), released_rows(tmp_path / "m1.csv"))
    same_record_counts(memory, large)


def test_a_numeric_quasi_identifier_with_missing_cells_is_refused_by_both(files):
    """Under 'category' a numeric column keeps its missing cells empty: the large-table engine refuses it as a
    QI; in memory Mondrian publishes the blanks as “(missing)” beside its grid cells (said in a warning) and
    global recoding under the root of the tree it asks for (tests/engine/test_numeric_blanks_kanon.py)."""
    pol = POLICIES["category"]
    for mechanism in ("Mondrian", "Global recoding"):
        messages = []
        for data in (read_table(files["csv"], na_policy=pol), open_large(files["csv"], na_policy=pol,
                                                                          hashes=False)):
            data = prepared(data, True).with_column("los", role=Role.QUASI_IDENTIFIER)
            messages.append([p.message for p in plan(data, mechanism, {"k": 5}).errors])
        if mechanism == "Mondrian":
            assert not any("'los'" in m for m in messages[0])
            assert any("'los' has missing values" in m for m in messages[1])
            continue
        assert not any("'los' has missing values" in m for m in messages[0])
        assert any("'los' needs a taxonomy" in m and "“(missing)”" in m for m in messages[0])
        assert any("'los' has missing values" in m for m in messages[1])


def test_kinds_decided_on_every_row_not_the_first_ones(tmp_path, monkeypatch):
    """A column numeric in the first rows and text later, one with few values first and many later, an id-like
    code column with few values first: kinds and role guesses as in memory (the sample is 100 rows here)."""
    monkeypatch.setattr(big, "SCHEMA_ROWS", 100)
    n = 400
    r = np.random.default_rng(2)
    frame = pd.DataFrame({
        "score": np.r_[r.integers(0, 50, 300).astype(str), ["high"] * 100],
        "grade": np.r_[r.integers(1, 6, 300), r.integers(1, 40, 100)].astype(str),
        "case_code": np.r_[r.integers(1, 4, 100), np.arange(1000, 1300)].astype(str),
        "postal": np.r_[r.integers(10000, 99999, 300).astype(str), ["02139"] * 100],
        "y": r.choice(["a", "b"], n),
    })
    path = tmp_path / "late.csv"
    frame.to_csv(path, index=False)
    memory, large = read_table(path), open_large(path, hashes=False)
    assert [(c.name, c.kind, c.role) for c in large.schema] == [(c.name, c.kind, c.role) for c in memory.schema]
    assert large.spec("score").kind == "categorical" and large.spec("grade").kind == "numeric"
    assert large.spec("case_code").role.value == "identifier" and large.spec("postal").kind == "categorical"
    with pytest.raises(DataError, match="'score' is set to numeric.*'high'"):
        open_large(path, kinds={"score": "numeric"}, hashes=False)
    with pytest.raises(DataError, match="'score' is set to numeric"):
        read_table(path, kinds={"score": "numeric"})


def test_typed_parquet_columns_read_as_the_reader_reads_them(tmp_path):
    """Booleans, a float column of whole numbers, dates: the same text (and so the same categories)."""
    n = 60
    frame = pd.DataFrame({"flag": [True, False, True] * (n // 3), "code": np.tile([1.0, 2.0, 3.0, np.nan], n // 4),
                          "day": pd.to_datetime(["2024-01-02", "2024-03-04 10:30:00", "2024-05-06"] * (n // 3), format="mixed"),
                          "ratio": np.tile([0.5, 1e-05, 2.0], n // 3), "x": np.arange(n).astype(str)})
    path = tmp_path / "typed.parquet"
    frame.to_parquet(path, index=False)
    for pol in (NAPolicy(action="drop"), NAPolicy(action="category")):
        memory, large = read_table(path, na_policy=pol), open_large(path, na_policy=pol, hashes=False)
        assert [(c.name, c.kind) for c in large.schema] == [(c.name, c.kind) for c in memory.schema]
        pd.testing.assert_frame_equal(rows_of(large), rows_of(memory))


def test_every_row_missing_and_unknown_left_out_say_what_the_reader_says(tmp_path):
    path = tmp_path / "sparse.csv"
    pd.DataFrame({"a": ["?", "?", "1"], "b": ["x", "?", "?"]}).to_csv(path, index=False)
    for reader in (read_table, lambda p, **kw: open_large(p, hashes=False, **kw)):
        with pytest.raises(DataError, match="every one of the 3 rows has a missing value"):
            reader(path, na_policy=NAPolicy(action="drop"))
        assert reader(path).n_rows == 3  # kept by default
        with pytest.raises(DataError, match="not in the table: 'nope'"):
            reader(path, na_policy=NAPolicy(action="drop", leave_out=("nope",)))


def test_ledger_identity_with_empty_cells(tmp_path):
    """DuckDB reads an empty CSV field as NULL, the reader as '': the rows still hash alike."""
    path = tmp_path / "e.csv"
    path.write_text("a,b\n1,\n2,\"\"\n,x\n" + "".join(f"{i},y\n" for i in range(3, 40)))
    for policy, rows in ((NAPolicy(action="drop"), 37), (NAPolicy(), 40)):
        memory, large = read_table(path, na_policy=policy), open_large(path, na_policy=policy)
        assert np.array_equal(np.sort(large.source.row_hashes), np.sort(memory.source.row_hashes))
        assert large.n_rows == memory.n_rows == rows


def test_the_white_space_stripped_is_arrows():
    """`columns.WHITESPACE` is exactly what the reader's `utf8_trim_whitespace` strips (BMP code points)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from ppdp_gui.engine.bigdata.columns import WHITESPACE
    chars = [chr(i) for i in range(0x10000) if not 0xD800 <= i <= 0xDFFF]
    stripped = pc.utf8_trim_whitespace(pa.array(["a" + ch for ch in chars])).to_pylist()
    assert "".join(ch for ch, s in zip(chars, stripped) if s == "a") == WHITESPACE


@pytest.mark.parametrize("models", [{"l": 3, "diversity": "distinct"}, {"l": 2, "diversity": "entropy"},
                                    {"l": 2, "diversity": "recursive", "c": 2.0},
                                    {"max_risk": 12.5, "avg_risk": 5.0}, {"t": 0.15, "distance": "equal"},
                                    {"t": 0.1, "distance": "hierarchical", "l": 2}])
def test_global_recoding_l_diversity_t_closeness_and_risk_on_a_large_table(files, tmp_path, models):
    """l-diversity, t-closeness and risk thresholds come from the same GROUP BY (the sensitive value is one of
    its keys) and are recounted in SQL on the query and on the written file: the same release as in memory."""
    params = {"k": 3, "suppression": 5.0, **models}
    if "l" in models or "t" in models:
        params["sensitive"] = "diagnosis"
    out, checks = [], []
    drop = POLICIES["drop"]
    for i, data in enumerate((read_table(files["csv"], na_policy=drop),
                              open_large(files["csv"], na_policy=drop, hashes=False))):
        data = prepared(data, False).with_column("diagnosis", role=Role.SENSITIVE, taxonomy=grouped(
            "diagnosis", {"chronic": ["I10", "E11"], "other": ["J45, asthma", 'K21 "GERD"']}))
        data = data.with_column("age", taxonomy=ordered_intervals("age", 0, 100, width=10))
        published = publish(data, "Global recoding", params)
        exported = export(published, tmp_path / f"l{i}.csv")
        out.append(published)
        checks.append([(type(c.claim).__name__, c.ok, dict(c.figures)) for c in exported.checks])
    memory, large = out
    assert memory.release.note == large.release.note
    assert [(type(c.claim).__name__, c.ok, dict(c.figures)) for c in memory.checks] == \
        [(type(c.claim).__name__, c.ok, dict(c.figures)) for c in large.checks]
    assert checks[0] == checks[1] and all(ok for _, ok, _ in checks[1])
    kinds = {name for name, _, _ in checks[1]}
    assert ("LDiversity" in kinds) == ("l" in models) and ("RiskBound" in kinds) == ("max_risk" in models)
    assert ("TCloseness" in kinds) == ("t" in models)
    pd.testing.assert_frame_equal(released_rows(tmp_path / "l0.csv"), released_rows(tmp_path / "l1.csv"))


def test_the_sql_recount_of_l_t_and_risk_catches_a_broken_file(tmp_path):
    from ppdp_gui.engine.bigdata.recount import file_relation, recount
    from ppdp_gui.engine.bigdata.source import TableSource
    from ppdp_gui.engine.claims import LDiversity, RiskBound
    path = tmp_path / "bad.csv"
    pd.DataFrame({"a": ["x"] * 4 + ["y"] * 3 + ["*"] * 2, "s": list("ppqr") + list("ttt") + list("uv")}
                 ).to_csv(path, index=False)
    src = TableSource(path, na_policy=NAPolicy(tokens=()))
    from ppdp_gui.engine.claims import Suppression, TCloseness
    claims = [LDiversity(2, "distinct", "s", ("a",)), LDiversity(2, "entropy", "s", ("a",)),
              RiskBound("highest", 0.25, ("a",)), RiskBound("average", 0.5, ("a",)),
              TCloseness(0.5, "s", ("a",), "equal"), TCloseness(0.9, "s", ("a",), "equal")]
    got = recount(src.con, file_relation(path, "csv"), claims + [Suppression(0.3, ("a",), "*")])
    assert [c.ok for c in got] == [False, False, False, True, False, True, True]
    assert "only 1 distinct 's'" in got[0].message and "33.33 %" in got[2].message
    from ppdp_gui.engine.checks.claims import check_claims
    table = pd.read_csv(path, dtype=str)
    same = check_claims({"table": table}, claims + [Suppression(0.3, ("a",), "*")])
    assert [(c.ok, c.message) for c in same] == [(c.ok, c.message) for c in got]


@pytest.mark.parametrize("na", ["drop", "category"])
def test_cli_same_record_either_engine(files, tmp_path, capsys, na):
    """`ppdp run … --engine memory|duckdb`: the same notes on the terminal and the same row counts in the
    custodian record; the release note holds none of them."""
    from ppdp_gui.cli import main
    got = {}
    for engine in ("memory", "duckdb"):
        folder = tmp_path / engine
        folder.mkdir()
        code = main(["run", "Global recoding", "-i", str(files["typed"]), "--engine", engine, "--na", na,
                     "--leave-out", "diagnosis", "--role", "patient_nbr=identifier", "--role", "age=insensitive",
                     "--role", "los=insensitive", "--role", "outcome=insensitive", "-p", "k=5",
                     "-o", str(folder / "out.csv"), "--report", str(folder / "note.json"),
                     "--record", str(folder / "record.json"), "--ledger", str(folder / "l.db")])
        err = capsys.readouterr().err
        assert code == 0, err
        got[engine] = (json.loads((folder / "record.json").read_text())["source"],
                       (folder / "note.json").read_text(), err, released_rows(folder / "out.csv"))
    (mem, mem_note, _, mem_rows), (big_, big_note, big_err, big_rows) = got["memory"], got["duckdb"]
    for key in ("rows read", "rows dropped for missing values", "rows used", "columns left out"):
        assert mem[key] == big_[key], key
    assert big_["notes on reading"] == mem["notes on reading"] + [ENGINE_NOTE]
    assert "Left out as asked: 'diagnosis'" in big_err and ("'weight'" in big_err) == (na == "drop")
    for note in (mem_note, big_note):
        assert "Left out as asked" not in note and "is missing in" not in note
    pd.testing.assert_frame_equal(mem_rows, big_rows)


@pytest.mark.parametrize("policy", ["drop", "category"])
def test_written_csv_lines_are_byte_identical(files, tmp_path, policy):
    """The file either engine writes holds the same lines, byte for byte (CRLF line ends, quoting, numbers, empty
    cells); only the order of rows inside a class is random."""
    pol = POLICIES[policy]
    lines = []
    for i, data in enumerate((read_table(files["csv"], na_policy=pol),
                              open_large(files["csv"], na_policy=pol, hashes=False))):
        data = prepared(data, policy == "category").with_column("age", taxonomy=ordered_intervals("age", 0, 100,
                                                                                                width=10))
        export(publish(data, "Global recoding", {"k": 6, "suppression": 4.0}), tmp_path / f"b{i}.csv")
        raw = (tmp_path / f"b{i}.csv").read_bytes()
        assert raw.count(b"\r\n") == raw.count(b"\n") > 1000
        head, *rows = raw.split(b"\r\n")
        lines.append((head, sorted(rows)))
    assert lines[0] == lines[1]


def test_mondrian_flat_tree_in_order_of_first_appearance(tmp_path):
    """A categorical QI without a taxonomy: in memory a flat tree in the order values first appear (`pd.unique`);
    the large table reads that order from the file (not the sorted order), and publishes the same rows."""
    r = np.random.default_rng(4)
    wards = ["w7", "w2", "w9", "w1", "w5", "w3", "w8", "w4", "w6"]  # first appearance: this order, not sorted
    n = 3000
    frame = pd.DataFrame({"ward": np.r_[wards, r.choice(wards, n - len(wards), p=r.dirichlet(np.ones(9)))],
                          "age": r.integers(20, 80, n).astype(str), "y": r.choice(["a", "b"], n)})
    frame.loc[[40, 41], "ward"] = ["?", "?"]  # dropped rows do not count
    path = tmp_path / "wards.csv"
    frame.to_csv(path, index=False)
    roles = {"ward": Role.QUASI_IDENTIFIER, "age": Role.QUASI_IDENTIFIER, "y": Role.INSENSITIVE}
    drop = NAPolicy(action="drop")
    memory, large = read_table(path, na_policy=drop), open_large(path, na_policy=drop, hashes=False)
    assert large.table.first_seen("ward").tolist() == wards == list(pd.unique(memory.frame["ward"]))
    out = []
    for i, data in enumerate((memory, large)):
        export(publish(data.with_roles(roles), "Mondrian", {"k": 60}), tmp_path / f"w{i}.csv")
        out.append(released_rows(tmp_path / f"w{i}.csv"))
    pd.testing.assert_frame_equal(out[0], out[1])


def test_blanks_in_identifier_columns_cost_no_row_on_either_engine(tmp_path):
    """A blank in a column that is never released (an identifier by its name, such as nurse_notes, or set so)
    costs no row in memory; the DuckDB path must keep the same rows and say the same."""
    from ppdp_gui.engine.bigdata.large_dataset import open_large
    from ppdp_gui.engine.data.reader import read_table
    from ppdp_gui.engine.data.schema import Role
    n = 400
    frame = pd.DataFrame({"nurse_notes": ["" if i % 3 else f"seen on ward {i % 7} by the night team" for i in range(n)],
                          "code": ["" if i % 5 == 0 else str(i % 4) for i in range(n)],
                          "sex": ["F" if i % 2 else "M" for i in range(n)],
                          "ward": [f"w{i % 6}" for i in range(n)],
                          "admitted": [f"2024-{1 + i % 12:02d}-{1 + i % 28:02d}" for i in range(n)]})
    path = tmp_path / "notes.csv"
    frame.to_csv(path, index=False)
    for roles in (None, {"code": Role.IDENTIFIER}):
        small = read_table(path, roles=roles)
        big = open_large(path, roles=roles, hashes=False)
        assert big.n_rows == small.n_rows and big.source.n_rows_dropped == small.source.n_rows_dropped
        assert big.source.notes[:-1] == small.source.notes
        assert {c.name: c.role for c in big.schema} == {c.name: c.role for c in small.schema}
    assert read_table(path, roles={"code": Role.IDENTIFIER}).n_rows == n  # nothing dropped at all
    assert open_large(path, hashes=False).spec("admitted").role == Role.QUASI_IDENTIFIER  # dates, read in SQL
    # the kept blanks read as the missing-value label on both engines, as the note says
    roles = {"code": Role.IDENTIFIER}
    small, big = read_table(path, roles=roles), open_large(path, roles=roles, hashes=False)
    assert (small.frame["code"] == "(missing)").sum() == n // 5
    assert big.table.run("SELECT COUNT(*) FROM src WHERE code = '(missing)'")[0][0] == n // 5
