"""The release context a governance body asks about, stored in the project as its optional `context` section.
Part of the project file, so it lives here and is read strictly with it (project.py); the governance package
(gate, dossier, techniques, …) uses it.

Who receives the release (public, a controlled recipient under a data-use agreement, or staff of the hospital),
the agreement, the notes of a motivated-intruder test (UK ICO, Anonymisation code of practice), the date the
release must be reviewed, and the highest re-identification risk accepted, with where that number comes from.

The threshold proposed for each kind of release is a published value, named in `THRESHOLDS` with its source;
the custodian may set another and must then say why (`threshold_source`). Old projects have no `context`: reading
gives an empty context, and nothing is gated until one is filled in.

Reading is strict (one DataError naming the field); unknown keys are refused so a typo never silently drops a
decision.
"""

from __future__ import annotations

import datetime as _dt
import secrets
from dataclasses import dataclass, field, replace
from typing import Any

from ppdp_gui.engine.errors import DataError

RELEASE_KINDS = ("public", "controlled", "internal")

#: kind -> (proposed highest risk, where it comes from)
THRESHOLDS: dict[str, tuple[float, str]] = {
    "public": (0.09, "EMA, External guidance on the implementation of the European Medicines Agency policy on the "
                     "publication of clinical data for medicinal products for human use (EMA/90915/2016), and Health "
                     "Canada, Guidance document on Public Release of Clinical Information (2019): 0.09 is the "
                     "value recommended for clinical reports released to the public"),
    "controlled": (0.2, "K. El Emam, Guide to the De-Identification of Personal Health Information (CRC Press, 2013), "
                        "and the same EMA / Health Canada guidance, which allow a higher threshold than 0.09 only for "
                        "a known recipient bound by a data-use agreement and security controls: 0.2"),
    "internal": (1 / 3, "K. El Emam, Guide to the De-Identification of Personal Health Information (CRC Press, 2013): "
                        "0.33 for use inside the custodian's organisation with strong controls and staff bound by "
                        "confidentiality"),
}

KIND_WORDS = {"public": "anyone (public release)",
              "controlled": "a named recipient under a data-use agreement (controlled release)",
              "internal": "staff of the hospital (internal use)"}

_FIELDS = ("release", "recipient", "data_use_agreement", "intruder_test", "review_date", "threshold",
           "threshold_source", "overrides", "attestations", "project_id", "safe_harbor", "pseudonyms",
           "date_shift")


@dataclass(frozen=True)
class ReleaseContext:
    """The questionnaire's answers and what was decided under them (see the module docstring)."""

    release: str | None = None  # one of RELEASE_KINDS; None: not filled in yet
    recipient: str = ""
    data_use_agreement: str = ""
    intruder_test: str = ""  # notes of the motivated-intruder test
    review_date: str | None = None  # ISO date
    threshold: float | None = None  # None: the proposed value for `release`
    threshold_source: str = ""  # why another value than the proposed one
    overrides: tuple[dict, ...] = ()  # exports made above the threshold: release id, measured, reason, when
    attestations: tuple[dict, ...] = ()  # {"kind", "text", "by", "when"}
    project_id: str = ""  # random; names the project's pseudonym key (pseudonyms.py)
    safe_harbor: dict = field(default_factory=dict)  # what the Safe Harbor transform did (safe_harbor_recipe.py)
    #: reserved for the window's pseudonym treatment (not used yet: `ppdp run --pseudonym` states it in the note)
    pseudonyms: tuple[str, ...] = ()
    date_shift: dict = field(default_factory=dict)  # {"columns": [...], "window_days": N}, reserved likewise

    @property
    def filled(self) -> bool:
        return self.release in RELEASE_KINDS

    def risk_threshold(self) -> tuple[float | None, str]:
        """(highest risk accepted, its source in words); (None, why) when the questionnaire is not filled."""
        if self.threshold is not None:
            proposed = THRESHOLDS.get(self.release or "", (None, ""))[0]
            if proposed is not None and abs(self.threshold - proposed) < 1e-12:
                return self.threshold, THRESHOLDS[self.release][1]
            return self.threshold, self.threshold_source or "set by the custodian (no reason given)"
        if not self.filled:
            return None, "no release context yet (Tools → Release context…)"
        return THRESHOLDS[self.release]

    def with_project_id(self) -> "ReleaseContext":
        return self if self.project_id else replace(self, project_id=secrets.token_hex(8))

    def to_json(self) -> dict:
        return {"release": self.release, "recipient": self.recipient, "data_use_agreement": self.data_use_agreement,
                "intruder_test": self.intruder_test, "review_date": self.review_date, "threshold": self.threshold,
                "threshold_source": self.threshold_source, "overrides": [dict(o) for o in self.overrides],
                "attestations": [dict(a) for a in self.attestations], "project_id": self.project_id,
                "safe_harbor": dict(self.safe_harbor), "pseudonyms": list(self.pseudonyms),
                "date_shift": dict(self.date_shift)}


def _text(obj: dict, key: str) -> str:
    value = obj.get(key) or ""
    if not isinstance(value, str):
        raise DataError(f"context.{key} must be text")
    return value


def _records(obj: dict, key: str) -> tuple[dict, ...]:
    value = obj.get(key) or []
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise DataError(f"context.{key} must be a list of objects")
    return tuple(dict(v) for v in value)


def parse_date(text, where: str = "context.review_date") -> str | None:
    if text in (None, ""):
        return None
    try:
        return _dt.date.fromisoformat(str(text).strip()).isoformat()
    except ValueError:
        raise DataError(f"{where}: {text!r} is not a date such as 2027-06-30") from None


def context_from_json(obj: Any) -> ReleaseContext:
    """The `context` section of a project (None or absent: an empty context), checked field by field."""
    if obj is None:
        return ReleaseContext()
    if not isinstance(obj, dict):
        raise DataError("context must be a JSON object")
    unknown = sorted(set(obj) - set(_FIELDS))
    if unknown:
        raise DataError(f"context: unknown field(s) {', '.join(unknown)}")
    release = obj.get("release")
    if release is not None and release not in RELEASE_KINDS:
        raise DataError(f"context.release must be one of {', '.join(RELEASE_KINDS)}, not {release!r}")
    threshold = obj.get("threshold")
    if threshold is not None:
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 < threshold <= 1:
            raise DataError("context.threshold must be a risk between 0 and 1 (for example 0.09)")
        threshold = float(threshold)
    for key in ("safe_harbor", "date_shift"):
        if not isinstance(obj.get(key) or {}, dict):
            raise DataError(f"context.{key} must be a JSON object")
    pseudo = obj.get("pseudonyms") or []
    if not isinstance(pseudo, list) or not all(isinstance(c, str) for c in pseudo):
        raise DataError("context.pseudonyms must be a list of column names")
    shift = dict(obj.get("date_shift") or {})
    if shift:
        days = shift.get("window_days")
        cols = shift.get("columns")
        if isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= 3650:
            raise DataError("context.date_shift.window_days must be a whole number of days from 1 to 3650")
        if not isinstance(cols, list) or not all(isinstance(c, str) for c in cols):
            raise DataError("context.date_shift.columns must be a list of column names")
    pid = _text(obj, "project_id")
    if pid and not all(c in "0123456789abcdef" for c in pid):
        raise DataError("context.project_id must be hexadecimal")
    return ReleaseContext(release=release, recipient=_text(obj, "recipient"),
                          data_use_agreement=_text(obj, "data_use_agreement"),
                          intruder_test=_text(obj, "intruder_test"), review_date=parse_date(obj.get("review_date")),
                          threshold=threshold, threshold_source=_text(obj, "threshold_source"),
                          overrides=_records(obj, "overrides"), attestations=_records(obj, "attestations"),
                          project_id=pid, safe_harbor=dict(obj.get("safe_harbor") or {}), pseudonyms=tuple(pseudo),
                          date_shift=shift)


def of(recipe) -> ReleaseContext:
    """The context of a Recipe (projects saved before it existed have none)."""
    return context_from_json(getattr(recipe, "context", None) or None)


def store(recipe, context: ReleaseContext) -> None:
    """Put `context` into the recipe (saved with the project by `write_recipe`)."""
    recipe.context = context.to_json()


def attest(context: ReleaseContext, kind: str, text: str, by: str = "") -> ReleaseContext:
    when = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    return replace(context, attestations=context.attestations + ({"kind": kind, "text": text, "by": by,
                                                                   "when": when},))
