"""The pipeline audit (`ppdp verify --pipeline`, Tools → Self-check of the whole path): every DP mechanism audited on
neighbouring *files* through the path a custodian's file takes, from the bytes read to the bytes written.

Why: the mechanism audit (audit.py) hands each mechanism a table in memory. A leak in the reader (a row dropped
for a blank, a role or kind guessed from the values), the plan, the ledger or the export (a warning copied into
the release note) passes it. Here each run writes a CSV file, loads it with a recipe, plans, charges a scratch
ledger, releases, exports, and reads back what left the machine (pipeline_run.py); the pairs of files are in
pipeline_files.py.

Two kinds of evidence per pair, each compared with what the release note itself promises (its ε, and its
neighbouring: a replace-one note is held to ε for a replaced row, an add/remove note to 2ε; a person with
several rows, the person column stated, to the ε charged):

- a *fixed difference*: something in the written files or the note that is the same in every run on one file
  and different in every run on the other (the note's column list, a row count, a warning, "nothing published").
  No noise covers it, so no ε does: the lower bound is infinite and the report names the difference;
- otherwise the statistics of the mechanism audit (stats.py: events chosen on half the runs, Clopper–Pearson on
  the other half, Bonferroni over the pairs of one mechanism at α = 1e-3), which give a finite lower bound.

The k-anonymity family has no ε; its audit on this path (pipeline_persons.py) releases a practice file with a
person column and recounts the distinct patients of every class on the written file.

A PASS is not a proof; a FAIL is a leak (or a broken promise of the note) at 99.9 % confidence, or a difference
no noise covers.
"""

from __future__ import annotations

import time
from fractions import Fraction
from pathlib import Path
from typing import Any, Iterator

from ppdp_gui.engine.errors import ParameterError
from ppdp_gui.engine.mechanisms.base import Progress
from ppdp_gui.engine.verify.audit import (ALPHA, Check, ScenarioResult, Verdict, last_result, pass_progress,
                                          seed_of)
from ppdp_gui.engine.verify.pipeline_files import FilePair, pairs_for, recipe_parts
from ppdp_gui.engine.verify.pipeline_run import (SCRATCH_CAP, Outcome, fixed_differences, outcome_features,
                                                 release_file, scratch_folder, shorten)
from ppdp_gui.engine.verify.stats import audit

MIN_FIXED_RUNS = 6  # runs per file before a feature fixed on both sides counts as a difference no noise covers
SIZES = ("smoke", "quick", "full")


def audited_mechanisms() -> list[str]:
    """What `ppdp verify --pipeline` audits without a name: every DP mechanism, then the k-anonymity family."""
    from ppdp_gui.engine.verify.pipeline_persons import syntactic_mechanisms
    return dp_mechanisms() + syntactic_mechanisms()


def dp_mechanisms() -> list[str]:
    """Every registered mechanism whose default parameters give ε-DP."""
    from ppdp_gui.engine.mechanisms import registry
    out = []
    for name in registry.names():
        cls = registry.get(name)
        if cls().cost(cls.resolve_params()).is_dp:
            out.append(name)
    return out


def _replace_one(neighbouring) -> bool:
    """True for a guarantee stated for one record (or person) replaced (an enum or the words)."""
    return "replace" in str(getattr(neighbouring, "value", neighbouring) or "").lower()


def _note_neighbouring(note: dict | None) -> str:
    """Every statement of the neighbouring relation in the note (claims, details), as one text."""
    found: list[str] = []

    def walk(obj):
        if isinstance(obj, dict):
            for k, v in obj.items():
                if "neighbouring" in str(k).lower() and isinstance(v, (str, int, float)):
                    found.append(str(v))
                else:
                    walk(v)
        elif isinstance(obj, list):
            for v in obj:
                walk(v)
    walk(note or {})
    return " ".join(found)


def allowance(note: dict | None, eps: Fraction, relation: str, fallback: str = "") -> tuple[float, str]:
    """What the release may lose on this pair, read from the note's own promise (see the module docstring);
    `fallback`: the mechanism's own statement, when nothing was published to read a note from."""
    replace = _replace_one(_note_neighbouring(note) if note is not None else fallback)
    e = float(eps)
    if relation in ("add", "remove"):
        if replace:
            return float("inf"), "nothing: the note promises ε for one record replaced only (n is public)"
        return e, f"the claimed ε = {e:g} for one record added or removed"
    if relation == "replace":
        if replace:
            return e, f"the claimed ε = {e:g}: the note promises it for one record replaced"
        return 2 * e, (f"2ε = {2 * e:g}: the note promises ε per record added or removed, and a replaced record "
                       "is one removed and one added")
    return e, (f"the ε charged, {e:g}, for the person: the recipe names the person column (patient_nbr), so the "
               "release must protect the person with all their rows, not each row")


def _claimed(outcomes: list[Outcome], fallback: Fraction) -> tuple[Fraction, dict | None]:
    for o in outcomes:
        if o.note is not None:
            eps = (o.note.get("privacy cost") or {}).get("epsilon")
            if eps is not None:
                return Fraction(str(eps)), o.note
    return fallback, None


class _Files:
    """The two files of a pair and their scratch ledgers (one per file, so neither side sees the other's runs)."""

    def __init__(self, root: Path, pair: FilePair):
        from ppdp_gui.engine.privacy.ledger import Ledger
        self.sources, self.ledgers, self.outs = [], [], []
        for side, text in enumerate((pair.first, pair.second)):
            folder = root / f"file{side}"
            folder.mkdir(parents=True, exist_ok=True)
            src = folder / "ward.csv"  # the same name on both sides: nothing but the rows differs
            src.write_text(text, encoding="utf-8")
            self.sources.append(src)
            self.ledgers.append(Ledger(root / f"scratch-ledger-{side}" / "ledger.sqlite", default_cap=SCRATCH_CAP))
            self.outs.append(root / f"out{side}")


def _runs(files: _Files, side: int, n: int, parts, mechanism: str, base: int, index: int, factor, report):
    from ppdp_gui.engine.noise import NoiseSource
    from ppdp_gui.engine.verify.noise import with_factor
    outcomes = []
    for i in range(n):
        seed = seed_of(base, index, side, i)
        rng = with_factor(NoiseSource.for_tests(seed), factor)
        outcomes.append(release_file(files.sources[side], files.outs[side], files.ledgers[side], parts, mechanism,
                                     seed, rng))
        if i % 10 == 9:
            yield report(i + 1)
    yield outcomes


def run_pair(mechanism: str, pair: FilePair, index: int, *, size: str, seed: int, alpha: float, factor,
             eps: Fraction, report, crashes: list[str] | None = None,
             neighbouring: str = "") -> Iterator[Progress | ScenarioResult]:
    """n runs on each file of `pair` (each with its own scratch ledger), then one ScenarioResult: ∞ for a fixed
    difference, else the statistical bound; `crashes` collects the runs that crashed; `neighbouring`: the
    mechanism's own statement, for a pair where nothing was published to read a note from."""
    n = pair.runs_for(size)
    parts = recipe_parts(pair, mechanism)
    with scratch_folder() as tmp:
        files = _Files(Path(tmp), pair)
        first = yield from pass_progress(_runs(files, 0, n, parts, mechanism, seed, index, factor,
                                          lambda i: report(i, n)))
        second = yield from pass_progress(_runs(files, 1, n, parts, mechanism, seed, index, factor,
                                           lambda i: report(n + i, n)))
    if crashes is not None:
        crashes += [f"{pair.name}: {o.refused}" for o in first + second if o.crashed]
    claimed, note = _claimed(first + second, Fraction(str(parts["params"].get("epsilon", eps))))
    allowed, why = allowance(note, claimed, pair.relation, neighbouring)
    feats_a, feats_b = [outcome_features(o) for o in first], [outcome_features(o) for o in second]
    refused = ""
    if all(o.note is None for o in first + second):
        refused = f"nothing published on either file: {shorten(first[0].refused, 300)}"
    fixed = fixed_differences(feats_a, feats_b, MIN_FIXED_RUNS)
    words = pair.words + (f" [finding {pair.finding}]" if pair.finding else "")
    bound = audit(feats_a, feats_b, alpha=alpha)
    best = bound.best
    best_text = "" if best is None else (f"{best.text} ({best.direction}: {100 * best.p_first:.1f} % vs "
                                         f"{100 * best.p_second:.1f} %)")
    detail = f"statistics alone: privacy loss ≥ {max(0.0, bound.epsilon_lb):.3f}"
    lb = bound.epsilon_lb
    if fixed:
        name, a, b = fixed[0]
        more = f" (and {len(fixed) - 1} more)" if len(fixed) > 1 else ""
        best_text = (f"a difference no noise covers: {name} is {shorten(a)!r} in every run on D and "
                     f"{shorten(b)!r} in every run on D'{more}")
        if name == "published":
            why_not = next((o.refused for o in first + second if o.refused), "")
            best_text += f"; the refusal: {shorten(why_not, 300)}"
        lb = float("inf")
    yield ScenarioResult(pair.name, pair.words, words, "dp", allowed, why, lb, n, best_text, detail,
                         bound.events, whole=pair.relation in ("add", "remove"), epsilon=float(claimed),
                         refused=refused)


def determinism(mechanism: str, pair: FilePair, seed: int, factor) -> Check:
    """The same seed must give the same written files and note, byte for byte."""
    from ppdp_gui.engine.noise import NoiseSource
    from ppdp_gui.engine.verify.noise import with_factor
    parts = recipe_parts(pair, mechanism)
    with scratch_folder() as tmp:
        files = _Files(Path(tmp), pair)
        s = seed_of(seed, 999, 2, 0)
        digests = {release_file(files.sources[0], files.outs[0], files.ledgers[0], parts, mechanism, s,
                                with_factor(NoiseSource.for_tests(s), factor)).digest() for _ in range(2)}
    if len(digests) > 1:
        return Check("same seed, same written files", False, "two releases of one file with the same seed wrote "
                     "different files or notes: something on the path draws randomness that is not the noise "
                     "source's")
    return Check("same seed, same written files", True, "a file released twice with one seed: identical bytes")


def crash_check(crashes: list[str], runs: int) -> Check:
    """Every run either publishes or stops with a message: an error that is not one (a crash after the ledger
    charged ε, finding 4) is a bug even when nothing leaks."""
    if crashes:
        return Check("no run crashed", False, f"{len(crashes)} of {runs:,} runs crashed after the plan accepted "
                     f"them (ε charged, nothing written); first: {shorten(crashes[0], 300)}")
    return Check("no run crashed", True, f"all {runs:,} runs published or stopped with a message")


def verify_pipeline(mechanism, *, size: str = "quick", seed: int = 0, alpha: float = ALPHA, noise_factor=1,
                    only: tuple[str, ...] | None = None) -> Iterator[Progress | Verdict]:
    """Audit `mechanism` (a registry name) along the whole publish path; yields Progress, then a Verdict.
    `only` restricts the audit to the named pairs (tests of one planted bug)."""
    from ppdp_gui.engine.pipeline.plan import resolve_mechanism
    if size not in SIZES:
        raise ParameterError(f"unknown audit size {size!r}; use one of {', '.join(SIZES)}")
    started = time.perf_counter()
    mech = resolve_mechanism(mechanism)
    name = mech.name
    cost = mech.cost(mech.resolve_params())
    if not cost.is_dp:
        if cost.k is None:
            raise ParameterError(f"{name} gives {cost.describe(with_note=False)}: there is no ε nor k to audit. The "
                                 "self-check of the whole path is for the ε-DP and the k-anonymity mechanisms.")
        from ppdp_gui.engine.verify.pipeline_persons import person_check
        verdict = Verdict(name, cost.epsilon, cost.delta, f"pipeline {size}", int(seed), alpha, pipeline=True)
        yield Progress(0.0, "releasing a practice file with a person column and recounting its patients")
        verdict.checks.append(person_check(name, seed))
        verdict.seconds = time.perf_counter() - started
        yield Progress(1.0, "done")
        yield verdict
        return
    every = pairs_for(_replace_one(cost.neighbouring))
    if only is not None:
        unknown = set(only) - {p.name for p in every}
        if unknown:
            raise ParameterError(f"no pipeline audit named {', '.join(sorted(unknown))} for {name}")
    chosen = [(i, p) for i, p in enumerate(every) if only is None or p.name in only]
    verdict = Verdict(name, cost.epsilon, cost.delta, f"pipeline {size}", int(seed), alpha, pipeline=True)
    total = sum(2 * p.runs_for(size) for _, p in chosen) or 1
    done = 0
    crashes: list[str] = []
    yield Progress(0.0, "checking that a seed fixes the written files")
    verdict.checks.append(determinism(name, chosen[0][1] if chosen else every[0], seed, noise_factor))
    for index, pair in chosen:
        def report(i, n, _p=pair, _done=done):
            return Progress(min(0.99, (_done + i) / total), f"{_p.name}: {i:,} releases through the whole path")
        result = yield from pass_progress(run_pair(name, pair, index, size=size, seed=seed, alpha=alpha / len(chosen),
                                              factor=noise_factor, eps=cost.epsilon, report=report,
                                              crashes=crashes, neighbouring=str(cost.neighbouring)))
        verdict.results.append(result)
        done += 2 * pair.runs_for(size)
    verdict.checks.append(crash_check(crashes, verdict.runs))
    verdict.seconds = time.perf_counter() - started
    yield Progress(1.0, "done")
    yield verdict


def run_pipeline_verification(mechanism, **kwargs: Any) -> Verdict:
    return last_result(verify_pipeline(mechanism, **kwargs))
