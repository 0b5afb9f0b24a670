"""Public domains from public code systems (issue 26, finding 7): `--domain diag_1=icd9` states the ICD-9-CM
category list shipped with ppdp, `--build-taxonomy diag_1=icd9:categories` the matching public tree, and DiffGen
plans an ε-DP release on a diagnosis column without reading its list from the table; a domain error names the
table's values as the list must spell them."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ppdp_gui.cli import build_parser, load_dataset, parse_domain
from ppdp_gui.engine.data.domains import code_system_domain, spelled_outside
from ppdp_gui.engine.errors import DataError
from ppdp_gui.engine.pipeline import plan


def test_icd_domains_are_the_shipped_category_lists():
    icd9, icd10 = parse_domain("diag_1", "icd9"), parse_domain("diag_1", "ICD-10")
    assert icd9.is_public and icd10.is_public
    assert {"001", "250", "428", "V45", "E909"} <= set(icd9.categories) and len(icd9.categories) > 1000
    assert {"A00", "E11", "Z99"} <= set(icd10.categories)
    with pytest.raises(DataError, match="icd9, icd10"):
        code_system_domain("snomed")


def test_diffgen_on_a_diagnosis_column_with_the_public_icd_list(tmp_path):
    rng = np.random.default_rng(4)
    n = 600
    frame = pd.DataFrame({"diag_1": rng.choice(["250.83", "250.01", "428", "414", "V45.81", "786.5", "410"], n),
                          "gender": rng.choice(["Female", "Male"], n),
                          "readmitted": rng.choice(["NO", "YES"], n)})
    path = tmp_path / "diag.csv"
    frame.to_csv(path, index=False)
    argv = ["run", "DiffGen", "-i", str(path), "-o", str(tmp_path / "out.csv"),
            "--role", "diag_1=qi", "--role", "gender=qi", "--role", "readmitted=class",
            "--build-taxonomy", "diag_1=icd9:categories", "--build-taxonomy", "gender=flat",
            "--domain", "diag_1=icd9", "--domain", "gender=Female,Male", "--domain", "readmitted=NO,YES",
            "--param", "h=2"]
    _recipe, loaded = load_dataset(build_parser().parse_args(argv))
    data = loaded.dataset.confirm_guesses()  # as --confirm-roles: the kinds shown are the custodian's
    assert data.spec("diag_1").taxonomy.origin == "public"
    # full codes are written at the level of the public list (a public rule), and the custodian is told
    assert sorted(data.frame["diag_1"].unique()) == ["250", "410", "414", "428", "786", "V45"]
    assert any("3-character category" in n for n in loaded.notes)
    planned = plan(data, "DiffGen", {"h": 2, "class_column": "readmitted"})
    assert not planned.errors, [p.message for p in planned.errors]
    assert all(n.status == "public" for n in planned.needs), planned.needs
    assert not planned.caveats
    from ppdp_gui.engine.pipeline import run_release
    from ppdp_gui.engine.privacy.ledger import Ledger
    ledger = Ledger(tmp_path / "ledger.sqlite")
    planned = plan(data, "DiffGen", {"h": 2, "class_column": "readmitted"}, ledger=ledger)
    published = list(run_release(planned, ledger=ledger, seed=3))[-1]
    assert published.holds and published.cost.is_dp  # a truly ε-DP release on a diagnosis column
    released = set(published.table["diag_1"].astype(str))
    assert not any("." in v for v in released)  # never a full code


def test_domain_errors_show_the_spelling_expected():
    text = spelled_outside(["1.0", "(missing)", "female"], ["1", "2", "Female"])
    assert "'1.0' (the list has '1')" in text and "'(missing)'" in text and "'female' (the list has 'Female')" in text
    from ppdp_gui.engine.data.domains import Domain
    from ppdp_gui.engine.data.schema import ColumnSpec, Dataset, Role
    frame = pd.DataFrame({"sex": ["1.0", "2.0", "1.0"] * 20})
    ds = Dataset(frame, (ColumnSpec("sex", "categorical", Role.QUASI_IDENTIFIER,
                                    domain=Domain(categories=("1", "2"))),))
    planned = plan(ds, "Laplace histogram", {"epsilon": 1, "columns": ["sex"]})
    assert "'1.0' (the list has '1')" in " ".join(p.message for p in planned.errors)


def test_full_icd10_codes_against_the_icd_list_say_which_builder_to_press():
    """The nurse's walk: an emergency extract of full ICD-10 codes ('J18.9'), "Use the ICD-10 list" pressed in the
    domain dialog. DiffGen refused with "has values that are not in its taxonomy; add them to it" — wrong advice
    (the list is the public classification) and no value named. It now names the codes and the builder to use."""
    from ppdp_gui.engine.data.schema import ColumnSpec, Dataset, Role, SourceInfo
    rng = np.random.default_rng(4)
    n = 300
    frame = pd.DataFrame({"diagnosis": rng.choice(["J18.9", "I10", "S52.50"], n),
                          "disposition": rng.choice(["admitted", "discharged"], n)})
    from ppdp_gui.engine.data.domains import Domain
    specs = (ColumnSpec("diagnosis", "categorical", Role.QUASI_IDENTIFIER, domain=code_system_domain("icd10")),
             ColumnSpec("disposition", "categorical", Role.CLASS,
                        domain=Domain(categories=("admitted", "discharged"))))
    data = Dataset(frame, specs, SourceInfo(n_rows_read=n))
    planned = plan(data, "DiffGen", {"h": 2})
    text = " ".join(p.message for p in planned.errors)
    assert "J18.9" in text and "'ICD-10 diagnoses' with leaves 'categories'" in text and "Taxonomies step" in text
    assert "add them to it" not in text
    # the fix is the builder, not the list: the window offers no "Set the domain of diagnosis…" for it
    assert all(p.column is None for p in planned.errors if "J18.9" in p.message)
