"""Audit tables of the component-analysis mechanisms (seed 003): DP-PCA, DP-LDA and the paper's two record
baselines (Laplace on records, Exponential on records).

DP-PCA and the record baselines publish one row per record, in order, so their guarantee is for one record
*replaced by another* (the number of records is public); DP-LDA's is for one record added or removed. The
allowance is read from the note's own statement of its neighbouring (`details/neighbouring`), not assumed: a
mechanism whose note promises add/remove is held to 2ε on a replaced record (one removed, one added), one that
promises replace-one to ε — so a note that claimed the wrong neighbouring could not pass with a looser allowance.

Each pair moves what a buggy mechanism of this family would leak: a value at the far end of its public bounds
(moves any bound read from the data and the largest possible share of the covariance and of the record's own
row), a category the table does not hold (moves a category list read from the data), and, for DP-LDA, a record of
the rarer class (moves the noisy class counts the note publishes and the number of synthetic records).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from ppdp_gui.engine.claims import Neighbouring
from ppdp_gui.engine.data.domains import Domain
from ppdp_gui.engine.data.schema import ColumnSpec, Role
from ppdp_gui.engine.verify.neighbours import add_record, change_record, domain_extreme, remove_record
from ppdp_gui.engine.verify.scenarios import Scenario, _cat, _table, whole

def per_replacement(note: dict[str, Any], eps: Fraction, distance: int) -> tuple[float, str]:
    """ε for one record replaced when the note promises replace-one; 2ε when it promises add/remove or says nothing
    (the note's typed relation, `neighbouring relation`: a Neighbouring value, not words)."""
    stated = note.get("note/details/neighbouring relation")
    if stated is not None and Neighbouring(stated) is Neighbouring.REPLACE_ONE:
        return float(eps), f"the claimed ε = {float(eps):g}: the note promises it for one record replaced"
    return float(2 * eps), (f"2ε = {float(2 * eps):g}: the note promises ε per record added or removed, and a "
                            "replaced record is one removed and one added")


AGE = ColumnSpec("age", "numeric", Role.QUASI_IDENTIFIER, domain=Domain(low=0, high=100, integer=True))
WARDS = ("A", "B", "C", "D")


def one_to_one_scenarios(extra: dict[str, Any]) -> list[Scenario]:
    """Replace-one pairs for a mechanism that publishes one row per record. One record and one column per
    table: the verifier's features (per released category, the rows and the sum of the numbers) then see the
    moved record's own row, not drowned in the noise of the others' rows (a release is one-to-one, so a bug in
    the noise of one row is a bug in every row)."""
    ages = _table({"age": [0]}, [AGE])
    wards = _table({"ward": ["A"]}, [_cat("ward", WARDS)])
    far = change_record(ages, 0, {"age": 100}, "one patient's age replaced: 0 → 100, across the whole public "
                                              "range 0–100")
    unseen = change_record(wards, 0, {"ward": "D"}, "one patient's ward replaced: A → D, a public ward the table "
                                                    "does not hold")
    return [
        Scenario("age replaced by the far end", "a patient whose age moves across the whole public range: moves "
                 "any bound read from the data, the covariance and the patient's own row", ages, far,
                 {"epsilon": 1.0, **extra}, {"smoke": 30, "quick": 1000, "full": 8000}, allowed=per_replacement),
        Scenario("ward replaced by an unseen ward", "a patient moved to a ward no other patient is in: moves any "
                 "category list read from the data", wards, unseen,
                 {"epsilon": 1.0, **extra}, {"smoke": 30, "quick": 1000, "full": 8000}, allowed=per_replacement),
    ]


def dp_pca_scenarios() -> list[Scenario]:
    return one_to_one_scenarios({"k": 1})


def record_baseline_scenarios() -> list[Scenario]:
    return one_to_one_scenarios({})


OUTCOME = ColumnSpec("outcome", "categorical", Role.CLASS, domain=Domain(categories=("no", "yes")))


def dp_lda_scenarios() -> list[Scenario]:
    outcome = ["no", "no", "yes", "no", "yes", "no"]
    t = _table({"age": [20, 31, 38, 44, 52, 35], "outcome": outcome}, [AGE, OUTCOME])
    w = _table({"ward": ["A", "A", "B", "B", "C", "A"], "outcome": outcome}, [_cat("ward", WARDS), OUTCOME])
    extreme = {**domain_extreme(t, "age"), "outcome": "yes"}
    return [
        Scenario("extreme patient added", "a patient aged 100 of the rarer class: moves the class counts in the "
                 "note, the number of synthetic records, the class sums and the covariance", t,
                 add_record(t, extreme, "one patient (age 100, outcome yes) added"),
                 {"epsilon": 1.0}, {"smoke": 30, "quick": 400, "full": 4000}),
        Scenario("one patient removed", "the first patient (ward A, outcome no) is left out", w,
                 remove_record(w, 0, "one patient (ward A, outcome no) removed"),
                 {"epsilon": 1.0}, {"smoke": 30, "quick": 400, "full": 4000}),
        Scenario("ward replaced by an unseen ward", "a patient moved to a ward no other patient is in: moves any "
                 "category list read from the data (a changed record may lose 2ε)", w,
                 change_record(w, 0, {"ward": "D"}, "one patient's ward changed from A to D"),
                 {"epsilon": 1.0}, {"smoke": 30, "quick": 300, "full": 3000}, allowed=whole),
    ]
