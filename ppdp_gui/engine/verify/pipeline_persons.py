"""The pipeline audit of the k-anonymity family: persons recounted on the written file (issue 25, finding 3).

A k-anonymous release of a table with several rows per patient must put at least k *patients* in every class, not
k rows (five encounters of one patient are one patient). This audit releases a practice file with a person column
(`patient_nbr`, stated `Role.PERSON`; patient P00 has 60 rows, the others one or two) through the same path as the
DP audit (reader → recipe → plan → scratch ledger → release → export), reads the written file back from disk and
recounts, for every k-anonymity claim of the release note, the distinct patients in each class of the claim's
columns (rows suppressed to '*' in all of them are not a class).

The written file does not hold the person column (it is never released), so each practice row carries a visit
number (`visit`, insensitive, unique per row, confirmed "publish as is" in the recipe as a custodian would) that
the audit uses on the custodian's side to find the patient of each written row — the independent checker reads
the source's person column the same way. A table of the release that does not carry `visit` (a fragment of
Fragmentation without it) cannot be recounted and is named in the report as such.
"""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd

from ppdp_gui.engine.verify.audit import Check
from ppdp_gui.engine.verify.pipeline_files import (COLUMNS, DOMAINS, KINDS, PERSON_ROWS, ROLES, csv_text,
                                                   person_pair)
from ppdp_gui.engine.verify.pipeline_run import REFUSED, release_file, shorten

K = 3
VISIT = "visit"
PERSON = "patient_nbr"
ID = "the patients in every class"


def syntactic_mechanisms() -> list[str]:
    """Every registered mechanism whose guarantee is a k (the k-anonymity family)."""
    from ppdp_gui.engine.mechanisms import registry
    out = []
    for name in registry.names():
        cls = registry.get(name)
        cost = cls().cost(cls.resolve_params())
        if not cost.is_dp and cost.k is not None:
            out.append(name)
    return out


def person_file() -> str:
    """The person pair's first file with a visit number per row."""
    source = pd.read_csv(io.StringIO(person_pair(False).first), dtype=str, keep_default_na=False)
    source.insert(1, VISIT, [f"V{i:04d}" for i in range(len(source))])
    return csv_text(source.to_dict("records"), tuple(source.columns))


def recipe(mechanism: str) -> dict:
    columns = (PERSON, VISIT) + COLUMNS
    roles = {c: ROLES.get(c) for c in columns if c in ROLES}
    roles[VISIT] = ROLES["insurer"]  # insensitive: published as is
    return {"roles": roles, "kinds": {**{c: KINDS[c] for c in columns if c in KINDS}, VISIT: "categorical"},
            "domains": dict(DOMAINS), "params": {"k": K}, "publish_as_is": (VISIT,),
            "taxonomy_builds": {"age": "intervals", "ward": "flat", "ref_code": "flat", "lab": "intervals"}}


def recount(note: dict, files: dict[str, bytes], persons: dict[str, str]) -> tuple[list[str], list[str]]:
    """(classes with fewer than k patients, tables that could not be recounted), from the written bytes."""
    short, skipped = [], []
    for claim in (note.get("guarantee") or {}).get("claims", []):
        if claim.get("claim") != "k-anonymity":
            continue
        table, k, cols = claim.get("table", "table"), int(claim["k"]), list(claim.get("columns", []))
        data = files.get(table)
        frame = None if data is None else pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False)
        if frame is None or VISIT not in frame.columns or not set(cols) <= set(frame.columns):
            skipped.append(table)
            continue
        frame = frame[~(frame[cols] == "*").all(axis=1)] if cols else frame
        who = frame[VISIT].map(persons)
        counts = frame.assign(_who=who).groupby(cols, sort=True, dropna=False)["_who"].nunique()
        rows = frame.groupby(cols, sort=True, dropna=False).size()
        for raw, n in counts[counts < k].items():
            key = raw if isinstance(raw, tuple) else (raw,)
            short.append(f"{table}: ({', '.join(f'{c}={v}' for c, v in zip(cols, key))}) holds {int(rows[raw])} "
                         f"rows of {int(n)} patient(s), k = {k}")
    return short, skipped


def person_check(mechanism: str, seed: int = 0, folder: Path | None = None) -> Check:
    """Release the practice file with `mechanism` (k = 3) and recount the patients per class on the written file."""
    from ppdp_gui.engine.privacy.ledger import Ledger
    from ppdp_gui.engine.verify.pipeline_run import SCRATCH_CAP, scratch_folder
    name = f"{ID} ({mechanism}, k = {K}; patient P00 has {PERSON_ROWS} rows)"
    text = person_file()
    persons = dict(pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)[[VISIT, PERSON]].values)
    with scratch_folder() as tmp:
        root = Path(tmp)
        src = root / "file" / "ward.csv"
        src.parent.mkdir()
        src.write_text(text, encoding="utf-8")
        ledger = Ledger(root / "scratch-ledger" / "ledger.sqlite", default_cap=SCRATCH_CAP)
        out = release_file(src, root / "out", ledger, recipe(mechanism), mechanism, seed)
    if out.note is None:
        return Check(name, not out.crashed, f"{REFUSED}: {shorten(out.refused, 300)}")
    short, skipped = recount(out.note, out.files, persons)
    gap = f" (not recounted, no visit number in it: {', '.join(skipped)})" if skipped else ""
    if short:
        return Check(name, False, f"{len(short)} class(es) of the written file hold fewer than {K} patients — k "
                     f"counted rows, not patients: {'; '.join(short[:3])}{gap}")
    if skipped and len(skipped) == sum(1 for c in out.note["guarantee"]["claims"] if c.get("claim") == "k-anonymity"):
        return Check(name, True, f"nothing could be recounted{gap}")
    return Check(name, True, f"every class of the written file holds at least {K} distinct patients{gap}")
