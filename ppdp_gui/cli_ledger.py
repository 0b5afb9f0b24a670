"""`ppdp ledger`: the budget spent per table, its releases and cap changes, the tamper-evident chain, and the
custodian's deliberate acts on it (`ledger cap … --reason`, `ledger acknowledge --reason`). Only parses and prints;
the ledger itself is engine/privacy."""

from __future__ import annotations


from ppdp_gui.cli_output import say as _say
from ppdp_gui.cli_parse import parse_fraction
from ppdp_gui.engine.claims import epsilon_text
from ppdp_gui.engine.errors import ParameterError


def open_ledger(path):
    from ppdp_gui.engine.privacy.ledger import Ledger
    return Ledger(path) if path else Ledger()


def cmd_ledger(args) -> int:
    ledger = open_ledger(args.ledger)
    action = list(args.action or [])
    if action:
        return _ledger_action(ledger, action, args)
    rows = ledger.datasets()
    _say(f"ledger {ledger.path}: {len(rows)} dataset(s)")
    for ds in rows:
        from ppdp_gui.engine.privacy.ledger_types import REPLACE, units_note
        parts = [ds.fingerprint[:16], ds.label or "(no label)",
                 f"spent ε = {epsilon_text(ds.spent)} ({ds.spent}){units_note(ds)}",
                 f"cap {epsilon_text(ds.cap)}" if ds.cap is not None else "no cap", f"{ds.releases} release(s)"]
        if ds.budget and ds.budget != ds.fingerprint:
            share = f" (about {100 * ds.similarity:.0f} % of rows shared)" if ds.similarity is not None else ""
            parts.append(f"near copy: shares the budget of {ds.budget[:16]}{share}")
        if ds.separate_from:
            parts.append(f"declared separate from {ds.separate_from[:16]} by {ds.separate_by or '?'} on "
                         f"{ds.separate_at or '?'}")
        _say("  " + "  ".join(parts))
        if args.entries:
            for e in ledger.entries(ds.fingerprint):
                _say(f"      #{e.id} {e.created} {e.mechanism} ε={e.epsilon}"
                     + (" (one record replaced)" if e.neighbouring == REPLACE else "")
                     + f" output {(e.output_hash or '-')[:12]}"
                     + (f" release {e.release_id}" if e.release_id else ""))
    changes = ledger.cap_changes()
    if args.entries and changes:
        _say("cap changes:")
        for c in changes:
            _say(f"  {c.at} {c.budget[:16]} cap {c.old if c.old is not None else 'none'} -> {c.new} by "
                 f"{c.who or '?'}: {c.reason}")
    report = ledger.chain_report
    if args.check or (report is not None and not report.ok):
        for line in (report.lines() if report is not None else
                     ["the ledger's chain cannot be checked: its key is missing or damaged"]):
            _say(line)
    if args.csv or args.tables_csv:
        from ppdp_gui.engine.data.outputs import OutputPlan
        from ppdp_gui.engine.data.writer import export_table
        from ppdp_gui.engine.privacy.overview import dataset_table, entry_table
        outputs = OutputPlan(ledger=ledger, overwrite=args.overwrite,
                             inputs=[d.label for d in rows if d.label])  # the tables released from
        outputs.add(args.csv, "the releases table")
        outputs.add(args.tables_csv, "the tables table")
        outputs.check()
        if args.csv:
            _say(f"releases written to {export_table(entry_table(ledger), args.csv, protected=outputs.guard)}")
        if args.tables_csv:
            _say(f"tables written to {export_table(dataset_table(ledger), args.tables_csv, protected=outputs.guard)}")
    return 1 if args.check and (report is None or not report.ok) else 0


def _ledger_action(ledger, action: list[str], args) -> int:
    """`ppdp ledger cap DATASET VALUE --reason …` and `ppdp ledger acknowledge --reason …`."""
    what = action[0].lower()
    if what == "cap":
        if len(action) != 3:
            raise ParameterError("use: ppdp ledger cap DATASET VALUE --reason \"…\" (DATASET: the start of its "
                                 "fingerprint or its file name, as ppdp ledger shows)")
        if not (args.reason or "").strip():
            raise ParameterError("changing a cap is the custodian's deliberate decision: say why with --reason \"…\"")
        group = ledger.find(action[1])
        before = ledger.cap(group)
        ledger.set_cap(group, parse_fraction(action[2]), reason=args.reason)
        _say(f"cap of {group[:16]} changed from {before} to {ledger.cap(group)} (recorded: who, when, why)")
        return 0
    if what in ("acknowledge", "ack"):
        if len(action) != 1:
            raise ParameterError("use: ppdp ledger acknowledge --reason \"…\"")
        report = ledger.check()
        for line in report.lines():
            _say(line)
        ack = ledger.acknowledge(args.reason or "")
        _say(f"acknowledged by {ack['who'] or '?'} at {ack['at']} (recorded): {ack['reason']}")
        return 0
    raise ParameterError(f"unknown ledger action {action[0]!r}; use cap or acknowledge")


def add_ledger_command(sub) -> None:
    p = sub.add_parser("ledger", help="privacy budget spent per dataset; `ledger cap DATASET VALUE --reason …` "
                                      "changes a cap, `ledger acknowledge --reason …` accepts a changed ledger")
    p.add_argument("action", nargs="*", metavar="ACTION",
                   help="cap DATASET VALUE (with --reason) or acknowledge (with --reason)")
    p.add_argument("--reason", help="why (recorded in the ledger with who and when)")
    p.add_argument("--check", action="store_true",
                   help="check the ledger's tamper-evident chain (exit 1 if it was changed outside ppdp_gui)")
    p.add_argument("--overwrite", action="store_true", help="let --csv/--tables-csv replace an existing file")
    p.add_argument("--ledger", help="privacy ledger file")
    p.add_argument("--entries", action="store_true", help="list every release too")
    p.add_argument("--csv", help="write every release charged (one row each) to this table (.csv/.xlsx/.parquet)")
    p.add_argument("--tables-csv", help="write every known table with its budget group to this table")
    p.set_defaults(func=cmd_ledger)
