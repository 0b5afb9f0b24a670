"""The files a release can be written as — one list, offered by `ppdp run` (each with its option) and by the
window's Export step (each with its control), so neither can offer an output the other lacks."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Output:
    name: str  # table, note, record, pdf
    label: str  # the window's words
    help: str
    flag: str  # the `ppdp run` option that asks for it
    public: bool  # goes out with the release (the record never does)


OUTPUTS: tuple[Output, ...] = (
    Output("table", "Released table", "The released table (CSV, TSV, Excel or Parquet), recounted on its bytes.",
           "--output", True),
    Output("note", "Release note (JSON)", "What the file is and what its guarantee means: publish it with the "
           "file.", "--report", True),
    Output("record", "Custodian record (JSON)", "Source, exact counts, figures and warnings for you alone: keep "
           "it, never publish it (a copy always stays in the ledger's folder).", "--record", False),
    Output("pdf", "PDF copies", "The release note and the custodian record also as PDF, beside their JSON.",
           "--pdf", True),
)


def default_record_path(table_path) -> Path:
    """Where the window suggests a copy of the custodian record: beside the table, named so it is not taken for
    something to publish (`ward_release1.csv` → `ward_release1.custodian-record.json`)."""
    path = Path(table_path)
    return path.with_name(path.name.split(".")[0] + ".custodian-record.json")
