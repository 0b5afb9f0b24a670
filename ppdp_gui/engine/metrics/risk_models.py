"""Re-identification risk as ARX reports it: attacker models on the table, and population uniqueness.

Everything works on the *equivalence classes* of a table: the rows sharing one combination of quasi-identifier
values (raw values for the input, published labels for a record-level release). With f_j the size of class j in
the table (the sample, n rows, u classes) and F_j its size in the population:

Attacker models (El Emam, "Guide to the De-Identification of Personal Health Information"; ARX's risk summary):
- prosecutor (the attacker knows the person is in the table): risk of a record 1/f_j. Records at risk = share of
  records with 1/f_j > threshold; highest risk = 1/min f_j; success rate = u / n (expected share re-identified).
- journalist (the attacker links from a population register that holds the table's people): risk 1/F_j.
  Records at risk = share of table records with 1/F_j > threshold; highest = 1/min F_j; success rate =
  max(u / Σ F_j, Σ (f_j / F_j) / n). Without a population table F_j = f_j and it equals the prosecutor model.
- marketer (the attacker tries to link everyone): success rate = Σ (f_j / F_j) / n.

Population uniqueness (share of the population that is unique on the quasi-identifiers), from the size
frequencies c_k (number of classes of size k) and the sampling fraction π = n / N, as ARX offers it:
- Zayatz (1991): P(unique in the population | unique in the sample) =
  c_1 h(1) / Σ_k c_k h(k), with h(k) the hypergeometric probability of drawing exactly one of k population records
  in a sample of n from N (the sample's class-size shares stand in for the population's); uniques = c_1 · P / π.
- Pitman (Hoshino 2001): the Pitman sampling formula's θ, α by maximum likelihood,
  log L = Σ_{i<u} log(θ + iα) − Σ_{i<n} log(θ + i) + Σ_k c_k Σ_{m<k} log(m − α); uniques = Γ(θ+1)/Γ(θ+α) · N^α.
- SNB (Chen & McNulty 1998, the "slide negative binomial"): a population class has 1 + X records, X negative
  binomial (α, β); the sample keeps each record with probability π. α, β solve E[c_1] = c_1, E[c_2] = c_2 with
  d = (1 − π)(1 − β):  E[c_1] = K π (β/(1−d))^α (1 + α d/(1−d)),
  E[c_2] = K π² α (1−β) β^α (1−d)^−(α+2) (2 − (1−α) d) / 2,  uniques = K β^α, where K (the number of non-empty
  population classes) is Haas & Stokes' modified Shlosser estimate
  K = u + c_1 · [Σ k π² (1−π²)^(k−1) c_k] / [Σ (1−π)^k ((1+π)^k − 1) c_k] · [Σ (1−π)^k c_k / Σ k π (1−π)^(k−1) c_k]².
- Dankar et al. (2012)'s decision rule, as ARX applies it: π ≤ 10 %: Pitman (Zayatz when Pitman has no
  solution); otherwise the smaller of Zayatz and SNB (Zayatz when SNB has no solution). No sample uniques: 0.

Persons. When the table has a person column (Role.PERSON) several rows may be one patient's, and what an
attacker re-identifies is a person: then f_j is the number of *distinct persons* among class j's rows (`persons`:
the person id of each row), every figure above counts persons instead of records, and a person whose rows fall in
several classes counts in each (whoever links one of that person's rows faces f_j persons). A population table,
when given, is read as a register of one row per person.

Where ARX's code differs from the formulas above we follow the formulas and say so: ARX 3.x subtracts 1 per class
size instead of (1−π)^k c_k in the Shlosser denominator, and multiplies instead of divides by (1−d)^(α+2) in
E[c_2]; both are marked as derivations in its sources. Our E[c_1] and E[c_2] are checked against direct
summation over the model in the tests.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import optimize, special

from ppdp_gui.engine.errors import ParameterError

#: risk bands of the histogram (upper bounds of a record's risk 1/f); ARX draws the same kind of chart
RISK_BANDS = (0.0, 0.001, 0.01, 0.05, 0.1, 0.2, 1 / 3, 0.5, 1.0)


@dataclass(frozen=True)
class AttackerRisk:
    """One attacker model's figures, each a share (0..1); None where the model has no such figure."""

    model: str
    records_at_risk: float | None
    highest_risk: float | None
    success_rate: float


@dataclass(frozen=True)
class PopulationUniqueness:
    """Estimated share of the population that is unique on the quasi-identifiers, by model (NaN: no solution)."""

    population_size: float
    sampling_fraction: float
    sample_uniqueness: float  # c_1 / n: records unique in the table
    zayatz: float
    pitman: float
    snb: float
    dankar: float
    dankar_model: str  # which model Dankar's rule chose


@dataclass(frozen=True)
class RiskReport:
    """Risk of one table (the input or a release) on its quasi-identifiers."""

    rows: int
    classes: int
    threshold: float
    prosecutor: AttackerRisk
    journalist: AttackerRisk
    marketer: AttackerRisk
    population: PopulationUniqueness | None
    histogram: pd.DataFrame = field(repr=False)
    #: the person column the classes' sizes count (None: rows)
    person: str | None = None
    #: records unique in the table (c_1 / n): needs no population, so it is shown without one
    sample_uniques: float | None = None


# ---- equivalence classes -----------------------------------------------------------------------------------
def class_ids(frame: pd.DataFrame, qis: Sequence[str]) -> np.ndarray:
    """Dense id of each row's combination of quasi-identifier values (missing values are a value)."""
    if not len(qis):
        return np.zeros(len(frame), dtype=np.int64)
    return frame.groupby(list(qis), dropna=False, sort=False, observed=True).ngroup().to_numpy(dtype=np.int64)


def class_sizes(frame: pd.DataFrame, qis: Sequence[str], persons: np.ndarray | None = None) -> np.ndarray:
    """Size of every equivalence class of `frame` on `qis`: its rows, or with `persons` (the person id of each
    row) its distinct persons."""
    if not len(frame):
        return np.zeros(0, dtype=np.int64)
    ids = class_ids(frame, qis)
    if persons is None:
        return np.bincount(ids)
    if len(persons) != len(frame):
        raise ParameterError(f"{len(persons):,} person ids for a table of {len(frame):,} rows")
    first = ~pd.DataFrame({"c": ids, "p": np.asarray(persons)}).duplicated().to_numpy()
    return np.bincount(ids[first])


def population_sizes(sample: pd.DataFrame, population: pd.DataFrame, qis: Sequence[str],
                     persons: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(f_j, F_j) for every class of `sample`: its size there and in `population` (which must hold the sample's
    people, e.g. the whole hospital table when a subset is released). Values compare as text. `persons`: f_j
    counts the sample's distinct persons (the population is one row per person)."""
    qis = list(qis)
    if persons is not None:
        sample = sample[qis].astype(str).assign(_person=np.asarray(persons)).drop_duplicates()
    s = sample[qis].astype(str).value_counts(dropna=False).rename("f").reset_index()
    p = population[qis].astype(str).value_counts(dropna=False).rename("F").reset_index()
    both = s.merge(p, on=qis, how="left")
    missing = both["F"].isna()
    if missing.any():
        raise ParameterError(f"{int(missing.sum()):,} combination(s) of {', '.join(qis)} in the table do not occur "
                             "in the population table; the population must contain the table's people")
    f, F = both["f"].to_numpy(dtype=np.int64), both["F"].to_numpy(dtype=np.int64)
    if (F < f).any():
        raise ParameterError("the population table has fewer records than the table for some combinations of "
                             f"{', '.join(qis)}; the population must contain the table's people")
    return f, F


# ---- attacker models ---------------------------------------------------------------------------------------
def attacker_risks(f: np.ndarray, F: np.ndarray | None = None,
                   threshold: float = 0.1) -> tuple[AttackerRisk, AttackerRisk, AttackerRisk]:
    """(prosecutor, journalist, marketer) from the classes' sizes in the table (f) and in the population (F; None:
    the table is its own population). `threshold`: the highest acceptable risk of one record."""
    f = np.asarray(f, dtype=float)
    F = f if F is None else np.asarray(F, dtype=float)
    if f.size == 0:
        zero = (AttackerRisk("prosecutor", 0.0, 0.0, 0.0), AttackerRisk("journalist", 0.0, 0.0, 0.0))
        return (*zero, AttackerRisk("marketer", None, None, 0.0))
    n, u = f.sum(), f.size
    prosecutor = AttackerRisk("prosecutor", float(f[1 / f > threshold].sum() / n), float(1 / f.min()), float(u / n))
    linked = float((f / F).sum() / n)
    journalist = AttackerRisk("journalist", float(f[1 / F > threshold].sum() / n), float(1 / F.min()),
                              max(float(u / F.sum()), linked))
    return prosecutor, journalist, AttackerRisk("marketer", None, None, linked)


def risk_histogram(f: np.ndarray, F: np.ndarray | None = None, bands: Sequence[float] = RISK_BANDS) -> pd.DataFrame:
    """Records per risk band (a record's risk 1/F, F = f without a population): for the results chart.
    Columns: band (text), low, high (risk, exclusive / inclusive), records, share of records."""
    f = np.asarray(f, dtype=float)
    risk = 1 / (f if F is None else np.asarray(F, dtype=float))
    edges = np.asarray(bands, dtype=float)
    which = np.clip(np.searchsorted(edges, risk, side="left") - 1, 0, len(edges) - 2)
    records = np.bincount(which, weights=f, minlength=len(edges) - 1)
    total = records.sum()
    labels = [f"{_pct(lo)}–{_pct(hi)}" for lo, hi in zip(edges[:-1], edges[1:])]
    return pd.DataFrame({"band": labels, "low": edges[:-1], "high": edges[1:], "records": records.astype(np.int64),
                         "share": records / total if total else records})


def _pct(x: float) -> str:
    return f"{100 * x:.3g} %"


# ---- population uniqueness ---------------------------------------------------------------------------------
def size_frequencies(f: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(k, c_k): each class size k present and the number of classes with it."""
    k, c = np.unique(np.asarray(f, dtype=np.int64), return_counts=True)
    return k, c.astype(float)


def _log_comb(a, b):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return special.gammaln(a + 1) - special.gammaln(b + 1) - special.gammaln(a - b + 1)


def zayatz_uniques(k: np.ndarray, c: np.ndarray, N: float) -> float:
    """Zayatz's estimate of the number of population uniques (see the module docstring)."""
    n = float((k * c).sum())
    u = c.sum()
    c1 = c[k == 1].sum()
    if c1 == 0:
        return 0.0
    # hypergeometric P(exactly one of k population records in a sample of n from N), vectorised over k
    ok = (N - k) >= (n - 1)
    log_h = np.full(k.shape, -np.inf)
    log_h[ok] = np.log(k[ok]) + _log_comb(N - k[ok], n - 1) - _log_comb(N, n)
    h = np.exp(log_h)
    denominator = (c / u * h).sum()
    if denominator <= 0:
        return float("nan")
    conditional = (c1 / u) * float(h[k == 1][0]) / denominator
    return float(c1 * conditional / (n / N))


def pitman_parameters(k: np.ndarray, c: np.ndarray) -> tuple[float, float]:
    """Maximum-likelihood (θ, α) of the Pitman sampling formula for size frequencies (k, c); NaNs if none."""
    n, u = float((k * c).sum()), float(c.sum())
    if u < 2 or n <= u:
        return float("nan"), float("nan")
    i = np.arange(1, int(u), dtype=float)
    big = k > 1
    kb, cb = k[big].astype(float), c[big]

    def loglik(t, a):
        return (np.log(t + i * a).sum() - (special.gammaln(t + n) - special.gammaln(t + 1))
                + (cb * (special.gammaln(kb - a) - special.gammaln(1 - a))).sum())

    def score(t, a):
        w = 1 / (t + i * a)
        g = np.array([w.sum() - (special.digamma(t + n) - special.digamma(t + 1)),
                      (i * w).sum() - (cb * (special.digamma(kb - a) - special.digamma(1 - a))).sum()])
        h = np.array([[-(w * w).sum() + special.polygamma(1, t + 1) - special.polygamma(1, t + n),
                       -(i * w * w).sum()],
                      [-(i * w * w).sum(),
                       -(i * i * w * w).sum() - (cb * (special.polygamma(1, 1 - a)
                                                        - special.polygamma(1, kb - a))).sum()]])
        return g, h

    def inside(t, a):
        return 0 < a < 1 and t > -a

    start = _hoshino_start(k, c, n, u)
    t, a = start if inside(*start) else (1.0, 0.5)
    best = loglik(t, a)
    for _ in range(200):
        g, h = score(t, a)
        if np.max(np.abs(g)) < 1e-9 * max(1.0, n):
            return float(t), float(a)
        try:
            step = -np.linalg.solve(h, g)
            if g @ step <= 0:  # not an ascent direction (likelihood not concave here): follow the gradient
                raise np.linalg.LinAlgError
        except np.linalg.LinAlgError:
            step = g / max(1.0, float(np.max(np.abs(g))))
        size = 1.0
        while size > 1e-12:
            t2, a2 = t + size * step[0], a + size * step[1]
            if inside(t2, a2):
                value = loglik(t2, a2)
                if value >= best - 1e-12 * abs(best):
                    break
            size /= 2
        else:
            break
        if abs(t2 - t) + abs(a2 - a) < 1e-13 * (1 + abs(t)):
            t, a = t2, a2
            break
        t, a, best = t2, a2, value
    g, _h = score(t, a)
    return (float(t), float(a)) if np.max(np.abs(g)) < 1e-6 * max(1.0, n) else (float("nan"), float("nan"))


def _hoshino_start(k, c, n, u) -> tuple[float, float]:
    """Moment estimates of (θ, α) from c_1 and c_2 (Hoshino 2001), the solver's starting point."""
    c1 = float(c[k == 1].sum())
    c2 = float(c[k == 2].sum()) or 1.0
    r = c1 * (c1 - 1) / c2
    denominator = 2 * c1 * u + c1 * r - n * r
    if denominator == 0:
        return float("nan"), float("nan")
    t = (n * u * r - c1 * (n - 1) * (2 * u + r)) / denominator
    a = (t * (c1 - n) + (n - 1) * c1) / (n * u)
    return t, a


def pitman_uniques(k: np.ndarray, c: np.ndarray, N: float) -> float:
    """Pitman's estimate of the number of population uniques: Γ(θ+1)/Γ(θ+α) · N^α (NaN when not in [0, N])."""
    if c[k == 1].sum() == 0:
        return 0.0
    t, a = pitman_parameters(k, c)
    if not (np.isfinite(t) and np.isfinite(a)) or a == 0:
        return float("nan")
    value = math.exp(special.gammaln(t + 1) - special.gammaln(t + a) + a * math.log(N))
    return value if 0 <= value <= N else float("nan")


def shlosser_classes(k: np.ndarray, c: np.ndarray, q: float) -> float:
    """Haas & Stokes' modified Shlosser estimate of the number of non-empty population classes."""
    u = c.sum()
    c1 = c[k == 1].sum()
    num1 = (k * q * q * (1 - q * q) ** (k - 1) * c).sum()
    den1 = ((1 - q) ** k * ((1 + q) ** k - 1) * c).sum()
    num2 = ((1 - q) ** k * c).sum()
    den2 = (k * q * (1 - q) ** (k - 1) * c).sum()
    if den1 <= 0 or den2 <= 0:
        return float(u)
    return float(u + c1 * (num1 / den1) * (num2 / den2) ** 2)


def snb_expected(alpha: float, beta: float, K: float, q: float) -> tuple[float, float]:
    """Expected numbers of sample classes of size 1 and 2 under the SNB model (see the module docstring)."""
    d = (1 - q) * (1 - beta)
    e1 = K * q * (beta / (1 - d)) ** alpha * (1 + alpha * d / (1 - d))
    e2 = K * q * q * alpha * (1 - beta) * beta ** alpha * (1 - d) ** -(alpha + 2) * (2 - (1 - alpha) * d) / 2
    return e1, e2


def snb_solve(c1: float, c2: float, K: float, q: float) -> tuple[float, float]:
    """(α, β) with E[c_1] = c1 and E[c_2] = c2 under the SNB model, or NaNs when there is no solution."""

    def equations(x):
        alpha, beta = math.exp(x[0]), special.expit(x[1])  # α > 0, 0 < β < 1 by construction
        e1, e2 = snb_expected(alpha, beta, K, q)
        return [e1 / c1 - 1, e2 / c2 - 1]

    for a0, b0 in ((1.0, 0.5), (0.1, 0.1), (5.0, 0.9), (0.5, 0.99), (10.0, 0.5)):
        with np.errstate(all="ignore"):
            sol = optimize.root(equations, [math.log(a0), special.logit(b0)], method="hybr")
            residual = max(abs(v) for v in equations(sol.x))
        if sol.success and residual < 1e-8:
            return math.exp(sol.x[0]), float(special.expit(sol.x[1]))
    return float("nan"), float("nan")


def snb_uniques(k: np.ndarray, c: np.ndarray, N: float) -> float:
    """SNB's estimate of the number of population uniques: K β^α with α, β solving E[c_1] = c_1, E[c_2] = c_2."""
    c1, c2 = c[k == 1].sum(), c[k == 2].sum()
    if c1 == 0:
        return 0.0
    q = float((k * c).sum()) / N
    if c2 == 0 or q >= 1:
        return float("nan")
    K = shlosser_classes(k, c, q)
    alpha, beta = snb_solve(c1, c2, K, q)
    if not np.isfinite(alpha):
        return float("nan")
    value = K * beta ** alpha
    return float(value) if 0 <= value <= N else float("nan")


def population_uniqueness(f: np.ndarray, *, population_size: float | None = None,
                          sampling_fraction: float | None = None) -> PopulationUniqueness:
    """Share of the population unique on the quasi-identifiers, by Zayatz, Pitman, SNB and Dankar's rule. Give
    the population size N (people the table was drawn from) or the sampling fraction n / N."""
    k, c = size_frequencies(f)
    n = float((k * c).sum())
    if population_size is None and sampling_fraction is None:
        raise ParameterError("give the population size or the sampling fraction")
    if population_size is None:
        if not 0 < sampling_fraction <= 1:
            raise ParameterError(f"the sampling fraction must be in (0, 1], got {sampling_fraction}")
        population_size = n / sampling_fraction
    N = float(population_size)
    if n == 0:
        raise ParameterError("the table has no rows")
    if N < n:
        raise ParameterError(f"the population ({N:,.0f}) cannot be smaller than the table ({n:,.0f} rows)")
    q = n / N
    c1 = c[k == 1].sum()
    if c1 == 0:
        values = {"zayatz": 0.0, "pitman": 0.0, "snb": 0.0}
        choice, dankar = "none (no record is unique in the table)", 0.0
    else:
        values = {"zayatz": zayatz_uniques(k, c, N), "pitman": pitman_uniques(k, c, N), "snb": snb_uniques(k, c, N)}
        choice, dankar = _dankar(values, q)
    share = {name: v / N for name, v in values.items()}
    return PopulationUniqueness(N, q, float(c1 / n), share["zayatz"], share["pitman"], share["snb"], dankar / N,
                                choice)


def _dankar(values: Mapping[str, float], q: float) -> tuple[str, float]:
    def ok(v):
        return np.isfinite(v) and v != 0
    if q <= 0.1:
        if ok(values["pitman"]):
            return "Pitman", values["pitman"]
        return "Zayatz", values["zayatz"]
    if ok(values["snb"]) and values["snb"] <= values["zayatz"]:
        return "SNB", values["snb"]
    return "Zayatz", values["zayatz"]


# ---- each column's part in the risk (per-attribute risk, as ARX users ask for it) --------------------------------
@dataclass(frozen=True)
class AttributeRisk:
    """One column's contribution to the risk of a table on a set of quasi-identifiers (shares of rows, 0..1).

    `unique_alone`: rows whose value of this column alone is theirs only; `unique_with`: rows unique on the set
    with this column; `unique_without`: rows unique on the set without it. `drop` = with − without is how much
    uniqueness the column adds: what leaving it out (or generalising it) would take away. `in_set`: the column is
    a quasi-identifier; otherwise it is a candidate (published unchanged) and "with" adds it to the set."""

    column: str
    distinct: int
    unique_alone: float
    unique_with: float
    unique_without: float
    in_set: bool = True

    @property
    def drop(self) -> float:
        return self.unique_with - self.unique_without


def unique_share(frame: pd.DataFrame, columns: Sequence[str]) -> float:
    """Share of the rows whose combination of `columns` no other row has (0 for no columns or no rows)."""
    if not len(frame) or not len(columns):
        return 0.0
    ids = class_ids(frame, columns)
    sizes = np.bincount(ids)
    return float((sizes[ids] == 1).mean())


def attribute_risks(frame: pd.DataFrame, qis: Sequence[str], candidates: Sequence[str] = ()) -> list[AttributeRisk]:
    """Each quasi-identifier's and each candidate's part in the risk of `frame` (see `AttributeRisk`), ordered by
    the uniqueness each adds, largest first. One grouping per column plus one for the set: vectorised."""
    qis = [q for q in qis if q in frame.columns]
    extra = [c for c in candidates if c in frame.columns and c not in qis]
    base = unique_share(frame, qis)
    out = []
    for column in qis + extra:
        inside = column in qis
        others = [q for q in qis if q != column]
        alone = unique_share(frame, [column])
        with_ = base if inside else unique_share(frame, qis + [column])
        without = unique_share(frame, others) if inside else base
        out.append(AttributeRisk(column, int(frame[column].nunique(dropna=False)), alone, with_, without, inside))
    return sorted(out, key=lambda a: (-a.drop, -a.unique_alone, a.column))


# ---- one call for the window and the record -----------------------------------------------------------------
def risk_report(frame: pd.DataFrame, qis: Sequence[str], *, threshold: float = 0.1,
                population: pd.DataFrame | None = None, population_size: float | None = None,
                sampling_fraction: float | None = None, persons: np.ndarray | None = None,
                person: str | None = None) -> RiskReport:
    """The risk of `frame` on `qis`: the three attacker models, the risk histogram and — when the population size
    or sampling fraction is known — population uniqueness. `population`: a table holding the frame's people with
    the same quasi-identifier columns (journalist / marketer against it). Use it on the input (raw values) and on
    a record-level release (its published labels) to compare before and after. `persons` (the person id of each
    row, from the column named `person`): every figure counts persons (module docstring)."""
    if not 0 < threshold <= 1:
        raise ParameterError(f"the risk threshold must be in (0, 1], got {threshold}")
    missing = [q for q in qis if q not in frame.columns]
    if missing:
        raise ParameterError(f"the table has no column(s) {', '.join(missing)}")
    if population is not None:
        f, F = population_sizes(frame, population, qis, persons)
    else:
        f, F = class_sizes(frame, qis, persons), None
    prosecutor, journalist, marketer = attacker_risks(f, F, threshold)
    pop = None
    if population_size is not None or sampling_fraction is not None:
        pop = population_uniqueness(f, population_size=population_size, sampling_fraction=sampling_fraction)
    n = float(np.sum(f))
    return RiskReport(int(f.sum()), int(f.size), threshold, prosecutor, journalist, marketer, pop,
                      risk_histogram(f, F), None if persons is None else (person or "person"),
                      float(np.sum(f == 1) / n) if n else 0.0)
