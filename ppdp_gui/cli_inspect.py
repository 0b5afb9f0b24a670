"""`ppdp inspect`: one line per column (kind, guessed role, distinct and missing values), why each role was
guessed, what the default missing-value policy does, and the trees `--build-taxonomy` would build. Apart from
cli.py so that each stays small; the same engine functions as the window (the reader, the role rules, the
taxonomy builders)."""

from __future__ import annotations

from ppdp_gui.cli_output import say, warn
from ppdp_gui.cli_parse import parse_builds

REASONS_UP_TO = 200  # columns: beyond, `ppdp inspect` prints the rules only (20,000 reasons would bury the table)


def inspect_command(args) -> int:
    """Describe a table: one line per column, its kind, guessed role, distinct and missing values.

    The counts come from the reading itself (`inspect_table`), so a table 20,000 columns wide is described in
    about a second instead of half a minute of per-column pandas work; all lines are printed in one write."""
    from ppdp_gui.engine.data import NAPolicy, kind_rule_text, role_rule_text
    from ppdp_gui.engine.data.reader import inspect_table
    # trees asked for are built first, so a spec or values a builder refuses stop before anything is printed
    built = built_taxonomies_text(args.file, args.build_taxonomy) if args.build_taxonomy else None
    policy = NAPolicy(action="category")
    data, counts = inspect_table(args.file, na_policy=policy)
    src = data.source
    for note in src.notes:
        warn(note)
    width = max([len(c.name) for c in data.schema] + [6])
    lines = [f"{src.path}: {src.file_format}, {src.n_rows_read:,} rows, {len(data.schema)} columns",
             f"  {'column':<{width}}  {'kind':<11}  {'guessed role':<16}  {'distinct':>8}  {'missing':>7}"]
    lines += [f"  {spec.name:<{width}}  {spec.kind:<11}  {spec.role.value:<16}  {distinct:>8,}  {missing:>7,}"
              for spec, (distinct, missing) in zip(data.schema, counts)]
    say("\n".join(lines))
    from ppdp_gui.engine.data.missing import left_out_columns, never_released
    if len(data.schema) <= REASONS_UP_TO:
        reasons = src.role_reasons  # worked out by the reading itself
        say("why each role was guessed:\n" + "\n".join(f"  {name}: {why}" for name, (_r, why) in reasons.items()))
    # rows are kept by default; what dropping them would do (the reader's rules): a mostly-missing column is
    # left out, and blanks in a column that is never released cost no row
    names = [spec.name for spec in data.schema]
    left_out = set(left_out_columns(names, {c: m for c, (_d, m) in zip(names, counts)}, src.n_rows_read,
                                    NAPolicy(action="drop")))
    unreleased = never_released(names, {})
    with_missing = [spec for spec, (_d, missing) in zip(data.schema, counts)
                    if missing and spec.name not in unreleased and spec.name not in left_out]
    guessed = data.guessed_columns
    if guessed:
        say(f"roles or kinds read from the values ({len(guessed)} column(s)): a differentially private "
                  "release asks you to confirm them (--confirm-roles, or --role COL=ROLE and --kind COL=KIND)")
    dropped = _rows_with_missing(data, with_missing, policy)
    say(f"rows with a missing value: {dropped:,}, kept by default (a blank reads “{policy.category_label}”)")
    if left_out:
        say(f"with --na drop, left out (missing in more than half the rows): {', '.join(sorted(left_out))}")
    if dropped:
        say(f"with --na drop (the window: “Drop rows that have a missing value”), dropped: {dropped:,}")
    say("\nHow kinds are decided:\n" + kind_rule_text())
    say("\n" + role_rule_text())
    if built:
        say("\n" + built)
    return 0


def built_taxonomies_text(path, items: list[str]) -> str:
    """`ppdp inspect --build-taxonomy`: the trees `ppdp run` would build (the same load, the same builders), one
    line each with its size, an example path from value to root and its origin, as the window's list says it."""
    from ppdp_gui.engine.persistence.project import Recipe
    from ppdp_gui.engine.pipeline.load import load
    builds = parse_builds(items, {})
    recipe = Recipe(source=str(path), taxonomy_builds=dict(builds))
    load(recipe)
    lines = ["Taxonomies built (as `ppdp run --build-taxonomy` builds them):"]
    for col, spec in builds.items():
        tax = recipe.taxonomies[col]
        example = " → ".join(tax.to_paths()[0])
        origin = ("built from the table's values: not a public domain (an ε-DP release needs --domain or "
                  "--allow-data-domains)" if getattr(tax, "origin", "public") == "data" else "public")
        lines.append(f"  {col} = {spec}: {tax.height} level{'s' if tax.height != 1 else ''} above "
                     f"{len(tax.leaf_values()):,} values, e.g. {example}; {origin}")
    return "\n".join(lines)


def _rows_with_missing(data, specs, policy) -> int:
    """Rows that the drop policy would drop: a missing number (NaN) or the missing-value category in one of
    the columns `specs` (those with missing values)."""
    import numpy as np
    frame = data.frame
    numeric = [c.name for c in specs if c.kind == "numeric"]
    text = [c.name for c in specs if c.kind != "numeric"]
    hit = np.zeros(len(frame), dtype=bool)
    if numeric:
        hit |= frame[numeric].isna().to_numpy().any(axis=1)
    if text:
        hit |= (frame[text] == policy.category_label).to_numpy().any(axis=1)
    return int(hit.sum())
