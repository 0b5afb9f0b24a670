"""The person column on the large-table engine (`--engine duckdb`): several rows per patient, counted as persons.

A hospital-shaped table (Adult rows, each given a patient number; about three rows per patient, a few without a
number) released by global recoding (k, l, t, risk bounds), strict Mondrian and DiffGen on DuckDB gives the
in-memory release of the same table with the same person column: the same levels / classes, the same claims
(k counts persons), the same written rows (as a multiset), and for DiffGen the same rows kept per patient and the
same noisy counts. The recount on the written file counts persons: a mechanism that counts rows, or a file whose
rows no longer line up with their persons, is caught.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ppdp_gui.engine.bigdata.large_dataset import open_large
from ppdp_gui.engine.data.domains import Domain
from ppdp_gui.engine.data.reader import read_table
from ppdp_gui.engine.data.schema import Role
from ppdp_gui.engine.errors import CheckError
from ppdp_gui.engine.package_files import sample_table
from ppdp_gui.engine.pipeline import export, plan, run_release
from ppdp_gui.engine.taxonomy import bundled_adult_taxonomies

ROLES = {"patient_nbr": "person", "age": "quasi-identifier", "sex": "quasi-identifier", "race": "quasi-identifier",
         "education": "quasi-identifier", "marital-status": "quasi-identifier", "occupation": "sensitive",
         "salary-class": "class", "native-country": "insensitive", "workclass": "insensitive"}


@pytest.fixture(scope="module")
def tables(tmp_path_factory) -> dict[str, Path]:
    """1,500 Adult rows of 500 patients (1–6 rows each, shuffled), 4 rows without a patient number."""
    folder = tmp_path_factory.mktemp("persons")
    frame = pd.read_csv(sample_table(), dtype=str, keep_default_na=False).head(1500)
    rng = np.random.default_rng(7)
    patient = rng.integers(0, 500, len(frame)) * 7 + 100_003
    ids = pd.Series(patient.astype(str))
    ids.iloc[[3, 50, 700, 1200]] = ""
    frame.insert(0, "patient_nbr", ids.to_numpy())
    frame.to_csv(folder / "hospital.csv", index=False)
    frame.to_parquet(folder / "hospital.parquet", index=False)
    return {"csv": folder / "hospital.csv", "parquet": folder / "hospital.parquet"}


def prepared(data, numeric_age: bool = False):
    data = data.confirm_guesses()
    for col, tax in bundled_adult_taxonomies().items():
        if col in data.frame.columns and data.spec(col).role.value == "quasi-identifier":
            data = data.with_column(col, taxonomy=tax)
    if numeric_age:
        data = data.with_column("age", taxonomy=None, domain=Domain(low=0, high=100, integer=True))
        data = data.with_column("salary-class", domain=Domain(categories=("<=50K", ">50K")))
    return data


def both(tables, fmt: str, numeric_age: bool = False):
    memory = prepared(read_table(tables["csv"], roles=ROLES), numeric_age)
    large = prepared(open_large(tables[fmt], hashes=False, roles=ROLES), numeric_age)
    assert memory.person_column == large.person_column == "patient_nbr"
    return memory, large


def publish(data, mechanism, params, seed=11):
    planned = plan(data, mechanism, params)
    assert not planned.errors, [e.message for e in planned.errors]
    return list(run_release(planned, seed=seed))[-1]


def written_rows(path: Path) -> pd.DataFrame:
    frame = pd.read_csv(path, dtype=str, keep_default_na=False) if path.suffix == ".csv" else \
        pd.read_parquet(path).astype(str)
    return frame.sort_values(list(frame.columns)).reset_index(drop=True)


def same_rows(memory, large, tmp_path: Path, fmt: str) -> None:
    out = tmp_path / f"large.{fmt}"
    exported = export(large, out)
    assert all(c.ok for c in exported.checks), [c.message for c in exported.checks]
    assert any("persons (patient_nbr)" in c.message for c in exported.checks)
    expected = memory.table.astype(str)
    expected = expected.sort_values(list(expected.columns)).reset_index(drop=True)
    pd.testing.assert_frame_equal(written_rows(out), expected)


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_global_recoding_counts_persons_as_in_memory(tables, tmp_path, fmt):
    memory, large = both(tables, fmt)
    params = {"k": 4, "suppression": 4.0}
    m, g = publish(memory, "Global recoding", params), publish(large, "Global recoding", params)
    assert g.release.records is not None
    assert g.release.note == m.release.note
    assert g.release.note["k counts"] == "persons (patient_nbr)"
    assert g.release.record["suppressed rows"] == m.release.record["suppressed rows"]
    assert g.release.record["figures"] == pytest.approx(m.release.record["figures"])
    assert [(c.claim, c.ok) for c in g.checks] == [(c.claim, c.ok) for c in m.checks]
    for mine, theirs in zip(g.checks, m.checks):
        assert dict(mine.figures) == pytest.approx(dict(theirs.figures)), mine.claim
    assert g.figures == pytest.approx(m.figures)
    same_rows(m, g, tmp_path, fmt)


@pytest.mark.parametrize("models", [
    {"k": 3, "l": 2, "diversity": "entropy", "sensitive": "occupation"},
    {"k": 2, "l": 2, "diversity": "recursive", "c": 4.0, "sensitive": "occupation"},
    {"k": 2, "t": 0.45, "distance": "equal", "sensitive": "occupation"},
    {"k": 2, "max_risk": 40.0, "avg_risk": 30.0},
])
def test_global_recoding_every_model_per_person(tables, tmp_path, models):
    memory, large = both(tables, "parquet")
    params = {"suppression": 8.0, **models}
    m, g = publish(memory, "Global recoding", params), publish(large, "Global recoding", params)
    assert g.release.note == m.release.note
    assert g.release.record["suppressed rows"] == m.release.record["suppressed rows"]
    assert [(c.claim, c.ok) for c in g.checks] == [(c.claim, c.ok) for c in m.checks]
    for mine, theirs in zip(g.checks, m.checks):
        assert dict(mine.figures) == pytest.approx(dict(theirs.figures)), mine.claim
    same_rows(m, g, tmp_path, "parquet")


def test_mondrian_strict_counts_persons_as_in_memory(tables, tmp_path):
    memory, large = both(tables, "csv")
    m, g = publish(memory, "Mondrian", {"k": 6}), publish(large, "Mondrian", {"k": 6})
    assert g.release.note == m.release.note
    assert g.release.note["k counts"] == "persons (patient_nbr)"
    assert g.figures == pytest.approx(m.figures)
    same_rows(m, g, tmp_path, "csv")
    rows = publish(memory.with_column("patient_nbr", role=Role.IDENTIFIER), "Mondrian", {"k": 6})
    assert rows.release.note["groups"] > g.release.note["groups"]  # persons make fewer, larger classes


def test_a_release_counting_rows_is_caught(tables, tmp_path, monkeypatch):
    """A planted bug — the large-table passes group rows, not persons, while the claims say persons — is stopped
    by the SQL recount after the run and, if that recount were skipped, on the written file."""
    from ppdp_gui.engine.bigdata.output import SqlRecords
    from ppdp_gui.engine.mechanisms.kanon import common
    _memory, large = both(tables, "parquet")
    monkeypatch.setattr(common, "large_person", lambda data: None)
    with pytest.raises(CheckError, match="fewer than k = 6 persons|fewer than 6 persons"):
        publish(large, "Mondrian", {"k": 6})
    monkeypatch.setattr(SqlRecords, "recount", lambda self, claims: [])
    published = publish(large, "Mondrian", {"k": 6})
    out = tmp_path / "bad.parquet"
    with pytest.raises(CheckError, match="persons"):
        export(published, out)
    assert not out.exists()


def test_a_file_out_of_line_with_its_persons_is_caught(tables, tmp_path, monkeypatch):
    """The written file's rows are given their persons by position: a file written in another order than the
    recount reads fails every per-person claim instead of being recounted with the wrong persons."""
    from ppdp_gui.engine.bigdata.output import SqlRecords
    _memory, large = both(tables, "csv")
    published = publish(large, "Global recoding", {"k": 4, "suppression": 4.0})
    real = SqlRecords.select

    def shuffled(self, neutral=False, ordered=False):
        return f"{real(self, neutral)} ORDER BY random()" if ordered else real(self, neutral)
    monkeypatch.setattr(SqlRecords, "select", shuffled)
    out = tmp_path / "shuffled.csv"
    with pytest.raises(CheckError, match="could not be lined up"):
        export(published, out)
    assert not out.exists()


@pytest.mark.parametrize("c", [1, 2])
def test_diffgen_keeps_the_same_rows_per_person(tables, c):
    """At most c rows per patient, drawn as in memory (one uniform per row from the noise source, the smallest c
    per patient): the same seed gives the same release, ε/c per row."""
    memory, large = both(tables, "parquet", numeric_age=True)
    params = {"epsilon": 1.0, "h": 6, "max_rows_per_person": c}
    m, g = publish(memory, "DiffGen", params), publish(large, "DiffGen", params)
    pd.testing.assert_frame_equal(m.table, g.table)
    assert m.output_hash == g.output_hash
    assert m.release.note == g.release.note
    assert g.release.note["epsilon per row"] == ("1" if c == 1 else "1/2")
    assert "per person" in g.release.note and "patient_nbr" in g.release.note["unit of privacy"]
    kept = g.release.record["rows used"]
    assert kept == m.release.record["rows used"] < 1500
    assert g.release.record["rows left out by the bound per person"] == 1500 - kept


def test_persons_line_up_with_numbers_blanks_and_formulas(tmp_path):
    """The written file's rows line up with their persons whatever the columns hold — doubles, blanks, large
    integers, neutralised formulas — and whatever they are called (quasi-identifiers named like the recount's own
    columns: h, p)."""
    r = np.random.default_rng(1)
    n = 600
    frame = pd.DataFrame({"pid": r.integers(0, 200, n).astype(str), "m": r.choice(list("abc"), n),
                          "h": r.choice(list("xy"), n), "p": r.choice(list("uv"), n),
                          "w": np.where(r.random(n) < 0.1, "", np.round(r.normal(0, 1e6, n), 3).astype(str)),
                          "z": [f"=cmd{i % 7}" for i in range(n)], "big": r.integers(0, 10**12, n).astype(str),
                          "e": np.where(r.random(n) < 0.5, "1e25", "0.1")})
    frame.to_csv(tmp_path / "t.csv", index=False)
    roles = {"pid": "person", "m": "quasi-identifier", "h": "quasi-identifier", "p": "quasi-identifier",
             "w": "insensitive", "z": "insensitive", "big": "insensitive", "e": "insensitive"}
    data = open_large(tmp_path / "t.csv", hashes=False, roles=roles,
                      kinds={"w": "numeric", "e": "numeric", "big": "numeric"}).confirm_guesses()
    planned = plan(data, "Global recoding", {"k": 3, "suppression": 5.0}, publish_as_is=("w", "big"))
    published = list(run_release(planned, seed=1))[-1]
    for fmt in ("csv", "tsv", "parquet"):
        checks = export(published, tmp_path / f"o.{fmt}").checks
        assert all(c.ok for c in checks) and "persons (pid)" in checks[0].message, [c.message for c in checks]


@pytest.mark.parametrize("mechanism, params", [
    ("Global recoding", {"k": 5, "suppression": 10.0}),
    ("Global recoding", {"k": 3, "l": 2, "diversity": "entropy", "suppression": 10.0}),
    ("Global recoding", {"k": 3, "t": 0.5, "distance": "equal", "suppression": 10.0}),
    ("Mondrian", {"k": 5}),
])
def test_patients_who_keep_their_values_as_in_memory(tmp_path, mechanism, params):
    """Patients whose visits share their quasi-identifiers (tests/engine/test_person_kanon.py's hospital): their
    tuples are counted rather than listed on the large-table engine, with the same levels / classes, claims,
    figures and rows."""
    from tests.engine.test_person_kanon import dataset, hospital
    frame = hospital(n_patients=400)
    frame["zip"] = frame["zip"].str[:4] + "0"  # few values: many patients share each tuple (counted, not listed)
    frame["age"] = frame["age"] // 10 * 10 + 5
    memory = dataset(frame)
    frame.to_parquet(tmp_path / "h.parquet", index=False)
    roles = {c.name: c.role.value for c in memory.schema}
    large = open_large(tmp_path / "h.parquet", hashes=False, roles=roles, kinds={"age": "numeric", "zip": "categorical"})
    for spec in memory.schema:
        if spec.taxonomy is not None:
            large = large.with_column(spec.name, taxonomy=spec.taxonomy)
    m, g = publish(memory, mechanism, params), publish(large.confirm_guesses(), mechanism, params)
    assert g.release.records is not None and g.release.note == m.release.note
    assert [(c.claim, c.ok) for c in g.checks] == [(c.claim, c.ok) for c in m.checks]
    for mine, theirs in zip(g.checks, m.checks):
        assert dict(mine.figures) == pytest.approx(dict(theirs.figures)), mine.claim
    assert g.figures == pytest.approx(m.figures)
    same_rows(m, g, tmp_path, "parquet")


@pytest.mark.parametrize("mechanism, params", [("Global recoding", {"k": 4, "suppression": 5.0}),
                                               ("Mondrian", {"k": 4})])
def test_a_file_of_repeated_rows_counted_once_as_in_memory(tmp_path, mechanism, params):
    """Each patient's visit repeated three times (a file the engine reads as its distinct rows with their counts,
    `TableSource.weighted`): persons are counted from those rows as from every row, as in memory."""
    from tests.engine.test_person_kanon import dataset, hospital
    frame = hospital(n_patients=300)
    frame = pd.concat([frame] * 3, ignore_index=True).sample(frac=1.0, random_state=2).reset_index(drop=True)
    memory = dataset(frame)
    frame.to_parquet(tmp_path / "h.parquet", index=False)
    roles = {c.name: c.role.value for c in memory.schema}
    large = open_large(tmp_path / "h.parquet", hashes=False, roles=roles, kinds={"age": "numeric", "zip": "categorical"})
    assert large.table.weighted("src")[1] is not None  # the distinct rows are what the passes read
    for spec in memory.schema:
        if spec.taxonomy is not None:
            large = large.with_column(spec.name, taxonomy=spec.taxonomy)
    m, g = publish(memory, mechanism, params), publish(large.confirm_guesses(), mechanism, params)
    assert g.release.note == m.release.note
    assert [(c.claim, c.ok) for c in g.checks] == [(c.claim, c.ok) for c in m.checks]
    assert g.figures == pytest.approx(m.figures)
    same_rows(m, g, tmp_path, "csv")
