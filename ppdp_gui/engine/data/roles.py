"""First guess of each column's privacy role from its name and its values, with the reason for each guess.

Each reason is a `Reason` that says whether the guess read the values: only a direct identifier, a person's name
or free text recognised by the column's name alone is data-independent; a DP plan refuses the other guesses until
the custodian states or confirms them (pipeline/plan.py).

The guess only pre-fills the Data view: the custodian confirms or changes every role, and the Data view shows the
reason beside each guess. The guess is tuned to fail safe on hospital tables: a column that could point to one
patient (a record or patient number, a column with a different value in nearly every row) is guessed an
identifier — identifiers are left out of every release — rather than published as is; few-valued code columns
whose names merely contain 'id' (admission_type_id, 8 codes) are not. The rules are plain word lists, applied in
the order `role_rule_text()` shows, so a wrong guess is easy to understand.
"""

from __future__ import annotations

import functools
import re

import numpy as np
import pandas as pd

from ppdp_gui.engine.data.schema import Role

#: direct identifiers by their nature, whatever their values
IDENTIFIER_WORDS = frozenset({
    "firstname", "lastname", "surname", "forename", "fullname", "ssn", "nhs", "mrn", "nir", "passport", "email",
    "mail", "phone", "telephone", "mobile", "fax", "address", "street", "uuid", "guid", "patientid", "recordid",
    "iban", "url", "ip",
})
#: a column of people's names: 'name' with one of these words (patient_name, contact_name), or one of the joined
#: words below; 'drug_name' or 'ward_name' are codes, not people
PERSON_WORDS = frozenset({
    "patient", "person", "pt", "first", "last", "full", "given", "family", "maiden", "middle", "contact", "relative",
    "guardian", "mother", "father", "spouse", "kin", "client", "resident", "subject",
})
PERSON_NAME_WORDS = frozenset({"givenname", "familyname", "maidenname", "middlename", "patientname", "personname"})
#: whole names that are people's names
PERSON_NAMES = frozenset({"name", "names"})
#: free text: notes can name anyone, any date or place, so they are left out (remove what identifies first)
FREE_TEXT_WORDS = frozenset({
    "note", "notes", "comment", "comments", "remark", "remarks", "narrative", "freetext", "memo",
})
#: text whose values hold at least this many words on average, and differ in at least ID_LIKE_SHARE of rows,
#: is free text whatever its name
FREE_TEXT_WORDS_PER_VALUE = 3
#: words of record numbers: an identifier when the column has many values, a code when it has few
ID_LIKE_WORDS = frozenset({
    "id", "ids", "identifier", "nbr", "nr", "number", "no", "patient", "encounter", "visit", "case", "record",
    "account", "key", "serial", "name", "names", "licence", "license", "code",
})
#: of those, the words of codes: few values make the column a code (admission_type_id: 8 codes)
CODE_WORDS = frozenset({"id", "ids", "identifier", "code", "key"})
#: a column whose name starts with one of these counts something (num_medications, number_diagnoses):
#: its name says nothing about sensitivity
COUNT_WORDS = frozenset({"num", "number", "count", "n", "total", "nb"})
CLASS_WORDS = frozenset({
    "class", "label", "target", "outcome", "readmitted", "readmission", "readmit", "died", "death", "deceased",
    "mortality", "survival", "survived", "income", "salary",
})
#: whole names that are a class (a word inside a longer name would match too often: 'y_coordinate')
CLASS_NAMES = frozenset({"y", "disposition"})  # an emergency visit's outcome: admitted, discharged …
#: several words together that name an outcome ('vital status')
CLASS_PHRASES = (frozenset({"vital", "status"}), frozenset({"discharge", "status"}))
SENSITIVE_WORDS = frozenset({
    "diagnosis", "diagnoses", "diag", "dx", "disease", "illness", "condition", "treatment", "medication",
    "medications", "med", "meds", "drug", "drugs", "prescription", "hiv", "cancer", "icd", "icd9", "icd10",
    "procedure", "procedures", "surgery", "therapy", "symptom", "symptoms", "pregnancy", "psychiatric",
    "religion", "sexuality",
    # measurements of a person's health (Pima: plasma-glucose, serum-insulin, bmi, diastolic-bp)
    "glucose", "glu", "insulin", "bmi", "cholesterol", "chol", "hba1c", "a1c", "a1cresult", "bp", "blood",
    "pressure", "pregnancies", "pregnant", "diabetes",
})
QUASI_IDENTIFIER_WORDS = frozenset({
    "age", "sex", "gender", "zip", "zipcode", "zip3", "zip5", "postcode", "postal", "plz", "race", "ethnicity",
    "ethnic", "marital", "education", "birth", "birthdate", "dob", "born", "yob", "date", "dates", "year",
    "native", "country", "nationality", "citizenship", "occupation", "job", "profession", "workclass",
    "employment", "relationship", "city", "town", "county", "region", "district", "state", "language",
})
#: a person column by name: one of these whole words joined ('patient_id' -> patientid, 'MRN') ...
PERSON_KEYS = frozenset({"mrn", "pid", "patientid", "personid", "subjectid", "memberid", "clientid", "residentid",
                         "patientnbr", "patientno", "patientnumber", "personnbr", "subjectnbr", "membernbr"})
#: ... or a word of who (patient, person …) with a word of numbering (id, nbr …), or a column named like who
PERSON_WHO = frozenset({"patient", "person", "subject", "member", "client", "resident", "pt"})
PERSON_NUMBER_WORDS = frozenset({"id", "ids", "identifier", "nbr", "nr", "number", "no", "key"})
#: its values repeat: at least this many rows per distinct value on average (several rows per person)
PERSON_ROWS_PER_VALUE = 1.1
#: tables smaller than this are not judged by how distinct a column is (small tables are distinct by chance)
UNIQUE_ID_MIN_ROWS = 100
#: a column whose values differ in at least this share of rows is guessed an identifier
NEAR_UNIQUE = 0.9
#: an id-like name with at least this share of distinct values (or MANY_VALUES of them) is a record number
ID_LIKE_SHARE = 0.5
MANY_VALUES = 1000
#: 'num' as the last column with at most this many values is a class (the UCI heart-disease tables)
NUM_CLASS_MAX = 10


@functools.lru_cache(maxsize=65_536)
def name_words(name: str) -> frozenset[str]:
    """Lower-case words of a column name: 'marital-status' -> {marital, status}; 'PatientID' -> {patient, id};
    'diag_1' -> {diag, 1, diag1}. The whole name without separators is a word too. Remembered: each rule asks
    again, and a 20,000-column table has 20,000 names."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", str(name))
    spaced = re.sub(r"([A-Za-z])([0-9])", r"\1 \2", spaced)
    words = {w for w in re.split(r"[^0-9A-Za-z]+", spaced.lower()) if w}
    joined = re.sub(r"[^0-9a-z]+", "", str(name).lower())
    return frozenset(words | {joined})


def counts_something(name: str) -> bool:
    """'num_medications', 'number_diagnoses': a count, whatever it counts ('num' alone is not)."""
    first = re.split(r"[^0-9a-z]+", re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", str(name)).lower())[0]
    return first in COUNT_WORDS and len(name_words(name)) > 2


def person_name_word(name: str) -> str | None:
    """The word that makes a column name a person's name ('patient_name' -> 'patient name'), else None."""
    words = name_words(name)
    joined = _hit(words, PERSON_NAME_WORDS)
    if joined:
        return joined
    if str(name).strip().lower() in PERSON_NAMES:
        return str(name).strip().lower()
    if words & {"name", "names"}:
        person = _hit(words, PERSON_WORDS)
        if person:
            return f"{person} name"
    return None


def identifier_by_name(name: str) -> str | None:
    """Why rule 1 makes `name` an identifier whatever its values (a direct identifier, a person's name, free
    text), in words; None when its name alone does not. The reader keeps rows whose only missing value is in
    such a column: the column is left out of every release, so its blanks cost no row."""
    words = name_words(name)
    word = _hit(words, IDENTIFIER_WORDS)
    if word:
        return f"its name mentions '{word}', which directly identifies a person"
    word = person_name_word(name)
    if word:
        return f"its name says it holds people's names ('{word}')"
    word = _hit(words, FREE_TEXT_WORDS)
    if word:
        return (f"its name says it holds free text ('{word}'), which can name people, places and dates; remove "
                "what identifies before publishing it separately")
    return None


def person_by_name(name: str) -> str | None:
    """Who a column's name says it numbers ('patient_nbr', 'MRN' -> 'patient'; 'subject_id' -> 'subject'), else
    None. From the name alone; whether the values repeat is asked separately (`guess_person`)."""
    words = name_words(name)
    key = _hit(words, PERSON_KEYS)
    if key:
        return "patient" if key == "mrn" or key.startswith("patient") else \
            next((w for w in sorted(PERSON_WHO) if key.startswith(w)), "person")
    who = _hit(words, PERSON_WHO)
    if who and (words & PERSON_NUMBER_WORDS or str(name).strip().lower() == who):
        return "patient" if who == "pt" else who
    return None


def guess_person(name: str, facts: "ColumnFacts") -> str | None:
    """The reason a column is guessed the person column (whose row it is), else None: its name says it numbers
    patients (or persons, subjects, members …) and its values repeat — several rows per value. A guess from
    values like the others (the repeats are read from the data), so the custodian confirms it; a table with one
    row per patient keeps the number as an identifier (rule 1 or 5). With it, the rows of one patient are
    protected together: k counts patients, and the column is never released."""
    who = person_by_name(name)
    if who is None:
        return None
    count, rows = facts.distinct(name)
    if count < 2 or rows < PERSON_ROWS_PER_VALUE * count:
        return None
    return (f"its name says it numbers {who}s and its {count:,} different values have {rows:,} rows (several "
            f"rows per {who}): the person column — the rows of one {who} are protected together (k counts "
            f"{who}s), and it is never released")


def person_columns_problem(names: list[str]) -> str | None:
    """The message refusing more than one person column (None for one or none)."""
    if len(names) < 2:
        return None
    return (f"{', '.join(names)} are all marked person; a table has one person column (the one that says whose "
            "row it is): in the Data step set the others to Identifier (ppdp: --role COLUMN=identifier)")


#: how many present values the free-text and date rules read (strided over the rows)
SAMPLE_VALUES = 5_000


_DATE_START = re.compile(r"^\s*(\d{4}-\d{1,2}-\d{1,2}|\d{1,2}[./-]\d{1,2}[./-]\d{4})")
FIRST_VALUES = 8


def _first_values_look(frame: pd.DataFrame) -> dict[str, tuple[bool, bool]]:
    """{column: (could be dates, could be free text)} from the first FIRST_VALUES rows, read once for the whole
    table: the date and free-text rules need a sample and pandas string work per column, which on a 20,000-column
    table took seconds; a column none of whose first present values starts like a date (or holds a space) cannot
    reach those rules' thresholds (nearly all dates; three words a value on average), so it is skipped. A column
    with no text in its first rows is left to the rules."""
    head = frame.iloc[:FIRST_VALUES]
    if head.empty:
        return {}
    grid = head.to_numpy(dtype=object)
    out = {}
    for j, name in enumerate(frame.columns):
        texts = [v for v in grid[:, j] if isinstance(v, str)]
        if not texts:  # nothing to go by in the first rows (missing, or not text): the rules read the sample
            out[name] = (True, True)
            continue
        out[name] = (any(_DATE_START.match(v) for v in texts), any(" " in v.strip() for v in texts))
    return out


def present_sample(series: pd.Series) -> pd.Series:
    """At most SAMPLE_VALUES present values, evenly strided over the rows: what the free-text and date rules
    read."""
    present = series.dropna()
    if len(present) > SAMPLE_VALUES:
        present = present.iloc[:: len(present) // SAMPLE_VALUES]
    return present


def free_text_share(series: pd.Series) -> tuple[float, float]:
    """(average words per value, share of distinct values) of a text column's present values (on
    `present_sample`); (0, 0) for numbers or an empty column."""
    if pd.api.types.is_numeric_dtype(series.dtype):
        return 0.0, 0.0
    present = present_sample(series)
    if present.empty:
        return 0.0, 0.0
    text = present.astype(str)
    words = text.str.count(r"\S+").to_numpy()
    return float(words.mean()), float(text.nunique()) / len(text)


#: a day written 2020-03-07 (a time may follow), 07/03/2020, 3.7.2020 or 07-03-2020
_DATE_VALUE = r"^\s*(\d{4}-\d{1,2}-\d{1,2}([ T]\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?)?|\d{1,2}[./-]\d{1,2}[./-]\d{4})\s*$"


def date_example(series: pd.Series) -> str | None:
    """A value of a text column whose present values (on `present_sample`) are nearly all dates with a day, else
    None: such a column is a quasi-identifier whatever its name ('admitted', 'seen_on')."""
    present = present_sample(series)
    if present.empty or pd.api.types.is_numeric_dtype(series.dtype):
        return None
    text = present.astype(str)
    matches = text.str.match(_DATE_VALUE, na=False)
    return str(text[matches].iloc[0]) if matches.mean() >= NEAR_UNIQUE else None


def _distinct(series: pd.Series, exact: bool = True) -> tuple[int, int]:
    """(distinct values, rows) among the present values. Not `exact`: a strided sample decides first, enough to
    tell that a column is far from distinct (most columns; the reader guesses on every table it reads)."""
    present = series.dropna()
    n = len(present)
    if not exact and n > 20_000:
        sample = present.iloc[:: n // 5_000]
        if sample.nunique() < 0.5 * len(sample):
            return int(sample.nunique()), len(sample)  # far from distinct: the sample's share is enough
    return int(present.nunique()), n


def _is_whole(series: pd.Series, kind: str) -> bool:
    """Text, or numbers that are all whole (record numbers are; measurements with decimals are not)."""
    if kind != "numeric":
        return True
    if pd.api.types.is_integer_dtype(series.dtype):
        return True
    values = series.dropna().to_numpy(dtype=float, na_value=np.nan)
    return bool(values.size) and bool(np.all(np.mod(values, 1) == 0))


class ColumnFacts:
    """What the value rules read from a column: the table's rows, a column's (distinct present values, present
    rows) and whether its numbers are all whole. Read from a frame here; a table larger than memory answers the
    same questions exactly in SQL (bigdata/columns.SqlFacts), so both engines guess the same roles."""

    def __init__(self, frame: pd.DataFrame):
        self.frame = frame

    def rows(self) -> int:
        return len(self.frame)

    def distinct(self, name: str, exact: bool = True) -> tuple[int, int]:
        return _distinct(self.frame[name], exact)

    def whole(self, name: str, kind: str) -> bool:
        return _is_whole(self.frame[name], kind)

    def sample(self, name: str) -> pd.Series:
        return present_sample(self.frame[name])


class Reason(str):
    """Why a role was guessed, in plain words, and whether the guess read the column's values (`from_values`).

    Only rule 1 (a direct identifier, a person's name or free text, by the name alone) reads nothing but the
    name; every later rule runs after the free-text rule, which reads values, or reads values itself (distinct
    counts, dates), so one record more or less can change its outcome. A differentially private plan accepts
    only guesses that did not read values, unless the custodian stated or confirmed the role (plan.py)."""

    from_values: bool = True

    def __new__(cls, text: str, from_values: bool = True) -> "Reason":
        out = super().__new__(cls, text)
        out.from_values = bool(from_values)
        return out

    def __reduce__(self):  # pickled to and from the window's worker processes with its flag
        return (Reason, (str(self), self.from_values))


def guessed_parts(reasons: dict, names, given_roles=(), given_kinds=()) -> dict[str, frozenset]:
    """{column: what of it was read from the values and not given} — "role" when its role was not given and its
    guess read values (`Reason.from_values`), "kind" when its kind was not given (the kind rule always reads
    values). Kept on each `ColumnSpec.guessed`; a DP plan asks for them to be stated or confirmed."""
    out = {}
    for name in names:
        parts = set()
        if name not in given_roles and getattr(reasons.get(name, (None, None))[1], "from_values", True):
            parts.add("role")
        if name not in given_kinds:
            parts.add("kind")
        out[name] = frozenset(parts)
    return out


def _hit(words: set[str], vocabulary: frozenset) -> str | None:
    found = sorted(words & vocabulary)
    return found[0] if found else None


def _share(count: int, rows: int) -> str:
    return f"{100 * count / max(rows, 1):.0f} %"


def guess_roles_with_reasons(frame: pd.DataFrame, kinds: dict[str, str] | None = None,
                             facts: ColumnFacts | None = None) -> dict[str, tuple[Role, str]]:
    """{column: (role, reason in plain words)} by the rules of `role_rule_text()`, in that order. `facts`: where
    the values are read (default: `frame`; its columns are then only names)."""
    kinds = kinds or {}
    facts = facts or ColumnFacts(frame)
    out: dict[str, tuple[Role, str]] = {}
    have_class = False
    have_person = ""  # one person column at most: the first that fits
    columns = list(frame.columns)
    looks = _first_values_look(frame)
    for position, name in enumerate(columns):
        words = name_words(name)
        kind = kinds.get(name, "categorical")
        counted: tuple[int, int] | None = None

        def distinct(name: str = name) -> tuple[int, int]:
            nonlocal counted
            if counted is None:
                counted = facts.distinct(name)
            return counted

        role, reason = None, ""
        if (why := guess_person(name, facts)) is not None:
            if have_person:  # a second one numbers people too: left out, never published as a code
                role, reason = Role.IDENTIFIER, (f"{why.split(':')[0]}, but {have_person} is already the person "
                                                 "column (a table has one): an identifier, left out of the release")
            else:
                role, reason, have_person = Role.PERSON, why, name
        by_name = identifier_by_name(name) if role is None else None
        if by_name:
            role = Role.IDENTIFIER
            reason = f"{by_name}: it is left out of the release"
        if role is None and kind != "numeric" and facts.rows() >= 20 and looks.get(name, (True, True))[1]:
            per_value, share = free_text_share(facts.sample(name))
            if per_value >= FREE_TEXT_WORDS_PER_VALUE and share >= ID_LIKE_SHARE:
                role = Role.IDENTIFIER
                reason = (f"its values look like free text ({per_value:.0f} words on average, "
                          f"{100 * share:.0f} % of them different), which can name people, places and dates: it is "
                          "left out of the release; remove what identifies before publishing it separately")
        if role is None:
            word = _hit(words, CLASS_WORDS) or next(("/".join(sorted(p)) for p in CLASS_PHRASES if p <= words), None)
            if word is None and str(name).strip().lower() in CLASS_NAMES:
                word = str(name).strip().lower()
            if word is None and str(name).strip().lower() == "num" and position == len(columns) - 1 \
                    and distinct()[0] <= NUM_CLASS_MAX:
                word = "num"
            if word:
                if have_class:
                    role = Role.SENSITIVE
                    reason = (f"its name suggests an outcome ('{word}'), but another column is already the class: "
                              "sensitive")
                else:
                    role = Role.CLASS
                    reason = (f"its name suggests the outcome ('{word}'): the class, the value a data user wants "
                              "to predict")
                have_class = True
        is_count = counts_something(name)
        if role is None and not is_count:
            word = _hit(words, SENSITIVE_WORDS)
            if word:
                role = Role.SENSITIVE
                reason = f"its name mentions '{word}' (health information about a person): sensitive"
        if role is None:
            word = _hit(words, QUASI_IDENTIFIER_WORDS)
            if word:
                role = Role.QUASI_IDENTIFIER
                reason = (f"its name mentions '{word}', which others can know or look up and link: "
                          "quasi-identifier")
        if role is None:
            word = _hit(words, ID_LIKE_WORDS)
            if word:
                count, rows = distinct()
                if count >= MANY_VALUES or (rows and count >= ID_LIKE_SHARE * rows and rows >= 20):
                    role = Role.IDENTIFIER
                    reason = (f"its name mentions '{word}' and it has {count:,} different values "
                              f"({_share(count, rows)} of rows): a record or patient number, left out of the "
                              "release")
                elif word in CODE_WORDS:
                    role = Role.INSENSITIVE
                    reason = (f"its name mentions '{word}' but it has only {count:,} different values: a code, "
                              "published as is" + (" (set its kind to categorical: its numbers are codes, not "
                                                   "amounts)" if kind == "numeric" else ""))
                else:
                    role = Role.INSENSITIVE
                    reason = (f"its name mentions '{word}' but it has only {count:,} different values, too few for "
                              "a record number: published as is")
        if role is None and kind != "numeric" and looks.get(name, (True, True))[0]:
            example = date_example(facts.sample(name))
            if example is not None:
                role = Role.QUASI_IDENTIFIER
                reason = (f"its values are dates (e.g. '{example}'), which others can know or look up (a birth, "
                          "admission or visit date): quasi-identifier")
        if role is None and facts.rows() >= UNIQUE_ID_MIN_ROWS and facts.whole(name, kind):
            count, rows = counted if counted is not None else facts.distinct(name, exact=False)
            if rows and count >= NEAR_UNIQUE * rows:
                role = Role.IDENTIFIER
                reason = (f"it has a different value in {_share(count, rows)} of rows, so a value points to one "
                          "record: left out of the release")
        if role is None:
            role, reason = Role.INSENSITIVE, "nothing in its name or values suggests a role: published as is"
        # only rule 1 by the name reads nothing else — unless rule 0 read the values first (a person-number name)
        out[name] = (role, Reason(reason, from_values=not by_name or person_by_name(name) is not None))
    return out


def guess_roles(frame: pd.DataFrame, kinds: dict[str, str] | None = None,
                facts: ColumnFacts | None = None) -> dict[str, Role]:
    """A role per column by `role_rule_text()` (the reasons: `guess_roles_with_reasons`)."""
    return {name: role for name, (role, _reason) in guess_roles_with_reasons(frame, kinds, facts).items()}


def role_rule_text() -> str:
    """How roles were guessed, in plain words, for the GUI and `ppdp inspect` (the rules in order)."""
    def words(vocabulary):
        return ", ".join(sorted(vocabulary))
    return (
        "Roles are a first guess from the column names and values; please check each one. The first rule that "
        "fits decides:\n"
        f"  0. Person (whose row it is; the first such column only): {words(PERSON_KEYS)}, or {words(PERSON_WHO)} "
        f"with {words(PERSON_NUMBER_WORDS)} (patient_nbr), when its values repeat — at least "
        f"{PERSON_ROWS_PER_VALUE:g} rows per value on average. k then counts persons, and it is never released.\n"
        f"  1. Identifier (left out of every release): names containing {words(IDENTIFIER_WORDS)}; people's "
        f"names (name with {words(PERSON_WORDS)}, {words(PERSON_NAME_WORDS)}, a column named "
        f"{words(PERSON_NAMES)}); free text (names containing {words(FREE_TEXT_WORDS)}, or text of at least "
        f"{FREE_TEXT_WORDS_PER_VALUE} words per value on average, different in {100 * ID_LIKE_SHARE:.0f} % of "
        "rows).\n"
        f"  2. Class (the first such column; later ones become sensitive): {words(CLASS_WORDS)}, 'vital status', "
        f"'discharge status', a column named {words(CLASS_NAMES)}, or 'num' as the last column with at most "
        f"{NUM_CLASS_MAX} values.\n"
        f"  3. Sensitive: {words(SENSITIVE_WORDS)} (not for names starting with "
        f"{words(COUNT_WORDS)}: those are counts).\n"
        f"  4. Quasi-identifier: {words(QUASI_IDENTIFIER_WORDS)}.\n"
        f"  5. Names containing {words(ID_LIKE_WORDS)}: an identifier (a record or patient number) when the column "
        f"has at least {MANY_VALUES:,} different values, or as many as {100 * ID_LIKE_SHARE:.0f} % of its rows; "
        "otherwise a code, published as is (number codes are best set to categorical).\n"
        "  6. Quasi-identifier: text whose values are dates with a day (2020-03-07, 07/03/2020), whatever the "
        "name.\n"
        f"  7. Identifier: whole numbers or text with a different value in at least {100 * NEAR_UNIQUE:.0f} % of "
        f"rows (tables of {UNIQUE_ID_MIN_ROWS} rows or more).\n"
        "  8. Everything else: insensitive (published as is).\n"
        "Only rule 1 by the name (direct identifiers, people's names, free-text names) reads nothing but the name. "
        "The other rules read the values, or come after one that does (free text by its values), so one record "
        "more or less can change their guess: a differentially private release asks you to confirm them (Data "
        "step: Confirm roles and kinds; ppdp: --confirm-roles)."
    )
