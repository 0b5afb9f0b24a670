"""Run the verification of one DP mechanism: every audit table, the determinism check and the source scan.

`verify(mechanism, size=…, seed=…)` is a generator (Progress …, then a Verdict), so the window runs it in its
worker with a progress bar and the CLI drains it; `run_verification` drains it for tests. Runs are seeded
(`NoiseSource.for_tests`), so a verdict is reproducible: the same seed gives the same figures.

Confidence: the audit tables of one mechanism share α = 1e-3 (Bonferroni), so a FAIL is a privacy violation
(or a broken promise of the note) at confidence 99.9 %, however many tables and events were tried. A PASS is
not a proof of privacy: it says these tables and events could not show a violation.

Two checks need no statistics:
- determinism: the same seed must give the same release, byte for byte. A mechanism that draws from numpy's
  global generator (or the clock, or the OS) instead of the NoiseSource it is given fails it — its noise would
  not be the audited noise, nor come from the secure source;
- source scan: the mechanism's modules may not name numpy.random, the `random` module, `secrets` or
  os.urandom; randomness comes only from engine/noise.
"""

from __future__ import annotations

import io
import sys
import time
import tokenize
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Iterator

import numpy as np

from ppdp_gui.engine.errors import ParameterError
from ppdp_gui.engine.mechanisms.base import Progress
from ppdp_gui.engine.noise import NoiseSource
from ppdp_gui.engine.verify.noise import with_factor
from ppdp_gui.engine.verify.output import audited, features, output_digest, publish_once
from ppdp_gui.engine.verify.scenarios import Scenario, scenarios_for, whole
from ppdp_gui.engine.verify.stats import Bound, audit, choice_calibration

ALPHA = 1e-3
DETERMINISM_SEEDS = 3
MECHANISMS_PACKAGE = "ppdp_gui.engine.mechanisms"


@dataclass(frozen=True)
class ScenarioResult:
    name: str
    words: str
    neighbour: str
    kind: str
    allowed: float
    allowed_why: str
    bound: float  # the lower bound on the loss (or on ε' for a calibration); -inf: no evidence at all
    runs: int  # runs per table
    best_event: str = ""
    detail: str = ""
    events: tuple = ()
    premise_broken: str = ""
    whole: bool = False  # an audit of the whole release against the claimed ε per add/remove step
    epsilon: float = 0.0  # the ε the release of this audit table claims
    refused: str = ""  # pipeline audit: nothing was published on either file, and why (nothing was audited)

    @property
    def share(self) -> float:
        """The bound as a share of what is allowed (0 when there is no evidence at all)."""
        if self.allowed == float("inf"):
            return 0.0
        return self.shown_bound / self.allowed if self.allowed > 0 else 0.0

    @property
    def passed(self) -> bool:
        return not self.premise_broken and not self.bound > self.allowed

    @property
    def shown_bound(self) -> float:
        return max(0.0, self.bound)


@dataclass(frozen=True)
class Check:
    name: str
    passed: bool
    detail: str


@dataclass
class Verdict:
    mechanism: str
    epsilon: Fraction
    delta: Fraction
    size: str
    seed: int
    alpha: float
    results: list[ScenarioResult] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)
    seconds: float = 0.0  # for display only
    pipeline: bool = False  # the whole publish path on files (pipeline_audit.py), not the mechanism alone

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.results) and all(c.passed for c in self.checks)

    @property
    def runs(self) -> int:
        """Test releases made in all (both tables of every audit)."""
        return sum(r.runs * (1 if r.kind == "calibration" else 2) for r in self.results)

    @property
    def closest(self) -> ScenarioResult | None:
        """The audit that came closest to (or went furthest past) its allowance."""
        return max(self.results, key=lambda r: r.share, default=None)

    def lines(self) -> list[str]:
        """The report `ppdp verify` prints."""
        if self.results:
            out = [f"{self.mechanism}: {self.size} audit, seed {self.seed}, {self.runs:,} test releases, confidence "
                   f"{100 * (1 - self.alpha):g} % (a lower bound above what is allowed proves a violation)"]
        else:  # the k-anonymity family's audit of the whole path: checks only
            out = [f"{self.mechanism}: {self.size} audit, seed {self.seed}: a practice file released through the "
                   "whole path, its promise recounted on the written file"]
        for r in self.results:
            what = "effective ε' ≥" if r.kind == "calibration" else "privacy loss ≥"
            shown = "∞ (a difference no noise covers)" if r.shown_bound == float("inf") else f"{r.shown_bound:.3f}"
            out.append(f"  {'PASS' if r.passed else 'FAIL'}  {r.name} (claimed ε = {r.epsilon:g}): {what} "
                       f"{shown}, allowed {r.allowed:.3g}; {r.runs:,} runs per table")
            out.append(f"        allowed: {r.allowed_why}")
            out.append(f"        {r.neighbour}")
            if r.best_event:
                out.append(f"        strongest event: {r.best_event}")
            if r.detail:
                out.append(f"        {r.detail}")
            if r.premise_broken:
                out.append(f"        premise broken: {r.premise_broken}")
            if r.refused:
                out.append(f"        not audited: {r.refused}")
        for c in self.checks:
            out.append(f"  {'PASS' if c.passed else 'FAIL'}  {c.name}: {c.detail}")
        c = self.closest
        verdict = "PASS: every audit within its allowance" if self.passed else "FAIL: a violation (see FAIL above)"
        if c is not None:
            verdict += (f"; closest: '{c.name}', bound {c.shown_bound:.3f} where {c.allowed:.3g} is allowed "
                        f"({100 * c.share:.0f} %)")
        out.append(verdict)
        return out

    def plain_words(self) -> str:
        """One paragraph for a custodian who does not read statistics."""
        c = self.closest
        if self.passed and c is None:
            return (f"Self-check passed: {self.mechanism}'s release of a practice file through the whole path kept "
                    f"its promise on the written file ({'; '.join(ch.detail for ch in self.checks)}). This cannot "
                    "prove the software is private; it shows that this test found no leak.")
        if self.passed and c is not None and c.shown_bound != float("inf"):
            what = "an effective ε" if c.kind == "calibration" else "a privacy loss"
            where = (" through the whole path (the file read, the plan, a practice budget ledger, the exported "
                     "file and release note read back)" if self.pipeline else "")
            return (f"Self-check passed: {self.runs:,} test releases of {self.mechanism}{where} on small tables "
                    f"that differ in one patient could not be told apart more than their ε allows (the strongest "
                    f"test could show {what} of only {c.shown_bound:.2f} where up to {c.allowed:.3g} is allowed). "
                    "This cannot prove the software is private; it shows that these tests found no leak.")
        bad = [r.name for r in self.results if not r.passed] + [c.name for c in self.checks if not c.passed]
        what = "Exported files and release notes" if self.pipeline else "Releases"
        return (f"Self-check FAILED for {self.mechanism}: {', '.join(bad)}. {what} of tables that differ in one "
                "patient could be told apart more than their ε allows, or the software does not behave as its "
                "release note says. Do not publish with this mechanism; report this to your software support.")


# ---- runs -------------------------------------------------------------------------------------------------------
def seed_of(base: int, scenario: int, side: int, i: int) -> int:
    return (((int(base) * 1009 + scenario) * 3 + side) << 24) + i


def _plan(mech, data, params):
    from ppdp_gui.engine.pipeline.plan import plan
    planned = plan(data, mech, params)
    if planned.errors:
        raise ParameterError(f"audit table of {mech.name} cannot be released: "
                             + "; ".join(p.message for p in planned.errors))
    return planned


def _runs(planned, n: int, base: int, sc: int, side: int, factor, progress,
          keep: tuple[str, ...] | None = None) -> Iterator[Progress | list]:
    """Features of n seeded runs (only those starting with a prefix in `keep`, when given: less memory)."""
    out = []
    for i in range(n):
        rng = with_factor(NoiseSource.for_tests(seed_of(base, sc, side, i)), factor)
        feats = features(audited(publish_once(planned, rng)))
        if keep is not None:
            feats = {k: v for k, v in feats.items() if k.startswith(keep)}
        out.append(feats)
        if i % 100 == 99:
            yield progress(i + 1)
    yield out


def pass_progress(gen) -> Iterator[Progress]:
    """`yield from` this: passes a generator's Progress on and returns its one other item (its result)."""
    result = None
    for item in gen:
        if isinstance(item, Progress):
            yield item
        else:
            result = item
    return result


def _premise(scenario: Scenario, runs: list[dict]) -> str:
    for prefix in scenario.constant:
        for name in {k for r in runs for k in r if k.startswith(prefix)}:
            if len({str(r.get(name)) for r in runs}) > 1:
                return f"{name} varies between runs, so the scenario's allowance does not apply"
    return ""


def run_scenario(mech, scenario: Scenario, index: int, *, size: str, seed: int, alpha: float, factor,
                 report) -> Iterator[Progress | ScenarioResult]:
    """Runs on both tables (one for a calibration), then the bound."""
    n = scenario.runs_for(size)
    cost = mech.privacy_cost(**scenario.params)
    eps, delta = cost.epsilon, float(cost.delta)
    plan_d = _plan(mech, scenario.data, scenario.params)
    first = features(audited(publish_once(plan_d, NoiseSource.for_tests(seed_of(seed, index, 0, 0)))))
    allowed, why = scenario.allowed(first, eps, 1 if scenario.neighbour is None else scenario.neighbour.distance)
    keep = None
    if scenario.kind == "calibration":
        keep = (scenario.choice,)
    elif scenario.view is not None:
        keep = tuple(scenario.view) + tuple(scenario.constant)
    runs_d = yield from pass_progress(_runs(plan_d, n, seed, index, 0, factor, lambda i: report(i, n), keep))
    if scenario.kind == "calibration":
        chosen = np.array([str(r.get(scenario.choice)) for r in runs_d])
        better, worse = sorted(scenario.scores, key=lambda c: -scenario.scores[c])[:2]
        gap = scenario.scores[better] - scenario.scores[worse]
        lb, share = choice_calibration(chosen == better, gap, scenario.sensitivity, alpha)
        yield ScenarioResult(scenario.name, scenario.words, "one table, no neighbour (white box)", "calibration",
                             allowed, why, lb, n, epsilon=float(eps),
                             detail=f"chose {better!r} in {100 * share:.1f} % of the runs "
                             f"(stated ε' would give {100 / (1 + np.exp(-allowed * gap / (2 * scenario.sensitivity))):.1f} %)")
        return
    plan_d2 = _plan(mech, scenario.neighbour.data, scenario.params)
    runs_d2 = yield from pass_progress(_runs(plan_d2, n, seed, index, 1, factor, lambda i: report(n + i, n), keep))
    bound: Bound = audit(runs_d, runs_d2, alpha=alpha, delta=delta, view=scenario.view)
    best = bound.best
    best_text = "" if best is None else (f"{best.text} ({best.direction}: {100 * best.p_first:.1f} % vs "
                                         f"{100 * best.p_second:.1f} %)")
    yield ScenarioResult(scenario.name, scenario.words, scenario.neighbour.words, "dp", allowed, why,
                         bound.epsilon_lb, n, best_text, f"{bound.candidates:,} candidate events, "
                         f"{len(bound.events) // 2} chosen on the first half", bound.events,
                         _premise(scenario, runs_d + runs_d2),
                         whole=scenario.allowed is whole and scenario.neighbour.distance == 1, epsilon=float(eps))


# ---- the two exact checks ---------------------------------------------------------------------------------------
def determinism(mech, scenarios: list[Scenario], seed: int, factor) -> Check:
    """The same seed must give the same release (tables and note) — twice, on every audit table."""
    for i, sc in enumerate(scenarios):
        planned = _plan(mech, sc.data, sc.params)
        for s in range(DETERMINISM_SEEDS):
            digests = {output_digest(audited(publish_once(
                planned, with_factor(NoiseSource.for_tests(seed_of(seed, i, 2, s)), factor)))) for _ in range(2)}
            if len(digests) > 1:
                return Check("same seed, same release", False,
                             f"two runs with the same seed gave different releases on '{sc.name}': the mechanism "
                             "draws randomness that does not come from the NoiseSource it is given")
    return Check("same seed, same release", True,
                 f"{DETERMINISM_SEEDS} seeds × {len(scenarios)} tables, each run twice: identical")


FORBIDDEN = (("np", "random"), ("numpy", "random"), ("os", "urandom"))
FORBIDDEN_MODULES = ("random", "secrets")


def module_source(module) -> str:
    loader = getattr(module, "__loader__", None)
    if loader is not None and hasattr(loader, "get_source"):
        try:
            text = loader.get_source(module.__name__)
            if text is not None:
                return text
        except ImportError:
            pass
    with open(module.__file__, encoding="utf-8") as handle:
        return handle.read()


def scan_source(text: str, label: str) -> list[str]:
    """Places in Python source that reach for randomness outside engine/noise (code only, not strings)."""
    found = []
    tokens = [t for t in tokenize.generate_tokens(io.StringIO(text).readline)
              if t.type not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.STRING)]
    for i, tok in enumerate(tokens):
        if tok.type != tokenize.NAME:
            continue
        nxt = tokens[i + 1:i + 3]
        if len(nxt) == 2 and nxt[0].string == "." and (tok.string, nxt[1].string) in FORBIDDEN:
            found.append(f"{label}:{tok.start[0]}: {tok.string}.{nxt[1].string}")
        elif tok.string in FORBIDDEN_MODULES and i > 0 and tokens[i - 1].string in ("import", "from"):
            found.append(f"{label}:{tok.start[0]}: import {tok.string}")
    return found


def mechanism_modules(mech) -> list:
    """The modules of the mechanism's classes and, for a mechanism in its own package, that whole package."""
    names = []
    for cls in type(mech).__mro__:
        mod = cls.__module__
        if mod in ("builtins", f"{MECHANISMS_PACKAGE}.base"):
            continue
        names.append(mod)
        parent = mod.rpartition(".")[0]
        if parent and parent != MECHANISMS_PACKAGE and not MECHANISMS_PACKAGE.startswith(parent):
            names += [m for m in list(sys.modules) if m.startswith(parent + ".")]
    return [sys.modules[n] for n in dict.fromkeys(names) if n in sys.modules]


def source_scan(mech) -> Check:
    found = []
    for module in mechanism_modules(mech):
        try:
            found += scan_source(module_source(module), module.__name__)
        except (OSError, TypeError, tokenize.TokenError):
            found.append(f"{module.__name__}: source not readable")
    if found:
        return Check("randomness only from engine/noise", False, "; ".join(found[:5]))
    return Check("randomness only from engine/noise", True,
                 f"{len(mechanism_modules(mech))} module(s) scanned: no numpy.random, random, secrets or os.urandom")


# ---- the verification ---------------------------------------------------------------------------------------------
def resolve(mechanism):
    from ppdp_gui.engine.pipeline.plan import resolve_mechanism
    mech = resolve_mechanism(mechanism)
    cost = mech.cost(mech.resolve_params())
    if not cost.is_dp:
        raise ParameterError(f"{mech.name} gives {cost.describe(with_note=False)}, not differential privacy: there "
                             "is no ε to verify. The self-check is for the ε-DP mechanisms.")
    return mech


def verify(mechanism, *, size: str = "quick", seed: int = 0, alpha: float = ALPHA, noise_factor=1,
           only: tuple[str, ...] | None = None) -> Iterator[Progress | Verdict]:
    """Verify `mechanism` (registry name, class or instance) on its audit tables; yields Progress, then the Verdict.
    `noise_factor` ≠ 1 plants a wrong noise scale (engine.verify.ScaledNoise) to show the audit catches it;
    `only` restricts the audit to the named tables (tests of one planted bug)."""
    started = time.perf_counter()
    mech = resolve(mechanism)
    every = scenarios_for(mech.name)
    if only is not None:
        unknown = set(only) - {s.name for s in every}
        if unknown:
            raise ParameterError(f"no audit table named {', '.join(sorted(unknown))}")
    # a size may leave a table out; each table keeps its own seeds (its place in the full list) whatever is run
    chosen = [(i, s) for i, s in enumerate(every) if (only is None or s.name in only) and s.runs_for(size) > 0]
    scenarios = [s for _, s in chosen]
    cost = mech.cost(mech.resolve_params())
    verdict = Verdict(mech.name, cost.epsilon, cost.delta, size, int(seed), alpha)
    total = sum(s.runs_for(size) * (1 if s.kind == "calibration" else 2) for s in scenarios) or 1
    done = 0
    yield Progress(0.0, "checking the source and that a seed fixes the release")
    verdict.checks.append(source_scan(mech))
    verdict.checks.append(determinism(mech, scenarios, seed, noise_factor))
    for index, sc in chosen:
        def report(i, n, _sc=sc, _done=done):
            return Progress(min(0.99, (_done + i) / total), f"{_sc.name}: {i:,} test releases")
        result = yield from pass_progress(run_scenario(mech, sc, index, size=size, seed=seed,
                                                     alpha=alpha / len(scenarios), factor=noise_factor,
                                                     report=report))
        verdict.results.append(result)
        done += sc.runs_for(size) * (1 if sc.kind == "calibration" else 2)
    verdict.seconds = time.perf_counter() - started
    yield Progress(1.0, "done")
    yield verdict


def last_result(steps) -> Any:
    """The last item of a generator of Progress and one result: the result, with the progress dropped."""
    result = None
    for item in steps:
        if not isinstance(item, Progress):
            result = item
    return result


def run_verification(mechanism, **kwargs: Any) -> Verdict:
    return last_result(verify(mechanism, **kwargs))
