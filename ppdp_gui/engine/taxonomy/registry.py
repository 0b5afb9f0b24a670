"""The taxonomy builders `ppdp --build-taxonomy` and the window's Taxonomies step offer: one list, read by both.

Each builder has a name (as spelled on the command line), a label (the window's words), one plain line of help
and its parameters in the order the command line writes them (`bands:LOW:HIGH:WIDTH:STEP`). The window draws its
builder list and fields from this list and turns what was typed into the command line's spelling (`spec_text`),
which `from_spec.parse_spec` reads for both: one parser, one validation, one tree for one spec.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BuilderParam:
    name: str  # the BuildSpec field it fills
    label: str  # the window's words
    help: str
    placeholder: str = ""  # what an empty field means
    required: bool = False
    choices: tuple[str, ...] = ()  # the only values it takes (the first is the default)


@dataclass(frozen=True)
class TaxonomyBuilder:
    name: str  # as written on the command line: intervals, bands, …
    label: str
    help: str  # one plain line
    spelling: str  # the command line's form, e.g. "bands:LOW:HIGH[:WIDTH[:STEP]]"
    params: tuple[BuilderParam, ...] = ()
    public: bool = False  # built from stated values only (origin "public"), not from the table's values
    numbers: bool = False  # only for a column of numbers (a top code such as '90+' counts as one)


_WIDTH = BuilderParam("width", "Width", "Width of the smallest groups; each level above joins two of them.",
                      placeholder="10, unless absurd for the column's range")
_ICD_LEVEL = BuilderParam("level", "Leaves", "codes: the codes found in the table (built from it); categories: "
                          "every 3-character category of the classification, shipped with ppdp — public, the same "
                          "list as the public domain 'icd9' / 'icd10'; the column's codes are then written as their "
                          "category (250.83 → 250)", choices=("codes", "categories"))
BUILDERS: tuple[TaxonomyBuilder, ...] = (
    TaxonomyBuilder("intervals", "Numeric intervals", "Numbers grouped in intervals of the width given (20-29, "
                    "30-39, …), then pairs of those. Built from the values in the table.", "intervals[:WIDTH]",
                    (_WIDTH,), numbers=True),
    TaxonomyBuilder("bands", "Bands over a public range", "Every value from the lowest to the highest you state "
                    "(e.g. ages 0 to 120), in bands of the width given: the tree holds values no patient has, so "
                    "it is public and a differentially private release may rely on it.",
                    "bands:LOW:HIGH[:WIDTH[:STEP]]",
                    (BuilderParam("low", "Lowest value", "The smallest value anyone could have (e.g. 0 for an age).",
                                  required=True),
                     BuilderParam("high", "Highest value", "The largest value anyone could have (e.g. 120).",
                                  required=True),
                     BuilderParam("width", "Width", "Width of the smallest bands.", placeholder="10"),
                     BuilderParam("step", "Step", "The distance between two possible values (1 for whole years).",
                                  placeholder="1")),
                    public=True, numbers=True),
    TaxonomyBuilder("dates", "Dates: month → year → decade", "Each date under its month, year and decade "
                    "(2020-03-07, or 07/03/2020 once a day above 12 shows the order). Built from the table's dates.",
                    "dates[:FORMAT]",
                    (BuilderParam("date_format", "Date format", "How the dates are written, e.g. %d/%m/%Y; left "
                                  "empty it is read from the values when certain.", placeholder="read from the values"),)),
    TaxonomyBuilder("mask", "Mask codes from the right", "Codes such as postcodes hidden one character at a time "
                    "from the right: 47677 → 4767* → 476** → …. Built from the codes in the table.", "mask[:PAD]",
                    (BuilderParam("pad", "Pad with", "One character put in front of shorter codes so all have the "
                                  "same length (0 for postcodes that lost a leading zero).", placeholder="no padding"),)),
    TaxonomyBuilder("icd9", "ICD-9-CM diagnoses", "Diagnosis codes under their category, block and chapter "
                    "(250.83 → 250 → 249-259 Diseases of other endocrine glands → 240-279 …). Leaves 'categories': "
                    "every category of the classification, public; codes are then written as their category.",
                    "icd9[:codes|categories]", (_ICD_LEVEL,)),
    TaxonomyBuilder("icd10", "ICD-10 diagnoses", "Diagnosis codes under their category, block and chapter "
                    "(E11.9 → E11 → E10-E14 Diabetes mellitus → E00-E90 …). Leaves 'categories': every "
                    "category of the classification, public; codes are then written as their category.",
                    "icd10[:codes|categories]", (_ICD_LEVEL,)),
    TaxonomyBuilder("flat", "Flat (one level)", "Every value found in the table directly under * (suppress it or "
                    "keep it).", "flat"),
)


def names() -> list[str]:
    return [b.name for b in BUILDERS]


def builder(name: str) -> TaxonomyBuilder:
    for b in BUILDERS:
        if b.name == name:
            return b
    raise KeyError(name)


def spec_help() -> str:
    """Every spelling, for the command line's help and for error messages."""
    return " | ".join(b.spelling for b in BUILDERS)


def spec_text(name: str, values: dict[str, str] | None = None) -> str:
    """The command line's spelling of builder `name` with the fields typed in the window (`{param: text}`; empty
    means its default): ('bands', {'low': '0', 'high': '120'}) → 'bands:0:120'. An empty field before a given one
    is written as the builder's default, which `parse_spec` reads as if it were left out."""
    b = builder(name)
    texts = [str((values or {}).get(p.name, "") or "").strip() for p in b.params]
    while texts and not texts[-1]:
        texts.pop()
    defaults = {"width": "10", "step": "1"}
    texts = [t or defaults.get(p.name, "") for p, t in zip(b.params, texts)]
    return ":".join([name, *texts]) if texts else name
