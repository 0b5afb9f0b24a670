"""Issue 29, Deliver 3: "an identifier is never released" is enforced by the publish path, not only by each
mechanism. A planted mechanism that forgets to drop an identifier (or the person column, or renames the person
column) makes the export refuse, for the main table and for extra tables; nothing is written."""

import numpy as np
import pandas as pd
import pytest

from ppdp_gui.engine.claims import KAnonymity
from ppdp_gui.engine.data.schema import ColumnSpec, Dataset, Role, SourceInfo
from ppdp_gui.engine.errors import CheckError
from ppdp_gui.engine.mechanisms.base import Mechanism, ParamSpec, PrivacyCost, Progress, Release
from ppdp_gui.engine.pipeline import export, plan, run_release


def ward(n=40) -> Dataset:
    """A hospital-shaped table: a record number (identifier), a patient (person, two rows each), age, sex, ward."""
    r = np.random.default_rng(1)
    frame = pd.DataFrame({"mrn": [f"M{i:05d}" for i in range(n)], "patient": [f"P{i // 2:04d}" for i in range(n)],
                          "age": ["30-39", "40-49"] * (n // 2), "sex": ["F"] * n,
                          "ward": r.choice(["A", "B"], n)})
    schema = (ColumnSpec("mrn", "categorical", Role.IDENTIFIER), ColumnSpec("patient", "categorical", Role.PERSON),
              ColumnSpec("age", "categorical", Role.QUASI_IDENTIFIER),
              ColumnSpec("sex", "categorical", Role.QUASI_IDENTIFIER),
              ColumnSpec("ward", "categorical", Role.INSENSITIVE))
    return Dataset(frame, schema, SourceInfo(path="/tmp/ward.csv", sha256="cd" * 32, n_rows_read=n))


class Leaky(Mechanism):
    """A planted bug: releases the columns it is told to, identifiers included, with a k = 1 claim in persons."""

    name = "Leaky"
    guarantee = "k-anonymity"
    params = (ParamSpec("keep", "Columns kept", "columns", ("age", "sex")),
              ParamSpec("extra", "Columns of a second table", "columns", ()),
              ParamSpec("rename", "Rename the person column to", "choice", "", choices=("", "visit_group")))

    def cost(self, params):
        return PrivacyCost(epsilon=None)

    def _run(self, data, *, rng, keep, extra, rename):
        yield Progress(0.5, "leaking")
        table = data.frame[list(keep)].reset_index(drop=True)
        if rename:
            table = table.rename(columns={"patient": rename})
        claims = [KAnonymity(1, ("age",), person="patient")]
        extras, rows = {}, {"table": np.arange(len(table))}
        if extra:
            extras["fragment 2"] = data.frame[list(extra)].reset_index(drop=True)
            rows["fragment 2"] = np.arange(len(table))
        yield Release(self.name, table, self.privacy_cost(), {"keep": keep}, claims=tuple(claims),
                      extra_tables=extras, source_rows=rows)


def published(**params):
    items = list(run_release(plan(ward(), Leaky(), params)))
    return items[-1]


def test_a_clean_release_is_exported(tmp_path):
    out = export(published(keep="age,sex,ward"), tmp_path / "ok.csv")
    assert out.files == [tmp_path / "ok.csv"]


@pytest.mark.parametrize("keep", ["age,mrn", "age,patient", "age,ward,Mrn"])
def test_an_identifier_or_the_person_column_in_the_main_table_is_refused(tmp_path, keep):
    data = ward()
    if keep.endswith("Mrn"):  # the same column under another spelling of its name
        data.frame["Mrn"] = data.frame["mrn"]
    items = list(run_release(plan(data, Leaky(), {"keep": keep})))
    with pytest.raises(CheckError, match="never released"):
        export(items[-1], tmp_path / "out.csv")
    assert list(tmp_path.iterdir()) == []  # nothing written, no temporary file left


def test_an_identifier_in_an_extra_table_is_refused(tmp_path):
    with pytest.raises(CheckError, match="fragment 2: column 'mrn'"):
        export(published(keep="age,sex", extra="ward,mrn"), tmp_path / "out.csv")
    assert list(tmp_path.iterdir()) == []


def test_the_person_column_under_another_name_is_refused_by_its_values(tmp_path):
    with pytest.raises(CheckError, match="holds the person ids under another name"):
        export(published(keep="age,patient", rename="visit_group"), tmp_path / "out.csv")
    assert list(tmp_path.iterdir()) == []


def test_a_declared_keyed_pseudonym_is_the_one_column_allowed_to_follow_the_persons():
    """governance/pseudonyms.py adds `<id>_pseudonym` on purpose (one value per patient) and states it in the
    note; the same values under an undeclared name are still the person column renamed."""
    import numpy as np
    import pandas as pd
    from ppdp_gui.engine.checks.never_released import released_private_columns
    ids = np.repeat(np.arange(20), 3)
    table = pd.DataFrame({"patient_nbr_pseudonym": [f"p{i}" for i in ids], "copy": [f"p{i}" for i in ids]})
    found = released_private_columns({"table": table}, [], {"table": ids}, pseudonyms=["patient_nbr_pseudonym"])
    assert len(found) == 1 and "'copy'" in found[0]
