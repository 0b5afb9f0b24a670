"""The export gate: a release whose measured highest re-identification risk is above the threshold of its release
context is not exported unless the custodian overrides it explicitly, and the override is recorded.

The measured risk is the release's own figure (computed by `run_release` for a record-level release, as the
custodian record keeps it: "highest re-identification risk %" and the like, the largest of them). A differentially
private release, a table of counts or synthetic rows has no such figure: its protection is ε, the gate says so and
lets it pass. Without a filled-in release context nothing is gated (older projects keep working).

The CLI's `ppdp run --override-threshold REASON` and the window's export step call `check_release` then, on an
override, `record_override`; the project keeps every override (context.overrides) and the dossier lists them.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, replace
from typing import Mapping

from ppdp_gui.engine.errors import PpdpError
from ppdp_gui.engine.persistence.release_context import KIND_WORDS, ReleaseContext


class ThresholdError(PpdpError):
    """The release is riskier than its context accepts and no override was given."""


@dataclass(frozen=True)
class GateResult:
    allowed: bool
    measured: float | None  # highest risk, 0..1; None: not measured for this release
    threshold: float | None
    source: str
    message: str


def measured_highest_risk(figures: Mapping[str, float]) -> float | None:
    """The largest 'highest … risk %' figure of a release (0..1), or None when none was measured."""
    values = [float(v) for k, v in (figures or {}).items()
              if "highest" in str(k).lower() and "risk" in str(k).lower() and str(k).endswith("%")
              and "input" not in str(k).lower() and v is not None]
    return max(values) / 100 if values else None


def check_release(figures: Mapping[str, float], context: ReleaseContext, *, dp: bool = False) -> GateResult:
    """Whether a release with these custodian figures may be exported under `context`."""
    threshold, source = context.risk_threshold()
    if threshold is None:
        return GateResult(True, None, None, source, "No release context is filled in, so no risk threshold applies.")
    measured = None if dp else measured_highest_risk(figures)
    if measured is None:
        return GateResult(True, None, threshold, source,
                          "This release has no re-identification risk figure (differential privacy, a table of "
                          "counts or synthetic rows): ε protects it, not the threshold.")
    who = KIND_WORDS.get(context.release or "", "its recipient")
    if measured <= threshold + 1e-12:
        return GateResult(True, measured, threshold, source,
                          f"Highest re-identification risk {measured:.3g} is within the threshold {threshold:.3g} "
                          f"for a release to {who}.")
    return GateResult(False, measured, threshold, source,
                      f"The highest re-identification risk of this release is {measured:.3g}, above the threshold "
                      f"{threshold:.3g} accepted for a release to {who} ({source}). Make the release safer (a larger k, "
                      "coarser taxonomies, more suppression), or export anyway with a reason: in the window, "
                      "tick “Export above the threshold” and write why; in ppdp, --override-threshold \"REASON\".")


def record_override(context: ReleaseContext, result: GateResult, release_id: str, reason: str,
                    by: str = "") -> ReleaseContext:
    """The context with this override added (the project keeps it; the dossier lists it). A reason is required."""
    if not reason or not reason.strip():
        raise ThresholdError("an export above the threshold needs a reason in words")
    when = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    entry = {"release_id": release_id, "measured": result.measured, "threshold": result.threshold,
             "reason": reason.strip(), "by": by, "when": when}
    return replace(context, overrides=context.overrides + (entry,))


def gate(figures: Mapping[str, float], context: ReleaseContext, release_id: str, *, dp: bool = False,
         override: str | None = None, by: str = "") -> tuple[GateResult, ReleaseContext]:
    """check_release, then refuse (ThresholdError) or record the override. Returns (result, context to keep)."""
    result = check_release(figures, context, dp=dp)
    if result.allowed:
        return result, context
    if not override:
        raise ThresholdError(result.message)
    return result, record_override(context, result, release_id, override, by)


OVERRIDE_PREFIX = "Governance override: "


def gate_published(published, recipe, override: str | None = None, by: str = ""):
    """The gate on a release just made, before it is exported (the CLI and the window call this).

    Returns the Published to export: unchanged when the release is within its threshold (or nothing is gated);
    with the override written into its warnings (so the custodian record keeps it) and into the recipe's context
    (so the saved project keeps it) when the custodian overrode the gate. Raises ThresholdError otherwise."""
    import dataclasses

    from ppdp_gui.engine.persistence.release_context import of, store
    context = of(recipe)
    dp = published.dp is not None or bool(getattr(published.cost, "is_dp", False))
    result, kept = gate(published.figures, context, published.release_id, dp=dp, override=override, by=by)
    if kept is context:
        return published
    store(recipe, kept)
    line = (f"{OVERRIDE_PREFIX}exported with a highest re-identification risk of {result.measured:.3g}, above the "
            f"threshold {result.threshold:.3g} of its release context; reason: {override.strip()}")
    return dataclasses.replace(published, warnings=tuple(published.warnings) + (line,))
