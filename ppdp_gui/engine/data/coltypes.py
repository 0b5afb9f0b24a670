"""Column typing: the one visible rule that decides whether a column is numeric or categorical.

Files are read as text; this module then decides each column's kind by a rule simple enough to show the user
(`kind_rule_text()`), who can override it per column. Work is vectorised through Arrow compute kernels, which
parse a million strings in tens of milliseconds.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ppdp_gui.engine.errors import DataError

#: a column needs MORE than this many distinct values to be typed numeric automatically
NUMERIC_MIN_DISTINCT = 10
KINDS = ("numeric", "categorical")
_LEADING_ZERO = r"^[+-]?0[0-9]"
_INT_LIMIT = 2.0**53  # integers beyond this are not exact in float64: keep them as floats
#: names of code columns: a ZIP or postcode is a code, not a quantity (90001 is not "more" than 90000), even when
#: its values lost their leading zero; read as numbers, its blanks would stop the k-anonymity mechanisms
CODE_NAME_WORDS = frozenset({
    "zip", "zipcode", "zip3", "zip5", "postcode", "postcodes", "postal", "postalcode", "plz", "postleitzahl",
    "codepostal", "cp", "npa", "zcta", "fips", "eircode",
})


def code_by_name(name: str) -> bool:
    """True when the column's name says it holds codes (zip, ZIP_code, postcode, PLZ …): rule 0 of
    `kind_rule_text`. A guess from the name alone, read from no value, so it needs no confirmation."""
    from ppdp_gui.engine.data.roles import name_words
    return bool(name_words(name) & CODE_NAME_WORDS)


def kinds_by_name(names) -> dict[str, str]:
    """{column: "categorical"} for the columns whose name says they hold codes (`code_by_name`)."""
    return {c: "categorical" for c in names if code_by_name(c)}


#: a text quasi-identifier with at most this many values needs no tree: each value is kept or shown as '*', all a
#: tree over two values (F, M) could say — the Taxonomies step lists it as fine, not as a column to work on
NO_TREE_VALUES = 2


def needs_no_tree(values, missing=()) -> bool:
    """True when the column has at most NO_TREE_VALUES different values (blanks and the `missing` labels set
    aside): a flat tree is all it can have, and having none is the same."""
    present = pd.Series(pd.Series(values).dropna().unique())
    return int((~present.astype(str).isin(list(missing))).sum()) <= NO_TREE_VALUES


#: words of a column name that say it holds dates (the Dates builder: month → year → decade)
DATE_NAME_WORDS = frozenset({"date", "dates", "dob", "birthdate", "datetime"})


def suggested_builder(name: str, values=None) -> str | None:
    """The taxonomy builder (engine/taxonomy/registry.py) the Taxonomies step offers first for a column: masking
    for a ZIP or postcode by its name (90001 → 9000* → 900** keeps the area), dates for a column named as dates,
    and the ICD tree for diagnosis codes (by name or by the look of `values`: ICD-9-CM when most start with a
    digit, else ICD-10). None when nothing is clearly better than the builder already chosen (the window keeps
    it). An offer only: the custodian presses Build."""
    from ppdp_gui.engine.data.roles import name_words
    if code_by_name(name):
        return "mask"
    if name_words(name) & DATE_NAME_WORDS:
        return "dates"
    if values is not None:
        from ppdp_gui.engine.data.linkable import holds_diagnosis_codes
        series = pd.Series(values)
        if holds_diagnosis_codes(name, series):
            present = series.dropna().astype(str).str.strip()
            digits = present.str.match(r"^\d").mean() if len(present) else 0.0
            return "icd9" if digits > 0.5 else "icd10"
    return None


def kind_reason(name: str, kind: str, guessed: bool, min_distinct: int = NUMERIC_MIN_DISTINCT) -> str:
    """Why column `name` has `kind`, in plain words, for the Data step (beside the role's reason): the name rule,
    the value rule of `kind_rule_text` when the kind was read from the values, else the custodian's choice."""
    if kind == "categorical" and code_by_name(name):
        return (f"{name} is categorical because its name says it holds codes (a ZIP or postcode): 90001 is a "
                "place, not a quantity. Read from the name alone.")
    if not guessed:
        return f"{name} is {kind}: you set or confirmed it."
    if kind == "numeric":
        return (f"{name} was read as numeric: every value is a plain number, none has a leading zero, and it has "
                f"more than {min_distinct} different values.")
    return (f"{name} was read as categorical: some value is not a plain number, or has a leading zero (a code), or "
            f"the column has {min_distinct} different values or fewer.")


def kind_rule_text(min_distinct: int = NUMERIC_MIN_DISTINCT) -> str:
    """The typing rule in plain words, for the GUI to show beside the column list."""
    return (
        "A column is numeric when all three hold:\n"
        "  1. every value that is not missing is a plain finite number (like 39, -2.5 or 1e3; "
        "no thousands separators, no 'inf');\n"
        "  2. no value has a leading zero (like 02139), because such values are codes, not quantities;\n"
        f"  3. it has more than {min_distinct} different values (fewer means codes or categories, "
        "such as 0/1 or a 1-5 grade).\n"
        "Otherwise it is categorical and its values are kept as text. You can change any column's kind.\n"        "But a column whose name says it holds codes — zip, zipcode, postcode, postal, plz and the like — is "
        "categorical whatever its values (90001 is a place, not a quantity; its blanks then read “(missing)”). "
        "This is read from the name alone, so it needs no confirmation.\n"
        "Numeric columns of whole numbers hold integers; when missing values are kept (policy 'keep as a "
        "category') a numeric column shows them as empty cells, a categorical one as their own category."
    )


def _as_arrow(values: pd.Series) -> pa.ChunkedArray | pa.Array:
    """Zero-copy for Arrow-backed strings; a conversion otherwise."""
    try:
        return pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
        return pa.array(values.astype(str).to_numpy(dtype=object), type=pa.string())


def parse_numbers(values: pd.Series) -> np.ndarray | None:
    """Float64 values if every string in `values` is a finite number, else None (no per-cell Python)."""
    if len(values) == 0:
        return np.empty(0, dtype=float)
    try:
        parsed = pc.cast(_as_arrow(values), pa.float64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        return None
    if parsed.null_count:
        return None
    out = np.asarray(parsed.to_numpy(), dtype=float)
    if not np.isfinite(out).all():
        return None
    return out


def has_leading_zero(values: pd.Series) -> bool:
    if len(values) == 0:
        return False
    return bool(pc.any(pc.match_substring_regex(_as_arrow(values), _LEADING_ZERO)).as_py())


def infer_text_kind(values: pd.Series, min_distinct: int = NUMERIC_MIN_DISTINCT) -> str:
    """Kind of a column of non-missing strings, by the rule in `kind_rule_text` (checked on distinct values)."""
    if len(values) == 0:
        return "categorical"
    distinct = pc.unique(_as_arrow(values))
    if len(distinct) <= min_distinct:
        return "categorical"
    uniques = pd.Series(distinct.to_pandas(), dtype="str")
    if parse_numbers(uniques) is None or has_leading_zero(uniques):
        return "categorical"
    return "numeric"


def infer_typed_kind(values: pd.Series, min_distinct: int = NUMERIC_MIN_DISTINCT) -> str:
    """Kind of an already typed column (non-missing values): same rule, applied to numbers directly."""
    if not is_number_dtype(values.dtype) or len(values) == 0:
        return "categorical"
    arr = values.to_numpy(dtype=float)
    if not np.isfinite(arr).all():
        return "categorical"
    return "numeric" if values.nunique() > min_distinct else "categorical"


def is_number_dtype(dtype) -> bool:
    return pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)


def is_text_dtype(dtype) -> bool:
    return pd.api.types.is_string_dtype(dtype) or pd.api.types.is_object_dtype(dtype)


def numbers_to_column(values: np.ndarray, missing: np.ndarray | None, index: pd.Index) -> pd.Series:
    """int64 when all values are whole and nothing is missing, float64 (NaN = missing) otherwise."""
    full = values.astype(float)
    if missing is not None and missing.any():
        out = np.full(len(index), np.nan)
        out[~missing] = full
        return pd.Series(out, index=index)
    if len(full) and np.all(np.floor(full) == full) and np.all(np.abs(full) < _INT_LIMIT):
        return pd.Series(full.astype(np.int64), index=index)
    return pd.Series(full, index=index)


def text_to_numeric(text: pd.Series, missing: np.ndarray, column: str,
                    line_of_row: Callable[[int], int | None] | None = None) -> pd.Series:
    """Convert a text column the user (or the rule) declared numeric; DataError names the first bad cell."""
    present = text[~missing] if missing.any() else text
    values = parse_numbers(present)
    if values is None:
        bad = _first_non_number(present)
        row = int(present.index[bad]) if bad is not None else None
        line = line_of_row(row) if (line_of_row is not None and row is not None) else None
        value = present.iloc[bad] if bad is not None else "?"
        raise DataError(f"column {column!r} is set to numeric but {value!r} is not a finite number "
                        f"(row {row + 1 if row is not None else '?'}); make it categorical or fix the value",
                        line=line, column=column)
    return numbers_to_column(values, missing, text.index)


def _first_non_number(values: pd.Series) -> int | None:
    parsed = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
    bad = np.flatnonzero(~np.isfinite(parsed))
    return int(bad[0]) if len(bad) else None


def typed_to_text(values: pd.Series) -> pd.Series:
    """Strings for a typed column made categorical: whole floats lose their '.0' so 1.0 and 1 agree."""
    if is_number_dtype(values.dtype):
        arr = values.to_numpy(dtype=float, na_value=np.nan)
        finite = np.isfinite(arr)
        safe = np.where(finite, arr, 0.0)
        if np.all((np.floor(safe) == safe) & (np.abs(safe) < _INT_LIMIT)):
            out = pd.Series(safe.astype(np.int64), index=values.index).astype(str)
            return out.where(finite, other=np.nan).astype("str")
    if pd.api.types.is_datetime64_any_dtype(values.dtype):
        out = values.dt.strftime("%Y-%m-%d %H:%M:%S").str.replace(" 00:00:00", "", regex=False)
        return out.astype("str")
    missing = values.isna().to_numpy()
    out = values.astype(str).astype("str")
    return out.where(~missing, other=np.nan) if missing.any() else out


# ---- many text columns at once ------------------------------------------------------------------------------
#: cells typed together in one batch of columns: one column of a tall table, thousands of a wide one
BATCH_CELLS = 1 << 21
_NUMBER = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$"


class TextBatch:
    """Some equally long text columns typed together, with no Python work per column or per cell.

    Why: a table 20,000 columns wide spent ~1.5 ms of pandas overhead per column; here every step is one Arrow
    or numpy call over all the batch's cells. The cells are dictionary-encoded once: `keys[j, i]` is the index
    of column j's row i in `values` (the distinct values, stripped of surrounding white space), or `len(values)`
    for a null. Per distinct value: `missing` (a missing-value token, or null), `number` (the finite number it
    reads as, else NaN — the rule of `parse_numbers`) and `zero` (a leading zero, `_LEADING_ZERO`).
    """

    def __init__(self, arrays: list, n: int, tokens) -> None:
        self.n, self.k = n, len(arrays)
        raw_values, codes = _shared_codes(arrays)
        if raw_values is None:
            chunks = []
            for arr in arrays:
                chunks.extend(arr.chunks if isinstance(arr, pa.ChunkedArray) else [arr])
            encoded = pc.dictionary_encode(_concat_text(chunks))
            raw_values, codes = encoded.dictionary, encoded.indices
        stripped = pc.utf8_trim_whitespace(raw_values)
        if not stripped.equals(raw_values):  # white space around some value: equal after stripping = one value
            again = pc.dictionary_encode(stripped)
            remap = again.indices.to_numpy(zero_copy_only=False)
            self.values = again.dictionary
            keys = remap[codes.fill_null(0).to_numpy(zero_copy_only=False)]
        else:
            self.values = stripped
            keys = codes.fill_null(0).to_numpy(zero_copy_only=False)
        na_slot = len(self.values)
        if codes.null_count:
            keys = np.where(codes.is_null().to_numpy(zero_copy_only=False), na_slot, keys)
        self.keys = np.asarray(keys, dtype=np.int32).reshape(self.k, n)
        self.missing = np.append(pc.is_in(self.values, value_set=pa.array(list(tokens), self.values.type))
                                 .to_numpy(zero_copy_only=False), True)
        matched = pc.match_substring_regex(self.values, _NUMBER).to_numpy(zero_copy_only=False)
        number = np.full(na_slot + 1, np.nan)
        if matched.any():
            parsed = pc.cast(self.values.filter(pa.array(matched)), pa.float64()).to_numpy(zero_copy_only=False)
            number[np.flatnonzero(matched)] = np.where(np.isfinite(parsed), parsed, np.nan)
        self.number = number
        self.zero = np.append(pc.match_substring_regex(self.values, _LEADING_ZERO).to_numpy(zero_copy_only=False),
                              False)

    def cell_missing(self) -> np.ndarray:
        """(k, n) booleans: the cell is missing (a token or null)."""
        return self.missing[self.keys]

    def distinct_counts(self, miss: np.ndarray) -> np.ndarray:
        """Distinct non-missing values per column (a 2-D bincount when small, else one sort)."""
        width = len(self.values) + 1
        present = ~miss
        if self.k * width <= 4 * self.keys.size + 1024:
            flat = (np.arange(self.k, dtype=np.int64)[:, None] * width + self.keys)[present]
            seen = np.bincount(flat, minlength=self.k * width).reshape(self.k, width) > 0
            return seen.sum(axis=1)
        flat = (np.arange(self.k, dtype=np.int64)[:, None] * width + self.keys)[present]
        uniq = np.unique(flat)
        return np.bincount(uniq // width, minlength=self.k)

    def kinds(self, miss: np.ndarray, min_distinct: int = NUMERIC_MIN_DISTINCT) -> list[str]:
        """The kind of each column by the rule of `kind_rule_text` (as `infer_text_kind` on each column)."""
        distinct = self.distinct_counts(miss)
        present = ~miss
        not_number = np.isnan(self.number)[self.keys] & present
        zero = self.zero[self.keys] & present
        numeric = (distinct > min_distinct) & ~not_number.any(axis=1) & ~zero.any(axis=1)
        return ["numeric" if v else "categorical" for v in numeric]

    def texts(self, fill: str | None) -> list[pa.Array]:
        """Each column's stripped text, missing cells as `fill`: one take for the batch, then zero-copy slices."""
        values = pa.concat_arrays([self.values, pa.array([fill], self.values.type)])
        remap = np.arange(len(self.values) + 1, dtype=np.int64)
        remap[self.missing] = len(self.values)
        m = self.keys.shape[1]
        flat = values.take(pa.array(remap[self.keys].reshape(-1)))
        if flat.type != pa.large_string():
            flat = flat.cast(pa.large_string())  # once per batch: pandas keeps large strings
        return [flat.slice(j * m, m) for j in range(self.k)]


def _shared_codes(arrays: list) -> tuple[pa.Array | None, pa.Array | None]:
    """(distinct texts, code of every cell) when the columns are dictionary arrays over one dictionary and
    without nulls: their codes are used as they are (no hashing of every cell); else (None, None)."""
    if not arrays or not all(isinstance(a, pa.DictionaryArray) and a.null_count == 0 for a in arrays):
        return None, None
    dictionary = arrays[0].dictionary
    if not (pa.types.is_string(dictionary.type) or pa.types.is_large_string(dictionary.type)):
        return None, None
    if not all(a.dictionary.equals(dictionary) for a in arrays[1:]):
        return None, None
    distinct = pc.dictionary_encode(dictionary)  # a dictionary may hold a text twice
    remap = distinct.indices.to_numpy(zero_copy_only=False)
    cells = np.concatenate([a.indices.to_numpy(zero_copy_only=False) for a in arrays])
    return distinct.dictionary, pa.array(remap[cells])


_STR = None  # pandas' default "str" dtype, made on first use (importing this module does not touch pandas)


def _str_dtype():
    global _STR
    if _STR is None:
        _STR = pd.StringDtype("pyarrow", na_value=np.nan)
    return _STR


def text_array(values: pd.Series) -> pa.Array:
    """A pandas text column as Arrow strings (missing values as nulls; any other object as its str())."""
    arr = pa.array(values.astype("str").array)
    return arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr


def str_array(arr: pa.Array) -> pd.api.extensions.ExtensionArray:
    """Arrow strings as a pandas "str" column, without a copy (the per-column cost of a wide table)."""
    if arr.type != pa.large_string():
        arr = arr.cast(pa.large_string())
    return pd.arrays.ArrowStringArray(arr, dtype=_str_dtype())


def _concat_text(chunks: list) -> pa.Array:
    """One Arrow array of the chunks' text (cast only when their types differ: a cast per chunk is costly)."""
    if not chunks:
        return pa.array([], pa.large_string())
    if all(c.type == chunks[0].type for c in chunks) and (pa.types.is_string(chunks[0].type)
                                                          or pa.types.is_large_string(chunks[0].type)):
        return pa.concat_arrays(chunks)
    return pa.concat_arrays([c.cast(pa.large_string()) for c in chunks])
