"""A release and what happened to it, in one shape: `Published` — and the two documents made from it.

The *release note* goes out with the file. It is built from an allow-list: the mechanism and its guarantee,
the resolved (public) parameters, the claims, the mechanism's `Release.note` (which holds only public domains
and what the noise produced), the release's own id, time and software version, the files with their hashes,
how missing values were treated (the custodian's policy, in words: "(missing)" is part of every stated list of
values; for a replace-one release n is the file's, public), and plain words on what the guarantee means and does
not mean. Nothing in it is computed from the records
except through the mechanism's noise: no row counts of the source, no source path or hash, no warnings, no
figures against the true data.

The *custodian record* stays on this computer (in the ledger's folder, and wherever the custodian asks): the
source path and hash, exact row counts, the dataset's ledger identity and budget, the ledger entry, the columns
with their roles and domains, every recount of every claim, the warnings, and the utility and risk figures.
"""

from __future__ import annotations

import dataclasses
import platform
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Mapping

import numpy as np
import pandas as pd

from ppdp_gui.engine.claims import (PER_PERSON, DifferentialPrivacy, Neighbouring, dp_claim, epsilon_text,
                                    guarantee_text)
from ppdp_gui.engine.data.schema import ColumnSpec, SourceInfo
from ppdp_gui.engine.mechanisms.base import PrivacyCost, Release
from ppdp_gui.engine.persistence.jsonable import jsonable

NOTE_VERSION = 1
RECORD_VERSION = 1


@dataclass(frozen=True)
class Published:
    """Everything about one release; the window, the CLI and the exporter all use this one shape."""

    release_id: str
    created: str
    mechanism: str
    guarantee: str  # the mechanism's label: "ε-DP", "k-anonymity", …
    summary: str
    release: Release
    claims: tuple
    params: Mapping[str, Any]
    cost: PrivacyCost
    output_hash: str
    source: SourceInfo
    columns: tuple[ColumnSpec, ...]
    checks: tuple = ()  # ClaimChecks on the tables in memory (the export recounts on the written bytes)
    caveats: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    figures: Mapping[str, float] = field(default_factory=dict)
    class_sizes: np.ndarray | None = None
    ledger_entry: Any = None
    identity: Any = None
    budget: Any = None  # the dataset's budget after this release
    ledger_path: str | None = None
    record_path: str | None = None
    seeded: bool = False
    #: per released table, the person id of each row (checks/persons.py), kept in memory only so the export can
    #: recount persons on the bytes written; empty without a person column
    person_ids: Mapping[str, np.ndarray] = field(default_factory=dict, compare=False, repr=False)
    #: raw values of each identifier the release replaced by a keyed pseudonym (governance/treatments.py), kept in
    #: memory only so the export can check that none of them is in the bytes written (checks/raw_values.py)
    raw_identifiers: Mapping[str, np.ndarray] = field(default_factory=dict, compare=False, repr=False)

    @property
    def person_column(self) -> str | None:
        """The source's person column (Role.PERSON), or None: one row is one unit."""
        return next((c.name for c in self.columns if c.role.value == "person"), None)

    @property
    def table(self) -> pd.DataFrame:
        return self.release.table

    @property
    def dp(self) -> DifferentialPrivacy | None:
        return dp_claim(self.claims)

    @property
    def holds(self) -> bool:
        """False when the DP claim has caveats (a domain read from the data)."""
        dp = self.dp
        return dp is None or dp.holds

    def guarantee_line(self) -> str:
        return guarantee_text(self.claims, fallback=self.guarantee)


# ---- plain words -----------------------------------------------------------------------------------------------
def meaning(published: Published) -> dict[str, list[str]]:
    """What the guarantee means and does not mean, in words for a reader of the file."""
    dp = published.dp
    if dp is not None and dp.holds:
        eps = epsilon_text(dp.epsilon)
        unit = dp.unit
        rows = (f"all the rows of any one {unit.noun} (up to {unit.max_rows} kept per {unit.noun})"
                if unit.per_person else "any one row")
        who = (f"Replacing {rows} in the source table by another's" if dp.neighbouring is Neighbouring.REPLACE_ONE
               else f"Whether or not {rows} {'were' if unit.per_person else 'was'} in the source table")
        does_not = ["It does not mean the figures are exact: they are noisy on purpose.",
                    "It does not protect against what other releases of the same people reveal: the data custodian "
                    "keeps a ledger of the total ε spent on this table."]
        if not unit.per_person:
            does_not.append("It protects one row, not one person: a person with m rows in the source table is "
                            "protected only to m·ε (no column was marked as the person).")
        return {"means": [
            f"The unit of privacy: {unit.words()}.",
            f"{who} changes the probability of this release by at most a factor e^ε = "
            f"{np.exp(float(dp.epsilon)):.3g} (ε = {eps}).",
            "Counts and choices were made with random noise; small counts may be off by a few, and groups that "
            "do not exist in the source may appear with small counts.",
        ], "does not mean": does_not}
    if dp is not None:
        return {"means": ["This release was made with a differentially private mechanism, but at least one "
                          "input was read from the records themselves:"] + list(dp.caveats),
                "does not mean": ["It is NOT ε-differentially private as released: the caveats above can "
                                  "reveal values of the source table."]}
    lines = [c.describe() for c in published.claims if hasattr(c, "describe")]
    unit = syntactic_unit(published)
    if unit is not None:
        lines.append(unit)
    who = "rows" if published.person_column is None else "persons"
    return {"means": lines or ["No formal guarantee."],
            "does not mean": [f"Groups of at least k {who} do not stop an attacker from learning a value that all "
                              "rows of a group share, or from linking with other releases of the same people."]
            if lines else []}


def syntactic_unit(published: Published) -> str | None:
    """What k (and l, t, the risks) count, in words, for a release with a k-anonymity-family claim (None for
    others): the person column's persons, or rows — then a person with several rows is protected less."""
    claims = [c for c in published.claims if isinstance(c, PER_PERSON)]
    if not claims:
        return None
    person = next((c.person for c in claims if c.person is not None), None)
    if person is None:
        return ("One row is one unit: k counts rows, so a person with several rows in the source table is "
                "protected less (their own rows can make up a group).")
    return (f"The unit is the person: k counts persons ({person}), each group holds the rows of at least k "
            f"different persons, and a person's rows in several groups count in each; {person} is not published.")


# ---- the two documents -----------------------------------------------------------------------------------------
def _software() -> dict:
    from ppdp_gui import __version__
    return {"ppdp_gui": __version__}


def _cost(cost: PrivacyCost) -> dict:
    return {"epsilon": None if cost.epsilon is None else str(Fraction(cost.epsilon)),
            "delta": str(Fraction(cost.delta)), "k": cost.k, "l": cost.l}


def _unit(dp: DifferentialPrivacy | None) -> dict:
    """The unit of privacy and the neighbouring relation in words and as typed values (a DP release only)."""
    if dp is None:
        return {}
    return {"unit of privacy": dp.unit.words(), "neighbouring": dp.neighbours_text(),
            "unit": dp.unit.to_json(), "neighbouring relation": dp.neighbouring.value}


def release_note(published: Published, files: list[dict] | None = None) -> dict:
    """The document that goes out with the file (allow-list: see the module docstring). `files` lists what the
    export wrote: [{"table", "file" (name only), "sha256", "rows", "columns"}]."""
    if files is None:
        files = [{"table": name, "rows": int(len(t)), "columns": [str(c) for c in t.columns]}
                 for name, t in published.release.tables().items()]
    dp = published.dp
    doc = {
        "document": "release note",
        "note_version": NOTE_VERSION,
        "release_id": published.release_id,
        "created": published.created,
        "software": _software(),
        "mechanism": {"name": published.mechanism, "guarantee": published.guarantee,
                      "summary": published.summary},
        "guarantee": {"statement": published.guarantee_line(),
                      "holds": published.holds,
                      **_unit(dp),
                      "caveats": list(dp.caveats) if dp is not None else [],
                      "claims": [c.to_json() for c in published.claims]},
        "privacy cost": _cost(published.cost),
        "parameters": jsonable(dict(published.params)),
        "output sha256": published.output_hash,
        "files": files,
        "details": jsonable(dict(published.release.note)),
        "checked on the written file": [],
        "what this means": meaning(published),
    }
    if dp is not None:
        doc["missing values"] = missing_values_note(published)
    if published.seeded:
        doc["seeded for a test"] = True  # never in a real release: its noise would be predictable
    return doc


def missing_values_note(published: Published) -> str:
    """How a DP release treated blanks, in words: the custodian's public policy, never a count."""
    pol = published.source.na_policy
    if pol.action == "drop":
        return "rows with a missing value in a released column were dropped before the release"
    text = (f"kept: a missing value of a categorical column is the category “{pol.category_label}”, part of every "
            "stated list of values (but the class's); an empty number cell is given the middle of the column's "
            "public range")
    if published.cost.neighbouring is Neighbouring.REPLACE_ONE:
        text += "; no row is dropped, so the number of records n is that of the file, public"
    return text


def _columns(columns) -> list[dict]:
    out = []
    for c in columns:
        tax = c.taxonomy
        out.append({"name": c.name, "kind": c.kind, "role": c.role.value,
                    "taxonomy": None if tax is None else {"origin": getattr(tax, "origin", "public"),
                                                          "values": len(tax.leaf_values())},
                    "domain": None if c.domain is None else c.domain.to_json()})
    return out


def _entry(entry) -> dict | None:
    if entry is None:
        return None
    if hasattr(entry, "to_dict"):
        return jsonable(entry.to_dict())
    return jsonable(entry)


def _identity_fields(ident) -> Any:
    """The ledger identity's shown fields: never its keyed row hashes, cell sketches or person ids (in memory only;
    the DatasetIdentity docstring promises they are never written)."""
    if not dataclasses.is_dataclass(ident):
        return ident
    return {f.name: getattr(ident, f.name) for f in dataclasses.fields(ident) if f.repr}


def custodian_record(published: Published, *, note: dict | None = None, exports: list[dict] | None = None,
                     checks_on_file: list | None = None) -> dict:
    """The local document: everything the release note leaves out (see the module docstring)."""
    src = published.source
    ident = published.identity
    budget = published.budget
    return {
        "document": "custodian record — keep on this computer, do not publish",
        "record_version": RECORD_VERSION,
        "release_id": published.release_id,
        "created": published.created,
        "software": {**_software(), "python": platform.python_version(), "numpy": np.__version__,
                     "pandas": pd.__version__},
        "mechanism": published.mechanism,
        "guarantee": published.guarantee_line(),
        **({} if syntactic_unit(published) is None else {"k counts": syntactic_unit(published)}),
        "source": {"path": src.path, "sha256": src.sha256, "format": src.file_format,
                   "rows read": int(src.n_rows_read), "rows dropped for missing values": int(src.n_rows_dropped),
                   "rows used": int(src.n_rows_read - src.n_rows_dropped),
                   "missing values": jsonable(src.na_policy), "columns left out": list(src.left_out),
                   "notes on reading": list(src.notes)},
        "dataset": None if ident is None else jsonable(_identity_fields(ident)),
        "budget after this release": None if budget is None else jsonable(
            dataclasses.asdict(budget) if dataclasses.is_dataclass(budget) else budget),
        "ledger": {"path": published.ledger_path, "entry": _entry(published.ledger_entry)},
        "columns": _columns(published.columns),
        "caveats": list(published.caveats),
        "claims recounted in memory": [c.to_json() for c in published.checks],
        "claims recounted on the written files": [c.to_json() for c in (checks_on_file or [])],
        "warnings": list(published.warnings),
        "figures (against the true data)": jsonable(dict(published.figures)),
        "details": jsonable(dict(published.release.record)),
        "release note": note,
        "exports": list(exports or []),
    }
