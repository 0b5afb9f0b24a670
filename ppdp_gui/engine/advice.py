"""Guided advice from the custodian's own simulation: which value of the swept parameter to release with, and why.

A simulation (`engine/pipeline/sweep.py`) runs the mechanism on the custodian's own table over a grid of one
parameter, several times per value, and measures each run (never charged, never published). A custodian who does
not code cannot read "CA % against ε with a ±1 σ band" into a decision; this module turns it into one value and a
plain sentence. It knows no mechanism: which way a figure is better comes from engine/glossary.py, which way a
parameter buys privacy from its `ParamSpec.more_private` (passed in), and the rule is the same for every one.

The rule, on the mean curve of one utility figure with its run-to-run spread (standard deviation):

1. Order the values from the most private to the least (`more_private`: "lower" for ε, "higher" for k); for a
   parameter that does not change the guarantee (DiffGen's h), from the smaller value (coarser, smaller table) up.
2. Plateau: a value is *as good as the best* when its mean is within the standard error of the difference of
   the two means (√(σ₁²/n₁ + σ₂²/n₂), σ the spread of n repeats), within `NEGLIGIBLE` (5 %) of the whole curve's
   range, or within `RELATIVE` (0.5 %) of the figure's own size of the best mean — differences the repeats cannot
   tell apart, or too small to matter. (A value whose runs scatter widely gains no extra leeway beyond what its
   repeats can tell.) The advice is the first value in that order that is as good
   as the best: the most private one with no real loss ("accuracy stops rising after h = 8"). Ties therefore go
   towards more privacy.
3. Knee: if only the least private value is as good as the best (the figure still improves at the end of the
   grid), take the point where most of the gain has been made: on the curve scaled to [0, 1] both ways (the
   parameter on a log scale when it spans a factor of 20 or more), the point furthest above the straight line from
   the first to the last value (Satopää et al.'s "Kneedle"). It counts only if it lies at least `KNEE_MIN` above
   that line.
4. Otherwise the figure improves steadily: no single value is advised, and the sentence says that the choice is
   the custodian's (more privacy costs utility all along).

Before the rule, two kinds of value are set aside, because a custodian could not follow advice to use them:

- a value whose accuracy is within the spread of the simulation's "always guessing" line (`LA %`, predicting the
  most common class): a release no better than having no data at all (DiffGen's h = 1 publishes age as the whole
  range). "Within the spread": its mean is at most max(σ of its repeats, `RELATIVE` of the line) above the line;
- a value that costs more ε than the table's budget has left (`budget_left`, the ledger's remaining ε for this
  table, with `cost(value)` the ε a release at that value would charge; both passed in by the caller).

If no value is left, nothing is advised (`rule` "guessing" or "budget") and the sentence says what to try instead:
fewer columns, coarser taxonomies, more ε if the budget allows.

The sentence gives the figure at the advised value and at the best, and — where the simulation measured them —
the risk figures and the size of the release there ("the table is 5× smaller than at h = 15"). Applying advice
only sets the parameter: nothing is run, nothing is charged. Advice belongs to the table it was worked out on
(`Advice.table`, the simulation's `SweepResult.table`): `Advice.apply` refuses another table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Literal

import numpy as np
import pandas as pd

from ppdp_gui.engine import glossary
from ppdp_gui.engine.claims import epsilon_text
from ppdp_gui.engine.errors import ParameterError

NEGLIGIBLE = 0.05  # share of the curve's range below which a difference does not count
RELATIVE = 0.005  # … or share of the figure's own size (0.4 points of an accuracy of 80 %)
KNEE_MIN = 0.1  # how far above the chord (on the [0, 1] scales) a knee must lie
LOG_SPAN = 20.0  # a positive grid spanning this factor is read on a log scale
GUESSING = "LA %"  # the simulation's reference line of always guessing the most common class

#: what to try when no value of the range is worth releasing with (the window's words: the step to go to)
TRY_FEWER_COLUMNS = "fewer columns (in the Data step, make some insensitive or leave them out)"
TRY_COARSER = "coarser taxonomies (in the Taxonomies step, group values higher up the tree)"

Direction = Literal["lower", "higher"]


@dataclass(frozen=True)
class Advice:
    """A recommendation for `parameter` (None: no single value advised), the figure it rests on, and why."""

    parameter: str
    value: Any
    measure: str
    rule: Literal["plateau", "knee", "flat", "steady", "only", "guessing", "budget"]
    reason: str
    details: tuple[str, ...] = ()
    points: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(), repr=False, compare=False)
    #: the table the simulation ran on (`SweepResult.table`): the advice is about that table only
    table: str = ""
    #: values of the grid set aside: no better than guessing, or beyond the budget left
    set_aside: tuple[str, ...] = ()

    @property
    def applicable(self) -> bool:
        return self.value is not None

    def text(self) -> str:
        return " ".join((self.reason,) + self.details)

    def applies_to(self, table: str) -> bool:
        """Whether this advice may be applied to `table` (the identity `SweepResult.table` gives it)."""
        return not self.table or self.table == table

    def apply(self, params: dict[str, Any], table: str) -> dict[str, Any]:
        """`params` with the advised value set; ParameterError if nothing is advised or the table is another one
        than the simulation's (a value advised for one table says nothing about the next)."""
        if not self.applicable:
            raise ParameterError(f"no value of {self.parameter} is advised: {self.reason}")
        if not self.applies_to(table):
            raise ParameterError("this advice was worked out on another table; run the simulation again on the "
                                 "table open now (Results step, Simulate tab)")
        return {**params, self.parameter: self.value}


def fmt(value: float) -> str:
    """A figure as a person reads it: 80.1, 0.316, 1,234."""
    v = float(value)
    if not np.isfinite(v):
        return str(v)
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    if abs(v) >= 10:
        return f"{v:.1f}".rstrip("0").rstrip(".")
    return f"{v:.3g}"


def fmt_value(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _with_unit(name: str, value: float) -> str:
    return glossary.with_unit(name, fmt(value))


def short_label(spec) -> str:
    """What a parameter is called in a sentence: its symbol when it has one ("ε", "h", "k"), else its label."""
    if len(spec.name) <= 2:
        return spec.name
    words = spec.label.split()
    for word in (words[-1], words[0]) if words else ():
        if len(word) <= 2 and word.isalpha():
            return word
    return spec.label


def primary_measure(measures: list[str], better: Callable[[str], str | None] = glossary.better) -> str | None:
    """The first utility figure with a known direction (the one advice rests on by default)."""
    for m in measures:
        if glossary.figure(m).kind == "utility" and better(m):
            return m
    return next((m for m in measures if better(m) and glossary.figure(m).kind != "risk"), None)


def _curve(rows: pd.DataFrame, parameter: str, measure: str) -> pd.DataFrame:
    frame = rows[[parameter, measure]].copy()
    frame[measure] = pd.to_numeric(frame[measure], errors="coerce")
    grouped = frame.dropna().groupby(parameter, sort=True)[measure]
    return pd.DataFrame({"mean": grouped.mean(), "std": grouped.std(ddof=1).fillna(0.0), "n": grouped.count()})


def _positions(xs: np.ndarray) -> np.ndarray:
    """The grid values on [0, 1] in their own order (log scale for positive values spanning a wide range)."""
    x = np.asarray(xs, dtype=float)
    if (x > 0).all() and x.max() / x.min() >= LOG_SPAN:
        x = np.log10(x)
    span = x.max() - x.min()
    return np.zeros_like(x) if span == 0 else (x - x.min()) / span


def guessing_line(result, measure: str) -> float | None:
    """The simulation's "always guessing" figure when `measure` is a classification accuracy it compares with."""
    value = (getattr(result, "reference", None) or {}).get(GUESSING)
    if value is None or measure == GUESSING or not np.isfinite(float(value)):
        return None
    title = glossary.figure(measure).title.lower()
    if "accuracy" in title or re.match(r"A?CA\b", measure):
        return float(value)
    return None


def epsilon_cost(mechanism, params: dict[str, Any], parameter: str) -> Callable[[Any], float | None]:
    """cost(value): the ε a release of `mechanism` with `params` and `parameter` = value would charge (None: not
    charged, or not priced), for `advise(..., cost=…)`."""
    def cost(value: Any) -> float | None:
        try:
            c = mechanism.cost(mechanism.resolve_params(**{**params, parameter: value}))
        except Exception:  # noqa: BLE001 - a value the mechanism refuses is not priced; the run refuses it later
            return None
        return None if c.epsilon is None else float(c.epsilon)
    return cost


def advise(result, parameter: str | None = None, *, measure: str | None = None,
           more_private: Direction | None = None, label: str | None = None,
           better: Callable[[str], str | None] = glossary.better, budget_left: float | None = None,
           cost: Callable[[Any], float | None] | None = None) -> Advice | None:
    """Advice for one swept parameter of a SweepResult (see the module docstring); None if the simulation cannot
    carry any (no utility figure, fewer than two values, or several parameters varied together).

    `budget_left`: the ε this table's budget has left (the ledger's `remaining`; None: no cap known), and
    `cost(value)`: the ε a release at that value would charge (see `epsilon_cost`); values costing more are never
    advised."""
    rows: pd.DataFrame = result.rows
    names = list(getattr(result, "param_names", []) or [])
    varied = [p for p in names if p in rows.columns and rows[p].nunique(dropna=True) > 1]
    parameter = parameter or (varied[0] if varied else None)
    if parameter is None or parameter not in rows.columns or [p for p in varied if p != parameter]:
        return None
    measures = [m for m in result.measure_names if m in rows.columns]
    if not (measure in measures and better(measure) and glossary.figure(measure).kind == "utility"):
        measure = primary_measure(measures, better)  # risk and size figures are reported, not optimised
    if measure is None:
        return None
    curve = _curve(rows, parameter, measure)
    if len(curve) < 2:
        return None
    label = label or parameter
    ascending = more_private != "higher"  # ε: small first; k: large first; no direction: small first
    curve = curve.sort_index(ascending=ascending)
    sign = 1.0 if better(measure) == "higher" else -1.0
    table = str(getattr(result, "table", "") or "")
    kept = _worth_advising(result, curve, parameter, measure, label, sign, budget_left, cost)
    if isinstance(kept, Advice):
        return replace(kept, table=table)
    curve, set_aside = kept
    if len(curve) == 1:
        x = curve.index[0]
        return Advice(parameter, _plain(x), measure, "only",
                      f"{label} = {fmt_value(x)} is the only value tried that is worth releasing with "
                      f"({glossary.figure(measure).title.lower()} {_with_unit(measure, curve['mean'].iloc[0])}).",
                      set_aside + _details(result, parameter, x, measure, label), curve, table, set_aside)
    xs = list(curve.index)
    utility = sign * curve["mean"].to_numpy(dtype=float)
    se2 = (curve["std"].to_numpy(dtype=float) ** 2) / np.maximum(curve["n"].to_numpy(dtype=float), 1)
    span = float(utility.max() - utility.min())
    best = int(np.argmax(utility))  # the first of equals: the more private one
    title = glossary.figure(measure).title
    privacy_word = {"lower": "smaller", "higher": "larger"}.get(more_private or "", "")

    def at(i: int) -> str:
        return f"{label} = {fmt_value(xs[i])}"

    def value_at(i: int) -> str:
        return _with_unit(measure, curve["mean"].iloc[i])

    floor = RELATIVE * float(np.abs(utility).max())
    if span <= floor:
        pick, rule = 0, "flat"
        reason = (f"{title} is about the same for every value tried, so the advice is {at(0)}"
                  + (f", the most private ({privacy_word} {label} is more private)." if privacy_word else
                     ", the smallest."))
    else:
        tolerance = np.maximum(np.sqrt(se2 + se2[best]), max(NEGLIGIBLE * span, floor))
        good = utility >= utility[best] - tolerance
        pick = int(np.flatnonzero(good)[0])
        rule = "plateau"
        if pick == len(xs) - 1 and len(xs) > 2:
            t = _positions(np.asarray(xs, dtype=float)) if all(isinstance(x, (int, float, np.number)) for x in xs) \
                else np.linspace(0, 1, len(xs))
            if not ascending:
                t = 1 - t
            u = (utility - utility.min()) / span
            u0, u1 = u[0], u[-1]
            lift = u - (u0 + (u1 - u0) * t)
            knee = int(np.argmax(lift[1:-1])) + 1
            if lift[knee] >= KNEE_MIN and u1 > u0:
                pick, rule = knee, "knee"
            else:
                pick, rule = -1, "steady"
        if rule == "plateau":
            if pick == best:
                reason = f"{title} is best at {at(pick)} ({value_at(pick)})."
            else:
                reason = (f"{title} stops improving after {at(pick)}: {value_at(pick)} there, {value_at(best)} at "
                          f"{at(best)} — a difference the repeated runs cannot tell apart, or too small to matter.")
            if privacy_word and pick != len(xs) - 1:
                reason += f" Where results are as good, the advice takes the more private value ({privacy_word} " \
                          f"{label})."
        elif rule == "knee":
            share = (utility[pick] - utility[0]) / (utility[-1] - utility[0])
            reason = (f"{share:.0%} of the improvement in {title.lower()} is reached at {at(pick)}: {value_at(pick)} "
                      f"there, {value_at(len(xs) - 1)} at {at(len(xs) - 1)}, the least private value tried.")
        else:
            return Advice(parameter, None, measure, "steady",
                          f"{title} keeps improving all the way from {at(0)} ({value_at(0)}) to {at(len(xs) - 1)} "
                          f"({value_at(len(xs) - 1)}), with no point where it levels off: "
                          f"{'more privacy' if privacy_word else 'a smaller value'} costs {title.lower()} here, so "
                          "no single value is advised — choose by the privacy you need.",
                          set_aside + _details(result, parameter, xs[0], measure, label), curve, table, set_aside)
    compare = xs[best] if best != pick else xs[-1]  # the best value, else the other end of the grid
    return Advice(parameter, _plain(xs[pick]), measure, rule, reason,
                  set_aside + _details(result, parameter, xs[pick], measure, label, compare=compare), curve, table,
                  set_aside)


def _worth_advising(result, curve: pd.DataFrame, parameter: str, measure: str, label: str, sign: float,
                    budget_left: float | None, cost: Callable[[Any], float | None] | None
                    ) -> tuple[pd.DataFrame, tuple[str, ...]] | Advice:
    """The curve without the values no custodian should release with (no better than guessing, or beyond the
    budget left) and a sentence on each kind set aside; or, when none is left, the Advice saying so."""
    xs = list(curve.index)
    mean = curve["mean"].to_numpy(dtype=float)
    title = glossary.figure(measure).title
    guess = guessing_line(result, measure)
    beats = np.ones(len(xs), dtype=bool)
    if guess is not None:
        margin = np.maximum(curve["std"].to_numpy(dtype=float), RELATIVE * abs(guess))
        beats = sign * (mean - guess) > margin
    costs = [cost(x) if cost is not None else None for x in xs]
    limit = None if budget_left is None else float(budget_left)
    affordable = np.array([c is None or limit is None or c <= limit * (1 + 1e-9) for c in costs], dtype=bool)
    at = [f"{label} = {fmt_value(x)}" for x in xs]
    known = [c for c in costs if c is not None]
    more_eps = (limit is None and known) or (limit is not None and known and max(known) < limit)
    tries = [TRY_FEWER_COLUMNS, TRY_COARSER]
    if more_eps:
        tries.append("a larger ε, if the budget allows" if limit is None else
                     f"a larger ε (this table has ε = {epsilon_text(limit)} left)")
    no_more = (f" A larger ε is not possible: this table has only ε = {epsilon_text(limit)} left."
               if limit is not None and known and not more_eps else "")
    if not beats.any():
        best = int(np.argmax(sign * mean))
        return Advice(parameter, None, measure, "guessing",
                      f"No value in this range beats guessing: {title.lower()} is at best "
                      f"{_with_unit(measure, mean[best])} ({at[best]}), and always guessing the most common class "
                      f"already gets {_with_unit(measure, guess)}. Try " + ", ".join(tries[:-1]) + " or "
                      + tries[-1] + "." + no_more, (), curve)
    if not (beats & affordable).any():
        first = int(np.flatnonzero(beats)[0])
        return _budget_advice(parameter, measure, curve, at, first, costs, limit, guess, mean)
    set_aside = []
    if not beats.all():
        names = ", ".join(at[i] for i in np.flatnonzero(~beats))
        set_aside.append(f"Not advised: {names} — no better than always guessing the most common class "
                         f"({_with_unit(measure, guess)}).")
    over = beats & ~affordable
    if over.any():
        names = ", ".join(at[i] for i in np.flatnonzero(over))
        set_aside.append(f"Not advised: {names} — costs more than the ε = {epsilon_text(limit)} this table has left.")
    keep = beats & affordable
    return curve[keep], tuple(set_aside)


def _budget_advice(parameter, measure, curve, at, first, costs, limit, guess, mean) -> Advice:
    """Values worth releasing with exist, but none within the budget left: what to try instead."""
    tries = (TRY_FEWER_COLUMNS, TRY_COARSER)
    title = glossary.figure(measure).title.lower()
    against = f", against {_with_unit(measure, guess)} for always guessing" if guess is not None else ""
    return Advice(parameter, None, measure, "budget",
                  f"No value you can still afford is worth releasing with: {at[first]} would give {title} "
                  f"{_with_unit(measure, mean[first])}{against}, but costs ε = {epsilon_text(costs[first])} and this table "
                  f"has only ε = {epsilon_text(limit)} left. Try " + " or ".join(tries) + ".", (), curve)


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def _details(result, parameter: str, value: Any, measure: str, label: str, compare: Any = None) -> tuple[str, ...]:
    """Risk figures at the advised value, and the release's size against the best value's, where measured."""
    rows = result.rows
    lines = []
    at = rows[rows[parameter] == value]
    for m in result.measure_names:
        if m == measure or m not in rows.columns:
            continue
        fig = glossary.figure(m)
        mean = pd.to_numeric(at[m], errors="coerce").mean()
        if not np.isfinite(mean):
            continue
        if fig.kind == "risk":
            lines.append(f"{fig.title} at {label} = {fmt_value(value)}: {_with_unit(m, mean)}.")
        elif fig.kind == "size" and compare is not None and compare != value:
            other = pd.to_numeric(rows[rows[parameter] == compare][m], errors="coerce").mean()
            if np.isfinite(other) and mean > 0 and other / mean >= 1.5:
                lines.append(f"The released table is {other / mean:.0f}× smaller there than at {label} = "
                             f"{fmt_value(compare)} ({fig.title.lower()}: {fmt(mean)} against {fmt(other)}).")
    return tuple(dict.fromkeys(lines))
