"""The `ppdp` command: the same engine as the GUI, without a window.

Every engine failure (a PpdpError) is printed as one line and exits with code 2; a traceback means a bug.
Real releases go through `run_release`, so the budget is reserved in the ledger before anything is computed.
"""

from __future__ import annotations

import argparse
import re
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any

from ppdp_gui.engine.errors import ParameterError, PpdpError

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "resources" / "samples" / "adult_sample.csv"
ROLE_ALIASES = {"qi": "quasi-identifier", "quasi": "quasi-identifier", "id": "identifier", "sa": "sensitive",
                "label": "class", "target": "class", "other": "insensitive"}


# ---- small parsers ------------------------------------------------------------------------------------------
def parse_pairs(items: list[str] | None, what: str) -> dict[str, str]:
    """["a=1", "b=x"] -> {"a": "1", "b": "x"}; a missing '=' is a ParameterError naming the option."""
    out: dict[str, str] = {}
    for item in items or []:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise ParameterError(f"--{what} expects NAME=VALUE, got {item!r}")
        out[name.strip()] = value.strip()
    return out


def parse_role(text: str):
    from ppdp_gui.engine.data.schema import Role
    key = ROLE_ALIASES.get(text.strip().lower(), text.strip().lower().replace("_", "-"))
    for role in Role:
        if key in (role.value, role.name.lower().replace("_", "-")):
            return role
    raise ParameterError(f"unknown role {text!r}; use one of {', '.join(r.value for r in Role)} (or qi, id, sa)")


def parse_fraction(text: str) -> Fraction:
    try:
        value = Fraction(str(text).strip())
    except (ValueError, ZeroDivisionError):
        raise ParameterError(f"{text!r} is not a number (use e.g. 1, 0.5 or 1/2)") from None
    if value <= 0:
        raise ParameterError(f"the budget cap must be positive, got {text}")
    return value


def _say(*parts: Any) -> None:
    print(*parts, flush=True)


def _warn(message: str) -> None:
    print(f"ppdp: warning: {message}", file=sys.stderr, flush=True)


# ---- loading ------------------------------------------------------------------------------------------------
def load_dataset(path, *, roles=None, kinds=None, taxonomies=None, bundled: str | None = None, na: str = "drop"):
    """read_table + roles/kinds + taxonomies (ARX hierarchy files, or the bundled Adult ones by column name)."""
    from ppdp_gui.engine.data import NAPolicy, read_table
    from ppdp_gui.engine.taxonomy import bundled_adult_taxonomies, read_arx_hierarchy
    role_map = {col: parse_role(r) for col, r in (roles or {}).items()}
    data = read_table(path, na_policy=NAPolicy(action=na), kinds=kinds or None, roles=role_map or None)
    if bundled == "adult":
        for col, tax in bundled_adult_taxonomies().items():
            if col in data.frame.columns:
                data = data.with_column(col, taxonomy=tax)
    for col, tax_path in (taxonomies or {}).items():
        if col not in data.frame.columns:
            raise ParameterError(f"--taxonomy {col}=...: the table has no column {col!r}")
        data = data.with_column(col, taxonomy=read_arx_hierarchy(tax_path, column=col))
    return data


def open_ledger(path):
    from ppdp_gui.engine.privacy.ledger import Ledger
    return Ledger(path) if path else Ledger()


def _entry_object(ledger, fingerprint: str, entry_id):
    for entry in ledger.entries(fingerprint):
        if getattr(entry, "id", None) == entry_id:
            return entry
    return entry_id


def _budget_line(ledger, fingerprint: str) -> str:
    spent, cap = ledger.spent(fingerprint), ledger.cap(fingerprint)
    line = f"ε spent on this dataset so far: {float(spent):.4g} ({spent})"
    if cap is not None:
        line += f"; cap {float(cap):.4g}, remaining {float(ledger.remaining(fingerprint)):.4g}"
    return line


def _drain(gen, show_progress: bool):
    from ppdp_gui.engine.mechanisms.base import Progress
    last = None
    for item in gen:
        if isinstance(item, Progress):
            if show_progress:
                print(f"\r{item.fraction:4.0%} {item.message[:70]:<70}", end="", file=sys.stderr, flush=True)
        else:
            last = item
    if show_progress:
        print(file=sys.stderr)
    return last


def _export_release(release, data, output) -> tuple[Path, list[Path]]:
    from ppdp_gui.engine.data.writer import export_table
    out = export_table(release.table, output, source=data.source)
    extra = []
    for name, table in release.extra_tables.items():
        slug = re.sub(r"[^0-9A-Za-z]+", "_", str(name)).strip("_") or "extra"
        extra.append(export_table(table, out.with_name(f"{out.stem}.{slug}{out.suffix}"), source=data.source))
    return out, extra


def release_to_files(mechanism: str, data, params: dict, *, output, report=None, ledger=None,
                     show_progress=False) -> dict:
    """Run one charged release, export it (and its extra tables) and its report; return what happened."""
    from ppdp_gui.engine.data.writer import write_json_atomic
    from ppdp_gui.engine.persistence.report import release_report
    from ppdp_gui.engine.pipeline.release import run_release
    release = _drain(run_release(mechanism, data, params, ledger=ledger), show_progress)
    out, extra = _export_release(release, data, output)
    fingerprint = ledger.fingerprint(data.frame) if ledger is not None else None
    entry = release.metadata.get("ledger_entry")
    if entry is not None and ledger is not None:
        entry = _entry_object(ledger, fingerprint, entry)
    report_path = None
    if report:
        doc = release_report(release, data, ledger_entry=entry, fingerprint=fingerprint, output_path=out)
        report_path = write_json_atomic(doc, report)
    return {"release": release, "output": out, "extra": extra, "report": report_path, "fingerprint": fingerprint}


# ---- commands -----------------------------------------------------------------------------------------------
def cmd_inspect(args) -> int:
    from ppdp_gui.engine.data import NAPolicy, kind_rule_text, read_table, role_rule_text
    policy = NAPolicy(action="category")
    data = read_table(args.file, na_policy=policy)
    frame, src = data.frame, data.source
    _say(f"{src.path}: {src.file_format}, {src.n_rows_read:,} rows, {frame.shape[1]} columns")
    width = max([len(c.name) for c in data.schema] + [6])
    _say(f"  {'column':<{width}}  {'kind':<11}  {'guessed role':<16}  {'distinct':>8}  {'missing':>7}")
    any_missing = None
    for spec in data.schema:
        col = frame[spec.name]
        miss = col.isna() if spec.kind == "numeric" else (col.astype(str) == policy.category_label)
        any_missing = miss if any_missing is None else (any_missing | miss)
        distinct = int(col[~miss].nunique())
        _say(f"  {spec.name:<{width}}  {spec.kind:<11}  {spec.role.value:<16}  {distinct:>8,}  {int(miss.sum()):>7,}")
    dropped = 0 if any_missing is None else int(any_missing.sum())
    _say(f"rows with a missing value (dropped by the default policy): {dropped:,}")
    _say("\nHow kinds are decided:\n" + kind_rule_text())
    _say("\n" + role_rule_text())
    return 0


def _describe_param(p) -> str:
    if p.kind in ("float", "int"):
        rng = f" in [{p.low if p.low is not None else '-∞'}, {p.high if p.high is not None else '∞'}]"
        kind = p.kind + rng + (", log scale" if p.log_scale else "")
    elif p.kind == "choice":
        kind = "one of: " + " | ".join(p.choices)
    elif p.kind == "columns":
        kind = "column names, comma separated"
    elif p.kind == "column":
        kind = "a column name"
    else:
        kind = p.kind
    default = "none" if p.default in (None, "", ()) else p.default
    return f"{p.name} = {kind}; default {default}{' (optional)' if p.optional else ''}"


def cmd_mechanisms(args) -> int:
    from ppdp_gui.engine.mechanisms import registry
    for name in registry.names():
        try:
            cls = registry.get(name)
        except (ImportError, AttributeError) as exc:
            _say(f"{name}: not available ({exc})")
            continue
        _say(f"{name}  [{cls.guarantee}]")
        if getattr(cls, "summary", ""):
            _say(f"  {cls.summary}")
        for p in cls.params:
            _say(f"    --param {_describe_param(p)}")
            if p.help:
                _say(f"        {p.label}: {p.help}")
        _say("")
    return 0


def cmd_run(args) -> int:
    data = load_dataset(args.input, roles=parse_pairs(args.role, "role"), kinds=parse_pairs(args.kind, "kind"),
                        taxonomies=parse_pairs(args.taxonomy, "taxonomy"), bundled=args.bundled_taxonomies,
                        na=args.na)
    from ppdp_gui.engine.pipeline.release import resolve_mechanism, validate_or_raise
    validate_or_raise(resolve_mechanism(args.mechanism), data, parse_pairs(args.param, "param"))  # before the ledger
    ledger = open_ledger(args.ledger)
    if args.cap is not None:
        ledger.set_cap(ledger.fingerprint(data.frame), parse_fraction(args.cap), label=data.source.path or "")
    done = release_to_files(args.mechanism, data, parse_pairs(args.param, "param"), output=args.output,
                            report=args.report, ledger=ledger, show_progress=sys.stderr.isatty())
    release = done["release"]
    for w in release.metadata.get("warnings", []):
        _warn(w)
    _say(f"{release.mechanism}: {release.cost.describe()}; {len(release.table):,} rows x "
         f"{release.table.shape[1]} columns written to {done['output']}")
    for path in done["extra"]:
        _say(f"  also written: {path}")
    check = release.metadata.get("check")
    if check:
        _say(f"  independent check: {check['message'] or 'passed'} (smallest class {check['min_class']})")
    if release.cost.is_dp:
        _say("  " + _budget_line(ledger, done["fingerprint"]))
    if done["report"]:
        _say(f"  report: {done['report']}")
    return 0


def cmd_ledger(args) -> int:
    ledger = open_ledger(args.ledger)
    rows = ledger.datasets()
    _say(f"ledger {getattr(ledger, 'path', '')}: {len(rows)} dataset(s)")
    for ds in rows:
        fp = getattr(ds, "fingerprint", "")
        spent = getattr(ds, "spent", None)
        cap = getattr(ds, "cap", None)
        parts = [f"{str(fp)[:16]}", getattr(ds, "label", "") or "(no label)"]
        if spent is not None:
            parts.append(f"spent ε = {float(spent):.4g} ({spent})")
        parts.append(f"cap {float(cap):.4g}" if cap is not None else "no cap")
        n = getattr(ds, "releases", getattr(ds, "n_releases", None))
        if n is not None:
            parts.append(f"{n} release(s)")
        _say("  " + "  ".join(parts))
        if args.entries:
            for e in ledger.entries(fp):
                eps = getattr(e, "epsilon", None)
                _say(f"      #{getattr(e, 'id', '?')} {getattr(e, 'created', getattr(e, 'time', ''))} "
                     f"{getattr(e, 'mechanism', '')} ε={eps} output {str(getattr(e, 'output_hash', '') or '-')[:12]}")
    return 0


def cmd_sweep(args) -> int:
    from ppdp_gui.engine.data.writer import export_table
    from ppdp_gui.engine.pipeline.sweep import run_sweep
    data = load_dataset(args.input, roles=parse_pairs(args.role, "role"), kinds=parse_pairs(args.kind, "kind"),
                        taxonomies=parse_pairs(args.taxonomy, "taxonomy"), bundled=args.bundled_taxonomies,
                        na=args.na)
    grid = {k: [v.strip() for v in vals.split(",") if v.strip()] for k, vals in parse_pairs(args.grid, "grid").items()}
    result = _drain(run_sweep(args.mechanism, data, parse_pairs(args.param, "param"), grid, repeats=args.repeats,
                              holdout=args.holdout, seed=args.seed), sys.stderr.isatty())
    _say(f"sweep of {result.mechanism} (simulation on your own data: nothing charged, nothing to publish); "
         f"{result.n_train:,} rows used, {result.n_test:,} held out")
    _say(result.summary().to_string())
    for name, value in result.reference.items():
        _say(f"reference {name}: {value:.4g}")
    if args.output:
        _say(f"rows written to {export_table(result.rows, args.output, source=data.source)}")
    return 0


def _demo_params(cls, class_column: str) -> dict[str, Any]:
    """DiffGen's parameters for the paper's setting (ε = 1, h = 10, class salary-class), found by name/kind."""
    params: dict[str, Any] = {}
    for p in cls.params:
        if p.name.lower() in ("epsilon", "eps"):
            params[p.name] = 1.0
        elif p.name.lower() in ("h", "specialisations", "specializations", "steps"):
            params[p.name] = 10
        elif p.kind == "column" and ("class" in p.name.lower() or any(r.value == "class" for r in p.roles)):
            params[p.name] = class_column
    return params


def cmd_demo(args) -> int:
    from ppdp_gui.engine.mechanisms import registry
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    data = load_dataset(args.sample or SAMPLE, roles={"salary-class": "class"}, bundled="adult")
    with_tax = [c.name for c in data.schema if c.taxonomy is not None]
    _say(f"loaded {data.source.path}: {data.n_rows:,} rows, {data.frame.shape[1]} columns; "
         f"quasi-identifiers {', '.join(data.quasi_identifiers)}; class {data.class_column}")
    _say(f"bundled ARX taxonomies attached to {len(with_tax)} columns: {', '.join(with_tax)}")
    if "DiffGen" in registry.names():
        name = "DiffGen"
        params = _demo_params(registry.get(name), "salary-class")
    else:
        name = "Laplace histogram"
        params = {"epsilon": 1.0, "columns": "age,sex,salary-class", "bin_width": 10}
    ledger = open_ledger(out_dir / "ledger.sqlite")
    done = release_to_files(name, data, params, output=out_dir / "release.csv", report=out_dir / "report.json",
                            ledger=ledger)
    release = done["release"]
    shown = ", ".join(f"{k}={v}" for k, v in release.params.items() if v not in (None, "", ()))
    _say(f"ran {name} ({registry.get(name).guarantee}) with {shown}")
    _say(f"cost {release.cost.describe()}, reserved before computing in {out_dir / 'ledger.sqlite'}; "
         + _budget_line(ledger, done["fingerprint"]))
    _say(f"release: {len(release.table):,} rows x {release.table.shape[1]} columns -> {done['output']} "
         f"(sha256 {release.metadata['output_hash'][:16]}…)")
    _say(f"report: {done['report']}")
    from ppdp_gui.engine.pipeline.sweep import run_sweep
    sim = _drain(run_sweep(name, data, params, {}, repeats=1, holdout=1 / 3, seed=0), False)
    figures = {**{k: float(v) for k, v in sim.rows.drop(columns=["repeat", "seconds"]).iloc[0].items()},
               **sim.reference}
    _say(f"figures from a simulation on a {sim.n_train:,} / {sim.n_test:,} train/test split "
         "(the custodian's own check: not charged, not published):")
    for key, value in figures.items():
        _say(f"  {key}: {value:.4g}")
    return 0


# ---- argument parsing ---------------------------------------------------------------------------------------
def _data_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--input", "-i", required=True, help="table to read (CSV/TSV, .gz, XLSX, Parquet)")
    p.add_argument("--role", action="append", metavar="COL=ROLE",
                   help="column role: identifier, quasi-identifier (qi), sensitive, class, insensitive")
    p.add_argument("--kind", action="append", metavar="COL=KIND", help="numeric or categorical")
    p.add_argument("--taxonomy", action="append", metavar="COL=PATH", help="ARX hierarchy CSV for a column")
    p.add_argument("--bundled-taxonomies", choices=["adult"], help="attach the bundled ARX Adult hierarchies")
    p.add_argument("--na", choices=["drop", "category"], default="drop",
                   help="rows with a missing value: drop them (default) or keep 'missing' as a category")
    p.add_argument("--param", "-p", action="append", metavar="NAME=VALUE", help="mechanism parameter")


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="ppdp", description="Publish privacy-preserving versions of tables.")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")
    p = sub.add_parser("inspect", help="show a table's columns, kinds, guessed roles and missing values")
    p.add_argument("file")
    p.set_defaults(func=cmd_inspect)
    p = sub.add_parser("mechanisms", help="list the mechanisms and their parameters")
    p.set_defaults(func=cmd_mechanisms)
    p = sub.add_parser("run", help="make one release (charged to the privacy ledger)")
    p.add_argument("mechanism", help="mechanism name, e.g. 'Laplace histogram' (see `ppdp mechanisms`)")
    _data_options(p)
    p.add_argument("--output", "-o", required=True, help="released table (.csv .tsv .xlsx .parquet)")
    p.add_argument("--report", help="write the release report (JSON) here")
    p.add_argument("--ledger", help="privacy ledger file (default $PPDP_LEDGER or the user's data folder)")
    p.add_argument("--cap", help="set the dataset's total ε cap before the release (e.g. 2 or 1/2)")
    p.set_defaults(func=cmd_run)
    p = sub.add_parser("ledger", help="privacy budget spent per dataset")
    p.add_argument("--ledger", help="privacy ledger file")
    p.add_argument("--entries", action="store_true", help="list every release too")
    p.set_defaults(func=cmd_ledger)
    p = sub.add_parser("sweep", help="simulate a mechanism over a parameter grid (never charged)")
    p.add_argument("mechanism")
    _data_options(p)
    p.add_argument("--grid", "-g", action="append", required=True, metavar="NAME=V1,V2,...")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--holdout", type=float, default=1 / 3, help="share held out for testing (0 for none)")
    p.add_argument("--seed", type=int, help="make the simulation reproducible")
    p.add_argument("--output", "-o", help="write every run's figures to this table")
    p.set_defaults(func=cmd_sweep)
    p = sub.add_parser("demo", help="release the bundled Adult sample with DiffGen (or the Laplace histogram)")
    p.add_argument("--out", required=True, help="folder for release.csv, report.json and the demo's ledger")
    p.add_argument("--sample", help=argparse.SUPPRESS)
    p.set_defaults(func=cmd_demo)
    return ap


def main(argv=None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse already printed its one-line usage error
        return int(exc.code or 0)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except PpdpError as exc:
        print(f"ppdp: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("ppdp: cancelled", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into e.g. `head`, which stopped reading
        import os
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(main())
