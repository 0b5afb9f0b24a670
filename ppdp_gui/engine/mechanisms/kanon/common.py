"""What the k-anonymity mechanisms share: the k and grid parameters, the checks on quasi-identifiers, the
sensitive column for l-diversity, and the released frame (identifiers dropped, QIs replaced by their labels).

Mondrian, TDS, global recoding and fragmentation all publish through `release_frame`, so a release of any of them
has the same columns in the same order as the input minus its identifiers.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ppdp_gui.engine.bigdata.large_dataset import has_missing
from ppdp_gui.engine.data.missing import numeric_blanks_fix
from ppdp_gui.engine.data.qi_coding import blank_cells_ok, taxonomy_values, taxonomy_with_blanks
from ppdp_gui.engine.data.schema import Dataset, Role
from ppdp_gui.engine.errors import TaxonomyError
from ppdp_gui.engine.mechanisms.base import ParamSpec, Problem, ReleaseShape

K_PARAM = ParamSpec("k", "k (smallest group size)", "int", default=10, low=2, high=1000,
                    help="Every published combination of quasi-identifier values is shared by at least k rows — of k "
                         "different persons when the table has a Person column.",
                    formula="every group of rows with the same published quasi-identifiers has ≥ k rows: "
                            "highest re-identification risk (someone known to be in the table) ≤ 1/k",
                    more_private="higher")
GRID_PARAM = ParamSpec("grid_width", "Interval width for numbers without taxonomy (0 = automatic)", "float", default=0.0, low=0.0,
                       special=(0.0, "automatic"),
                       help="Numeric quasi-identifiers without a taxonomy are published as unions of intervals "
                            "[m·w, (m+1)·w). 0 = automatic: a round width of about a tenth of the column's range.")


#: a text quasi-identifier without a taxonomy and with more values than this is said to end up mostly as '*'
FLAT_MANY_VALUES = 20


def flat_problem(data: Dataset, name: str) -> Problem | None:
    """A warning for a text quasi-identifier without a taxonomy and with many values (a date of birth read as
    text, an age column holding '90+'): a flat tree can only keep a value or replace it by '*', so with this many
    values nearly every row shows '*', which the custodian should know before running (for them only: it counts
    the table's values, like every check before a k-anonymity run)."""
    spec = data.spec(name)
    if spec.taxonomy is not None or spec.kind == "numeric":
        return None
    from ppdp_gui.engine.bigdata.large_dataset import distinct_typed, is_large
    values = pd.Series(distinct_typed(data, name) if is_large(data) else data.frame[name].dropna().unique())
    count = len(values)
    if count <= FLAT_MANY_VALUES:
        return None
    from ppdp_gui.engine.data.coltypes import code_by_name, suggested_builder
    from ppdp_gui.engine.data.schema import MISSING_LABEL
    from ppdp_gui.engine.taxonomy.builders import numbers_with_top_codes
    blanks = values.astype(str) == MISSING_LABEL  # a blank is no value to replace: the builders keep it apart
    numbers = pd.to_numeric(values[~blanks].astype(str).str.strip(), errors="coerce")
    text = values[~blanks][numbers.isna()]
    if text.empty and values[~blanks].astype(str).str.match(r"^\s*[+-]?0[0-9]").any():  # ZIP 02139: codes
        how = ("Its values are number codes written with leading zeros (such as ZIP codes), so it was read as "
               "text; build a taxonomy that masks digits from the right (“Mask”, ppdp: --build-taxonomy "
               f"{name}=mask), or import an ARX hierarchy.")
    elif code_by_name(name):  # a ZIP or postcode: masking keeps the area (9000*), whatever its values
        how = ("It holds codes (such as ZIP codes): build “Mask codes from the right” for it in the Taxonomies "
               f"step (90001 → 9000* → 900**; ppdp: --build-taxonomy {name}=mask), or import an ARX hierarchy.")
    elif numbers_with_top_codes(values, MISSING_LABEL):  # numbers and top codes ('90+'): intervals take them
        why = (f"numbers and {', '.join(repr(str(v)) for v in text.iloc[:3])}" if not text.empty
               else "numbers with blanks, which read “(missing)”" if blanks.any() else "numbers")
        how = (f"Its values are {why}, so it was read as text; build Numeric intervals for it in the Taxonomies "
               "step (" + ("its blanks stay “(missing)”" if blanks.any() and text.empty else
                           "a top code such as '90+' goes in the top interval") + "), or import an ARX hierarchy.")
    elif numbers.notna().mean() >= 0.8:  # mostly numbers: a few values such as 'unknown' made it text
        how = (f"Most of its values are numbers, but {', '.join(repr(str(v)) for v in text.iloc[:3])} "
               f"{'is' if len(text) == 1 else 'are'} not, so it was read as text. To keep ranges, replace "
               f"{'that value' if len(text) == 1 else 'those values'} by numbers in a copy of your table (a top "
               "code such as 90 for '90+') and build Numeric intervals, or import an ARX hierarchy.")
    elif (icd := suggested_builder(name, values)) in ("icd9", "icd10"):
        label = "ICD-9-CM diagnoses" if icd == "icd9" else "ICD-10 diagnoses"
        how = (f"Its values are ICD codes: build “{label}” for it in the Taxonomies step (each code under its "
               f"category, block and chapter; ppdp: --build-taxonomy {name}={icd}), or import an ARX hierarchy.")
    else:
        how = ("To keep some detail, build a taxonomy for it in the Taxonomies step (“Dates” for dates: month, "
               "year, decade) or import an ARX hierarchy.")
    return Problem(f"{name!r} has {count:,} different values and no taxonomy: each value can only be kept or "
                   f"replaced by '*', so expect '*' in nearly every row. {how}", level="warning", column=name)


def person_problems(data: Dataset, k: int) -> list[Problem]:
    """Checks of the person column shared by the k-anonymity mechanisms: one at most, and enough persons for k
    (either engine: a large table's persons are counted in SQL, bigdata/persons.py)."""
    persons = data.names_with_role(Role.PERSON)
    if len(persons) > 1:
        from ppdp_gui.engine.data.roles import person_columns_problem
        return [Problem(person_columns_problem(persons), column=persons[1])]
    if not persons:
        return []
    count = n_persons(data)
    if count is not None and count < k:
        return [Problem(f"the table holds {count} persons ({persons[0]}), fewer than k = {k}", param="k")]
    return []


def resolve_sensitive(data: Dataset, params: dict[str, Any]) -> str | None:
    """The sensitive column for l-diversity: the chosen one, else the only one the data has, else None."""
    if not params.get("l"):
        return None
    chosen = params.get("sensitive")
    if chosen:
        return chosen
    sens = data.sensitive_columns
    return sens[0] if len(sens) == 1 else None


def kanon_problems(data: Dataset, k: int, grid_width: float, blanks_ok: bool = False) -> list[Problem]:
    """Checks shared by Mondrian and TDS: quasi-identifiers exist, have no gaps and fit their taxonomies.
    `blanks_ok`: the mechanism codes a number column's blank cells as "(missing)" (qi_coding.blank_cells_ok), so
    they are said, not refused."""
    problems: list[Problem] = []
    qis = data.quasi_identifiers
    if not qis:
        return [Problem("mark at least one column as a quasi-identifier (the columns an attacker could link on)")]
    if data.n_rows < k:
        problems.append(Problem(f"the table has {data.n_rows} rows, fewer than k = {k}", param="k"))
    problems += person_problems(data, k)
    for name in qis:
        spec = data.spec(name)
        col = data.frame[name]
        if has_missing(data, name):
            if not (blanks_ok and blank_cells_ok(data, name)):
                problems.append(Problem(f"quasi-identifier {name!r} has missing values (empty number cells). "
                                        + numeric_blanks_fix(name) + ".", column=name))
                continue
            problems.append(blanks_problem(name, spec.taxonomy is not None, grid_width))
            if spec.taxonomy is None:
                continue
            col = taxonomy_values(data, name)
        if spec.taxonomy is not None:
            try:
                from ppdp_gui.engine.bigdata.large_dataset import distinct_typed, is_large
                tax = taxonomy_with_blanks(data, name, spec.taxonomy)
                tax.node_codes(distinct_typed(data, name) if is_large(data) else col)
            except TaxonomyError as exc:
                problems.append(Problem(str(exc), column=name))
        elif (flat := flat_problem(data, name)) is not None:
            problems.append(flat)
        elif spec.kind == "numeric":
            how = f"width {grid_width:g}" if grid_width > 0 else "an automatic round width"
            problems.append(Problem(f"{name!r} has no taxonomy: its ranges are snapped to intervals of {how} "
                                    f"(the automatic width is derived from the column's range)",
                                    level="warning", column=name))
    return problems


def blanks_problem(name: str, taxonomy: bool, grid_width: float | None) -> Problem:
    """The warning for a number quasi-identifier whose blank cells are published as “(missing)” (qi_coding): a
    value of its own under the root of its taxonomy, or beside ranges of the interval width without one."""
    text = (f"{name!r} has empty cells: they are published as “(missing)”"
            + (", a value of its own under the root of its taxonomy," if taxonomy else "")
            + " in groups of at least k like any value (or hidden with the others)"
            + ("." if taxonomy else f", and its numbers as ranges of {_width_words(grid_width or 0.0)}."))
    if not taxonomy and grid_width is not None:
        text += f" To choose the ranges' width, set “{GRID_PARAM.label.split(' (')[0]}” in the Mechanism step."
    return Problem(text, level="warning", column=name)


def _width_words(grid_width: float) -> str:
    return f"width {grid_width:g}" if grid_width > 0 else "an automatic round width"


def person_codes(data: Dataset) -> np.ndarray | None:
    """The person id (0..P-1) of every row when the table has a person column (Role.PERSON), else None: then k
    counts rows. A missing person id is one person (all such rows together): the safe side, fewer persons. Every
    mechanism of the k-anonymity family reads persons here (as `common.person_codes`), so a check can plant
    "counts rows" in one place (tests/engine/test_person_kanon.py; the pipeline audit's mutants)."""
    name = data.person_column
    if name is None:
        return None
    return pd.factorize(data.frame[name], use_na_sentinel=False)[0].astype(np.int64)


def large_person(data: Dataset) -> str | None:
    """The person column a large table's k-anonymity passes group by (kanon/globalrec_sql.py, mondrian_sql.py):
    the one place the large-table path reads persons, as `person_codes` is in memory."""
    return data.person_column


def count_units(group: np.ndarray, persons: np.ndarray | None, minlength: int = 0) -> np.ndarray:
    """Per group id: its rows, or with `persons` its distinct persons (the unit k counts)."""
    group = np.asarray(group, dtype=np.int64)
    if persons is None or group.size == 0:
        return np.bincount(group, minlength=minlength)
    first = ~pd.DataFrame({"g": group, "p": persons}).duplicated().to_numpy()
    return np.bincount(group[first], minlength=minlength)


def unit_note(person: str | None) -> dict:
    """The release note's word on what k counts (nothing without a person column: the note stays as it was)."""
    return {} if person is None else {"k counts": f"persons ({person})"}


def n_persons(data: Dataset) -> int | None:
    """Distinct persons of the table (None without a person column; a large table's counted in SQL)."""
    from ppdp_gui.engine.bigdata.large_dataset import is_large
    if is_large(data) and data.person_column is not None:
        from ppdp_gui.engine.bigdata.persons import n_persons as counted
        return counted(data.table, data.person_column)
    codes = person_codes(data)
    return None if codes is None else (int(codes.max()) + 1 if codes.size else 0)


def passed_through(data: Dataset) -> list[str]:
    """The columns `release_frame` publishes as they are: everything but identifiers and quasi-identifiers."""
    return [c.name for c in data.schema if not c.role.never_released and c.role != Role.QUASI_IDENTIFIER]


def release_frame(data: Dataset, published: dict[str, pd.Categorical], order: np.ndarray) -> pd.DataFrame:
    """The table to export: identifiers dropped, QIs replaced by their published labels, rows in `order`."""
    cols = {}
    for spec in data.schema:
        if spec.role.never_released:
            continue
        if spec.name in published:
            cols[spec.name] = pd.Series(published[spec.name][order])
        else:
            cols[spec.name] = data.frame[spec.name].iloc[order].reset_index(drop=True)
    return pd.DataFrame(cols)


def n_published_classes(table: pd.DataFrame, qis: list[str]) -> int:
    """Distinct published QI combinations (partitions whose ranges snap to the same cells merge)."""
    key = np.zeros(len(table), dtype=np.int64)
    for q in qis:
        codes = table[q].cat.codes.to_numpy().astype(np.int64)
        key = key * (int(codes.max(initial=0)) + 1) + codes
        key = pd.factorize(key)[0].astype(np.int64)  # stay dense: no overflow however many QIs
    return int(key.max(initial=-1)) + 1


def unit_sentence(data: Dataset, k: int) -> str:
    """What k counts, in plain words, for the Run step and the release note."""
    person = data.person_column
    if person is None:
        return ("One row is one unit: k counts rows, so a patient with several rows is protected less (mark the "
                "column that says whose row it is as Person in the Data step to count patients).")
    return (f"k counts persons ({person}): every group holds the rows of at least {k} different persons, and "
            f"{person} itself is not published.")


def kanon_shape(data: Dataset, k: int, extra: tuple[str, ...] = ()) -> ReleaseShape:
    """What a k-anonymity release of `data` holds: every column but the identifiers, one row per row."""
    qis = data.quasi_identifiers
    kept = tuple(c.name for c in data.schema if not c.role.never_released)
    raw = [c for c in kept if c not in qis]
    flat = [q for q in qis if data.spec(q).taxonomy is None and data.spec(q).kind != "numeric"]
    if flat:
        said = (f"{', '.join(flat)} {'has' if len(flat) == 1 else 'have'} no taxonomy: each value is kept as it is "
                "or replaced by '*'.")
        extra = (said, *extra)
    return ReleaseShape(columns=kept, per_person=True, sentences=(
        f"One row per row of your table, in a shuffled order: {', '.join(qis) or 'the quasi-identifiers'} are "
        f"replaced by ranges or groups so that every combination is shared by at least {k} "
        f"{'rows' if data.person_column is None else 'persons'}.", unit_sentence(data, k),
        (f"{raw[0]} is published as it is." if len(raw) == 1 else
         f"{', '.join(raw)} are published as they are." if raw else
         "No other column is published."),) + extra)
