"""Planted pipeline bugs for `ppdp verify --pipeline` (issue 25, Deliver 6): each is planted from the test process
with pytest's monkeypatch, on the publish path (reader, export), not in a mechanism — the bugs the mechanism audit
cannot see. Never shipped: this module lives in the tests.

(a) `note_warnings`: the custodian's warnings (they count records: "1 value of lab outside the bounds") copied
    into the release note;
(b) `value_role`: a role guessed from the values overrides the one the recipe states (a code column with half
    its values distinct becomes an identifier and leaves the release);
(c) `drop_blanks`: every row with a blank anywhere is dropped, also under a replace-one mechanism that publishes
    n (a data-dependent row count);
(d) and (e) `per_row`: the person column is read as a plain identifier, so the unit is the row again — a
    k-anonymity class of one patient's k rows (d), a DP count that moves by all of a patient's rows (e).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass


from ppdp_gui.engine.data.roles import guess_roles
from ppdp_gui.engine.data.schema import Dataset, Role
export_module = importlib.import_module("ppdp_gui.engine.pipeline.export")  # the package exports a function
load_module = importlib.import_module("ppdp_gui.engine.pipeline.load")  # of the same name


def note_warnings(monkeypatch) -> None:
    original = export_module.release_note

    def leaky(published, files=None):
        doc = original(published, files)
        doc["warnings"] = list(published.warnings)
        return doc
    monkeypatch.setattr(export_module, "release_note", leaky)


def _wrap_reader(monkeypatch, change) -> None:
    original = load_module.read_table

    def reader(path, **kwargs):
        return change(original(path, **kwargs), kwargs)
    monkeypatch.setattr(load_module, "read_table", reader)


def value_role(monkeypatch) -> None:
    def change(data: Dataset, kwargs) -> Dataset:
        kinds = {c.name: c.kind for c in data.schema}
        for name, role in guess_roles(data.frame, kinds).items():
            if role == Role.IDENTIFIER and data.spec(name).role != Role.IDENTIFIER:
                data = data.with_column(name, role=Role.IDENTIFIER)
        return data
    _wrap_reader(monkeypatch, change)


def drop_blanks(monkeypatch) -> None:
    def change(data: Dataset, kwargs) -> Dataset:
        frame = data.frame
        label = kwargs.get("na_policy").category_label if kwargs.get("na_policy") is not None else "(missing)"
        gone = frame.isna().any(axis=1) | frame.astype(str).isin([label]).any(axis=1)
        return data.with_frame(frame[~gone].reset_index(drop=True))
    _wrap_reader(monkeypatch, change)


def per_row(monkeypatch) -> None:
    def change(data: Dataset, kwargs) -> Dataset:
        for spec in data.schema:
            if spec.role == Role.PERSON:
                data = data.with_column(spec.name, role=Role.IDENTIFIER)
        return data
    _wrap_reader(monkeypatch, change)


@dataclass(frozen=True)
class PipelineMutant:
    tag: str
    letter: str  # issue 25's list of planted bugs
    words: str
    plant: object  # plant(monkeypatch)
    mechanism: str
    pair: str  # the audit that catches it ("" for the k-anonymity family: its recount of patients)


MUTANTS = [
    PipelineMutant("note_warnings", "a", "the custodian's warnings (counts of values outside the bounds) copied into "
                   "the release note", note_warnings, "DP-PCA", "row replaced"),
    PipelineMutant("value_role", "b", "a role guessed from the values decides a released column", value_role,
                   "Laplace on records", "guesses flipped, roles stated"),
    PipelineMutant("drop_blanks", "c", "a row with a blank dropped under a replace-one mechanism (n published)",
                   drop_blanks, "Exponential on records", "blank in an unreleased column"),
    PipelineMutant("per_row_k", "d", "row-level k with a person column: one patient's rows make a class", per_row,
                   "Mondrian", ""),
    PipelineMutant("per_row_dp", "e", "per-row DP with a person column: all of a patient's rows counted", per_row,
                   "Laplace histogram", "a person with several rows"),
]

__all__ = ["MUTANTS", "PipelineMutant", "note_warnings", "value_role", "drop_blanks", "per_row"]
