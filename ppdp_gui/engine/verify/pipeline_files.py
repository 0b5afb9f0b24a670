"""The pipeline audit's neighbouring *files*: CSV texts a custodian could hold, and the recipe that releases them.

The statistical audit (scenarios.py) hands each mechanism a table in memory; these pairs go through everything a
custodian's file goes through (pipeline_audit.py): the reader's typing, missing values and role rules, the
recipe, the plan, the ledger, the release, the export. Each pair differs in what a pipeline bug would read from
the data:

- one row added, removed or replaced (the plain neighbours);
- a row with a blank in a released column, and one with a blank in a column the release does not publish (a
  policy that drops rows makes the row count depend on one record);
- a row that would flip a value-based guess: `ref_code` (a code: its name is id-like, so it is guessed an
  identifier once half its values are distinct, `roles.ID_LIKE_SHARE`) holds 10 codes in 21 rows, and the new
  row's new code makes it 11 in 21; `lab` holds 10 distinct numbers, and the new row's makes 11, which turns its
  guessed kind from categorical into numeric (`coltypes.NUMERIC_MIN_DISTINCT`). Once with every role and kind
  stated (the path must follow what the custodian said), once with those two left to the guesses;
- a person with several rows, the person column stated (`Role.PERSON`): the person's 60 rows removed (or, for a
  replace-one mechanism, replaced). Its ε is small (0.1) so that a few dozen runs can show a release that counts
  all 60 rows (loss up to 60 · 0.1 = 6) against what a person may lose (0.1).

The recipe states every role, kind and public domain, as a careful custodian would, so the audit audits the path
and not a refusal to guess; only the "guesses" scenario leaves two columns to the reader's rules.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ppdp_gui.engine.data.domains import Domain
from ppdp_gui.engine.data.schema import Role

Relation = Literal["add", "remove", "replace", "person removed", "person replaced"]

COLUMNS = ("mrn", "insurer", "ward", "age", "ref_code", "lab", "outcome")
WARDS = ("A", "B", "C", "D")
CODES = tuple(f"C{i:02d}" for i in range(24))
OUTCOMES = ("no", "yes")

ROLES = {"mrn": Role.IDENTIFIER, "insurer": Role.INSENSITIVE, "ward": Role.QUASI_IDENTIFIER,
         "age": Role.QUASI_IDENTIFIER, "ref_code": Role.INSENSITIVE, "lab": Role.INSENSITIVE,
         "outcome": Role.CLASS, "patient_nbr": Role.PERSON}
KINDS = {"mrn": "categorical", "insurer": "categorical", "ward": "categorical", "age": "numeric",
         "ref_code": "categorical", "lab": "numeric", "outcome": "categorical", "patient_nbr": "categorical"}
DOMAINS = {"insurer": Domain(categories=("public", "private")), "ward": Domain(categories=WARDS),
           "age": Domain(low=0, high=100, integer=True), "ref_code": Domain(categories=CODES),
           "lab": Domain(low=0, high=100, integer=True), "outcome": Domain(categories=OUTCOMES)}
GUESSED = ("ref_code", "lab")  # left to the reader's rules in the "guesses" scenario


def _row(i: int) -> dict[str, Any]:
    """Row i of the base table: 21 rows, 10 codes (C00 … C09, each twice, C00 three times), 10 lab values."""
    return {"mrn": f"M{1000 + i}", "insurer": ("public", "private")[i % 2], "ward": WARDS[i % 3],
            "age": 20 + (i * 7) % 60, "ref_code": CODES[i % 10], "lab": 10 + (i % 10),
            "outcome": OUTCOMES[(i // 2) % 2]}


BASE = tuple(_row(i) for i in range(21))
#: the record that moves: a public ward no other row is in, an age at the top of the public range, a new code, an
#: 11th lab value (above its public bounds 0–100: a mechanism clamps it and tells the custodian), the rarer outcome
NEW = {"mrn": "M9999", "insurer": "private", "ward": "D", "age": 100, "ref_code": CODES[20], "lab": 150,
       "outcome": "yes"}


def csv_text(rows, columns=COLUMNS) -> str:
    """The rows as a CSV file's text (a blank is an empty cell)."""
    lines = [",".join(columns)]
    for r in rows:
        lines.append(",".join("" if r.get(c) is None else str(r[c]) for c in columns))
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class FilePair:
    """One audit: two files that differ in one record (or one person), and how the recipe reads them."""

    name: str
    words: str  # what differs, for the report
    first: str  # CSV text of D
    second: str  # CSV text of D'
    relation: Relation
    finding: str = ""  # the leak this pair is built to show (issue 25's numbering), for the report
    stated: tuple[str, ...] = ()  # columns whose role and kind the recipe states (default: all of the file's)
    person: bool = False  # the file has a person column
    epsilon: float | None = None  # overrides the mechanism's ε (the person audit)
    runs: dict[str, int] = field(default_factory=lambda: {"smoke": 6, "quick": 6, "full": 200})

    def runs_for(self, size: str) -> int:
        return self.runs[size]


def _replace(rows, index: int, record: dict) -> list[dict]:
    out = list(rows)
    out[index] = record
    return out


def add_remove_pairs() -> list[FilePair]:
    """The pairs only a mechanism whose note promises one record added or removed is audited on."""
    base = list(BASE)
    return [
        FilePair("row added", "one row added: ward D, age 100, a new code, lab 150 (above its public bounds)",
                 csv_text(base), csv_text(base + [NEW]), "add"),
        FilePair("row removed", "the first row removed", csv_text(base), csv_text(base[1:]), "remove"),
    ]


def replace_pairs() -> list[FilePair]:
    """The pairs every mechanism is audited on: one row replaced (a replace-one note's own relation; twice the
    ε of an add/remove note)."""
    base = list(BASE)
    blank_released = {**NEW, "age": None}
    blank_unreleased = {**BASE[0], "insurer": None}
    return [
        FilePair("row replaced", "the first row replaced by ward D, age 100, a new code, lab 150 (above its public "
                 "bounds)",
                 csv_text(base), csv_text(_replace(base, 0, NEW)), "replace"),
        FilePair("blank in a released column", "the first row replaced by one whose age is blank",
                 csv_text(base), csv_text(_replace(base, 0, blank_released)), "replace",
                 "2: a row dropped for a blank changes the row count"),
        FilePair("blank in an unreleased column", "the first row replaced by the same row with its insurer (a "
                 "column no mechanism here publishes) blank", csv_text(base),
                 csv_text(_replace(base, 0, blank_unreleased)), "replace",
                 "2: a row dropped for a blank in a column never released"),
        FilePair("guesses flipped, roles stated", "the first row replaced by one with a new code (ref_code: 11 "
                 "codes in 21 rows, the identifier guess) and an 11th lab value (the numeric guess); the recipe "
                 "states every role and kind", csv_text(base), csv_text(_replace(base, 0, NEW)), "replace",
                 "1: a value-based guess deciding a released column"),
        FilePair("guesses flipped, roles guessed", "the same files, with the roles and kinds of ref_code and lab "
                 "left to the reader's rules", csv_text(base), csv_text(_replace(base, 0, NEW)), "replace",
                 "1: a value-based role or kind guess shaping a DP release",
                 stated=tuple(c for c in COLUMNS if c not in GUESSED)),
    ]


PERSON_COLUMNS = ("patient_nbr",) + COLUMNS
PERSON_ROWS = 60


def person_pair(replace: bool) -> FilePair:
    """Twelve patients: P00 with 60 rows (ward A, age 30), the others one or two rows each. D' removes P00's rows
    (add/remove) or moves all of them to ward D, age 100 (replace-one)."""
    rows = [{**_row(i), "patient_nbr": f"P{1 + i % 11:02d}"} for i in range(21)]
    heavy = [{**_row(j), "mrn": f"M{5000 + j}", "ward": "A", "age": 30, "ref_code": CODES[0], "lab": 10,
              "outcome": "no", "patient_nbr": "P00"} for j in range(PERSON_ROWS)]
    moved = [{**r, "ward": "D", "age": 100, "outcome": "yes"} for r in heavy]
    second = rows + moved if replace else rows
    words = (f"one patient (P00, {PERSON_ROWS} rows) " + ("replaced: every one of their rows moved to ward D, age "
                                                         "100" if replace else "removed with all their rows"))
    return FilePair("a person with several rows", words, csv_text(rows + heavy, PERSON_COLUMNS),
                    csv_text(second, PERSON_COLUMNS), "person replaced" if replace else "person removed",
                    "3: the unit is the row, not the person (patient_nbr is the person column)", person=True,
                    epsilon=0.1, runs={"smoke": 6, "quick": 60, "full": 300})


def pairs_for(replace_one: bool) -> list[FilePair]:
    """Every audit of a mechanism whose note promises one record replaced (`replace_one`) or added/removed."""
    plain = [] if replace_one else add_remove_pairs()
    return plain + replace_pairs() + [person_pair(replace_one)]


#: per DP mechanism, the parameters its pipeline audit releases with (the columns it publishes are named, so that
#: `insurer` is never among them); anything not listed runs with its defaults
PARAMS: dict[str, dict[str, Any]] = {
    "Laplace histogram": {"epsilon": 1.0, "columns": "ward,age", "bins": 5},
    "DiffGen": {"epsilon": 1.0, "h": 2},
    "DP-PCA": {"epsilon": 1.0, "k": 1, "columns": "ward,age,ref_code,lab,outcome"},
    "DP-LDA": {"epsilon": 1.0, "columns": "ward,age,ref_code,lab"},
    "Laplace on records": {"epsilon": 1.0, "columns": "ward,age,ref_code,lab,outcome"},
    "Exponential on records": {"epsilon": 1.0, "columns": "ward,age,ref_code,lab,outcome"},
}


def recipe_parts(pair: FilePair, mechanism: str) -> dict[str, Any]:
    """Roles, kinds, domains and parameters of the recipe that releases `pair`'s files with `mechanism`."""
    columns = PERSON_COLUMNS if pair.person else COLUMNS
    stated = [c for c in columns if not pair.stated or c in pair.stated]
    params = dict(PARAMS.get(mechanism, {"epsilon": 1.0}))
    if pair.epsilon is not None:
        params["epsilon"] = pair.epsilon
    return {"roles": {c: ROLES[c] for c in stated}, "kinds": {c: KINDS[c] for c in stated},
            "domains": {c: d for c, d in DOMAINS.items() if c in columns}, "params": params}
