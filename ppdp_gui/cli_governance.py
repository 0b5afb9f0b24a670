"""`ppdp dossier`, `ppdp context`, `ppdp safe-harbor` and the governance options of `ppdp run` (issue 31).

The same engine functions the window calls (engine/governance); this module only parses and prints."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ppdp_gui.cli_output import say as _say
from ppdp_gui.engine.errors import DataError, ParameterError


def add_run_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--pseudonym", action="append", metavar="COLUMN",
                   help="also release COLUMN_pseudonym: a keyed pseudonym of an identifier (HMAC-SHA-256 under the "
                        "project's key, kept beside the ledger), the same in every release of the project (a project "
                        "saved with the window's Data step, Released as, already states it)")
    p.add_argument("--shift-dates", metavar="COL[,COL]:DAYS",
                   help="move every date of one patient by the same random number of days within ±DAYS (needs the "
                        "person column; dates written 2020-03-07)")
    p.add_argument("--override-threshold", metavar="REASON",
                   help="export although the release's highest re-identification risk is above the threshold of "
                        "the project's release context; the reason is kept in the custodian record")


def treatments(args, recipe, data, ledger):
    """Keyed pseudonyms and per-person date shifts: the project's (saved by the window's Data step, "Released
    as") and those of --pseudonym / --shift-dates, applied by the engine function the window calls
    (engine/governance/treatments.py). Returns (dataset, Treated)."""
    from ppdp_gui.engine.persistence import release_context as cx
    from ppdp_gui.engine.governance import treatments as tr
    ctx = cx.of(recipe)
    shift_cols, days = [], None
    if getattr(args, "shift_dates", None):
        cols, _, text = args.shift_dates.rpartition(":")
        if not cols or not text.strip().isdigit():
            raise ParameterError(f"--shift-dates {args.shift_dates!r}: write COLUMN[,COLUMN]:DAYS, e.g. "
                                 "admitted,discharged:30")
        shift_cols, days = [c.strip() for c in cols.split(",") if c.strip()], int(text)
    wanted = tr.with_options(tr.of_context(ctx), pseudonyms=list(dict.fromkeys(getattr(args, "pseudonym", None)
                                                                               or [])),
                             shift_columns=shift_cols, window_days=days)
    if not wanted.any:
        return data, tr.Treated()
    if not ctx.project_id:
        raise ParameterError("pseudonyms and date shifts use the project's own key: give the project with --recipe "
                             "(a project gets its id from `ppdp context` or the window's Tools → Release context…)")
    return tr.prepare(data, wanted, ledger_path=ledger.path, project_id=ctx.project_id)


def before_export(published, recipe, override=None, treated=None):
    """The release context's threshold gate, and the pseudonym statements added to the release's public note."""
    from ppdp_gui.engine.governance.gate import gate_published
    published = gate_published(published, recipe, override)
    if treated is not None:
        from ppdp_gui.engine.governance.treatments import finish
        published = finish(published, treated)
    return published


def check_treated(treated, exported) -> None:
    """Say what the export checked of the pseudonymised identifiers on the written file (checks/raw_values.py)."""
    if treated is None or not treated.raw:
        return
    for c in (exported.note_doc or {}).get("checked on the written file") or []:
        if str(c.get("claim", "")).startswith("no raw value of"):
            _say(f"  checked on the written file ({c.get('table')}): {c.get('claim')}")


def read_record(path) -> dict:
    p = Path(path).expanduser()
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise DataError(f"cannot read the custodian record: {exc.strerror or exc}", path=str(p)) from None
    except (UnicodeDecodeError, ValueError):
        raise DataError("not a custodian record (not JSON)", path=str(p)) from None
    if not isinstance(doc, dict) or not str(doc.get("document", "")).startswith("custodian record"):
        raise DataError("not a custodian record (the file the export keeps on this computer)", path=str(p))
    return doc


def cmd_dossier(args) -> int:
    from ppdp_gui.engine.governance.dossier import build_dossier
    from ppdp_gui.engine.governance.dossier_files import write_dossier
    from ppdp_gui.engine.persistence.project import read_recipe
    record = read_record(args.record)
    recipe = read_recipe(args.recipe) if args.recipe else None
    lines = None
    if args.verify:
        from ppdp_gui.engine.verify import verify
        verdict = None
        for item in verify(record.get("mechanism"), size="quick", seed=0):
            verdict = item
        lines = list(verdict.lines())
    dossier = build_dossier(record, recipe, layout=args.layout, verify_lines=lines)
    protected = [Path(args.record)] + ([Path(recipe.source)] if recipe is not None else [])
    out = write_dossier(dossier, args.out, protected=protected)
    _say(f"dossier ({dossier.title}) written to {out}")
    _say("  sections marked “for governance only” must not be published with the release")
    return 0


def cmd_context(args) -> int:
    """Fill in the release context of a project (the window's Tools → Release context…)."""
    import dataclasses

    from ppdp_gui.engine.persistence import release_context as cx
    from ppdp_gui.engine.persistence.project import read_recipe, write_recipe
    recipe = read_recipe(args.recipe)
    ctx = cx.of(recipe)
    changes = {}
    for key, attr in (("release", "release"), ("recipient", "recipient"), ("agreement", "data_use_agreement"),
                      ("intruder_test", "intruder_test"), ("threshold_source", "threshold_source")):
        if getattr(args, key) is not None:
            changes[attr] = getattr(args, key)
    if args.review_date is not None:
        changes["review_date"] = cx.parse_date(args.review_date, "--review-date")
    if args.threshold is not None:
        if not 0 < args.threshold <= 1:
            raise ParameterError("--threshold is a risk between 0 and 1 (for example 0.09)")
        changes["threshold"] = args.threshold
    ctx = dataclasses.replace(ctx, **changes).with_project_id()  # the id names the project's pseudonym key
    cx.context_from_json(ctx.to_json())  # the same checks as reading the project back
    cx.store(recipe, ctx)
    out = write_recipe(recipe, args.out, protected=[Path(recipe.source)])
    threshold, source = ctx.risk_threshold()
    _say(f"release context saved in {out}")
    if threshold is not None:
        _say(f"  risk threshold {threshold:.3g}: {source}")
    return 0


def cmd_safe_harbor(args) -> int:
    from ppdp_gui.cli_parse import parse_pairs, parse_role
    from ppdp_gui.engine.data.writer import export_table
    from ppdp_gui.engine.persistence import release_context as cx
    from ppdp_gui.engine.governance.safe_harbor_recipe import ATTESTATION, read_for_safe_harbor, record_in_context
    from ppdp_gui.engine.persistence.project import Recipe, read_recipe, write_recipe
    recipe = read_recipe(args.recipe) if args.recipe else None
    if recipe is None:
        if not args.input:
            raise ParameterError("give the table with --input FILE (or a project with --recipe FILE)")
        recipe = Recipe(source=args.input)
    elif args.input:
        recipe.source = args.input
    recipe.roles.update({c: parse_role(r) for c, r in parse_pairs(args.role, "role").items()})
    result, data = read_for_safe_harbor(recipe.source, recipe.roles, recipe.kinds)
    out = export_table(result.frame, args.output, source=data.source)
    _say(f"Safe Harbor table written to {out} ({len(result.frame):,} rows, {result.frame.shape[1]} columns)")
    for step in result.steps:
        _say(f"  {step.column}: {step.action} ({step.rows:,} rows; {step.rule})")
    for f in result.remaining:
        print(f"ppdp: warning: still found after Safe Harbor: {f.reason}", file=sys.stderr)
    if args.attest:
        _say(f"  attested by {args.attest}: {ATTESTATION}")
    if args.save_recipe:
        cx.store(recipe, record_in_context(cx.of(recipe), result, args.attest))
        _say(f"  project saved with what was done{' and the attestation' if args.attest else ''}: "
             f"{write_recipe(recipe, args.save_recipe, protected=[Path(recipe.source), Path(out)])}")
    return 0 if not result.remaining else 1


def cmd_value_map(args) -> int:
    from ppdp_gui.engine.data.writer import export_table
    from ppdp_gui.engine.governance.value_map import value_map
    from ppdp_gui.engine.persistence.project import read_recipe
    record = read_record(args.record)
    recipe = read_recipe(args.recipe)
    table = value_map(record, recipe)
    out = export_table(table, args.out, protected=[Path(args.record), Path(recipe.source)])
    _say(f"value map ({len(table) - 1:,} rows) written to {out}")
    _say("  custodian only — NEVER PUBLISH: it maps released values back to the source")
    return 0


def add_commands(sub) -> None:
    p = sub.add_parser("dossier", help="write the de-identification dossier of a release (Markdown or PDF)")
    p.add_argument("--record", required=True, help="the release's custodian record (JSON, from --record or the "
                                                  "ledger's records/ folder)")
    p.add_argument("--recipe", help="the project (*.ppdp.json): its release context, and the source table for the "
                                    "initial risk")
    p.add_argument("--layout", choices=["ema", "hipaa"], default="ema",
                   help="ema: EMA Policy 0070 / Health Canada anonymisation report; hipaa: HIPAA Expert "
                        "Determination dossier")
    p.add_argument("--out", required=True, help="FILE.md (to edit) or FILE.pdf")
    p.add_argument("--verify", action="store_true", help="run the quick statistical audit of a DP mechanism "
                                                         "(ppdp verify --quick) and include its verdict")
    p.set_defaults(func=cmd_dossier)
    p = sub.add_parser("context", help="fill in a project's release context (who receives it, agreement, "
                                       "motivated-intruder test, review date, risk threshold)")
    p.add_argument("--recipe", required=True, help="the project (*.ppdp.json)")
    p.add_argument("--out", required=True, help="where to save the project with its context (may be --recipe)")
    p.add_argument("--release", choices=["public", "controlled", "internal"])
    p.add_argument("--recipient")
    p.add_argument("--agreement", help="the data-use agreement (its name or reference)")
    p.add_argument("--intruder-test", help="notes of the motivated-intruder test")
    p.add_argument("--review-date", help="date the release must be reviewed (2027-06-30)")
    p.add_argument("--threshold", type=float, help="highest re-identification risk accepted (default: the value "
                                                   "proposed for the kind of release)")
    p.add_argument("--threshold-source", help="why another threshold than the proposed one")
    p.set_defaults(func=cmd_context)
    p = sub.add_parser("safe-harbor", help="apply HIPAA Safe Harbor to a table: dates to year, ages 90 or older, "
                                           "ZIP to 3 digits (000 for small areas), identifiers out")
    p.add_argument("--input", "-i", help="the table (or give --recipe)")
    p.add_argument("--recipe", help="a project: its table and the columns marked identifier or person")
    p.add_argument("--role", action="append", metavar="COL=ROLE", help="mark a column identifier or person")
    p.add_argument("--output", "-o", required=True, help="the Safe Harbor table (.csv .tsv .xlsx .parquet)")
    p.add_argument("--attest", metavar="NAME",
                   help="attest, under your name, that you have no actual knowledge that what remains could "
                        "identify a patient (kept in the project given with --save-recipe)")
    p.add_argument("--save-recipe", metavar="FILE", help="save the project with what was done and the attestation")
    p.set_defaults(func=cmd_safe_harbor)
    p = sub.add_parser("value-map", help="original → released value per column, for the governance (never publish)")
    p.add_argument("--record", required=True, help="the release's custodian record (JSON)")
    p.add_argument("--recipe", required=True, help="the project (*.ppdp.json)")
    p.add_argument("--out", required=True, help="the table to write (.csv .xlsx …)")
    p.set_defaults(func=cmd_value_map)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(0)


def add_rerun_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--changes", metavar="FILE.md", help="with --recipe and a new --input: write the report of what "
                                                        "changed in the new extract here (for governance only)")
    p.add_argument("--accept-changes", action="store_true",
                   help="release a new extract although the report of what changed lists something that stops it")


def rerun_check(args, recipe, ledger) -> None:
    """`ppdp run --recipe P --input NEW`: compare the new extract with the project's table, print the report,
    and stop (before anything is charged) when it lists something that stops the release."""
    if not (getattr(args, "recipe", None) and getattr(args, "input", None)):
        return
    import copy

    from ppdp_gui.engine.governance.rerun import compare_extracts
    from ppdp_gui.engine.persistence.project import read_recipe
    saved = read_recipe(args.recipe)
    if Path(saved.source).expanduser().resolve() == Path(args.input).expanduser().resolve():
        return
    recipe = copy.deepcopy(recipe)  # the project with this command's options, read from the project's own table
    recipe.source, recipe.source_sha256 = saved.source, saved.source_sha256
    report = compare_extracts(recipe, args.input, ledger=ledger)
    if getattr(args, "changes", None):
        from ppdp_gui.engine.data.writer import write_text_atomic
        write_text_atomic(report.markdown(), args.changes, protected=[Path(args.input), Path(recipe.source)])
    _say(f"new extract {args.input} compared with the project's table {recipe.source}:")
    for line in report.markdown().splitlines()[4:]:
        if line.startswith("- "):
            _say("  " + line)
    if report.blocking and not getattr(args, "accept_changes", False):
        raise ParameterError("the new extract has changes that stop the release: " + "; ".join(report.blocking)
                             + ". Look at them (--changes FILE.md writes the report), then pass --accept-changes.")
