"""Audit tables of the Marginal synthesizer (engine/mechanisms/marginals).

The synthesizer publishes records drawn from noisy tables, and — with "Also publish the noisy tables" — the
tables themselves; the audits ask for them, so the verifier sees the noisy counts directly and not only through
the records drawn from them (drawing is post-processing: it can only hide a leak, never create one). Each pair
moves what a buggy synthesizer would leak: a patient who moves one count of every measured table (the noise
scale), a patient at the far end of a public numeric range (a bound or bin read from the data), a patient in a
ward nobody else is in (a category list read from the data), a patient who changes which pairs the private
tree selection prefers (the exponential mechanism's share), and a patient among 300 whose tables grow a fourth
column (widen.py: chosen from the noisy total, post-processing).
"""

from __future__ import annotations

from ppdp_gui.engine.data.domains import Domain
from ppdp_gui.engine.data.schema import ColumnSpec, Role
from ppdp_gui.engine.verify.neighbours import add_record, domain_extreme, remove_record
from ppdp_gui.engine.verify.scenarios import Scenario, _cat, _table

WARDS = ("A", "B", "C", "D")
OUTCOME = ("no", "yes")


def marginal_scenarios() -> list[Scenario]:
    outcome = _cat("outcome", OUTCOME, Role.CLASS)
    wards = _table({"ward": list("AAABBC"), "outcome": ["no", "yes", "no", "no", "yes", "no"]},
                   [_cat("ward", WARDS), outcome])
    three = _table({"ward": list("AABBCA"), "sex": list("FMFFMF"), "outcome": ["no", "yes", "no", "yes", "no", "no"]},
                   [_cat("ward", WARDS), _cat("sex", ("F", "M")), outcome])
    ages = _table({"age": [31, 38, 44, 52, 60], "outcome": ["no", "yes", "no", "yes", "no"]},
                  [ColumnSpec("age", "numeric", Role.QUASI_IDENTIFIER, domain=Domain(low=0, high=100, integer=True)),
                   outcome])
    four = _table({"a": list("xxyyxy"), "b": list("xxyyyx"), "c": list("xyxyxy"),
                   "outcome": ["no", "no", "yes", "yes", "no", "yes"]},
                  [_cat("a", ("x", "y")), _cat("b", ("x", "y")), _cat("c", ("x", "y")), outcome])
    a = ["xy"[i % 2] for i in range(300)]  # a chain a – b – c: c's table is (outcome, a, b, c)
    b = [v if i % 5 else "xy"[v == "x"] for i, v in enumerate(a)]
    c = [v if i % 4 != 1 else "xy"[v == "x"] for i, v in enumerate(b)]
    wide = _table({"a": a, "b": b, "c": c, "outcome": [OUTCOME[(x == "x") * (i % 3 > 0)] for i, x in enumerate(c)]},
                  [_cat("a", ("x", "y")), _cat("b", ("x", "y")), _cat("c", ("x", "y")), outcome])
    star = {"structure": "star around the class", "publish_tables": True}
    return [
        Scenario("one patient added", "one count of the one measured table moves by one", wards,
                 add_record(wards, {"ward": "C", "outcome": "yes"}, "one patient (ward C, yes) added"),
                 {"epsilon": 1.0, **star}, {"smoke": 40, "quick": 800, "full": 8000}),
        Scenario("one patient removed, three tables", "a patient counted in the three measured tables of a class "
                 "tree: each table's noise must carry a third of ε", three,
                 remove_record(three, 0, "one patient (ward A, F, no) removed"),
                 {"epsilon": 1.0, "publish_tables": True}, {"smoke": 40, "quick": 800, "full": 8000}),
        Scenario("extreme age added", "a patient at the top of the public age range: moves any bound or bin read "
                 "from the data", ages, add_record(ages, domain_extreme(ages, "age"), "one patient aged 100 added"),
                 {"epsilon": 1.0, "bins": 5, **star}, {"smoke": 40, "quick": 300, "full": 2000}),
        Scenario("unseen ward added", "a patient in a public ward no other patient is in: moves any category list "
                 "read from the data", wards,
                 add_record(wards, {"ward": "D", "outcome": "no"}, "one patient (ward D, no) added"),
                 {"epsilon": 1.0, **star}, {"smoke": 40, "quick": 300, "full": 2000}),
        Scenario("choice of the measured pairs", "a patient who makes a and b look more dependent: moves the "
                 "private choice of the tree and every table", four,
                 add_record(four, {"a": "x", "b": "x", "c": "y", "outcome": "no"}, "one patient (x, x, y, no) added"),
                 {"epsilon": 2.0, "publish_tables": True}, {"smoke": 40, "quick": 300, "full": 2000}),
        Scenario("four-column tables", "300 patients: a table grows a fourth column, chosen from the noisy "
                 "total of the pair tables; one patient more moves every table (and may move that choice)", wide,
                 add_record(wide, {"a": "x", "b": "x", "c": "y", "outcome": "yes"},
                            "one patient (x, x, y, yes) added"),
                 {"epsilon": 2.0, "publish_tables": True}, {"smoke": 40, "quick": 300, "full": 2000}),
    ]
