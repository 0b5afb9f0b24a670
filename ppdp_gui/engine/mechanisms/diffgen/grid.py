"""The public grid of a numeric quasi-identifier: where DiffGen may put a split point, and how it is written.

Why a grid: the paper draws a real split value uniformly inside the chosen interval between two data values
(eq. 7). Released as a double, such a value carries in its low bits the interval it was drawn from, i.e. the two
data values around it — an auditor on neighbouring tables measured a privacy loss ε ≥ 3.18 at a claimed ε = 1.
Here split points are boundaries of a grid fixed before the data is seen — public bounds [lo, hi] and a public
step — so the exponential mechanism (eq. 6–7) ranges over finitely many public outputs and every released split
is lo + g·step for an integer g, computed exactly from the decimal text of lo and step.

Cells: a value x lies in cell c = floor((x − lo)/step), clipped to [0, n_cells − 1] (hi and anything above go
to the last cell); split boundary g ∈ {1, …, n_cells − 1} sends x left iff its cell is < g, i.e. iff
x < lo + g·step. Training and `Release.apply_to` both go through `Grid.cells`, so a record always lands on the
same side (a fractional value in an integer domain included). Cell membership is decided against the double
nearest to each exact grid value — the number a reader of the label '[0.3, 0.6)' would type — not against the
rounding error of (x − lo)/step.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from itertools import pairwise

import numpy as np

from ppdp_gui.engine.errors import ParameterError

MAX_GRID_CELLS = 1000  # the automatic step gives between 400 and 1,000 cells
MAX_CELLS_ANY_STEP = 10**9  # an explicit step finer than this is refused (cells are held as int64 counts)
_MANTISSAS = (Fraction(1), Fraction(2), Fraction(5, 2), Fraction(5))
_EXACT = 2**53  # integers below this are exact doubles


def exact_decimal(value) -> Fraction:
    """The exact value of a number as written in decimal: an int, a decimal string ('0.1'), a Fraction, or a
    float taken by its shortest decimal repr (0.1 -> 1/10, not the double's binary expansion)."""
    if isinstance(value, Fraction):
        return value
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return Fraction(int(value))
    if isinstance(value, str):
        return Fraction(value.strip())
    v = float(value)
    if not math.isfinite(v):
        raise ParameterError(f"a grid bound or step must be finite, not {v}")
    return Fraction(repr(v))


def decimal_text(q: Fraction) -> str:
    """`q` written exactly in decimal ('12.5', '-0.025', '40'); a terminating decimal is assumed (grid values
    are, being built from decimal texts), otherwise 17 significant digits."""
    den = q.denominator
    twos = fives = 0
    while den % 2 == 0:
        den //= 2
        twos += 1
    while den % 5 == 0:
        den //= 5
        fives += 1
    if den != 1:
        return f"{float(q):.17g}"
    digits = max(twos, fives)
    scaled = abs(q.numerator) * 10**digits // q.denominator
    whole, frac = divmod(scaled, 10**digits)
    text = str(whole) + ("." + str(frac).rjust(digits, "0").rstrip("0") if digits and frac else "")
    return ("-" if q < 0 else "") + text


def json_number(q: Fraction) -> int | float:
    """An int when `q` is whole, else the double nearest to it (whose repr is its decimal text)."""
    return int(q) if q.denominator == 1 else float(q)


def grid_step(lo, hi, max_cells: int = MAX_GRID_CELLS) -> float:
    """The automatic step of a real-valued grid over [lo, hi]: the smallest round number m·10^k (m = 1, 2, 2.5
    or 5) giving at most `max_cells` cells, i.e. ≥ (hi − lo)/max_cells. A function of the public bounds only
    (exact arithmetic on their decimal texts, so no data and no float rounding can move it); 1 for an empty
    range. The returned double's repr is the round number ('0.025')."""
    span = exact_decimal(hi) - exact_decimal(lo)
    if span <= 0:
        return 1.0
    target = span / max_cells
    k0 = math.floor(math.log10(target.numerator) - math.log10(target.denominator))
    candidates = [m * Fraction(10) ** k for k in (k0 - 1, k0, k0 + 1) for m in _MANTISSAS]
    return float(min(c for c in candidates if c >= target))


@dataclass(frozen=True)
class Grid:
    """lo + g·step for g = 0 … n_cells (the last cell closed at hi); see the module docstring.

    `integer`: an integer domain, whose values lo, lo + 1, …, hi each own a cell (n_cells = hi − lo + 1 with
    step 1), so a split at hi separates [hi, hi] from the rest; otherwise n_cells = ceil((hi − lo)/step) and
    hi is the upper end of the last cell."""

    lo: float
    hi: float
    step: float
    integer: bool = False
    lo_q: Fraction = field(init=False, repr=False, compare=False)
    step_q: Fraction = field(init=False, repr=False, compare=False)
    hi_q: Fraction = field(init=False, repr=False, compare=False)
    n_cells: int = field(init=False)

    def __post_init__(self):
        lo_q, hi_q, step_q = exact_decimal(self.lo), exact_decimal(self.hi), exact_decimal(self.step)
        if step_q <= 0:
            raise ParameterError(f"the grid step must be positive, not {self.step}")
        if hi_q < lo_q:
            raise ParameterError(f"the bounds [{self.lo}, {self.hi}] are reversed")
        span = (hi_q - lo_q) / step_q
        n = math.floor(span) + 1 if self.integer else max(1, math.ceil(span))
        if n > MAX_CELLS_ANY_STEP:
            raise ParameterError(f"a step of {decimal_text(step_q)} cuts [{decimal_text(lo_q)}, "
                                 f"{decimal_text(hi_q)}] into {n:,} cells; choose a larger step")
        for name, value in (("lo_q", lo_q), ("hi_q", hi_q), ("step_q", step_q), ("n_cells", n)):
            object.__setattr__(self, name, value)

    @classmethod
    def make(cls, lo, hi, step=None, integer: bool = False) -> Grid:
        """The grid of a column: the given step, else 1 on an integer domain, else `grid_step(lo, hi)`."""
        if step is None:
            step = 1 if integer else grid_step(lo, hi)
        return cls(float(lo), float(hi), float(exact_decimal(step)), integer)

    # -- exact values -----------------------------------------------------------------------------------------
    def value(self, g: int) -> Fraction:
        """The exact grid value lo + g·step."""
        return self.lo_q + int(g) * self.step_q

    def text(self, g: int) -> str:
        return decimal_text(self.value(g))

    def number(self, g: int) -> int | float:
        return json_number(self.value(g))

    def upper_text(self, b: int) -> str:
        """The upper end of an interval of cells [a, b): the grid value b, or hi for the last cell."""
        return decimal_text(self.hi_q) if b >= self.n_cells else self.text(b)

    def interval_label(self, a: int, b: int) -> str:
        """'[value a, value b)', or '[value a, hi]' when the interval reaches the last cell."""
        return f"[{self.text(a)}, {self.upper_text(b)}" + ("]" if b >= self.n_cells else ")")

    def labels(self, splits) -> list[str]:
        """The labels of the intervals cut by the sorted grid boundaries `splits`."""
        ends = [0, *(int(g) for g in splits), self.n_cells]
        return [self.interval_label(a, b) for a, b in pairwise(ends)]

    def describe(self) -> dict:
        return {"low": json_number(self.lo_q), "high": json_number(self.hi_q), "step": json_number(self.step_q)}

    # -- cells --------------------------------------------------------------------------------------------------
    def boundary_floats(self, g: np.ndarray) -> np.ndarray:
        """The double nearest to lo + g·step for each integer g, vectorised: with lo = L/D and step = S/D
        (D a common denominator, a power of ten for decimal texts), (L + g·S) / D is one correctly rounded
        division of two exact doubles whenever they stay below 2^53; otherwise each distinct g is done with
        Fractions."""
        g = np.asarray(g, dtype=np.int64)
        den = math.lcm(self.lo_q.denominator, self.step_q.denominator)
        num_lo, num_step = self.lo_q.numerator * (den // self.lo_q.denominator), self.step_q.numerator * (
            den // self.step_q.denominator)
        if den < _EXACT and abs(num_lo) + (self.n_cells + 1) * abs(num_step) < _EXACT:
            return (num_lo + g * num_step).astype(np.float64) / float(den)
        uniq, inverse = np.unique(g, return_inverse=True)
        return np.array([float(self.value(v)) for v in uniq], dtype=np.float64)[inverse.reshape(g.shape)]

    def cells(self, values) -> np.ndarray:
        """The cell of every value (int64): floor((x − lo)/step) clipped to [0, n_cells − 1], checked against
        the exact boundaries (the float quotient can be one off right at a boundary, e.g. 0.3/0.1 < 3)."""
        x = np.asarray(values, dtype=np.float64)
        last = self.n_cells - 1
        with np.errstate(invalid="ignore"):
            c = np.clip(np.floor((x - self.lo) / self.step), 0, last)
        c = np.where(np.isnan(c), 0, c).astype(np.int64)  # NaN never reaches here (numeric_values refuses it)
        for _ in range(3):  # one pass is enough unless the quotient's error spans cells; stop when stable
            down = (c > 0) & (x < self.boundary_floats(c))
            up = (c < last) & (x >= self.boundary_floats(c + 1))
            if not (down.any() or up.any()):
                break
            c = c - down + up
        return c
