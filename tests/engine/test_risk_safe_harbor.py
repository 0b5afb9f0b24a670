"""The HIPAA Safe Harbor screen names each column and kind of identifier it finds, and finds nothing in a table that
keeps only what Safe Harbor allows."""

import datetime as dt

import numpy as np
import pandas as pd
from clinical_helpers import diabetes_like

from ppdp_gui.engine.metrics.safe_harbor import Finding, passes, screen

TODAY = dt.date(2026, 6, 1)


def kinds(frame):
    return {(f.column, f.identifier) for f in screen(frame, today=TODAY)}


def test_a_table_with_only_allowed_values_passes():
    n = 60
    frame = pd.DataFrame({"age": (["[80-90)", "[90-100)"] * 30), "sex": ["F", "M"] * 30,
                          "zip3": ["123", "000"] * 30, "state": ["NY"] * n, "admission year": ["2019"] * n,
                          "diag_1": ["250.83"] * n, "lab": np.random.default_rng(0).normal(size=n),
                          "drug_name": ["metformin"] * n, "readmitted": ["NO", "<30"] * 30})
    findings = screen(frame, today=TODAY)
    assert findings == [] and passes(findings)


def test_zip_codes_keep_three_digits_and_small_areas_read_000():
    frame = pd.DataFrame({"zip": ["12345", "123**", "036", "000", "10234-5678"], "postcode": ["123"] * 5,
                          "plz": [2134, 2134, 2134, 2134, 2134]})
    found = screen(frame, today=TODAY)
    zip_findings = [f for f in found if f.column == "zip"]
    assert {f.rows for f in zip_findings} == {2, 1}  # two long codes; one restricted area (036)
    assert any("036" in f.reason and "000" in f.reason for f in zip_findings)
    assert ("plz", "geographic units smaller than a state") in {(f.column, f.identifier) for f in found}
    assert not [f for f in found if f.column == "postcode"]


def test_places_dates_and_ages():
    frame = pd.DataFrame({"city": ["Bern"] * 3, "admission_date": ["2020-01-02", "2020-02-03", "2021-05-06"],
                          "visit": ["Jan 2020", "Feb 2020", "Mar 2021"], "year_of_birth": ["1920", "1950", "1960"],
                          "age": ["93", "40", "50"], "age_band": ["[90-95)", "[95-100)", "[40-50)"],
                          "age_top": ["90+", "[40-50)", "[50-60)"]})
    got = kinds(frame)
    assert ("city", "geographic units smaller than a state") in got
    assert ("admission_date", "dates (except year)") in got and ("visit", "dates (except year)") in got
    assert ("year_of_birth", "dates (except year)") in got  # 1920: older than 89
    assert ("age", "ages over 89") in got and ("age_band", "ages over 89") in got
    assert not [k for k in got if k[0] == "age_top"]


def test_identifiers_by_name_and_by_value():
    n = 60
    frame = pd.DataFrame({
        "patient_name": [f"P{i}" for i in range(n)],
        "contact": [f"p{i}@clinic.example.org" for i in range(n)],
        "reach": [f"+41 44 123 45 {i:02d}" for i in range(n)],
        "code_a": [f"123-45-{6000 + i}" for i in range(n)],
        "site": [f"https://example.org/p/{i}" for i in range(n)],
        "host": [f"10.0.0.{i}" for i in range(n)],
        "car": ["1HGCM82633A004352"] * n,
        "fax": ["x"] * n, "mrn": ["x"] * n, "policy_number": ["x"] * n, "iban": ["x"] * n,
        "licence": ["x"] * n, "device_serial": ["x"] * n, "fingerprint": ["x"] * n, "photo": ["x"] * n,
        "encounter_id": np.arange(n), "lab": np.random.default_rng(1).normal(size=n),
    })
    got = kinds(frame)
    expected = {("patient_name", "names"), ("contact", "e-mail addresses"), ("reach", "telephone numbers"),
                ("code_a", "social security numbers"), ("site", "web URLs"), ("host", "IP addresses"),
                ("car", "vehicle identifiers"), ("fax", "fax numbers"), ("mrn", "medical record numbers"),
                ("policy_number", "health plan beneficiary numbers"), ("iban", "account numbers"),
                ("licence", "certificate or licence numbers"),
                ("device_serial", "device identifiers and serial numbers"),
                ("fingerprint", "biometric identifiers"), ("photo", "full-face photographs"),
                ("encounter_id", "other unique identifying numbers or codes")}
    assert expected <= got
    assert not [k for k in got if k[0] == "lab"]  # measurements with decimals are not identifying numbers


def test_the_diabetes_shaped_table_before_release():
    found = screen(diabetes_like(), today=TODAY)
    assert {(f.column, f.identifier) for f in found} == {
        ("encounter_id", "other unique identifying numbers or codes"), ("patient_nbr", "medical record numbers")}
    assert all(isinstance(f, Finding) and f.reason.startswith(f.column) for f in found)


def test_generalised_zip_ranges_are_not_telephone_numbers():
    """The nurse's walk: after Mondrian, zip held '10000-99999', '10000-49999'; the risk tab's Safe Harbor screen
    said "zip: its values look like telephone numbers; remove it" beside the right ZIP finding — a red herring."""
    frame = pd.DataFrame({"zip": ["10000-99999", "10000-49999", "50000-99999", "20000-29999"] * 30,
                          "age": ["0-119", "0-99", "30-39", "40-49"] * 30,
                          "contact": ["+44 20 7946 0958", "555-123-4567", "020 7946 0018", "+1 212 555 0100"] * 30})
    kinds = {(f.column, f.identifier) for f in screen(frame)}
    assert ("zip", "telephone numbers") not in kinds and ("age", "telephone numbers") not in kinds
    assert ("zip", "geographic units smaller than a state") in kinds
    assert ("contact", "telephone numbers") in kinds  # real telephone numbers are still found
