"""What leaves the machine is only what the guarantee covers (release-integrity findings 2, 3, 4, 5, 8 and the
typed claims): warnings and exact figures stay in the custodian record, domains read from the data are refused
or labelled, and every claim is recounted on the bytes actually written."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ppdp_gui.engine.claims import DifferentialPrivacy, KAnonymity, LDiversity, PublicSchema
from ppdp_gui.engine.data.domains import Domain
from ppdp_gui.engine.data.reader import read_table
from ppdp_gui.engine.data.schema import ColumnSpec, Dataset, NAPolicy, Role, SourceInfo
from ppdp_gui.engine.errors import CheckError, ParameterError
from ppdp_gui.engine.noise import NoiseSource
from ppdp_gui.engine.pipeline import export, plan, run_release
from ppdp_gui.engine.pipeline.published import release_note
from ppdp_gui.engine.privacy.ledger import Ledger
from ppdp_gui.engine.taxonomy import Taxonomy

NOTE_KEYS = {"document", "note_version", "release_id", "created", "software", "mechanism", "guarantee",
             "privacy cost", "parameters", "output sha256", "files", "details", "checked on the written file",
             "what this means", "seeded for a test", "missing values"}


def patients(n=400, seed=0, path="/secret/ward7/patients.csv") -> Dataset:
    r = np.random.default_rng(seed)
    frame = pd.DataFrame({"age": r.integers(0, 100, n), "sex": r.choice(["F", "M"], n),
                          "outcome": r.choice(["home", "readmitted"], n, p=[0.8, 0.2])})
    schema = (ColumnSpec("age", "numeric", Role.QUASI_IDENTIFIER), ColumnSpec("sex", "categorical", Role.QUASI_IDENTIFIER),
              ColumnSpec("outcome", "categorical", Role.CLASS))
    return Dataset(frame, schema, SourceInfo(path=path, sha256="5e" * 32, n_rows_read=n + 17, n_rows_dropped=17))


def publish(data, mech, params, ledger=None, seed=1, **kw):
    planned = plan(data, mech, params, ledger=ledger, **kw)
    return list(run_release(planned, ledger=ledger, rng=NoiseSource.for_tests(seed)))[-1]


def written_note(published, tmp_path, **kw):
    ex = export(published, tmp_path / "out.csv", note_path=tmp_path / "note.json",
                record_path=tmp_path / "record.json", **kw)
    return ex, (tmp_path / "note.json").read_text(), json.loads((tmp_path / "record.json").read_text())


# ---- finding 2: warnings that count records stay local ------------------------------------------------------------
def test_warnings_that_count_records_never_reach_the_note(tmp_path):
    data = patients()
    published = publish(data, "Laplace histogram", {"columns": "age", "low": 20, "high": 60, "bin_width": 10,
                                                     "epsilon": 1})
    outside = int(((data.frame["age"] < 20) | (data.frame["age"] > 60)).sum())
    assert any(f"{outside} value(s)" in w for w in published.warnings)
    _ex, note, record = written_note(published, tmp_path)
    assert "lie outside" not in note and f"{outside} value" not in note
    assert any("lie outside" in w for w in record["warnings"])


# ---- finding 3: no exact counts, source path or hash, or figures against the truth in the note ------------------
def test_the_note_holds_only_public_facts_and_the_record_the_rest(tmp_path):
    data = patients()
    ledger = Ledger(tmp_path / "ledger.sqlite")
    params = {"columns": "sex", "epsilon": 1}
    data = data.with_column("sex", domain=Domain(categories=("F", "M")))
    published = publish(data, "Laplace histogram", params, ledger=ledger)
    assert "total error" in published.figures  # computed for the custodian …
    _ex, note, record = written_note(published, tmp_path, ledger=ledger)
    doc = json.loads(note)
    assert set(doc) <= NOTE_KEYS
    for private in ("/secret/ward7", "patients.csv", "5e" * 32, "417", "rows read", "total error",
                    "mean abs error", "fingerprint", str(ledger.path)):
        assert private not in note, private  # … and never shown to the public
    assert record["source"]["path"] == "/secret/ward7/patients.csv" and record["source"]["rows read"] == 417
    assert record["source"]["rows used"] == 400 and "total error" in record["figures (against the true data)"]
    assert record["dataset"]["fingerprint"] and record["ledger"]["entry"]["id"] == published.ledger_entry.id
    assert record["release note"]["release_id"] == doc["release_id"]
    # the record also sits in the ledger's folder, where it was written when the release was made
    kept = json.loads((tmp_path / "records" / f"{published.release_id}.json").read_text())
    assert kept["exports"] and kept["source"]["sha256"] == "5e" * 32


# ---- finding 4: a domain read from the data is refused, or labelled not ε-DP everywhere -------------------------
def test_dp_release_without_public_domains_is_refused_naming_each_column(tmp_path):
    data = patients()
    planned = plan(data, "DiffGen", {"epsilon": 1, "h": 4})
    named = {p.column for p in planned.errors}
    assert {"age", "sex", "outcome"} <= named, [p.message for p in planned.errors]
    domain_errors = [p for p in planned.errors if p.column]
    assert "not ε-differentially private" in domain_errors[0].message  # said once, in full (the nurse review) …
    assert all(p.message.startswith(f"{p.column} needs") for p in domain_errors)  # … and each column named
    with pytest.raises(ParameterError):
        list(run_release(planned))


def test_opting_into_data_domains_labels_the_release_not_dp_everywhere(tmp_path):
    ledger = Ledger(tmp_path / "ledger.sqlite")
    published = publish(patients(), "Laplace histogram", {"columns": "age,sex", "bin_width": 10, "epsilon": 1},
                        ledger=ledger, allow_data_domains=True)
    assert not published.holds and "NOT differentially private" in published.guarantee_line()
    assert set(published.caveats) == {"domain of age taken from the data", "domain of sex taken from the data"}
    _ex, note, record = written_note(published, tmp_path, ledger=ledger)
    doc = json.loads(note)
    assert doc["guarantee"]["holds"] is False and "domain of age taken from the data" in doc["guarantee"]["caveats"]
    assert "NOT" in doc["guarantee"]["statement"] and "NOT ε-differentially private" in " ".join(
        doc["what this means"]["does not mean"])
    assert record["caveats"] == doc["guarantee"]["caveats"]
    entry = ledger.entry(published.ledger_entry.id)
    assert entry.params.get("not ε-DP because") == sorted(published.caveats)


def test_public_domains_let_the_same_release_hold(tmp_path):
    data = (patients().with_column("age", domain=Domain(low=0, high=120, integer=True))
            .with_column("sex", domain=Domain(categories=("F", "M", "X")))
            .with_column("outcome", domain=Domain(categories=("home", "readmitted", "died"))))
    published = publish(data, "DiffGen", {"epsilon": 1, "h": 4})
    assert published.holds and published.dp.epsilon == 1
    assert set(published.table["sex"].astype(str)) <= {"F", "M", "X", "(missing)", "*"}
    assert "died" in published.release.note["classes"]  # a public class with no record still has a count


# ---- finding 5: a taxonomy built from the data is not a public domain --------------------------------------------
def test_a_taxonomy_built_from_the_data_counts_as_data():
    data = patients().with_column("age", domain=Domain(low=0, high=120, integer=True))
    data = data.with_column("outcome", domain=Domain(categories=("home", "readmitted")))
    flat = Taxonomy.flat("sex", data.frame["sex"].unique(), origin="data")
    planned = plan(data.with_column("sex", taxonomy=flat), "DiffGen", {"epsilon": 1, "h": 4})
    assert [p.column for p in planned.errors] == ["sex"]
    assert "built from the table's own values" in planned.errors[0].message
    # the custodian states the public values: the same tree is then fine
    stated = data.with_column("sex", taxonomy=flat, domain=Domain(categories=("F", "M")))
    assert plan(stated, "DiffGen", {"epsilon": 1, "h": 4}).errors == []
    # an imported (public) tree is fine as it is
    public = Taxonomy.flat("sex", ["F", "M"])
    assert plan(data.with_column("sex", taxonomy=public), "DiffGen", {"epsilon": 1, "h": 4}).errors == []


def test_interval_builders_from_the_data_are_marked_data():
    from ppdp_gui.engine.taxonomy.builders import masking, numeric_intervals
    assert numeric_intervals("age", pd.Series([3, 40, 77]), 10, low=0, high=120).origin == "data"
    assert masking("zip", pd.Series(["12345", "12399"])).origin == "data"
    assert Taxonomy.flat("x", ["a"]).origin == "public"


# ---- finding 8: injective neutralisation, and the recount runs on the bytes written --------------------------
def formula_table() -> Dataset:
    frame = pd.DataFrame({"zip": ["100"] * 4 + ["200"] * 4,
                          "diag": ["=flu", "'=flu", "=flu", "'=flu", "+cold", "'+cold", "@x", "'@x"]})
    schema = (ColumnSpec("zip", "categorical", Role.QUASI_IDENTIFIER, Taxonomy.flat("zip", ["100", "200"])),
              ColumnSpec("diag", "categorical", Role.SENSITIVE))
    return Dataset(frame, schema, SourceInfo(path="/tmp/f.csv"))


def test_neutralised_values_stay_distinct_in_the_file(tmp_path):
    published = publish(formula_table(), "Mondrian", {"k": 4, "l": 2, "sensitive": "diag"})
    assert any(isinstance(c, LDiversity) for c in published.claims)
    ex = export(published, tmp_path / "out.csv")
    assert ex.checks and all(c.ok for c in ex.checks)
    back = read_table(tmp_path / "out.csv", na_policy=NAPolicy(tokens=(), action="category"),
                      kinds={"zip": "categorical", "diag": "categorical"}).frame
    assert back.groupby("zip")["diag"].nunique().min() == 2  # 2-diverse in the file, not only in memory
    assert set(back["diag"]) == {"'=flu", "''=flu", "'+cold", "''+cold", "'@x", "''@x"}


def test_a_collision_in_the_written_file_is_caught_and_nothing_is_published(tmp_path, monkeypatch):
    """With the old, non-injective neutralisation the file would be 1-diverse while memory says 2-diverse."""
    from ppdp_gui.engine.data import writer
    published = publish(formula_table(), "Mondrian", {"k": 4, "l": 2, "sensitive": "diag"})

    def old(text):
        text = text[1:] if text.startswith("'") else text
        return "'" + text if text.startswith(writer.FORMULA_START) else text
    monkeypatch.setattr(writer, "neutral_text", old)
    with pytest.raises(CheckError, match="written file"):
        export(published, tmp_path / "out.csv")
    assert list(tmp_path.iterdir()) == []  # no table, no temporary file


def test_fullwidth_and_foreign_digit_formulas_are_neutralised():
    from ppdp_gui.engine.data.writer import neutral_text
    assert neutral_text("＝SUM(A1)") == "'＝SUM(A1)" and neutral_text("＋1") == "'＋1"
    assert neutral_text("+١٢٣") == "'+١٢٣" and neutral_text("-5") == "-5" and neutral_text("+3.5e2") == "+3.5e2"
    assert neutral_text("'quoted") == "''quoted" and neutral_text("plain") == "plain"


# ---- typed claims -----------------------------------------------------------------------------------------------
def test_claims_are_typed_and_checked_per_table():
    published = publish(patients().with_column("age", domain=Domain(low=0, high=120, integer=True))
                        .with_column("sex", domain=Domain(categories=("F", "M"))),
                        "Laplace histogram", {"columns": "age,sex", "bin_width": 20, "epsilon": 1,
                                              "output": "records"})
    kinds = [(type(c).__name__, getattr(c, "table", None)) for c in published.claims]
    assert ("DifferentialPrivacy", None) in kinds and ("PublicSchema", "table") in kinds
    assert ("PublicSchema", "noisy counts") in kinds
    assert all(c.ok for c in published.checks) and len(published.checks) == 2
    dp = [c for c in published.claims if isinstance(c, DifferentialPrivacy)][0]
    assert dp.holds and dp.epsilon == 1


def test_a_raw_value_slipping_into_a_dp_table_is_caught(tmp_path):
    from ppdp_gui.engine.checks.claims import check_claims
    claim = PublicSchema(("sex", "count"), {"sex": ("F", "M")}, ("count",))
    ok = pd.DataFrame({"sex": ["F", "M"], "count": [3, 0]})
    assert [c.ok for c in check_claims({"table": ok}, [claim])] == [True]
    leaked = pd.DataFrame({"sex": ["F", "Mrs Smith"], "count": [3, 1]})
    assert [c.ok for c in check_claims({"table": leaked}, [claim])] == [False]
    extra = ok.assign(age=[33, 41])
    assert [c.ok for c in check_claims({"table": extra}, [claim])] == [False]
    negative = ok.assign(count=[3, -1])
    assert [c.ok for c in check_claims({"table": negative}, [claim])] == [False]


def test_fragmentation_claims_one_k_per_fragment_table(shared_data):
    musk = pd.read_csv(shared_data / "musk" / "musk2.csv.gz").iloc[:600, 2:12].assign(
        cls=lambda f: np.where(np.arange(len(f)) % 3 == 0, "musk", "non-musk"))
    schema = tuple(ColumnSpec(c, "numeric", Role.QUASI_IDENTIFIER) for c in musk.columns[:-1]) + (
        ColumnSpec("cls", "categorical", Role.CLASS),)
    published = publish(Dataset(musk.reset_index(drop=True), schema), "Fragmentation", {"k": 10})
    tables = {c.table for c in published.claims if isinstance(c, KAnonymity)}
    assert tables == set(published.release.tables()) and len(tables) == 2


def test_release_note_is_stable_json():
    published = publish(patients().with_column("sex", domain=Domain(categories=("F", "M"))),
                        "Laplace histogram", {"columns": "sex", "epsilon": 1})
    doc = release_note(published)
    assert json.loads(json.dumps(doc)) == doc and doc["guarantee"]["holds"]
    assert Path("/secret/ward7/patients.csv").name not in json.dumps(doc)


def test_the_custodian_record_never_holds_the_keyed_row_hashes(tmp_path):
    """The ledger identity's keyed hashes (one per distinct row), cell sketches and person ids stay in memory: the
    custodian record lists the identity's shown fields only (found by the governance review)."""
    import dataclasses
    from ppdp_gui.engine.pipeline.published import _identity_fields
    from ppdp_gui.engine.privacy.ledger_types import DatasetIdentity
    import numpy as np
    ident = DatasetIdentity("f", "f", False, None, None, keyed=np.arange(5, dtype=np.uint64), n_rows=5)
    shown = _identity_fields(ident)
    assert "keyed" not in shown and "cells" not in shown and "persons" not in shown and shown["n_rows"] == 5
    assert set(shown) == {f.name for f in dataclasses.fields(DatasetIdentity) if f.repr}
