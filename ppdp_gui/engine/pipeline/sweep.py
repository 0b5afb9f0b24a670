"""Sweeps: the custodian's simulation of a mechanism over a grid of parameters × repeats.

`simulate` chooses what the sweep reads (pipeline/proxy.py): a DP copy of the table (its ε reserved in the ledger
before it is drawn; afterwards only the copy is read, so the advice costs that ε and nothing more), a public table
of the same columns, or the custodian's own table (its advice is then an unaccounted release, and says so). The
sweep itself publishes nothing, so it charges nothing more; the figures (mechanism.measures, e.g. error per
cell or classification accuracy on a held-out part, and the rows the table would have when that varies) show what
each setting would cost in utility before the one real, charged release. A seed makes a sweep reproducible; without one each run draws fresh OS entropy. Domains a DP
mechanism needs and the custodian has not stated are read from the data here (a local simulation publishes
nothing); the real release still refuses them.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from typing import Any, Iterator

import numpy as np
import pandas as pd

from ppdp_gui.engine.data.schema import Dataset
from ppdp_gui.engine.errors import ParameterError
from ppdp_gui.engine.mechanisms.base import Mechanism, Progress, relay_progress
from ppdp_gui.engine.noise import NoiseSource
from ppdp_gui.engine.data.domains import fill_from_data
from ppdp_gui.engine.pipeline.plan import resolve_mechanism
from ppdp_gui.engine.pipeline.proxy import (BASES, DP_COPY, OWN, PROXY_EPSILON, PUBLIC, dp_copy, own_table,
                                            public_copy)
from ppdp_gui.engine.pipeline.release import class_sizes, person_ids


def release_groups(data: Dataset, release) -> dict[str, float]:
    """The group and risk figures of one simulated release, from the same source as a real release's."""
    from ppdp_gui.engine.metrics.risk import group_figures
    ids = person_ids(data, release)
    return group_figures(class_sizes(release, ids), persons=bool(ids))


MIN_COPY_ROWS = 20  # a DP copy with fewer rows cannot be split and simulated on
ROWS_RELEASED = "rows released"  # measured on every run: how large the table would be (counts vary with h, ε)


def validate_or_raise(mech: Mechanism, data: Dataset, params: dict) -> list[str]:
    """The mechanism's checks; errors become one ParameterError, warnings are returned."""
    problems = mech.validate(data, **params)
    errors = [p.message for p in problems if p.level == "error"]
    if errors:
        raise ParameterError(f"{mech.name}: " + "; ".join(errors))
    return [p.message for p in problems if p.level == "warning"]


@dataclass
class SweepResult:
    """One row per grid point × repeat (params, "repeat", "seconds", measures) and the reference figures."""

    mechanism: str
    param_names: list[str]
    rows: pd.DataFrame
    reference: dict[str, float] = field(default_factory=dict)
    n_train: int = 0
    n_test: int = 0
    #: which table the simulation ran on (`table_identity`): advice from it applies to that table only
    table: str = ""
    #: what the simulation read (engine/pipeline/proxy.py: a DP copy, a public table, or the private table itself)
    #: and what that cost; None: the private table (the older calling style)
    basis: Any = None
    # summary() worked out once (the window's worker does it, so the window only draws it), with the shape it was
    # worked out from: another parameter list, other columns or another number of rows work it out again (the
    # rows of a sweep are not edited in place)
    _summary: tuple | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def measure_names(self) -> list[str]:
        skip = set(self.param_names) | {"repeat", "seconds"}
        return [c for c in self.rows.columns if c not in skip]

    def summary(self) -> pd.DataFrame:
        """Mean and std of every measure per grid point (parameters in the index, (measure, stat) columns)."""
        of = (tuple(self.param_names), tuple(self.rows.columns), len(self.rows))
        if self._summary is not None and self._summary[0] == of:
            return self._summary[1]
        measures = self.measure_names
        if not self.param_names:
            stats = self.rows[measures].agg(["mean", "std"])
            summary = pd.DataFrame({(m, s): [stats.loc[s, m]] for m in measures for s in ("mean", "std")})
        else:
            summary = self.rows.groupby(self.param_names, sort=True)[measures].agg(["mean", "std"])
        self._summary = (of, summary)
        return summary


def table_identity(data: Dataset) -> str:
    """A name for the table a simulation ran on: its file's hash (the same file opened again is the same table),
    else its path, else its shape and columns."""
    src = data.source
    if src.sha256:
        return f"sha256:{src.sha256}"
    if src.path:
        return f"path:{src.path}"
    return f"table:{data.n_rows}:" + ",".join(map(str, data.frame.columns))


def split_holdout(data: Dataset, holdout: float, rng: NoiseSource) -> tuple[Dataset, Dataset | None]:
    """Random train/test split, stratified by the class column when there is one; `holdout` = test share."""
    if not holdout:
        return data, None
    if not 0 < holdout < 1:
        raise ParameterError(f"the held-out share must be between 0 and 1, got {holdout}")
    n = data.n_rows
    perm = np.asarray(rng.permutation(n))
    cls = data.class_column
    strata = (pd.Categorical(data.frame[cls].astype(str)).codes[perm] if cls else np.zeros(n, dtype=np.int64))
    rank = pd.Series(strata).groupby(strata).cumcount().to_numpy()  # position within its class, random order
    sizes = np.bincount(strata)
    is_test = rank < np.round(holdout * sizes[strata])
    test_idx, train_idx = np.sort(perm[is_test]), np.sort(perm[~is_test])
    if len(train_idx) == 0 or len(test_idx) == 0:
        raise ParameterError(f"{n} rows are too few to hold out {holdout:.0%} for testing")
    frame = data.frame
    return (data.with_frame(frame.iloc[train_idx].reset_index(drop=True)),
            data.with_frame(frame.iloc[test_idx].reset_index(drop=True)))


def grid_points(mech: Mechanism, grid: dict[str, list]) -> tuple[list[str], list[dict[str, Any]]]:
    """Every combination of the grid values, coerced by the parameters' specs (unknown names are an error)."""
    names = list(grid)
    values = []
    for name in names:
        spec = mech.param(name)
        vals = [spec.coerce(v) for v in grid[name]]
        if not vals:
            raise ParameterError(f"the sweep of {spec.label} has no values")
        values.append(vals)
    return names, [dict(zip(names, combo)) for combo in itertools.product(*values)]


def _run_seed(seed: int, index: int) -> int:
    return int(np.random.SeedSequence([int(seed), index]).generate_state(1, dtype=np.uint64)[0])


def simulate(mechanism: str | Mechanism, data: Dataset, base_params: dict[str, Any], grid: dict[str, list], *,
             on: str = OWN, ledger=None, proxy_epsilon=PROXY_EPSILON, public: Dataset | None = None,
             repeats: int = 3, holdout: float = 1 / 3, seed: int | None = None) -> Iterator[Progress | SweepResult]:
    """A sweep on what `on` names (proxy.py): DP_COPY first releases a synthetic copy of `data` under
    `proxy_epsilon`, charged to `ledger`, and then reads only the copy; PUBLIC reads `public`; OWN reads `data`.
    The result's `basis` says which and what it cost; its `table` is still `data`'s (advice applies to it)."""
    if on not in BASES:
        raise ParameterError(f"a simulation runs on one of {', '.join(BASES)}, not {on!r}")
    identity = table_identity(data)  # from the file's hash or name, not from the values
    if on == DP_COPY:
        copy = None
        # never the simulation's seed: a copy drawn from a known seed would not be private (tests fix the copy's
        # noise with PPDP_TEST_SEED, as for every release)
        for item in dp_copy(data, proxy_epsilon, ledger=ledger):
            if isinstance(item, Progress):
                yield Progress(0.2 * item.fraction, item.message)
            else:
                copy, basis = item
        data = None  # from here on only the copy is read  # noqa: F841 - said for the reader
        if copy.n_rows < MIN_COPY_ROWS:
            raise ParameterError(
                f"the DP copy came out with {copy.n_rows} rows (its ε = {float(basis.epsilon):g} is spent and stays "
                "in the ledger): too few to simulate on. Choose a larger 'ε of the copy' (ppdp: --proxy-epsilon), or "
                "a public table of the same columns.")
        sim, span = copy, 0.2
    elif on == PUBLIC:
        if public is None:
            raise ParameterError("give the public table to simulate on (same columns as yours)")
        sim, basis = public_copy(data, public)
        span = 0.0
    else:
        sim, basis, span = data, own_table(), 0.0
    result = None
    for item in run_sweep(mechanism, sim, base_params, grid, repeats=repeats, holdout=holdout, seed=seed):
        if isinstance(item, Progress):
            yield Progress(span + (1 - span) * item.fraction, item.message)
        else:
            result = item
    result.table, result.basis = identity, basis
    yield result


def run_sweep(mechanism: str | Mechanism, data: Dataset, base_params: dict[str, Any], grid: dict[str, list], *,
              repeats: int = 3, holdout: float = 1 / 3, seed: int | None = None
              ) -> Iterator[Progress | SweepResult]:
    """Yield Progress, then a SweepResult. Every grid point is validated before the first run."""
    mech = resolve_mechanism(mechanism)
    if int(repeats) < 1:
        raise ParameterError("repeats must be at least 1")
    names, points = grid_points(mech, grid)
    # a simulation on the custodian's own data, never published: domains the data must supply are read from it
    data, _caveats = fill_from_data(data, mech.domain_needs(data, mech.resolve_params(**base_params)))
    train, test = split_holdout(data, holdout, NoiseSource(seed))
    for point in points:
        validate_or_raise(mech, train, {**base_params, **point})
    yield Progress(0.0, "reference figures")
    reference = mech.reference_measures(train, test)
    total, rows = len(points) * int(repeats), []
    for i, (point, rep) in enumerate(itertools.product(points, range(int(repeats)))):
        label = ", ".join(f"{k}={v}" for k, v in point.items()) or "base parameters"
        rng = NoiseSource(_run_seed(seed, i)) if seed is not None else NoiseSource()
        params = mech.resolve_params(**{**base_params, **point})
        started = time.perf_counter()
        release = yield from relay_progress(mech.run(train, rng=rng, **params), i / total, (i + 0.9) / total,
                                            f"{label} (run {rep + 1}): ")
        seconds = time.perf_counter() - started
        measures = {} if release is None else {**mech.measures(release, train, test), **release_groups(train, release)}
        size = {} if release is None else {ROWS_RELEASED: float(len(release.table))}
        rows.append({**point, "repeat": rep, "seconds": seconds, **measures, **size})
        yield Progress((i + 1) / total, f"{label} (run {rep + 1}) done")
    frame = pd.DataFrame(rows)
    if ROWS_RELEASED in frame.columns and frame[ROWS_RELEASED].nunique(dropna=False) <= 1:
        frame = frame.drop(columns=ROWS_RELEASED)  # one row per person whatever the parameter: says nothing
    result = SweepResult(mech.name, names, frame, dict(reference), train.n_rows,
                         0 if test is None else test.n_rows, table_identity(data))
    yield result
