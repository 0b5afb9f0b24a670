"""The `ppdp` command: the same engine as the GUI, without a window.

Every engine failure (a PpdpError) is printed as one line and exits with code 2; a traceback means a bug.
`ppdp verify` (and `ppdp verify --pipeline`) exits 0 when the mechanism passes its privacy audit and 1 when it fails.
Real releases go through `run_release`, so the budget is reserved in the ledger before anything is computed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ppdp_gui.cli_ledger import add_ledger_command, open_ledger
from ppdp_gui.cli_output import say as _say, warn as _warn
from ppdp_gui.cli_parse import parse_builds, parse_domain, parse_fraction, parse_pairs, parse_role  # noqa: F401
from ppdp_gui.engine.errors import ParameterError, PpdpError


# ---- loading: a recipe (from --recipe and/or the options), then the engine's one loader --------------------
def make_recipe(args):
    """The recipe of a run: a project file if given, with the command-line options applied on top."""
    from ppdp_gui.engine.data.schema import NAPolicy
    from ppdp_gui.engine.persistence.project import Recipe, read_recipe
    recipe = read_recipe(args.recipe) if getattr(args, "recipe", None) else None
    if recipe is None:
        if not args.input:
            raise ParameterError("give the table with --input FILE (or a project with --recipe FILE)")
        recipe = Recipe(source=args.input)
    elif args.input:
        recipe.source = args.input
    if args.na or getattr(args, "leave_out", None):
        pol = recipe.na_policy
        recipe.na_policy = NAPolicy(tokens=pol.tokens, action=args.na or pol.action,
                                    category_label=pol.category_label,
                                    leave_out=tuple(dict.fromkeys(pol.leave_out + tuple(args.leave_out or ()))),
                                    mostly_missing=pol.mostly_missing)
    recipe.roles.update({col: parse_role(r) for col, r in parse_pairs(args.role, "role").items()})
    recipe.kinds.update(parse_pairs(args.kind, "kind"))
    recipe.taxonomy_files.update(parse_pairs(args.taxonomy, "taxonomy"))
    builds = parse_builds(getattr(args, "build_taxonomy", None), parse_pairs(args.taxonomy, "taxonomy"))
    for col in builds:  # the command line wins over a tree the project file holds for the column
        recipe.taxonomies.pop(col, None)
        recipe.taxonomy_files.pop(col, None)
    recipe.taxonomy_builds.update(builds)
    if args.bundled_taxonomies:
        recipe.bundled = args.bundled_taxonomies
    recipe.domains.update({c: parse_domain(c, v) for c, v in parse_pairs(getattr(args, "domain", None),
                                                                         "domain").items()})
    if getattr(args, "param", None):
        recipe.params.update(parse_pairs(args.param, "param"))
    if getattr(args, "allow_data_domains", False):
        recipe.allow_data_domains = True
    return recipe


def load_dataset(args):
    from ppdp_gui.engine.pipeline.load import load
    recipe = make_recipe(args)
    engine = getattr(args, "engine", None) or "memory"
    if engine == "auto":
        from ppdp_gui.engine.pipeline.load import choose_engine
        engine = choose_engine(recipe.source, getattr(args, "mechanism", None) or recipe.mechanism)
        if engine == "duckdb":
            _warn("the table is large: it stays on disk and is counted with SQL (DuckDB); --engine memory "
                  "loads it whole instead")
    loaded = load(recipe, engine=engine, spark_master=getattr(args, "spark_master", None))
    for note in loaded.notes:
        _warn(note)
    return recipe, loaded


def _budget_line(budget) -> str:
    if budget is None:
        return ""
    from ppdp_gui.engine.privacy.ledger_types import units_note
    # units_note: empty for add/remove-only tables; else the total is for one record replaced (combined_total)
    from ppdp_gui.engine.claims import epsilon_text
    shown = epsilon_text(budget.spent)
    exact = "" if shown == str(budget.spent) else f" ({budget.spent})"  # the exact sum only when it differs
    line = f"ε spent on this table so far: {shown}{exact}{units_note(budget)}"
    if budget.cap is not None:
        line += f"; cap {epsilon_text(budget.cap)}, remaining {epsilon_text(budget.remaining)}"
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


def recipe_inputs(recipe, args=None) -> list[str]:
    """Every file a run reads besides the table: the project (--recipe) and the hierarchies (--taxonomy or the
    project's). No output may be written over one of them (data/outputs.py)."""
    found = [getattr(args, "recipe", None), recipe.source, *recipe.taxonomy_files.values()]
    return [str(p) for p in found if p]


def publish(recipe, dataset, *, output, note=None, record=None, ledger=None,
            show_progress=False, pdf=False, publish_as_is=(), override=None, treated=None, inputs=(),
            overwrite=False):
    """plan → run_release → export: the same three engine calls the window makes. Returns (published, exported).
    Every output is checked first (data/outputs.py), so a refused output costs no ε."""
    from ppdp_gui.engine.pipeline import export, plan
    from ppdp_gui.engine.pipeline.release import charged_release
    from ppdp_gui.engine.pipeline.export import check_outputs
    outputs = check_outputs(output, note_path=note, record_path=record, source=dataset.source, ledger=ledger,
                            inputs=[*recipe_inputs(recipe), *inputs], overwrite=overwrite, pdf=pdf)
    if not recipe.mechanism:
        raise ParameterError("name the mechanism (e.g. ppdp run DiffGen …), or give a project that names one")
    planned = plan(dataset, recipe.mechanism, recipe.params, ledger=ledger,
                   allow_data_domains=recipe.allow_data_domains, separate_dataset=recipe.separate_dataset,
                   publish_as_is=tuple(dict.fromkeys([*recipe.publish_as_is, *(publish_as_is or ())])))
    run = charged_release(planned, ledger=ledger)  # the engine's guards first: errors, no ledger, over budget
    for found in planned.linkable:  # the Run step's "Columns someone else could know"
        _warn(found.reason + f" In ppdp: --role {found.column}=quasi-identifier, or --leave-out {found.column}.")
    published = _drain(run, show_progress)
    from ppdp_gui.cli_governance import before_export  # risk threshold gate, pseudonym note (issue 31)
    published = before_export(published, recipe, override, treated)
    exported = export(published, output, note_path=note, record_path=record, ledger=ledger, pdf=pdf,
                      protected=outputs.guard)
    return published, exported


def _say_published(published, exported) -> None:
    _say(f"{published.mechanism}: {published.guarantee_line()}")
    from ppdp_gui.engine.pipeline.published import syntactic_unit
    if (unit := syntactic_unit(published)) is not None:  # what k counts: persons, or rows
        _say(f"  {unit}")
    rows = published.release.records.n_rows if published.release.records is not None else len(published.table)
    _say(f"  {rows:,} rows x {published.table.shape[1]} columns written to {exported.files[0]}")
    for path in exported.files[1:]:
        _say(f"  also written: {path}")
    if exported.checks:
        ok = all(c.ok for c in exported.checks)
        _say(f"  independent check on the written file: {len(exported.checks)} claim(s) recounted, "
             + ("all hold" if ok else "FAILED"))
    pdf = " (and .pdf)" if getattr(exported, "pdf", False) else ""
    if exported.note:
        _say(f"  release note (publish it with the file): {exported.note}{pdf}")
    if exported.record:
        _say(f"  custodian record (keep it on this computer, do not publish): {exported.record}{pdf}")
    if published.budget is not None:
        _say("  " + _budget_line(published.budget))


# ---- commands -----------------------------------------------------------------------------------------------
def cmd_inspect(args) -> int:
    """`ppdp inspect` (cli_inspect.py)."""
    from ppdp_gui.cli_inspect import inspect_command
    return inspect_command(args)


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


def cmd_builders(args) -> int:
    """The taxonomy builders of --build-taxonomy: the registry the window's Taxonomies step also offers."""
    from ppdp_gui.engine.taxonomy.registry import BUILDERS
    for b in BUILDERS:
        _say(f"{b.spelling}  [{b.label}{'; public' if b.public else ''}]")
        _say(f"  {b.help}")
        for p in b.params:
            _say(f"    {p.name.upper() if p.name != 'date_format' else 'FORMAT'}: {p.help}")
        _say("")
    return 0


def cmd_run(args) -> int:
    if args.target_error is not None:
        return plan_epsilon(args)
    if not args.output:
        raise ParameterError("--output is required (or --target-error, which only proposes ε)")
    if args.mechanism:
        args_mech = args.mechanism
    else:
        args_mech = None
    recipe, loaded = load_dataset(args)
    if args_mech:
        recipe.mechanism = args_mech
    if args.separate_dataset:  # kept in the recipe, as the window keeps its tick in the project
        recipe.separate_dataset = True
    ledger = open_ledger(args.ledger)
    data = loaded.dataset
    if args.confirm_roles:  # the custodian's confirmation of the guesses shown (ColumnSpec.guessed)
        data = data.confirm_guesses()
    from ppdp_gui.cli_governance import rerun_check  # a new extract of a project: what changed (issue 31)
    rerun_check(args, recipe, ledger)
    if args.cap is not None:
        identity = ledger.identify(data, label=data.source.path or "", separate=recipe.separate_dataset)
        ledger.set_cap(identity, parse_fraction(args.cap))
    from ppdp_gui.cli_governance import check_treated, treatments  # pseudonyms, date shifts (issue 31)
    data, treated = treatments(args, recipe, data, ledger)
    published, exported = publish(recipe, data, output=args.output, note=args.report, record=args.record,
                                  ledger=ledger, show_progress=sys.stderr.isatty(),
                                  pdf=args.pdf, publish_as_is=(*(args.publish_as_is or ()), *treated.confirmed),
                                  override=getattr(args, "override_threshold", None), treated=treated,
                                  inputs=recipe_inputs(recipe, args), overwrite=args.overwrite)
    check_treated(treated, exported)
    for w in published.warnings:
        if "and no taxonomy" in w:  # the engine's advice names the window's Taxonomies step; say the option too
            w += " In ppdp: --build-taxonomy COL=dates (or intervals, mask, icd9, icd10, flat)."
        _warn(w)
    _say_published(published, exported)
    for kept in exported.kept_notes:
        _say(f"  the release note of an earlier release found there was kept as {kept}")
    return 0


def plan_epsilon(args) -> int:
    """--target-error: propose the smallest ε meeting the error, without running or charging anything."""
    from ppdp_gui.engine.mechanisms import registry
    from ppdp_gui.engine.mechanisms.target_error import propose_epsilon
    recipe, loaded = load_dataset(args)
    mech = registry.create(args.mechanism or recipe.mechanism)
    params = mech.resolve_params(**recipe.params)
    proposal = propose_epsilon(mech, loaded.dataset, params, args.target_error)
    _say(proposal.words)
    if proposal.epsilon is not None:
        _say(f"to release with it: the same command with -p epsilon={float(proposal.epsilon):g} and --output "
             "(in the window: type it into 'Privacy budget ε' in the Mechanism step)")
    return 0 if proposal.epsilon is not None else 1


def cmd_sweep(args) -> int:
    import copy
    from ppdp_gui.engine.data.writer import export_table
    from ppdp_gui.engine.pipeline.proxy import DP_COPY, OWN, PUBLIC, cost_words, default_basis
    from ppdp_gui.engine.pipeline.sweep import simulate
    recipe, loaded = load_dataset(args)
    data = loaded.dataset
    grid = {k: [v.strip() for v in vals.split(",") if v.strip()] for k, vals in parse_pairs(args.grid, "grid").items()}
    on = ({"dp-copy": DP_COPY, "public": PUBLIC, "own": OWN}[args.on] if args.on
          else default_basis(args.mechanism, bool(args.public_table)))
    public = ledger = None
    if on == PUBLIC:
        if not args.public_table:
            raise ParameterError("--on public needs --public-table FILE (a public table with the same columns)")
        pub_args = copy.copy(args)
        pub_args.input = args.public_table
        public = load_dataset(pub_args)[1].dataset
    eps = parse_fraction(args.proxy_epsilon)
    if on == DP_COPY:
        ledger = open_ledger(args.ledger)
        if args.confirm_roles:  # the copy is a DP release: it needs the roles and kinds confirmed, as `run`
            data = data.confirm_guesses()
    _say(cost_words(on, eps))
    result = _drain(simulate(args.mechanism, data, recipe.params, grid, on=on, ledger=ledger, proxy_epsilon=eps,
                             public=public, repeats=args.repeats, holdout=args.holdout, seed=args.seed),
                    sys.stderr.isatty())
    charged = "nothing charged" if not result.basis.epsilon else f"ε = {float(result.basis.epsilon):g} charged"
    _say(f"sweep of {result.mechanism} (simulation on {result.basis.kind}: {charged}; nothing to publish); "
         f"{result.n_train:,} rows used, {result.n_test:,} held out")
    _say(result.basis.words)
    if ledger is not None:
        _say(_budget_line(ledger.budget(ledger.identify(data, label=data.source.path or ""))))
    _say(result.summary().to_string())
    for name, value in result.reference.items():
        _say(f"reference {name}: {value:.4g}")
    if args.output:
        from ppdp_gui.engine.data.outputs import OutputPlan
        outputs = OutputPlan(source=data.source, inputs=recipe_inputs(recipe, args), overwrite=args.overwrite)
        outputs.add(args.output, "the sweep's figures")
        outputs.check()
        _say(f"rows written to {export_table(result.rows, args.output, source=data.source, protected=outputs.guard)}")
    return 0


def cmd_verify(args) -> int:
    """The statistical DP audit of one mechanism on its built-in tables (or, with --pipeline, of every DP
    mechanism or the one named, on neighbouring files through the whole publish path): 0 on PASS, 1 on FAIL."""
    from ppdp_gui.engine.verify import verify
    size = args.size or ("quick" if args.quick else "full")
    if args.pipeline:
        from ppdp_gui.engine.verify.pipeline_audit import audited_mechanisms, verify_pipeline
        names = [args.mechanism] if args.mechanism else audited_mechanisms()
        passed = True
        for name in names:
            verdict = _drain(verify_pipeline(name, size=size, seed=args.seed), sys.stderr.isatty())
            for line in verdict.lines():
                _say(line)
            _say(f"({verdict.seconds:.0f} s)")
            passed = passed and verdict.passed
        if len(names) > 1:
            _say("PASS: every mechanism's whole path within its allowance" if passed else
                 "FAIL: at least one mechanism's path leaks (see FAIL above)")
        return 0 if passed else 1
    if not args.mechanism:
        raise ParameterError("name the mechanism to verify, e.g. ppdp verify DiffGen (or ppdp verify --pipeline for "
                             "every DP mechanism's whole path)")
    verdict = _drain(verify(args.mechanism, size=size, seed=args.seed), sys.stderr.isatty())
    for line in verdict.lines():
        _say(line)
    _say(f"({verdict.seconds:.0f} s)")
    return 0 if verdict.passed else 1


def demo_recipe(sample=None):
    """The demo: DiffGen in the paper's setting (ε = 1, h = 10, class salary-class) on the bundled Adult sample,
    with the bundled ARX hierarchies as public taxonomies (they state every domain DiffGen needs)."""
    from ppdp_gui.engine.data.schema import Role
    from ppdp_gui.engine.mechanisms import registry
    from ppdp_gui.engine.package_files import sample_table
    from ppdp_gui.engine.persistence.project import Recipe
    recipe = Recipe(source=str(sample or sample_table()), roles={"salary-class": Role.CLASS}, bundled="adult")
    if "DiffGen" in registry.names():
        recipe.mechanism = "DiffGen"
        recipe.params = {"epsilon": 1.0, "h": 10, "class_column": "salary-class"}
    else:
        recipe.mechanism = "Laplace histogram"
        recipe.params = {"epsilon": 1.0, "columns": "age,sex,salary-class", "bin_width": 10}
    return recipe


def demo_folder(out: Path) -> Path:
    """`out` for the first demo; out/demo-2, out/demo-3 … for the next ones. Each demo has its own ledger, so a
    demo run again still runs (the first one spent half of its table's default cap) and never touches the files
    of an earlier one."""
    out.mkdir(parents=True, exist_ok=True)
    if not (out / "ledger.sqlite").exists():
        return out
    n = 2
    while (out / f"demo-{n}").exists():
        n += 1
    folder = out / f"demo-{n}"
    folder.mkdir()
    _say(f"{out} holds an earlier demo: this one goes to {folder}")
    return folder


def cmd_demo(args) -> int:
    from ppdp_gui.engine.mechanisms import registry
    from ppdp_gui.engine.pipeline.load import load
    out_dir = demo_folder(Path(args.out))
    recipe = demo_recipe(args.sample)
    # the bundled sample's roles and kinds as shipped: checked by us, so the demo confirms them (ColumnSpec.guessed)
    data = load(recipe).dataset.confirm_guesses()
    with_tax = [c.name for c in data.schema if c.taxonomy is not None]
    _say(f"loaded {data.source.path}: {data.n_rows:,} rows, {data.frame.shape[1]} columns; "
         f"quasi-identifiers {', '.join(data.quasi_identifiers)}; class {data.class_column}")
    _say(f"bundled ARX taxonomies attached to {len(with_tax)} columns: {', '.join(with_tax)}")
    ledger = open_ledger(out_dir / "ledger.sqlite")
    published, exported = publish(recipe, data, output=out_dir / "release.csv",
                                  note=out_dir / "release-note.json", record=out_dir / "custodian-record.json",
                                  ledger=ledger)
    shown = ", ".join(f"{k}={v}" for k, v in published.params.items() if v not in (None, "", ()))
    _say(f"ran {recipe.mechanism} ({registry.get(recipe.mechanism).guarantee}) with {shown}")
    _say(f"cost {published.cost.describe(with_note=False)}, reserved before computing in "
         f"{out_dir / 'ledger.sqlite'}; " + _budget_line(published.budget))
    _say(f"release: {len(published.table):,} rows x {published.table.shape[1]} columns -> {exported.files[0]} "
         f"(sha256 {published.output_hash[:16]}…)")
    _say(f"release note (publish it with the file): {exported.note}")
    _say(f"custodian record (keep it on this computer): {exported.record}")
    from ppdp_gui.engine.pipeline.sweep import run_sweep
    sim = _drain(run_sweep(recipe.mechanism, data, recipe.params, {}, repeats=1, holdout=1 / 3, seed=0), False)
    figures = {**{k: float(v) for k, v in sim.rows.drop(columns=["repeat", "seconds"]).iloc[0].items()},
               **sim.reference}
    _say(f"figures from a simulation on a {sim.n_train:,} / {sim.n_test:,} train/test split "
         "(the custodian's own check: not charged, not published):")
    for key, value in figures.items():
        _say(f"  {key}: {value:.4g}")
    return 0


# ---- argument parsing ---------------------------------------------------------------------------------------
def _data_options(p: argparse.ArgumentParser, input_required: bool = True) -> None:
    p.add_argument("--input", "-i", required=input_required, help="table to read (CSV/TSV, .gz, XLSX, Parquet)")
    p.add_argument("--role", action="append", metavar="COL=ROLE",
                   help="column role: identifier, person (whose row it is: k counts persons), "
                        "quasi-identifier (qi), sensitive, class, insensitive")
    p.add_argument("--kind", action="append", metavar="COL=KIND", help="numeric or categorical")
    p.add_argument("--taxonomy", action="append", metavar="COL=PATH", help="ARX hierarchy CSV for a column")
    p.add_argument("--bundled-taxonomies", choices=["adult"], help="attach the bundled ARX Adult hierarchies")
    from ppdp_gui.engine.taxonomy.registry import spec_help
    p.add_argument("--build-taxonomy", action="append", metavar="COL=SPEC",
                   help="build a column's taxonomy from the table as the window's Taxonomies step does; SPEC is "
                        f"{spec_help()} (see `ppdp builders`). All but bands take their leaves from the data "
                        "(origin 'data'): an ε-DP release then needs --allow-data-domains or public --domain values")
    p.add_argument("--na", choices=["drop", "category"], default=None,
                   help="rows with a missing value: keep them, a blank being the category '(missing)' (default; "
                        "a numeric column keeps an empty cell), or drop them (a column missing in more than half "
                        "the rows is then left out instead, and the run says so; refused by the mechanisms that "
                        "are private for one record replaced, whose row count must not depend on the data)")
    p.add_argument("--leave-out", action="append", metavar="COLUMN",
                   help="leave this column out of the table (repeat for more)")
    p.add_argument("--domain", action="append", metavar="COL=LOW:HIGH[:int] | COL=A,B,C | COL=icd9 | COL=icd10",
                   help="a column's public domain: bounds for a number, the list of values for a category, or a "
                        "code system's public list shipped with ppdp (icd9, icd10: every 3-character category)")
    p.add_argument("--param", "-p", action="append", metavar="NAME=VALUE", help="mechanism parameter")


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="ppdp", description="Publish privacy-preserving versions of tables.")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")
    p = sub.add_parser("inspect", help="show a table's columns, kinds, guessed roles and missing values")
    p.add_argument("file")
    p.add_argument("--build-taxonomy", action="append", metavar="COL=SPEC",
                   help="also build these taxonomies as `ppdp run --build-taxonomy` would, and describe them")
    p.set_defaults(func=cmd_inspect)
    p = sub.add_parser("builders", help="list the taxonomy builders of --build-taxonomy and their options")
    p.set_defaults(func=cmd_builders)
    p = sub.add_parser("mechanisms", help="list the mechanisms and their parameters")
    p.set_defaults(func=cmd_mechanisms)
    p = sub.add_parser("run", help="make one release (charged to the privacy ledger)")
    p.add_argument("mechanism", nargs="?", help="mechanism name, e.g. 'Laplace histogram' (see `ppdp mechanisms`);"
                                                " optional with --recipe")
    _data_options(p, input_required=False)
    p.add_argument("--recipe", help="a project file (*.ppdp.json) saved by the window: table, roles, taxonomies, "
                                    "domains, mechanism and parameters; other options apply on top")
    p.add_argument("--output", "-o", help="released table (.csv .tsv .xlsx .parquet); required unless --target-error")
    p.add_argument("--target-error", type=float, metavar="E",
                   help="only plan: print the smallest ε whose counts are within ±E of the truth 95 %% of the time "
                        "(the mechanism's public error model); nothing is run or charged")
    p.add_argument("--report", help="write the release note (JSON) here: it goes out with the file")
    p.add_argument("--record", help="also write the custodian record (JSON) here: it stays with you (a copy is "
                                    "always kept in the ledger's folder)")
    p.add_argument("--overwrite", action="store_true",
                   help="let the table (-o) and the custodian record (--record) replace existing files; never an "
                        "input, the source or the ledger")
    p.add_argument("--pdf", action="store_true",
                   help="also write the release note and the custodian record as PDF (beside their JSON)")
    p.add_argument("--publish-as-is", action="append", metavar="COLUMN",
                   help="confirm that COLUMN may be published unchanged although nearly every row has its own value "
                        "(kept in the custodian record); without it such a column stops the release")
    p.add_argument("--allow-data-domains", action="store_true",
                   help="take missing domains from the data; the release is then NOT ε-DP and says so")
    p.add_argument("--confirm-roles", action="store_true",
                   help="I confirm the roles and kinds `ppdp inspect` shows (the window's “Confirm roles and "
                        "kinds”): a differentially private release refuses guesses read from the values otherwise")
    p.add_argument("--separate-dataset", action="store_true",
                   help="confirm that a table the ledger sees as a near copy of a known one is about other people "
                        "(recorded in the ledger; a project keeps it as mechanism.separate_dataset)")
    p.add_argument("--engine", choices=["auto", "memory", "duckdb", "spark"], default="auto",
                   help="duckdb: leave the table on disk and count with SQL (tables larger than memory; DiffGen, "
                        "Global recoding, strict Mondrian; CSV/TSV/Parquet; missing values, kinds and roles by the "
                        "same rules as memory); auto (default): duckdb above 1 GB or 5 million Parquet rows when the mechanism "
                        "can run there, else memory; spark: the same passes on Apache Spark (needs Java and "
                        "pyspark: pip install '.[spark]'), the file read where Spark reads it (path, hdfs://, s3a://)")
    p.add_argument("--spark-master", metavar="URL",
                   help="the Spark master for --engine spark (default local[2], or $PPDP_SPARK_MASTER), e.g. "
                        "spark://host:7077 or yarn")
    p.add_argument("--ledger", help="privacy ledger file (default $PPDP_LEDGER or the user's data folder)")
    p.add_argument("--cap", help="set the dataset's total ε cap before its first release, or lower it (e.g. 2 or "
                                 "1/2); raising a cap is `ppdp ledger cap DATASET VALUE --reason …`")
    from ppdp_gui.cli_governance import add_commands, add_rerun_options, add_run_options
    add_run_options(p)
    add_rerun_options(p)
    p.set_defaults(func=cmd_run)
    add_ledger_command(sub)
    p = sub.add_parser("sweep", help="simulate a mechanism over a parameter grid (nothing published; only a DP copy "
                                     "is charged)")
    p.add_argument("mechanism")
    _data_options(p)
    p.add_argument("--grid", "-g", action="append", required=True, metavar="NAME=V1,V2,...")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--holdout", type=float, default=1 / 3, help="share held out for testing (0 for none)")
    p.add_argument("--seed", type=int, help="make the simulation reproducible")
    p.add_argument("--output", "-o", help="write every run's figures to this table")
    p.add_argument("--overwrite", action="store_true", help="let --output replace an existing file")
    p.add_argument("--on", choices=("dp-copy", "public", "own"),
                   help="what the simulation reads: dp-copy (a synthetic copy made with --proxy-epsilon, charged to "
                        "the ledger: a value chosen from it costs nothing more), public (--public-table), own (your "
                        "table: not charged, but a value chosen from it is itself an unaccounted release). Default, as "
                        "in the window: public with --public-table, else dp-copy for an ε-DP mechanism and own for a "
                        "k-anonymity one")
    p.add_argument("--proxy-epsilon", default="0.1", help="ε of the DP copy (charged; default 0.1)")
    p.add_argument("--public-table", help="a public table with the same columns to simulate on (nothing charged)")
    p.add_argument("--ledger", help="privacy ledger file for the DP copy (default $PPDP_LEDGER or the user's data "
                                    "folder)")
    p.add_argument("--confirm-roles", action="store_true",
                   help="I confirm the roles and kinds `ppdp inspect` shows: the DP copy (a release) needs them")
    p.set_defaults(func=cmd_sweep)
    p = sub.add_parser("verify", help="statistical self-check of a DP mechanism: releases neighbouring tables "
                                      "thousands of times and bounds the privacy loss (exit 0 PASS, 1 FAIL)")
    p.add_argument("mechanism", nargs="?", help="a differentially private mechanism, e.g. DiffGen or 'Laplace "
                                                "histogram' (with --pipeline: every DP and k-anonymity mechanism "
                                                "when left out)")
    p.add_argument("--pipeline", action="store_true",
                   help="audit the whole publish path on neighbouring files (reader, recipe, plan, a scratch "
                        "ledger, release, the written file and note read back), not the mechanism on its own")
    p.add_argument("--quick", action="store_true", help="the short audit (under half a minute per mechanism); "
                                                        "without it, the full audit (several minutes)")
    p.add_argument("--seed", type=int, default=0, help="seed of the test releases (default 0: reproducible)")
    p.add_argument("--size", choices=["smoke", "quick", "full"], help=argparse.SUPPRESS)
    p.set_defaults(func=cmd_verify)
    p = sub.add_parser("demo", help="release the bundled Adult sample with DiffGen (or the Laplace histogram)")
    p.add_argument("--out", required=True, help="folder for release.csv, report.json and the demo's ledger")
    p.add_argument("--sample", help=argparse.SUPPRESS)
    p.set_defaults(func=cmd_demo)
    add_commands(sub)  # dossier, context, safe-harbor (cli_governance.py)
    return ap


def main(argv=None) -> int:
    import multiprocessing
    multiprocessing.freeze_support()  # in the bundle: a multiprocessing helper started from this executable
    from ppdp_gui.engine.data.leftovers import clean_leftovers
    clean_leftovers()  # temporary files of writes a kill or power cut interrupted (never anything else)
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
