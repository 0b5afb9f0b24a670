"""Next month's extract: the same project run on a new table, with a report of what changed before anything is
released.

`compare_extracts(recipe, new_path)` reads the project's table and the new one through the same recipe and says:
- columns added or gone;
- values of the new extract that its taxonomies or public domains do not cover (they would fail the release, or
  be read as new categories);
- columns whose role would be guessed differently now (the reader's guess and its reason; the project's stated
  roles still apply, but the custodian should look);
- the source's re-identification risk per person (or row) before and after, against the release context's
  threshold, and whether it moved past it;
- whether the ledger sees the same people (a near copy of the earlier table shares its budget) or a new table.

`blocking` lists what stops `ppdp run --recipe P --input NEW` unless the custodian passes `--accept-changes`.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

import pandas as pd

from ppdp_gui.engine.errors import PpdpError
from ppdp_gui.engine.persistence.release_context import of
from ppdp_gui.engine.governance.person_risk import PersonRisk, person_risk

MAX_SHOWN = 8


@dataclass
class ExtractChanges:
    old: str
    new: str
    added: list[str] = field(default_factory=list)
    gone: list[str] = field(default_factory=list)
    uncovered: dict[str, list[str]] = field(default_factory=dict)  # column -> values not covered (first few)
    uncovered_rows: dict[str, int] = field(default_factory=dict)
    roles: list[tuple[str, str, str, str]] = field(default_factory=list)  # column, guessed before, now, why
    risk_old: PersonRisk | None = None
    risk_new: PersonRisk | None = None
    threshold: float | None = None
    people: str = ""
    errors: list[str] = field(default_factory=list)

    @property
    def crossed(self) -> bool:
        if self.threshold is None or self.risk_old is None or self.risk_new is None:
            return False
        return self.risk_old.highest <= self.threshold < self.risk_new.highest

    @property
    def blocking(self) -> list[str]:
        out = list(self.errors)
        out += [f"{c}: {self.uncovered_rows[c]:,} row(s) hold values its taxonomy or public domain does not cover "
                f"({', '.join(v)})" for c, v in self.uncovered.items()]
        if self.crossed:
            out.append(f"the source's highest re-identification risk moved past the threshold {self.threshold:.3g} "
                       f"({self.risk_old.highest:.3g} → {self.risk_new.highest:.3g})")
        out += [f"{c} is missing from the new extract" for c in self.gone]
        return out

    def markdown(self) -> str:
        lines = ["# What changed in the new extract (for governance only)", "",
                 f"- project's table: {self.old}", f"- new extract: {self.new}", ""]
        lines += ["## Columns", ""] + ([f"- added: {', '.join(self.added)}"] if self.added else []) + \
                 ([f"- gone: {', '.join(self.gone)}"] if self.gone else []) + \
                 ([] if self.added or self.gone else ["- the same columns"]) + [""]
        lines += ["## Values not covered by the taxonomies or public domains", ""]
        lines += [f"- {c}: {self.uncovered_rows[c]:,} row(s), e.g. {', '.join(v)}" for c, v in self.uncovered.items()] \
            or ["- none"]
        lines += ["", "## Roles that would be guessed differently", ""]
        lines += [f"- {c}: guessed {a} before, {b} now ({why})" for c, a, b, why in self.roles] or ["- none"]
        lines += ["", "## Re-identification risk of the source (before the release)", ""]
        for label, r in (("project's table", self.risk_old), ("new extract", self.risk_new)):
            lines.append(f"- {label}: " + ("not measured" if r is None else
                                           f"highest {r.highest:.4g}, average {r.average:.4g} (per {r.unit}), "
                                           f"{r.units:,} {'persons' if r.unit != 'row' else 'rows'}"))
        if self.threshold is not None:
            lines.append(f"- threshold {self.threshold:.3g}: " + ("MOVED PAST IT" if self.crossed else "not crossed"))
        lines += ["", "## The people in it", "", f"- {self.people or 'not checked (no ledger)'}", ""]
        block = self.blocking
        lines += ["## Before releasing", ""] + ([f"- {b}" for b in block] or ["- nothing stops the release"])
        return "\n".join(lines) + "\n"


def _covered(data, column: str) -> tuple[list[str], int]:
    spec = data.spec(column)
    values = data.frame[column].dropna()
    label = getattr(data.source.na_policy, "category_label", None)
    values = values[values.astype(str) != str(label)]  # "missing" as its own category is public
    if spec.taxonomy is not None:
        leaves = {str(v) for v in spec.taxonomy.leaf_values()}
        bad = values[~values.astype(str).isin(leaves)]
    elif spec.domain is not None and spec.domain.categories is not None:
        bad = values[~values.astype(str).isin(set(spec.domain.categories))]
    elif spec.domain is not None and spec.domain.low is not None:
        numbers = pd.to_numeric(values, errors="coerce")
        bad = values[(numbers < spec.domain.low) | (numbers > spec.domain.high) | numbers.isna()]
    else:
        return [], 0
    shown = [str(v) for v in pd.unique(bad.astype(str))[:MAX_SHOWN]]
    return shown, int(len(bad))


def _risk(data, threshold: float) -> PersonRisk | None:
    qis = data.quasi_identifiers
    if not qis:
        return None
    return person_risk(data.frame, qis, data.person_column, threshold)


def compare_extracts(recipe, new_path, *, ledger=None) -> ExtractChanges:
    """What changed between the project's table and `new_path` (see the module docstring)."""
    from ppdp_gui.engine.pipeline.load import load
    report = ExtractChanges(old=recipe.source, new=str(new_path))
    threshold, _ = of(recipe).risk_threshold()
    report.threshold = threshold
    cut = threshold if threshold is not None else 0.1
    try:
        old = load(copy.deepcopy(recipe)).dataset
    except PpdpError as exc:
        old = None
        report.people = f"the project's table could not be read again ({exc}); nothing to compare with"
    newer = copy.deepcopy(recipe)
    newer.source, newer.source_sha256 = str(new_path), None
    try:
        new = load(newer).dataset
    except PpdpError as exc:
        report.errors.append(f"the new extract cannot be read with the project's settings: {exc}")
        return report
    new_cols = list(new.frame.columns)
    if old is not None:
        old_cols = list(old.frame.columns)
        report.added = [c for c in new_cols if c not in old_cols]
        report.gone = [c for c in old_cols if c not in new_cols]
        before = old.source.role_reasons or {}
        for col, (role, why) in (new.source.role_reasons or {}).items():
            was = before.get(col)
            if was is not None and getattr(was[0], "value", was[0]) != getattr(role, "value", role):
                report.roles.append((col, str(getattr(was[0], "value", was[0])), str(getattr(role, "value", role)),
                                     str(why)))
        report.risk_old = _risk(old, cut)
    for col in new_cols:
        shown, rows = _covered(new, col)
        if rows:
            report.uncovered[col], report.uncovered_rows[col] = shown, rows
    report.risk_new = _risk(new, cut)
    if ledger is not None:
        try:
            ident = ledger.identify(new, label=str(new_path))
            if ident.known:
                report.people = "the ledger knows this exact table: its budget is the same as before"
            elif ident.near_copy_of:
                report.people = (f"the ledger sees a near copy of a known table (about {100 * ident.similarity:.0f} % "
                                 "of its rows shared): the same people, charged to the same budget")
            elif old is not None and not ledger.identify(old, label=recipe.source).known:
                report.people = ("the ledger has no differentially private release of the project's table yet, so "
                                 "it cannot tell whether the new extract holds the same people")
            else:
                report.people = "the ledger sees a new table: mostly other people, with a budget of its own"
        except PpdpError as exc:
            report.people = f"the ledger could not identify the table ({exc})"
    return report
