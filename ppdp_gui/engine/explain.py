"""What a release is, in plain words, before and after it runs — for any mechanism, from declared facts only.

Before a run the mechanism's `describe_release` (a `ReleaseShape`: the columns it keeps, whether it is a table of
counts, whether it carries noise, and its own sentences) is compared with the table's columns. After a run the
`Published` itself is read: its tables, the count columns its `PublicSchema` claims declare, its guarantee. The
sentences say which columns go out and which do not, what one row is, how a table of counts becomes records, and
why combinations nobody has can appear — the questions a custodian asked when a DP release surprised them.

Figures are split by who may see them: `release_figures` are read from the released tables (anyone holding the
file can compute them); `custodian_figures` compare the release with the true data and are for the custodian only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ppdp_gui.engine.claims import MAIN_TABLE, KAnonymity, PublicSchema, unit_words

NOISE_SENTENCE = ("The counts carry random noise on purpose. They do not add up exactly to your table's rows, and "
                  "combinations nobody in your table has can get a count — for example ages below your youngest "
                  "patient, when the public domain of age starts lower. That is what keeps any one person hidden.")


def noise_sentence(columns) -> str:
    """NOISE_SENTENCE with an example from the columns counted: the age example only when an age is counted
    (a sex × ward table read 'ages below your youngest patient', which is about nothing in it)."""
    from ppdp_gui.engine.data.roles import name_words
    columns = [str(c) for c in columns]
    age = next((c for c in columns if "age" in name_words(c)), None)
    if age is not None or not columns:
        return NOISE_SENTENCE.replace("public domain of age", f"public domain of {age}") if age else NOISE_SENTENCE
    example = (f"a value of {columns[0]} nobody in your table has, when its public list of values has it"
               if len(columns) == 1 else
               f"a combination of {', '.join(columns[:-1])} and {columns[-1]} that no one in your table has")
    return ("The counts carry random noise on purpose. They do not add up exactly to your table's rows, and "
            f"combinations nobody in your table has can get a count — for example {example}. That is what keeps "
            "any one person hidden.")
SYNTHETIC_SENTENCE = ("The rows come from noisy counts: there are not exactly as many rows as in your table, and "
                      "combinations nobody in your table has can appear. That is what keeps any one person hidden.")


def _names(columns) -> str:
    return ", ".join(str(c) for c in columns)


def shape_sentences(shape, data) -> list[str]:
    """Plain sentences on what a release of `data` with this `ReleaseShape` will hold (before it runs)."""
    lines: list[str] = []
    if shape.columns:
        table_columns = [str(c) for c in data.frame.columns]
        kept = [c for c in shape.columns if c in table_columns]
        new = [c for c in shape.columns if c not in table_columns]
        text = f"Columns that go out: {_names(kept)}" if kept else "No column of your table goes out as it is"
        if new:
            text += f", plus the new column{'s' if len(new) > 1 else ''} {_names(new)}"
        lines.append(text + ".")
        left = [c for c in table_columns if c not in shape.columns]
        if left:
            lines.append(f"Not in the release: {_names(left)}.")
    if shape.count_column:
        lines.append(f"It is a table of counts, not one row per person: each row is a combination of values with "
                     f"the number of people who have it (column {shape.count_column}).")
        if shape.noisy:
            lines.append(noise_sentence([c for c in shape.columns if c != shape.count_column]))
    elif shape.noisy:
        lines.append(SYNTHETIC_SENTENCE)
    lines.extend(s for s in shape.sentences if s)
    return lines


def unit_sentence(cost) -> str:
    """Whom ε protects, in words for the window, from a DP price (`PrivacyCost` with its typed unit)."""
    unit = cost.unit
    if unit.person_column:
        rows = "1 row" if unit.max_rows == 1 else f"{unit.max_rows} rows"
        return (f"ε protects each {unit.noun} ({unit.person_column}) with up to {rows}, chosen at random: "
                f"whether all of a {unit.noun}'s rows are in the table or not changes the release very little.")
    return ("ε protects one row: no column is marked Person, so a patient with several rows is protected less. "
            "If your table has several rows per patient, mark the patient number as Person in the Data step.")


def plan_sentences(plan) -> list[str]:
    """`shape_sentences` for a Plan whose parameters resolved (empty otherwise: its problems say why), and for a
    DP release whom ε protects."""
    if plan.mechanism is None or not plan.params:
        return []
    try:
        shape = plan.mechanism.describe_release(plan.dataset, plan.params)
    except Exception:  # noqa: BLE001 - words about a release must never stop the window; the plan's problems speak
        return [plan.mechanism.summary] if getattr(plan.mechanism, "summary", "") else []
    unit = [unit_sentence(plan.cost)] if plan.cost is not None and plan.cost.is_dp else []
    return shape_sentences(shape, plan.dataset) + unit


# ---- after the run ---------------------------------------------------------------------------------------------
def count_columns(published, table: str = MAIN_TABLE) -> tuple[str, ...]:
    """Count columns the release declares for `table` (its PublicSchema claims)."""
    out: list[str] = []
    for claim in published.claims:
        if isinstance(claim, PublicSchema) and claim.table == table:
            out += [c for c in claim.counts if c not in out]
    return tuple(out)


def count_table(published) -> tuple[str, Any] | None:
    """(count column, table) of the release's table of counts: the main table, else a further one (the counts
    behind synthetic records); None for a release without counts."""
    tables = published.release.tables()
    for name in [MAIN_TABLE] + [n for n in tables if n != MAIN_TABLE]:
        cols = [c for c in count_columns(published, name) if c in tables[name].columns]
        if cols:
            return cols[0], tables[name]
    return None


def _source_rows(published) -> int:
    src = published.source
    return int(src.n_rows_read - src.n_rows_dropped)


def published_sentences(published) -> list[str]:
    """Plain sentences on what a release holds, read from the release itself."""
    tables = published.release.tables()
    main = tables[MAIN_TABLE]
    lines = [f"This release has {len(main):,} rows and the columns {_names(main.columns)}."]
    extra = {n: t for n, t in tables.items() if n != MAIN_TABLE}
    if extra:
        lines.append("Published beside it: " + "; ".join(f"{n} ({len(t):,} rows: {_names(t.columns)})"
                                                        for n, t in extra.items()) + ".")
    released = {str(c) for t in tables.values() for c in t.columns}
    left = [c.name for c in published.columns if c.name not in released]
    if left:
        lines.append(f"Not in the release: {_names(left)}.")
    counts = count_columns(published)
    if counts:
        col = counts[0]
        total = int(np.asarray(main[col], dtype=np.int64).sum()) if len(main) else 0
        lines.append(f"It is a table of counts, not one row per person: each row is a combination of values with "
                     f"the number of people who have it (column {col}); the counts add up to {total:,}. To get one "
                     f"row per (synthetic) record, repeat each row as many times as its {col}.")
    elif count_table(published) is not None:
        name = next(n for n in extra if count_columns(published, n))
        lines.append(f"Its rows are synthetic records made from the noisy counts in {name}, not your patients.")
    if published.dp is not None and published.cost.is_dp:
        lines.append(noise_sentence([c for c in main.columns if c not in counts]) if counts else
                     SYNTHETIC_SENTENCE if count_table(published) else
                     "Everything in it was chosen or counted with random noise.")
        lines.append(unit_sentence(published.cost))
    for claim in published.claims:
        if isinstance(claim, KAnonymity):
            where = "" if claim.table == MAIN_TABLE else f" in {claim.table}"
            lines.append(f"Every combination of {_names(claim.columns)}{where} is shared by at least {claim.k} "
                         f"{'different ' if claim.person else ''}{unit_words(claim.person, claim.k)} "
                         "(recounted on the table).")
    return lines


def release_figures(published) -> dict[str, float]:
    """Figures read from the released tables alone (public: anyone with the file can compute them)."""
    tables = published.release.tables()
    main = tables[MAIN_TABLE]
    out = {"rows released": float(len(main)), "columns released": float(main.shape[1])}
    if len(tables) > 1:
        out["further tables"] = float(len(tables) - 1)
    found = count_table(published)
    if found is not None:
        col, table = found
        out["total of the counts"] = float(np.asarray(table[col], dtype=np.int64).sum()) if len(table) else 0.0
    return out


def custodian_figures(published) -> dict[str, float]:
    """The release compared with the true data: for the custodian, never published."""
    out = {"rows in your table": float(_source_rows(published))}
    found = count_table(published)
    if found is not None and published.cost.is_dp:
        col, table = found
        total = int(np.asarray(table[col], dtype=np.int64).sum()) if len(table) else 0
        out["records added by noise"] = float(total - _source_rows(published))
    return out


def noise_estimate_of(published, dataset):
    """The estimate the Run step showed before this DP release (Mechanism.noise_estimate: public quantities
    only), worked out again on the table the release was made from; None when the release is not a table of noisy
    counts or `dataset` is not that table any more. For the custodian only, beside the records the noise added."""
    if dataset is None or not published.cost.is_dp or count_table(published) is None:
        return None
    names = [c.name for c in published.columns]
    same = (dataset.source.sha256 == published.source.sha256 and len(dataset.frame) == _source_rows(published)
            and all(n in dataset.frame.columns for n in names))
    if not same:
        return None
    from ppdp_gui.engine.data.schema import Dataset
    from ppdp_gui.engine.mechanisms import registry
    try:
        mechanism = registry.create(published.mechanism)
        return mechanism.noise_estimate(Dataset(dataset.frame[names], tuple(published.columns), dataset.source),
                                        dict(published.params))
    except Exception:  # noqa: BLE001 - a mechanism no longer installed, or a plan that no longer holds: no line
        return None


def count_values(published) -> np.ndarray | None:
    """The released counts (for a chart of how they are spread), or None for a release without counts."""
    found = count_table(published)
    if found is None:
        return None
    col, table = found
    return np.asarray(table[col], dtype=np.int64)


# ---- re-identification risk before and after (for the custodian) ------------------------------------------------
RISK_DP_SENTENCE = ("This release is differentially private, so the chance of matching one of its rows to a person "
                    "is not the right measure: its rows were made with random noise and are not your patients' "
                    "rows. What protects each person is ε — whether any one person is in your table or not "
                    "changes what comes out only a little. The figures of your table are shown for comparison "
                    "only.")
RISK_COUNTS_SENTENCE = ("This release is a table of counts, not one row per person: there is no row to match to a "
                        "person, so these figures are not measured on it.")
RISK_SYNTHETIC_SENTENCE = ("The rows of this release are made-up (synthetic) records, not your patients' rows, so "
                           "matching a row to a person is not the right measure; see the Figures tab for rare rows "
                           "that were copied.")


@dataclass(frozen=True)
class RiskComparison:
    """Re-identification risk of the input and of the release on the quasi-identifiers (risk_models), and the
    HIPAA Safe Harbor screen of both (safe_harbor). `release` is None when matching a released row to a person
    is not the measure for this release; `not_measured` then says why in plain words."""

    qis: tuple[str, ...]
    input: Any  # RiskReport, or None without quasi-identifiers
    release: Any  # RiskReport or None
    release_qis: tuple[str, ...]
    not_measured: str
    harbor_input: tuple = ()  # safe_harbor.Finding
    harbor_release: tuple = ()
    #: each column's part in the risk (risk_models.AttributeRisk): the quasi-identifiers and the columns someone
    #: else can know (data/linkable.py) published unchanged, in the input and in a record-level release
    attributes_input: tuple = ()
    attributes_release: tuple = ()


def risk_not_measured(published) -> str:
    """Why the release's own re-identification figures are not shown ('' when they are)."""
    if published.dp is not None or published.cost.is_dp:
        return RISK_DP_SENTENCE + ("" if published.holds else " Careful: some of its inputs were read from your "
                                   "table, so it is not fully ε-differentially private (see the Figures tab).")
    if count_columns(published):
        return RISK_COUNTS_SENTENCE
    if count_table(published) is not None or "synthetic" in str(published.guarantee).lower():
        return RISK_SYNTHETIC_SENTENCE
    return ""


def compare_risk(published, frame, *, population_size: float | None = None,
                 sampling_fraction: float | None = None, threshold: float = 0.1) -> RiskComparison:
    """Risk of the input `frame` (the table the release was made from) and of the release, on the quasi-identifiers
    the release was made with; the population figures need the population size or the sampling fraction."""
    from ppdp_gui.engine.data.schema import Role
    from ppdp_gui.engine.metrics import risk_models, safe_harbor
    options = {"threshold": threshold, "population_size": population_size, "sampling_fraction": sampling_fraction}
    qis = tuple(c.name for c in published.columns if c.role == Role.QUASI_IDENTIFIER and c.name in frame.columns)
    # with a person column every figure counts persons (a class's size = its distinct persons), on both sides
    person = published.person_column
    mine = {} if person is None or person not in frame.columns else \
        {"persons": frame[person].to_numpy(), "person": person}
    before = risk_models.risk_report(frame, qis, **options, **mine) if qis else None
    tables = published.release.tables()
    main = tables[MAIN_TABLE]
    why = risk_not_measured(published)
    kept = tuple(q for q in qis if q in main.columns)
    after = None
    released_ids = (published.person_ids or {}).get(MAIN_TABLE) if mine else None
    if not why:
        if kept:
            theirs = {} if released_ids is None else {"persons": released_ids, "person": person}
            after = risk_models.risk_report(main, kept, **options, **theirs)
        else:
            why = ("The release keeps none of the quasi-identifiers in its main table, so no released row can be "
                   "matched to a person through them.")
    released = tuple(f for t in tables.values() for f in safe_harbor.screen(t))
    released_columns = {c for t in tables.values() for c in t.columns}
    # only what the release publishes: DiffGen leaves an insensitive date out, and the tab called it "published"
    candidates = [c for c in linkable_candidates(published, frame) if c in released_columns]
    attributes_input = tuple(risk_models.attribute_risks(frame, qis, candidates))
    attributes_release = ()
    if after is not None:
        attributes_release = tuple(risk_models.attribute_risks(main, kept, [c for c in candidates
                                                                             if c in main.columns]))
    return RiskComparison(qis, before, after, kept, why, tuple(safe_harbor.screen(frame)), released,
                          attributes_input, attributes_release)


def linkable_candidates(published, frame) -> list[str]:
    """The columns of `frame` someone else can know (data/linkable.py) that are not quasi-identifiers."""
    from ppdp_gui.engine.data.linkable import linkable_columns
    from ppdp_gui.engine.data.schema import Dataset
    specs = tuple(c for c in published.columns if c.name in frame.columns)
    if not specs:
        return []
    data = Dataset(frame[[c.name for c in specs]], specs)
    return [f.column for f in linkable_columns(data)]
