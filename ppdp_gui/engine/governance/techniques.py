"""What was done to each column, in the words of ISO/IEC 20889 (privacy enhancing data de-identification
terminology and classification of techniques): removal of direct identifiers, pseudonymisation, generalisation,
suppression, noise addition, synthetic data, or retained unchanged.

Read from the custodian record (columns with their roles, the release note's files and claims, the mechanism's
details, and what its note says of pseudonyms and date shifts) and the project's release context (Safe Harbor
steps). Columns the release
keeps and columns it leaves out are listed apart: only the first are in the release note.
"""

from __future__ import annotations

from dataclasses import dataclass

from ppdp_gui.engine.persistence.release_context import ReleaseContext

REMOVAL = "removal of direct identifiers"
PSEUDONYMISATION = "pseudonymisation"
GENERALISATION = "generalisation"
SUPPRESSION = "suppression"
NOISE = "noise addition"
SYNTHETIC = "synthetic data"
RETAINED = "retained"
AGGREGATION = "aggregation"

_SYNTHETIC_MECHANISMS = ("krimp", "dp-lda", "synthetic")
_RECORD_NOISE = ("dp-pca", "laplace on records", "exponential on records")


@dataclass(frozen=True)
class Technique:
    column: str
    role: str
    released: bool
    techniques: tuple[str, ...]
    detail: str

    @property
    def words(self) -> str:
        return ", ".join(self.techniques)


def released_columns(record: dict) -> list[str]:
    note = record.get("release note") or {}
    out: list[str] = []
    for f in note.get("files") or []:
        out += [c for c in f.get("columns") or [] if c not in out]
    return out


def _claims(record: dict) -> list[dict]:
    return list(((record.get("release note") or {}).get("guarantee") or {}).get("claims") or [])


def is_dp(record: dict) -> bool:
    cost = (record.get("release note") or {}).get("privacy cost") or {}
    return cost.get("epsilon") not in (None, "None")


def count_columns(record: dict) -> set[str]:
    out: set[str] = set()
    for c in _claims(record):
        out |= set(c.get("count columns") or [])
    return out


def _suppression(record: dict) -> bool:
    details = record.get("details") or {}
    return any(c.get("claim") == "suppression" for c in _claims(record)) or bool(
        details.get("suppressed") or details.get("suppressed rows"))


def techniques(record: dict, context: ReleaseContext | None = None) -> list[Technique]:
    """One Technique per column of the source (record's columns), released columns first."""
    context = context or ReleaseContext()
    mech = str(record.get("mechanism") or "").lower()
    kept = released_columns(record)
    counts = count_columns(record)
    dp = is_dp(record)
    harbor = {str(k): str(v) for k, v in (context.safe_harbor.get("columns") or {}).items()}
    from ppdp_gui.engine.governance.pseudonyms import treated_in
    pseudo, shift_cols, days = treated_in(record)  # {released column: identifier}
    shifted = set(shift_cols)
    replaced = set(pseudo.values())
    generalised = set((record.get("details") or {}).get("generalisation") or {}) | set(
        (record.get("details") or {}).get("quasi_identifiers") or [])
    left_out = set((record.get("source") or {}).get("columns left out") or [])
    out: list[Technique] = []
    for col in record.get("columns") or []:
        name, role = str(col.get("name")), str(col.get("role"))
        released = name in kept
        steps: list[str] = []
        detail = ""
        if name in pseudo:
            steps.append(PSEUDONYMISATION)
            detail = (f"keyed pseudonym of {pseudo[name]} (HMAC-SHA-256 under the project's key, kept by the "
                      "custodian)")
        elif name in replaced and not released:
            steps += [REMOVAL, PSEUDONYMISATION]
            detail = f"never released; replaced by its keyed pseudonym {name}_pseudonym"
        elif not released:
            if role in ("identifier", "person"):
                steps.append(REMOVAL)
                detail = "direct identifier, never released" if role == "identifier" else \
                    "says whose row it is (the unit of privacy); never released"
            else:
                steps.append("removal")
                detail = ("left out: missing in most rows" if name in left_out
                          else "not part of this release")
        if name in harbor:
            steps.append(GENERALISATION if "remov" not in harbor[name] else REMOVAL)
            detail = (detail + "; " if detail else "") + "Safe Harbor: " + harbor[name]
        if name in shifted:
            steps.append(NOISE)
            detail = (detail + "; " if detail else "") + f"dates shifted per person by up to ±{days} days"
        if released and name not in pseudo:
            if any(s in mech for s in _SYNTHETIC_MECHANISMS):
                steps.append(SYNTHETIC)
                detail = detail or "rows generated from a model of the table, not the patients' rows"
            elif dp and counts:
                if name in counts:
                    steps += [AGGREGATION, NOISE]
                    detail = detail or "noisy count of the rows of each combination (differential privacy)"
                else:
                    steps.append(GENERALISATION if col.get("taxonomy") or name in generalised else AGGREGATION)
                    detail = detail or "a value or a group of values of a table of counts"
            elif dp or any(s in mech for s in _RECORD_NOISE):
                steps.append(NOISE)
                detail = detail or "every value perturbed with random noise (differential privacy)"
            elif role == "quasi-identifier" and (name in generalised or col.get("taxonomy")):
                steps.append(GENERALISATION)
                if _suppression(record):
                    steps.append(SUPPRESSION)
                k = ((record.get("release note") or {}).get("parameters") or {}).get("k")
                who = "patients" if any(c.get("role") == "person" for c in record.get("columns") or []) else "rows"
                detail = detail or (f"generalised so that every group holds at least {k} {who}"
                                    if isinstance(k, int) else "generalised to groups of at least k")
        if not steps:
            steps.append(RETAINED)
            detail = "published unchanged"
        out.append(Technique(name, role, released, tuple(dict.fromkeys(steps)), detail))
    extra = [c for c in kept if c not in {t.column for t in out}]
    for name in extra:  # columns the mechanism made (a count column)
        out.append(Technique(name, "made by the release", True, (AGGREGATION, NOISE) if dp else (AGGREGATION,),
                             "made by the mechanism"))
    return sorted(out, key=lambda t: not t.released)
