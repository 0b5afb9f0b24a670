"""A HIPAA Safe Harbor screen: which columns of a table still hold one of the 18 kinds of identifiers.

The Safe Harbor method (45 CFR 164.514(b)(2)) lists 18 kinds of identifiers of a person or their relatives,
employers or household members that must be removed. This screen checks the ones a program can check, by column
name (the words of `roles.name_words`) and by value patterns, and returns one finding per column and kind, in plain
words. It is a screen, not a certificate: Safe Harbor also requires that the custodian has no actual knowledge that
what remains could identify someone, and free-text columns can hide anything.

Concrete rules used:
- names: name columns of people (patient, first, last, family, maiden, contact … name);
- geographic units smaller than a state: street, address, city, town, county, district, precinct, coordinates,
  census tract; ZIP / postcode columns may keep at most their first 3 digits, and the 3-digit areas the HHS lists
  as having 20,000 people or fewer (2000 census: 036 059 063 102 203 556 692 790 821 823 830 831 878 879 884 890
  893) must read 000;
- dates more precise than the year (any column whose values are dates with a month or day, or whose name says
  date, birth, admission, discharge or death with such values); a year of birth that makes someone older than 89;
- ages over 89 unless all of them are one category (a plain age of 90 or more, or two or more categories lying
  wholly above 89, fail);
- telephone and fax numbers, e-mail addresses, social security numbers, medical record numbers, health plan
  beneficiary numbers, account numbers, certificate / licence numbers, vehicle and device identifiers and serial
  numbers, web URLs, IP addresses, biometric identifiers, photographs: by name, and by value pattern where one
  exists (e-mail, SSN 123-45-6789, phone numbers, URLs, IPv4 addresses, VINs, IBANs);
- any other unique identifying number or code: whole numbers or text with a different value in at least 90 % of
  rows (tables of 50 rows or more).
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ppdp_gui.engine.data.roles import name_words

#: 3-digit ZIP areas with 20,000 or fewer people (HHS guidance on de-identification, from the 2000 census)
RESTRICTED_ZIP3 = frozenset({"036", "059", "063", "102", "203", "556", "692", "790", "821", "823", "830", "831",
                             "878", "879", "884", "890", "893"})
MIN_ROWS_UNIQUE = 50
NEAR_UNIQUE = 0.9
#: a value-pattern kind is found when at least this share of a text column's values match it
PATTERN_SHARE = 0.5

_PERSON_WORDS = frozenset({"patient", "person", "first", "last", "full", "given", "family", "maiden", "middle",
                           "contact", "relative", "guardian", "employer", "mother", "father", "spouse", "next", "kin",
                           "emergency", "physician", "doctor"})
_NAME_WORDS = frozenset({"firstname", "lastname", "surname", "forename", "fullname", "givenname", "familyname",
                         "maidenname", "middlename"})
_GEO_WORDS = frozenset({"street", "address", "addr", "city", "town", "county", "district", "precinct", "geocode",
                        "latitude", "longitude", "lat", "lon", "lng", "coordinates", "municipality", "village",
                        "neighbourhood", "neighborhood", "tract", "borough", "parish"})
_ZIP_WORDS = frozenset({"zip", "zipcode", "zip3", "zip5", "postcode", "postal", "plz", "postalcode"})
_DATE_WORDS = frozenset({"date", "dates", "dob", "dod", "birthdate", "birthday", "datetime", "timestamp"})
_DATE_CONTEXT = frozenset({"birth", "admission", "admitted", "discharge", "discharged", "death", "died", "visit",
                           "encounter", "surgery", "procedure", "service", "appointment"})
_BIRTH_WORDS = frozenset({"birth", "born", "dob", "yob", "birthyear"})

#: kind -> (name words that are enough, value pattern or None)
_BY_NAME = {
    "telephone numbers": ({"phone", "telephone", "tel", "mobile", "cellphone", "phonenumber"},
                          r"^\+?[0-9][0-9 ().\-/]{6,}[0-9]$"),
    "fax numbers": ({"fax", "faxnumber"}, None),
    "e-mail addresses": ({"email", "mail", "emailaddress"}, r"^[^@\s]+@[^@\s]+\.[A-Za-z]{2,}$"),
    "social security numbers": ({"ssn", "socialsecurity", "socialsecuritynumber", "sozialversicherungsnummer", "nir",
                                 "nhs"}, r"^[0-9]{3}-[0-9]{2}-[0-9]{4}$"),
    "medical record numbers": ({"mrn", "medicalrecord", "medicalrecordnumber", "chart", "chartnumber",
                                "patientid", "patientnumber", "patientnbr", "patientno"}, None),
    "health plan beneficiary numbers": ({"beneficiary", "memberid", "membernumber", "policy", "policynumber",
                                         "healthplan", "insuranceid", "insurancenumber", "subscriber"}, None),
    "account numbers": ({"account", "acct", "iban", "accountnumber", "bankaccount"},
                        r"^[A-Z]{2}[0-9]{2}[A-Z0-9 ]{11,30}$"),
    "certificate or licence numbers": ({"licence", "license", "certificate", "licencenumber", "licensenumber"},
                                       None),
    "vehicle identifiers": ({"vin", "vehicle", "plate", "licenseplate", "numberplate"},
                            r"^[A-HJ-NPR-Z0-9]{17}$"),
    "device identifiers and serial numbers": ({"device", "serial", "imei", "udi", "serialnumber", "deviceid"}, None),
    "web URLs": ({"url", "website", "homepage", "web", "link"}, r"^(https?://|www\.)\S+$"),
    "IP addresses": ({"ip", "ipaddress", "ipv4", "ipv6"},
                     r"^((25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])\.){3}(25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])$"),
    "biometric identifiers": ({"fingerprint", "retina", "voiceprint", "biometric", "biometrics", "faceprint"}, None),
    "full-face photographs": ({"photo", "photograph", "picture", "image", "portrait", "face"}, None),
}
_MONTH = r"(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
_DATE_VALUE = re.compile(
    r"^\s*(\d{4}-\d{1,2}(-\d{1,2})?([ T]\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?)?|\d{4}/\d{1,2}(/\d{1,2})?"
    r"|\d{1,2}[./-]\d{1,2}[./-]\d{2,4}"
    rf"|\d{{1,2}}[ .-]?{_MONTH}[ .-]?\d{{2,4}}|{_MONTH}[ .-]?(\d{{1,2}},?[ .-]?)?\d{{4}})\s*$", re.IGNORECASE)
_YEAR = re.compile(r"^\s*(1[89]|20)\d{2}\s*$")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_PLAIN_NUMBER = re.compile(r"^\s*[0-9]+(\.[0-9]+)?\s*$")


@dataclass(frozen=True)
class Finding:
    """One column holding one kind of Safe Harbor identifier; `rows` is how many rows hold it (None: all)."""

    column: str
    identifier: str
    reason: str
    rows: int | None = None


def _text_values(series: pd.Series) -> pd.Series:
    return series.dropna().astype(str).str.strip()


def _share_matching(values: pd.Series, pattern: str) -> float:
    if values.empty:
        return 0.0
    return float(values.str.match(pattern, na=False).mean())


def _zip_findings(name: str, values: pd.Series) -> list[Finding]:
    """More than 3 leading digits, or a restricted 3-digit area not written as 000."""
    text = _text_values(values)
    if text.empty:
        return []
    distinct = pd.Series(text.unique())
    digits = distinct.str.extract(r"^(\d*)", expand=False).fillna("")
    long = distinct[digits.str.len() > 3]
    out = []
    if len(long):
        rows = int(text.isin(set(long)).sum())
        out.append(Finding(name, "geographic units smaller than a state",
                           f"{name} holds ZIP codes with more than 3 digits (for example {long.iloc[0]!r}); keep "
                           "only the first 3 digits", rows))
    three = digits.str.len() == 3
    restricted = distinct[three & digits.isin(RESTRICTED_ZIP3)]
    if len(restricted):
        rows = int(text.isin(set(restricted)).sum())
        out.append(Finding(name, "geographic units smaller than a state",
                           f"{name} holds 3-digit ZIP areas with 20,000 people or fewer "
                           f"({', '.join(sorted(set(digits[restricted.index])))}); write them as 000", rows))
    return out


def _looks_like_dates(series: pd.Series) -> tuple[bool, int]:
    """(values are dates more precise than a year, rows holding such dates)."""
    if pd.api.types.is_datetime64_any_dtype(series.dtype):
        return True, int(series.notna().sum())
    if series.dtype == object and len(series) and \
            series.dropna().map(lambda v: isinstance(v, (_dt.date, _dt.datetime))).all():
        return bool(series.notna().any()), int(series.notna().sum())
    text = _text_values(series)
    if text.empty or pd.api.types.is_numeric_dtype(series.dtype):
        return False, 0
    distinct = pd.Series(text.unique())
    matching = set(distinct[distinct.str.match(_DATE_VALUE, na=False)])
    rows = int(text.isin(matching).sum())
    return rows >= PATTERN_SHARE * len(text) and rows > 0, rows


def _age_findings(name: str, series: pd.Series) -> list[Finding]:
    text = _text_values(series)
    if text.empty:
        return []
    distinct = pd.Series(text.unique())
    plain = distinct.str.match(_PLAIN_NUMBER, na=False)
    numbers = pd.to_numeric(distinct[plain], errors="coerce")
    old_exact = distinct[plain][numbers > 89]
    if len(old_exact):
        rows = int(text.isin(set(old_exact)).sum())
        return [Finding(name, "ages over 89", f"{name} holds exact ages over 89 (for example {old_exact.iloc[0]}); "
                                              "put all ages of 90 and over into one category", rows)]
    labels = distinct[~plain]
    lows = labels.map(lambda s: min((float(x) for x in _NUMBER.findall(s)), default=np.nan))
    above = labels[lows >= 90]
    if len(above) > 1:
        rows = int(text.isin(set(above)).sum())
        return [Finding(name, "ages over 89", f"{name} splits ages over 89 into {len(above)} categories "
                                              f"({', '.join(sorted(above)[:3])}); make them one category", rows)]
    return []


def _birth_year_findings(name: str, series: pd.Series, today: _dt.date) -> list[Finding]:
    years = pd.to_numeric(_text_values(series), errors="coerce").dropna()
    old = years[(years > 1000) & (years <= today.year - 90)]
    if len(old):
        return [Finding(name, "dates (except year)", f"{name} holds years of birth that make people older than 89 "
                                                     f"(for example {int(old.iloc[0])}); put them into one "
                                                     "category", int(len(old)))]
    return []


def _is_person_name(words: set[str], name: str) -> bool:
    return bool(words & _NAME_WORDS) or ("name" in words and bool(words & _PERSON_WORDS)) or \
        str(name).strip().lower() in {"name", "names"}


def _bare_codes(text: pd.Series) -> bool:
    """Digits only, fewer than 10 of them (an 8-digit record number, not a telephone number, which is written
    with a '+', spaces or dashes, or has at least 10 digits): such values are not taken for telephone numbers."""
    return bool(text.str.fullmatch(r"[0-9]{1,9}", na=False).mean() >= 1 - PATTERN_SHARE)


def _number_ranges(text: pd.Series) -> bool:
    """Values written as ranges of numbers of one length ('10000-49999', '30-39'): what a generalised ZIP code or
    age looks like after k-anonymity, not telephone numbers ('555-1234' has halves of different lengths)."""
    parts = text.str.extract(r"^([0-9]+)-([0-9]+)$")
    ok = parts[0].notna()
    if ok.mean() < 1 - PATTERN_SHARE:
        return False
    low, high = parts[0][ok], parts[1][ok]
    same = (low.str.len() == high.str.len()) & (low.astype("int64") <= high.astype("int64"))
    return bool(same.mean() >= 1 - PATTERN_SHARE)


def _near_unique(series: pd.Series) -> float:
    n = int(series.notna().sum())
    if n < MIN_ROWS_UNIQUE:
        return 0.0
    if pd.api.types.is_float_dtype(series.dtype):
        values = series.dropna().to_numpy()
        if not np.all(np.mod(values, 1) == 0):
            return 0.0  # measurements with decimals are not numbers that identify
    return float(series.nunique()) / n


def screen(frame: pd.DataFrame, *, today: _dt.date | None = None) -> list[Finding]:
    """Every Safe Harbor finding of `frame`, column by column (see the module docstring for the rules)."""
    today = today or _dt.date.today()
    out: list[Finding] = []
    for name in frame.columns:
        series = frame[name]
        words = name_words(name)
        found: list[Finding] = []
        if _is_person_name(words, name):
            found.append(Finding(name, "names", f"{name} looks like a person's name; remove it"))
        if words & _ZIP_WORDS:
            found += _zip_findings(name, series)
        geo = sorted(words & _GEO_WORDS)
        if geo:
            found.append(Finding(name, "geographic units smaller than a state",
                                 f"{name} names a place smaller than a state ({geo[0]}); remove it or keep only "
                                 "the state"))
        is_dates, rows = _looks_like_dates(series)
        if is_dates:
            found.append(Finding(name, "dates (except year)", f"{name} holds dates with a month or day; keep only "
                                                              "the year", rows))
        elif words & _BIRTH_WORDS or (words & _DATE_WORDS and words & _BIRTH_WORDS):
            found += _birth_year_findings(name, series, today)
        if "age" in words or str(name).strip().lower() == "age":
            found += _age_findings(name, series)
        text = _text_values(series) if not pd.api.types.is_numeric_dtype(series.dtype) else pd.Series(dtype=str)
        not_phones = is_dates or (not text.empty and (_bare_codes(text) or _number_ranges(text)))
        for kind, (vocabulary, pattern) in _BY_NAME.items():
            hit = sorted(words & vocabulary)
            if hit:
                found.append(Finding(name, kind, f"{name}: its name says it holds {kind} ('{hit[0]}'); remove it"))
            elif pattern and not text.empty and not (kind == "telephone numbers" and not_phones) \
                    and _share_matching(pd.Series(text.unique()), pattern) >= PATTERN_SHARE:
                rows = int(text.str.match(pattern, na=False).sum())
                found.append(Finding(name, kind, f"{name}: its values look like {kind}; remove it", rows))
        if not found:
            share = _near_unique(series)
            if share >= NEAR_UNIQUE:
                found.append(Finding(name, "other unique identifying numbers or codes",
                                     f"{name} has a different value in {100 * share:.0f} % of rows, so it can point "
                                     "to one person; remove it or generalise it"))
        out += found
    return out


def passes(findings: list[Finding]) -> bool:
    """True when the screen found nothing (which is not, by itself, a Safe Harbor certification)."""
    return not findings
