"""ICD-9-CM and ICD-10 (WHO) diagnosis codes: code → 3-character category → block → chapter → *.

The structure is public (engine/taxonomy/icd_tables.py, bundled as ARX files in taxonomies/icd/), so a
taxonomy of all categories is a public domain (`icd_categories`). A column holds full codes ('250.83', 'E11.9', 'V45.81'),
whose list is the records' own, so `icd_taxonomy` (leaves = the column's codes) has origin "data".

How codes are read (after trimming spaces; letters in any case):
- ICD-9-CM: 1 to 3 digits with an optional decimal part ('8' and '08' are read as 008: spreadsheets drop leading
  zeros); 4 or 5 digits without a dot ('25083' = 250.83); 'V' + 2 digits ('V45', 'V45.81'); 'E' + 3 digits
  ('E909', 'E909.3').
- ICD-10: a letter and 2 digits, then optionally a dot and up to 4 letters or digits ('E11', 'E11.9', 'S72.001A').
A code in neither form, or whose category lies in no block of the classification, is invalid: the builder refuses
the column and names such codes, so nothing is put under a wrong chapter silently.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from ppdp_gui.engine.errors import TaxonomyError
from ppdp_gui.engine.taxonomy.icd_tables import ICD9_CHAPTERS, ICD10_CHAPTERS
from ppdp_gui.engine.taxonomy.order import natural_key
from ppdp_gui.engine.taxonomy.tree import Taxonomy

VERSIONS = ("icd9", "icd10")
FILES = {"icd9": "icd9cm_categories.csv", "icd10": "icd10_who_categories.csv"}
_ICD9_NUMERIC = re.compile(r"^(\d{1,3})(\.\d{0,2})?$")
_ICD9_DOTLESS = re.compile(r"^(\d{3})\d{1,2}$")
_ICD9_V = re.compile(r"^(V\d{2})(\.?\d{1,2})?$")
_ICD9_E = re.compile(r"^(E\d{3})(\.?\d)?$")
_ICD10 = re.compile(r"^([A-Z]\d{2})(\.?[0-9A-Z]{1,4})?$")


def _chapters(version: str):
    if version == "icd9":
        return ICD9_CHAPTERS
    if version == "icd10":
        return ICD10_CHAPTERS
    raise TaxonomyError(f"unknown ICD version {version!r}; use 'icd9' (ICD-9-CM) or 'icd10' (WHO ICD-10)")


def _key(category: str, version: str) -> int:
    """A number that orders categories the way the classification ranges them."""
    if version == "icd9":
        if category[0] == "V":
            return 1000 + int(category[1:])
        if category[0] == "E":
            return 2000 + int(category[1:])
        return int(category)
    return (ord(category[0]) - 65) * 100 + int(category[1:3])


def _category(key: int, version: str) -> str:
    if version == "icd9":
        if key >= 2000:
            return f"E{key - 2000:03d}"
        if key >= 1000:
            return f"V{key - 1000:02d}"
        return f"{key:03d}"
    return f"{chr(65 + key // 100)}{key % 100:02d}"


def _label(first: str, last: str, title: str) -> str:
    return f"{first} {title}" if first == last else f"{first}-{last} {title}"


def category_rows(version: str) -> list[list[str]]:
    """ARX rows `category;block;chapter;*`, one per 3-character category, in classification order."""
    rows = []
    for c_first, c_last, c_title, blocks in _chapters(version):
        chapter = _label(c_first, c_last, c_title)
        for b_first, b_last, b_title in blocks:
            block = _label(b_first, b_last, b_title)
            for key in range(_key(b_first, version), _key(b_last, version) + 1):
                rows.append([_category(key, version), block, chapter, "*"])
    return rows


def write_bundled_files(folder: Path) -> list[Path]:
    """(Re)write taxonomies/icd/*.csv from the tables (ARX format, ';', one row per category)."""
    from ppdp_gui.engine.taxonomy.arx_io import write_arx_hierarchy

    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for version in VERSIONS:
        tax = Taxonomy.from_paths(version, category_rows(version))
        out.append(write_arx_hierarchy(tax, folder / FILES[version]))
    return out


def icd_categories(version: str = "icd9") -> Taxonomy:
    """The bundled taxonomy of every 3-character category (public: the classification's own structure)."""
    from ppdp_gui.engine.taxonomy.arx_io import read_arx_hierarchy
    from ppdp_gui.engine.taxonomy.bundled import taxonomies_dir

    _chapters(version)  # an unknown version is refused by name
    path = taxonomies_dir() / "icd" / FILES[version]
    if not path.is_file():
        raise TaxonomyError(f"the bundled {version.upper()} categories are not in {path.parent}")
    tax = read_arx_hierarchy(path)
    tax.origin = "public"
    return tax


def code_category(code, version: str = "icd9") -> str | None:
    """The 3-character category of one code ('250.83' -> '250', 'E11.9' -> 'E11'), or None if the form is
    wrong (whether the category exists is checked against the classification by `icd_taxonomy`)."""
    text = str(code).strip().upper()
    if version == "icd9":
        m = _ICD9_NUMERIC.match(text)
        if m:
            return m.group(1).zfill(3)
        for pattern in (_ICD9_DOTLESS, _ICD9_V, _ICD9_E):
            m = pattern.match(text)
            if m:
                return m.group(1)
        return None
    _chapters(version)
    m = _ICD10.match(text)
    return m.group(1) if m else None


def to_categories(column: str, values, version: str = "icd9", keep=()) -> pd.Series:
    """Each code written as its 3-character category ('250.83' → '250', 'V45.81' → 'V45'): the level of the
    public list (`icd_categories`), so that the classification's public tree covers the column. A public rule
    applied value by value; missing values and the labels in `keep` (the missing-value category) stay as they
    are; a value that is no code of `version` is refused by name, as `icd_taxonomy` refuses it."""
    series = pd.Series(values)
    texts = series.dropna().astype(str)
    rows = {r[0] for r in category_rows(version)}
    kept = {str(k) for k in keep}
    mapping = {c: (c if c in kept else code_category(c, version)) for c in texts.unique()}
    bad = sorted((c for c, cat in mapping.items() if cat is None or (cat not in rows and c not in kept)),
                 key=natural_key)
    if bad:
        name = "ICD-9-CM" if version == "icd9" else "ICD-10"
        raise TaxonomyError(f"column {column!r}: {len(bad):,} value(s) in {int(texts.isin(bad).sum()):,} row(s) are "
                            f"not {name} codes (e.g. {', '.join(repr(b) for b in bad[:5])}); correct them, treat them "
                            "as missing, or choose the other ICD version")
    out = series.astype(object).copy()
    present = series.notna()
    out[present] = texts.map(mapping).to_numpy()
    return out


def categories_version(tax) -> str | None:
    """'icd9' / 'icd10' when `tax` holds exactly the shipped list of categories (the public tree built by
    `icd9:categories`), else None: a project reopened with such a tree gets its column written as categories."""
    from ppdp_gui.engine.taxonomy.labels import MISSING_LABEL
    leaves = [v for v in tax.leaf_values() if v != MISSING_LABEL]  # the list's tree admits "(missing)" too
    for version in VERSIONS:
        if len(leaves) == len(category_rows(version)) and set(leaves) == {r[0] for r in category_rows(version)}:
            return version
    return None


def icd_taxonomy(column: str, values, version: str = "icd9", root_label: str = "*") -> Taxonomy:
    """Leaves = the column's codes (as written), then category, block, chapter, root; invalid codes refused."""
    rows = {r[0]: r[1:] for r in category_rows(version)}
    texts = pd.Series(values).dropna().astype(str)
    codes = sorted(texts.unique(), key=natural_key)
    if not codes:
        raise TaxonomyError(f"column {column!r} has no codes to build an {version.upper()} taxonomy from")
    categories = [code_category(c, version) for c in codes]
    bad = [c for c, cat in zip(codes, categories) if cat is None or cat not in rows]
    if bad:
        rows_bad = int(texts.isin(bad).sum())
        name = "ICD-9-CM" if version == "icd9" else "ICD-10"
        raise TaxonomyError(f"column {column!r}: {len(bad):,} value(s) in {rows_bad:,} row(s) are not {name} codes "
                            f"(e.g. {', '.join(repr(b) for b in bad[:5])}); correct them, treat them as missing, "
                            "or choose the other ICD version")
    order = np.argsort([_key(cat, version) for cat in categories], kind="stable")
    paths = [[codes[i], categories[i], *rows[categories[i]][:2], root_label] for i in order]
    tax = Taxonomy.from_paths(column, paths)
    tax.origin = "data"  # the leaves are the codes found in the records
    return tax
