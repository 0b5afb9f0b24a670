"""The de-identification dossier: what a privacy office, a disclosure review board or an expert asks to see.

Made from the project (its recipe and release context, `persistence/release_context.py`) and the custodian
record of one release (`pipeline/published.custodian_record`), in one of two layouts:

- ``ema``: the sections of the anonymisation report shared by EMA Policy 0070 and Health Canada's Public Release
  of Clinical Information (methodology; every direct and indirect identifier with the technique applied; initial
  risk, threshold, residual risk; utility);
- ``hipaa``: a HIPAA Expert Determination dossier (45 CFR 164.514(b)(1)): recipient and context, threat model,
  risk metric and threshold with its justification, results before and after, conditions, review date.

Both carry the per-column technique table in ISO/IEC 20889 words (techniques.py), the NIST SP 800-226
statements of a differentially private release (ε, δ, unit of privacy, neighbouring relation, domain provenance,
composition with the table's earlier releases from the ledger, error bars where the mechanism states its noise,
evidence of testing), the attestations, overrides and the review date.

The dossier is one structure (`Dossier`: sections of paragraphs, lists and tables) rendered to Markdown (to edit)
and to PDF (dossier_pdf.py), so both say the same. A section holding anything the release note may not hold —
figures against the source, the context, the ledger's history, removed columns — is marked "for governance only"
in its heading; the unmarked sections hold only what the release note holds.
"""

from __future__ import annotations

import datetime as _dt
import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from ppdp_gui.engine.governance import techniques as tq
from ppdp_gui.engine.persistence.release_context import KIND_WORDS, ReleaseContext, of
from ppdp_gui.engine.governance.gate import OVERRIDE_PREFIX, measured_highest_risk
from ppdp_gui.engine.governance.person_risk import PersonRisk, initial_risk

GOVERNANCE_ONLY = "for governance only"
LAYOUTS = {"ema": "Anonymisation report", "hipaa": "HIPAA Expert Determination dossier"}
BASIS = {"ema": "EMA Policy 0070 / Health Canada Public Release of Clinical Information",
         "hipaa": "45 CFR 164.514(b)(1)"}
RISK_FLOOR = 0.1  # the share-at-risk cut the record's figures use


@dataclass
class Section:
    title: str
    governance_only: bool
    blocks: list = field(default_factory=list)  # ("p", text) | ("list", [text]) | ("table", headers, rows)

    def p(self, text: str) -> "Section":
        self.blocks.append(("p", text))
        return self

    def items(self, items) -> "Section":
        items = [str(i) for i in items]
        if items:
            self.blocks.append(("list", items))
        return self

    def table(self, headers, rows) -> "Section":
        self.blocks.append(("table", [str(h) for h in headers], [[_cell(c) for c in r] for r in rows]))
        return self

    def heading(self, number: int) -> str:
        return f"{number}. {self.title}" + (f" ({GOVERNANCE_ONLY})" if self.governance_only else "")


@dataclass
class Dossier:
    layout: str
    title: str
    subtitle: str
    sections: list[Section]

    def markdown(self) -> str:
        out = [f"# {self.title}", "", f"*{self.subtitle}*", "",
               f"> Sections marked “{GOVERNANCE_ONLY}” hold figures measured on the source table, the release "
               "context or the ledger's history: they must not be published with the release.", ""]
        for i, s in enumerate(self.sections, 1):
            out += [f"## {s.heading(i)}", ""]
            for block in s.blocks:
                if block[0] == "p":
                    out += [_md(block[1]), ""]
                elif block[0] == "list":
                    out += [f"- {_md(x)}" for x in block[1]] + [""]
                else:
                    _, headers, rows = block
                    out.append("| " + " | ".join(_md(h) for h in headers) + " |")
                    out.append("|" + "---|" * len(headers))
                    out += ["| " + " | ".join(_md(c) for c in r) + " |" for r in rows]
                    out.append("")
        return "\n".join(out).rstrip() + "\n"


def _md(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def num(value: Any) -> str:
    """A figure as the dossier writes it (tests read it back with float())."""
    if value is None:
        return "—"
    if isinstance(value, str):
        try:
            return num(float(Fraction(value)))
        except (ValueError, ZeroDivisionError):
            return value
    v = float(value)
    if not math.isfinite(v):
        return "—"
    if v == int(v) and abs(v) < 1e15:
        return str(int(v))
    return f"{v:.6g}"


def _cell(value: Any) -> str:
    return num(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else str(value)


# ---- facts read from the record and the project ---------------------------------------------------------------
@dataclass
class Facts:
    record: dict
    note: dict
    context: ReleaseContext
    threshold: float | None
    threshold_source: str
    qis: list[str]
    person: str | None
    dp: bool
    techniques: list
    initial: PersonRisk | None
    initial_rows: PersonRisk | None
    initial_why: str
    residual: float | None
    figures: dict
    history: list[dict]
    verify_lines: list[str]


def gather(record: dict, recipe=None, *, history: list[dict] | None = None,
           verify_lines: list[str] | None = None, measure_initial: bool = True) -> Facts:
    context = of(recipe) if recipe is not None else ReleaseContext()
    threshold, source = context.risk_threshold()
    cols = record.get("columns") or []
    qis = [str(c["name"]) for c in cols if c.get("role") == "quasi-identifier"]
    person = next((str(c["name"]) for c in cols if c.get("role") == "person"), None)
    figures = dict(record.get("figures (against the true data)") or {})
    initial = initial_rows = None
    why = "no project was given, so the source table was not read again"
    cut = threshold if threshold is not None else RISK_FLOOR
    if recipe is not None and measure_initial:
        initial, initial_rows, why = initial_risk(recipe, qis, cut, record)
    dp = tq.is_dp(record)
    return Facts(record, record.get("release note") or {}, context, threshold, source, qis, person, dp,
                 tq.techniques(record, context), initial, initial_rows, why,
                 None if dp else measured_highest_risk(figures), figures, list(history or []),
                 list(verify_lines or []))


def ledger_history(record: dict) -> list[dict]:
    """Every release charged to the same budget group as this one, from the ledger named in the record (read
    only through the ledger's own API); [] when there is none or it cannot be opened."""
    from ppdp_gui.engine.errors import PpdpError
    ledger = record.get("ledger") or {}
    path = ledger.get("path")
    budget = ((ledger.get("entry") or {}).get("budget") or (record.get("dataset") or {}).get("budget"))
    if not path or not budget:
        return []
    from pathlib import Path
    if not Path(path).is_file():
        return []
    try:
        from ppdp_gui.engine.privacy.ledger import Ledger
        return [e.to_dict() for e in Ledger(path).entries(budget=budget)]
    except (PpdpError, OSError):
        return []


# ---- sections shared by both layouts ----------------------------------------------------------------------
def _summary(f: Facts, title: str) -> Section:
    note = f.note
    mech = note.get("mechanism") or {}
    s = Section(title, False)
    s.p(f"Release {note.get('release_id')} of {note.get('created')}, made with ppdp_gui "
        f"{(note.get('software') or {}).get('ppdp_gui', '')}.")
    s.table(["item", "value"], [
        ["mechanism", f"{mech.get('name')} ({mech.get('guarantee')})"],
        ["how it works", mech.get("summary") or ""],
        ["guarantee", (note.get("guarantee") or {}).get("statement") or ""],
        ["guarantee holds", "yes" if (note.get("guarantee") or {}).get("holds") else "NO — see the caveats"],
    ] + [[f"parameter {k}", _plain(v)] for k, v in (note.get("parameters") or {}).items()])
    return s


def _plain(v: Any) -> str:
    if isinstance(v, list):
        return ", ".join(str(x) for x in v)
    if v is None:
        return "—"
    return num(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else str(v)


def _context(f: Facts, title: str) -> Section:
    c = f.context
    s = Section(title, True)
    if not c.filled:
        return s.p("The release context has not been filled in (window: Tools → Release context…; it is saved "
                   "in the project). Without it no risk threshold applies.")
    return s.table(["question", "answer"], [
        ["who receives the release", KIND_WORDS[c.release]],
        ["recipient", c.recipient or "—"],
        ["data-use agreement", c.data_use_agreement or "none"],
        ["review date", c.review_date or "not set"],
    ])


def _released(f: Facts, title: str) -> Section:
    s = Section(title, False)
    s.p("Each column of the release with the technique applied, in the vocabulary of ISO/IEC 20889. Direct "
        "identifiers are never released; indirect identifiers (quasi-identifiers) are the columns someone could "
        "know about a patient.")
    rows = [[t.column, _role_words(t.role), t.words, t.detail] for t in f.techniques if t.released]
    return s.table(["column", "kind of identifier", "technique (ISO/IEC 20889)", "detail"], rows)


def _removed(f: Facts, title: str) -> Section:
    s = Section(title, True)
    rows = [[t.column, _role_words(t.role), t.words, t.detail] for t in f.techniques if not t.released]
    if not rows:
        return s.p("No column of the source was left out.")
    return s.table(["column", "kind of identifier", "technique (ISO/IEC 20889)", "detail"], rows)


def _role_words(role: str) -> str:
    return {"identifier": "direct identifier", "person": "direct identifier (whose row it is)",
            "quasi-identifier": "indirect identifier", "sensitive": "sensitive", "class": "outcome (class)",
            "insensitive": "other"}.get(role, role)


def _threshold(f: Facts, title: str) -> Section:
    s = Section(title, True)
    if f.threshold is None:
        return s.p("No threshold: the release context has not been filled in.")
    s.p(f"Highest re-identification risk accepted: {num(f.threshold)}.")
    s.p(f"Justification: {f.threshold_source}.")
    s.p("The risk of a record is the prosecutor's: one over the number of "
        + ("distinct persons" if f.person else "rows") + " sharing its quasi-identifier values "
        "(an attacker who knows the patient is in the table). The highest such risk is compared with the threshold.")
    return s


def _unit(f: Facts, named: bool = True) -> str:
    if f.person and not named:  # a public section: the column's name is not in the release note
        return "per person (several rows of one patient count once)"
    return f"per person ({f.person})" if f.person else "per row (no person column: a patient with several rows " \
                                                       "is counted once per row)"


def _initial(f: Facts, title: str) -> Section:
    s = Section(title, True)
    if not f.qis:
        return s.p("The release has no quasi-identifiers, so no record-linkage risk was measured.")
    s.p(f"Measured on the source table on the quasi-identifiers {', '.join(f.qis)}, {_unit(f)}.")
    if f.initial is None:
        return s.p(f"Not measured: {f.initial_why}.")
    rows = [_risk_row("source table, " + f.initial.unit, f.initial)]
    if f.initial_rows is not None:
        rows.append(_risk_row("source table, per row", f.initial_rows))
    return s.table(["table", "units", "groups", "highest risk", "average risk", "share above threshold"], rows)


def _risk_row(label: str, r: PersonRisk) -> list:
    return [label, r.units, r.classes, r.highest, r.average, r.at_risk]


def _residual(f: Facts, title: str) -> Section:
    s = Section(title, True)
    if f.dp:
        return s.p("This release is differentially private: its rows are not the patients' rows, so the chance of "
                   "matching one to a person is not the measure. ε protects each person (see the differential "
                   "privacy statements).")
    if f.residual is None:
        return s.p("No re-identification risk was measured on this release (a table of counts, synthetic rows, or "
                   "no quasi-identifier kept).")
    fig = f.figures
    per_patient = f.person is not None and PER_PATIENT[2] in fig
    if per_patient:
        s.p(f"Measured on the released table per patient ({f.person}), as the custodian record holds it: a "
            "patient's risk is one over the number of distinct patients in the group of each of their released "
            "rows, the largest over their rows; each patient counts once. The source table beside it is counted "
            "the same way:")
        s.table(["figure, per patient", "source table (initial)", "release (residual)"],
                _side_by_side(f.initial, fig))
        s.p(f"Highest risk of a patient in the release: {num(fig[PER_PATIENT[1]] / 100)}.")
    else:
        rows = [[k, v] for k, v in fig.items() if "risk" in str(k).lower()]
        s.p("Measured on the released table (per row of the release), as the custodian record holds it:")
        s.table(["figure", "value"], rows)
        s.p(f"Highest risk of the release: {num(f.residual)}.")
    if f.threshold is not None:
        ok = f.residual <= f.threshold + 1e-12
        s.p(f"Threshold: {num(f.threshold)}. The release {'meets' if ok else 'EXCEEDS'} it.")
    rid = f.note.get("release_id")
    overrides = [o for o in f.context.overrides if o.get("release_id") == rid]
    for w in f.record.get("warnings") or []:
        if str(w).startswith(OVERRIDE_PREFIX) and not overrides:
            s.p(str(w))
    for o in overrides:
        s.p(f"Exported above the threshold by explicit override on {o.get('when')}"
            f"{' by ' + o['by'] if o.get('by') else ''}: {o.get('reason')}")
    if f.person and not per_patient:
        s.p("The released table holds no person column, so these figures are per row: where one patient has several "
            "rows in a group, the group holds fewer distinct patients than rows and that patient's risk is higher "
            "than shown (the release's own k-anonymity claim says whether it counted persons).")
    return s


#: the custodian record's per-patient figures of a release with a person column (metrics/person_risk.py)
#: (the highest is the smallest group's, counted in persons: the one figure `group_figures` names)
PER_PATIENT = ("patients in the release", "highest re-identification risk %",
               "average re-identification risk per patient %", "share of patients with risk above 10 %")


def _side_by_side(initial: PersonRisk | None, fig: dict) -> list[list]:
    """Initial and residual risk per patient, row by row (risks as shares, as the initial risk section writes
    them); the initial column is empty when the source could not be read again."""
    names = ["patients", "highest risk", "average risk", "share of patients above 10 %"]
    before = ([initial.units, initial.highest, initial.average, initial.at_risk_10]
              if initial is not None and initial.unit.startswith("person") else ["—"] * 4)
    after = [fig.get(PER_PATIENT[0])] + [None if fig.get(k) is None else fig[k] / 100 for k in PER_PATIENT[1:]]
    return [[n, b, "—" if a is None else a] for n, b, a in zip(names, before, after)]


def _intruder(f: Facts, title: str) -> Section:
    s = Section(title, True)
    return s.p(f.context.intruder_test or "No motivated-intruder test has been recorded (UK ICO, Anonymisation: "
                                          "managing data protection risk code of practice). Record one in Tools → "
                                          "Release context….")


def _utility(f: Facts, title: str) -> Section:
    s = Section(title, True)
    rows = [[k, v] for k, v in f.figures.items() if "risk" not in str(k).lower()]
    if not rows:
        return s.p("No utility figure was measured for this release.")
    s.p("Measured against the source table (custodian record):")
    return s.table(["figure", "value"], rows)


def _dp_claim(f: Facts) -> dict:
    for c in (f.note.get("guarantee") or {}).get("claims") or []:
        if c.get("claim") == "differential privacy":
            return c
    return {}


def _dp(f: Facts, title: str) -> Section | None:
    if not f.dp:
        return None
    s = Section(title, False)
    claim = _dp_claim(f)
    cost = f.note.get("privacy cost") or {}
    details = f.note.get("details") or {}
    stated = claim.get("unit")  # the DP claim's typed unit: {"person column", "max rows per person", "words"}
    unit = details.get("unit of privacy") or (stated.get("words") if isinstance(stated, dict) else stated) or (
        "one row (the release note states no person as the unit): a patient with m rows is protected by m·ε"
        if f.person else "one row; a person with several rows is protected less")
    rows = [["ε (epsilon)", num(cost.get("epsilon"))], ["δ (delta)", num(cost.get("delta"))],
            ["unit of privacy", unit],
            ["neighbouring relation", claim.get("neighbouring") or details.get("neighbouring") or "—"],
            ["guarantee holds", "yes" if claim.get("holds", True) else "NO: " + "; ".join(claim.get("caveats") or [])]]
    sources = details.get("domain source") or {}
    if sources:
        rows.append(["domain provenance", "; ".join(f"{k}: {_provenance(v)}" for k, v in sources.items())])
    scale = details.get("noise scale")
    if isinstance(scale, (int, float)):
        half = float(scale) * math.log(20)
        rows.append(["error bars", f"{details.get('noise') or 'Laplace noise'} of scale {num(scale)}: 95 % of cells "
                                   f"are within ±{num(round(half, 2))} of the true count"])
    elif details.get("expected |noise| per cell") is not None:
        rows.append(["error bars", f"expected |noise| per cell {num(details['expected |noise| per cell'])}"])
    else:
        rows.append(["error bars", "the mechanism does not state an error bound for its output"])
    s.p("The statements NIST SP 800-226 (Guidelines for evaluating differential privacy guarantees) asks for:")
    return s.table(["statement", "value"], rows)


def _provenance(value: Any) -> str:
    return {"domain": "stated by the custodian (public domain)", "taxonomy": "a public taxonomy",
            "data": "read from the data (not a public domain)"}.get(str(value), str(value))


def _composition(f: Facts, title: str) -> Section | None:
    if not f.dp and not f.history:
        return None
    s = Section(title, True)
    if not f.history:
        return s.p("The ledger named in the record could not be read; its history is not shown.")
    rows = [[e.get("id"), (e.get("created") or "")[:19], e.get("mechanism"), num(e.get("epsilon")),
             num(e.get("delta")), e.get("neighbouring"), e.get("release_id")] for e in f.history]
    s.p("Every release charged to this table's privacy budget (the ledger's budget group, near copies included). "
        "Under sequential composition their ε add up:")
    s.table(["entry", "when", "mechanism", "ε", "δ", "neighbouring", "release"], rows)
    budget = f.record.get("budget after this release") or {}
    if budget:
        s.p(f"Total ε spent on this table after this release: {num(budget.get('spent'))} "
            f"(cap {num(budget.get('cap'))}, remaining {num(budget.get('remaining'))}).")
    return s


def _testing(f: Facts, title: str) -> Section:
    s = Section(title, False)
    checked = f.note.get("checked on the written file") or []
    if checked:
        s.p("Every promise of the release was recounted on the written file before it was put in place:")
        s.items(f"{c.get('claim')} ({c.get('table')}): {'holds' if c.get('ok') else 'FAILED'}" for c in checked)
    mech = (f.note.get("mechanism") or {}).get("name")
    if f.dp:
        if f.verify_lines:
            s.p(f"Statistical audit of the mechanism (`ppdp verify {mech}`):")
            s.items(f.verify_lines)
        else:
            s.p(f"Statistical audit: run `ppdp verify \"{mech}\"` (window: Tools → Self-check) and attach its "
                "output; it was not run for this dossier.")
    return s


def _attestations(f: Facts, title: str) -> Section:
    s = Section(title, True)
    c = f.context
    if c.attestations:
        s.table(["attestation", "text", "by", "when"],
                [[a.get("kind", ""), a.get("text", ""), a.get("by", ""), a.get("when", "")] for a in c.attestations])
    else:
        s.p("No attestation has been recorded.")
    if c.overrides:
        s.p("Exports above the risk threshold (explicit overrides):")
        s.table(["release", "measured", "threshold", "reason", "by", "when"],
                [[o.get("release_id"), o.get("measured"), o.get("threshold"), o.get("reason"), o.get("by", ""),
                  o.get("when")] for o in c.overrides])
    s.p(f"Review date: {c.review_date or 'not set'}. The release must be reviewed by then: the data, the recipient "
        "or what else is published about these patients may have changed.")
    s.p("Signed: ______________________  Role: ______________________  Date: ____________")
    return s


def _threat_model(f: Facts, title: str) -> Section:
    s = Section(title, False)
    s.items([
        "prosecutor: knows that a given patient is in the table and what their quasi-identifiers are;",
        "journalist: matches the release against a public register of the population;",
        "marketer: tries to match every row at once and counts how many are right;",
        "motivated intruder (UK ICO): a competent person without special skills or data, who wants to find one "
        "patient, using the internet, libraries and public documents.",
    ])
    return s.p("The risk metric is the prosecutor's, the most demanding of the three.")


def _conditions(f: Facts, title: str) -> Section:
    s = Section(title, True)
    c = f.context
    s.items([
        f"The release goes to {KIND_WORDS.get(c.release or '', 'the recipient named above')}"
        + (f" ({c.recipient})" if c.recipient else "") + ".",
        "The recipient may not try to identify any person, nor link the release with other data about them.",
        f"Data-use agreement: {c.data_use_agreement or 'none recorded'}.",
        "This determination holds for this release only; another release of the same patients needs a new one.",
    ])
    return s


# ---- the two layouts ---------------------------------------------------------------------------------------
def _ema(f: Facts) -> list[Section]:
    out = [_summary(f, "Summary of the release"), _context(f, "Context of the release and recipient"),
           Section("Methodology", False).p(
               "Direct identifiers are removed or pseudonymised; indirect identifiers (quasi-identifiers) are "
               "transformed with the techniques below; the re-identification risk is measured before and after, "
               + _unit(f, named=False) + ", and compared with a threshold chosen for the context of the release."),
           _released(f, "Direct and indirect identifiers in the release, and the technique applied"),
           _removed(f, "Columns removed from the release"), _threshold(f, "Risk threshold and its justification"),
           _initial(f, "Initial risk"), _residual(f, "Residual risk"),
           _intruder(f, "Motivated-intruder test"), _utility(f, "Utility of the release"),
           _dp(f, "Differential privacy statements (NIST SP 800-226)"),
           _composition(f, "Composition with earlier releases of this table"),
           _testing(f, "Evidence of testing"), _attestations(f, "Attestations and review date")]
    return [s for s in out if s is not None]


def _hipaa(f: Facts) -> list[Section]:
    out = [_summary(f, "Summary of the determination"), _context(f, "Anticipated recipient and context of use"),
           _released(f, "Data and identifiers: technique applied to each released column"),
           _removed(f, "Columns removed from the release"), _threat_model(f, "Threat model"),
           _intruder(f, "Motivated-intruder test"), _threshold(f, "Risk metric and threshold, with justification"),
           _initial(f, "Results before de-identification"), _residual(f, "Results after de-identification"),
           _utility(f, "Utility of the release"),
           _dp(f, "Differential privacy statements (NIST SP 800-226)"),
           _composition(f, "Composition with earlier releases of this table"),
           _conditions(f, "Conditions of the determination"), _testing(f, "Evidence of testing"),
           _attestations(f, "Attestations, expiry and review date")]
    return [s for s in out if s is not None]


def build_dossier(record: dict, recipe=None, *, layout: str = "ema", history: list[dict] | None = None,
                  verify_lines: list[str] | None = None, measure_initial: bool = True) -> Dossier:
    """The dossier of the release described by `record` (a custodian record), with the project `recipe`."""
    from ppdp_gui.engine.errors import ParameterError
    if layout not in LAYOUTS:
        raise ParameterError(f"the dossier's layout is 'ema' or 'hipaa', not {layout!r}")
    if not isinstance(record, dict) or not str(record.get("document", "")).startswith("custodian record"):
        raise ParameterError("this is not a custodian record (the file the export keeps on this computer)")
    if history is None:
        history = ledger_history(record)
    f = gather(record, recipe, history=history, verify_lines=verify_lines, measure_initial=measure_initial)
    sections = _ema(f) if layout == "ema" else _hipaa(f)
    today = _dt.date.today().isoformat()
    return Dossier(layout, LAYOUTS[layout], f"{BASIS[layout]} · release {record.get('release_id')} · "
                                            f"{record.get('mechanism')} · written {today} · ppdp_gui", sections)
