"""DP-PCA, DP-LDA and the paper's two record baselines as Mechanisms: parameters, checks, cost, release, figures.

All four publish a table in the original schema (numbers within their public bounds, categories from their public
lists; the PublicSchema claim lets the checker recount the categories on the written file) and read domains only
through the encoding (encoding.py), never from the records.

Neighbouring: DP-PCA and the record baselines publish one row per record, in order (the paper's "one-to-one
mapping"), so the number of records is public and their guarantee is for one record *replaced by another*, as in
the paper's proofs; DP-LDA publishes synthetic records from noisy statistics and holds for one record *added or
removed*, like the project's other mechanisms. The claim and the note say which (a typed `Neighbouring`).

Per person (a column marked Person): every mechanism first keeps at most c rows of each person, drawn by the noise
source and put in a random order (engine/mechanisms/contribution.py). DP-PCA and the record baselines publish their
number of rows, so they need c = 1 (one row per person: the number of persons is then what is public, and one
person replaced is one row replaced) — the *group privacy* statement with c = 1, no change to ε or the
sensitivity. DP-LDA *scales its sensitivity by c*: one person's c rows move the class sums, counts and Σxxᵀ by at
most c times one row's change, so its noise has scale c·Δ/ε.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Iterator

import numpy as np
import pandas as pd

from ppdp_gui.engine.claims import Neighbouring, PublicSchema
from ppdp_gui.engine.data.domains import category_set
from ppdp_gui.engine.data.schema import Dataset, Role
from ppdp_gui.engine.errors import ParameterError
from ppdp_gui.engine.mechanisms.base import ParamSpec, Problem, Progress, Release
from ppdp_gui.engine.mechanisms.contribution import (GROUP_PRIVACY, MAX_ROWS, SCALED_SENSITIVITY, DPMechanism,
                                                     bound_record, bound_warnings)
from ppdp_gui.engine.mechanisms.dp_pca import baselines, lda, pca
from ppdp_gui.engine.mechanisms.dp_pca import sensitivity as sens
from ppdp_gui.engine.mechanisms.dp_pca.encoding import (Encoding, category_codes, chosen_columns, clamp_warnings,
                                                        data_problems, domain_needs_of, plan_encoding)
from ppdp_gui.engine.mechanisms.dp_pca.weakness import lda_weakness
from ppdp_gui.engine.noise.sampler import exact_epsilon

REPLACED = Neighbouring.REPLACE_ONE  # one row (person) replaced by another; the number of rows is published
ADDED_OR_REMOVED = Neighbouring.ADD_REMOVE
NOISE_TEXT = "discrete Laplace (two-sided geometric) on a public grid, sampled exactly"

EPSILON = ParamSpec("epsilon", "Privacy budget ε", "float", default=1.0, low=0.01, high=10.0, log_scale=True,
                    help="Smaller ε: more privacy, more noise.")
COLUMNS = ParamSpec("columns", "Columns to publish", "columns", default=(),
                    help="The columns the released table holds; empty: every column that is not an identifier. "
                         "Each needs a public domain (bounds for numbers, a list of values for categories).")


def _eps(params) -> Fraction:
    return exact_epsilon(params["epsilon"])


def _column_problems(exc: ParameterError) -> list[Problem]:
    return [Problem(str(exc), param="columns", column=getattr(exc, "column", None))]


def _noisy_matrix_error(noisy: np.ndarray, x: np.ndarray) -> dict[str, float]:
    """Error of the noisy matrix itself, before it is mapped back into the public domains (the paper's Figure 2
    and Theorem 3 measure the noise this way, the domains "expanded to R"). Custodian record only."""
    from ppdp_gui.engine.metrics.component_analysis import reconstruction_error

    err = reconstruction_error(noisy, x)
    return {"F-norm (noisy matrix)": err["F-norm"], "MSE (noisy matrix)": err["MSE"]}


class _ComponentMechanism(DPMechanism):
    """What the four share: columns, encoding from public domains, checks, claims and the reconstruction error."""

    neighbouring = REPLACED
    per_person = GROUP_PRIVACY  # with c = 1 (contribution_problems refuses more for a replace-one mechanism)

    def _columns(self, data: Dataset, params: dict) -> list[str]:
        return chosen_columns(data, params)

    def encoding(self, data: Dataset, params: dict) -> Encoding:
        return plan_encoding(data, self._columns(data, params))

    def check(self, data: Dataset, params: dict[str, Any]) -> list[Problem]:
        cols = self._columns(data, params)
        if len(set(cols)) != len(cols):
            return [Problem("a column is chosen twice", param="columns")]
        ident = [c for c in cols if c in data.frame.columns and data.spec(c).role.never_released]
        if ident:
            return [Problem(f"{c!r} is an identifier: identifiers are never released", param="columns", column=c)
                    for c in ident]
        try:
            enc = self.encoding(data, params)
        except ParameterError as exc:
            return _column_problems(exc)
        if data.n_rows == 0:
            return [Problem("the table has no records")]
        return [Problem(msg, level=level, column=col) for level, col, msg in data_problems(data, enc)] \
            + self._extra_checks(data, params, enc) + self.contribution_problems(data, params)

    def _extra_checks(self, data: Dataset, params: dict, enc: Encoding) -> list[Problem]:
        return []

    def domain_needs(self, data: Dataset, params: dict[str, Any]) -> list:
        return domain_needs_of(data, self._columns(data, params))

    def _claims(self, data: Dataset, params: dict, columns: tuple[str, ...], labels: dict) -> tuple:
        """The declared DP claim (its unit read from `data`, the source table) and the public schema."""
        return (*self.declared_claims(data, params), PublicSchema(columns, labels))

    def _warnings(self, enc: Encoding, clamped: dict[str, int]) -> tuple[str, ...]:
        return clamp_warnings(enc, clamped)

    def _base_note(self, enc: Encoding, params: dict, data: Dataset) -> dict:
        return {"columns": list(enc.columns), "domains": enc.describe(), "encoded attributes": enc.width,
                "numeric attributes": enc.p1, "categorical attributes": enc.p2,
                **self.unit_note(data, params), "noise": NOISE_TEXT, "epsilon": str(_eps(params))}

    # -- figures for the custodian (against the true data: never in the note) -------------------------------
    def measures(self, release: Release, train: Dataset, test: Dataset | None) -> dict[str, float]:
        """Reconstruction error of the one-to-one release against the records it came from, in the encoded
        [0, 1] units the paper measures (Figure 2): Frobenius norm, mean squared error per entry, per record."""
        from ppdp_gui.engine.metrics.component_analysis import reconstruction_error

        enc = self.encoding(train, dict(release.params))
        frame = train.frame if release.rows_used is None else train.frame.iloc[release.rows_used]
        if len(release.table) != len(frame):
            return {}
        original = enc.encode(frame)[0]
        out = reconstruction_error(enc.reencode(release.table), original,
                                   categorical=[(b.start, b.stop) for b in enc.categorical_blocks()])
        out.update({k: float(v) for k, v in release.record.items() if k.endswith("(noisy matrix)")})
        return out


class DPPCA(_ComponentMechanism):
    name = "DP-PCA"
    summary = ("Differentially private PCA publishing (Jiang et al. 2013): a noisy covariance gives k principal "
               "components; every record is projected onto them with noise and mapped back to the original "
               "columns. One row per record, in order.")
    params = (
        EPSILON,
        ParamSpec("k", "Components k", "int", default=2, low=1, high=200,
                  help="How many principal components carry the data. Each one more adds noise to every record; "
                       "on Adult the error is smallest with k = 1 and grows with k (the paper's Figure 2)."),
        COLUMNS,
        MAX_ROWS,
    )
    cost_note = ("ε/2 for the noisy mean and covariance, ε/2 for the noisy projections; one row (one person's row) "
                 "replaced")

    def moment_sensitivity(self, p1: int, p2: int) -> Fraction:
        return sens.pca_moment_sensitivity(p1, p2)

    def projection_sensitivity(self, k: int, p1: int, p2: int, grid: Fraction) -> Fraction:
        return sens.projection_sensitivity(k, p1, p2, grid)

    def _extra_checks(self, data, params, enc):
        if params["k"] > enc.width:
            return [Problem(f"k = {params['k']} is more than the {enc.width} encoded attributes of the chosen "
                            "columns", param="k")]
        return []

    def moments(self, rng, x: np.ndarray, n: int, enc: Encoding, epsilon: Fraction) -> pca.NoisyMoments:
        """Step 1 with this mechanism's sensitivity: scale Δ/(ε/2)."""
        return pca.noisy_moments(rng, x, n, self.moment_sensitivity(enc.p1, enc.p2) / (epsilon / 2))

    def _run(self, data: Dataset, *, rng, **params: Any) -> Iterator[Progress | Release]:
        yield Progress(0.05, "encoding the columns on their public domains")
        enc = self.encoding(data, params)
        eps, k = _eps(params), int(params["k"])
        bounded, unit = self.bounded(data, params, rng)  # at most c rows per person, in a random order
        x, clamped = enc.encode(bounded.data.frame)
        n = x.shape[0]
        yield Progress(0.2, "noisy mean and covariance")
        mom = self.moments(rng, x, n, enc, eps)
        values, basis = pca.components(mom, k)
        yield Progress(0.45, f"projecting {n:,} records onto {k} noisy component(s)")
        proj = pca.noisy_projection(rng, x, mom.mean, basis, eps / 2, enc.p1, enc.p2,
                                    sensitivity=self.projection_sensitivity)
        yield Progress(0.75, "recovering the records in the original columns")
        noisy = pca.recover(proj.noisy, basis, mom.mean)
        raw_error = _noisy_matrix_error(noisy, x)  # for the custodian only
        del x  # nothing below reads the records
        table = enc.decode(noisy)
        cost = self.declared_cost(data, params)
        delta = self.moment_sensitivity(enc.p1, enc.p2)
        note = {**self._base_note(enc, params, data), "k": k,
                "epsilon moments": str(eps / 2), "epsilon projections": str(eps / 2),
                "sensitivity moments": str(delta),
                "sensitivity moments (paper's formula)": str(sens.paper_pca_sensitivity(enc.p1, enc.p2)),
                "noise scale moments": float(mom.scale), "grid moments": 2.0 ** -mom.grid_exponent,
                "sensitivity projections": float(proj.sensitivity), "noise scale projections": float(proj.scale),
                "grid projections": 2.0 ** -proj.grid_exponent,
                "noisy eigenvalues": [float(v) for v in values[:20]],
                "noisy variance share of the k components": pca.energy(values, k)}
        record = {"columns": list(enc.columns), "rows": n, "clamped values": clamped, **raw_error,
                  **bound_record(bounded)}
        yield Progress(1.0, "done")
        yield Release(mechanism=self.name, table=table, cost=cost, params=dict(params),
                      claims=self._claims(data, params, enc.columns, enc.labels), note=note, record=record,
                      warnings=self._warnings(enc, clamped) + bound_warnings(bounded, unit),
                      rows_used=bounded.kept)


class LaplaceRecords(_ComponentMechanism):
    name = "Laplace on records"
    summary = ("The paper's first baseline: every value of every record gets Laplace noise of scale "
               "(numbers + 2 × categories)/ε, then is mapped back to the original columns. One row per record.")
    params = (EPSILON, COLUMNS, MAX_ROWS)
    cost_note = "each record perturbed on its own (parallel composition); one row (one person's row) replaced"

    def sensitivity(self, p1: int, p2: int) -> Fraction:
        return sens.record_sensitivity(p1, p2)

    def _run(self, data: Dataset, *, rng, **params: Any) -> Iterator[Progress | Release]:
        yield Progress(0.05, "encoding the columns on their public domains")
        enc = self.encoding(data, params)
        eps = _eps(params)
        bounded, unit = self.bounded(data, params, rng)  # at most c rows per person, in a random order
        x, clamped = enc.encode(bounded.data.frame)
        delta = self.sensitivity(enc.p1, enc.p2)
        yield Progress(0.3, f"adding noise to {x.size:,} values")
        noisy, j = baselines.laplace_records(rng, x, delta / eps)
        raw_error = _noisy_matrix_error(noisy, x)
        del x
        table = enc.decode(noisy)
        cost = self.declared_cost(data, params)
        note = {**self._base_note(enc, params, data), "sensitivity": str(delta), "noise scale": float(delta / eps),
                "grid": 2.0 ** -j}
        yield Progress(1.0, "done")
        yield Release(mechanism=self.name, table=table, cost=cost, params=dict(params),
                      claims=self._claims(data, params, enc.columns, enc.labels), note=note,
                      record={"columns": list(enc.columns), "rows": len(table), "clamped values": clamped,
                              **raw_error, **bound_record(bounded)},
                      warnings=self._warnings(enc, clamped) + bound_warnings(bounded, unit),
                      rows_used=bounded.kept)


class ExponentialRecords(_ComponentMechanism):
    name = "Exponential on records"
    summary = ("The paper's second baseline: every record is replaced by a record of the public domain drawn by "
               "the exponential mechanism, closer records (in L1) being likelier. One row per record.")
    params = (EPSILON, COLUMNS, MAX_ROWS)
    cost_note = "one exponential-mechanism draw per record (parallel composition); one row (one person's row) replaced"

    def sensitivity(self, p1: int, p2: int) -> Fraction:
        return sens.record_sensitivity(p1, p2)

    def _run(self, data: Dataset, *, rng, **params: Any) -> Iterator[Progress | Release]:
        yield Progress(0.05, "encoding the columns on their public domains")
        enc = self.encoding(data, params)
        eps = _eps(params)
        bounded, unit = self.bounded(data, params, rng)  # at most c rows per person, in a random order
        x, clamped = enc.encode(bounded.data.frame)
        delta = self.sensitivity(enc.p1, enc.p2)
        yield Progress(0.3, f"drawing {len(x):,} records")
        drawn = baselines.exponential_records(rng, x, enc, eps, delta)
        raw_error = _noisy_matrix_error(drawn, x)
        del x
        table = enc.decode(drawn)
        cost = self.declared_cost(data, params)
        note = {**self._base_note(enc, params, data), "utility": "minus the L1 distance of the encoded records",
                "sensitivity": str(delta),
                "numeric grid steps": {b.column: baselines.numeric_steps(b) for b in enc.blocks
                                       if b.kind == "numeric"},
                "noise": "exponential mechanism, sampled exactly (uniform proposals accepted by discrete Laplace "
                         "draws)"}
        yield Progress(1.0, "done")
        yield Release(mechanism=self.name, table=table, cost=cost, params=dict(params),
                      claims=self._claims(data, params, enc.columns, enc.labels), note=note,
                      record={"columns": list(enc.columns), "rows": len(table), "clamped values": clamped,
                              **raw_error, **bound_record(bounded)},
                      warnings=self._warnings(enc, clamped) + bound_warnings(bounded, unit),
                      rows_used=bounded.kept)


class DPLDA(_ComponentMechanism):
    name = "DP-LDA"
    summary = ("Differentially private LDA publishing (Jiang et al. 2013): noisy class means and a noisy shared "
               "covariance, then synthetic records drawn so that their statistics match the noisy ones. Made for "
               "training classifiers of the class column.")
    neighbouring = ADDED_OR_REMOVED
    per_person = SCALED_SENSITIVITY
    params = (
        EPSILON,
        ParamSpec("class_column", "Class column", "column", default="", optional=True, roles=(Role.CLASS,),
                  column_kind="categorical",
                  help="The label the released data should predict; empty: the column whose role is Class."),
        COLUMNS,
        ParamSpec("records", "Synthetic records", "int", default=None, low=1, high=10_000_000, log_scale=True,
                  optional=True,
                  help="How many records to draw; empty: as many as the noisy count of records."),
        MAX_ROWS,
    )
    cost_note = ("noisy class sums, class counts and shared covariance; sensitivity × c per person (c rows each), "
                 "one row without a person column")

    def stats_sensitivity(self, p1: int, p2: int) -> Fraction:
        return sens.lda_sensitivity(p1, p2)

    def class_column(self, data: Dataset, params: dict) -> str:
        cls = params.get("class_column") or data.class_column
        if not cls:
            raise ParameterError("DP-LDA needs a class column: mark one column's role as Class or choose it")
        if cls not in data.frame.columns:
            raise ParameterError(f"Class column: no column named {cls!r}")
        return cls

    def _columns(self, data: Dataset, params: dict) -> list[str]:
        try:
            cls = self.class_column(data, params)
        except ParameterError:
            return chosen_columns(data, params)
        return chosen_columns(data, params, exclude=(cls,))

    def classes(self, data: Dataset, cls: str) -> tuple[str, ...]:
        found = category_set(data.spec(cls))
        if found is None:
            exc = ParameterError(f"the class column {cls!r} has no public list of classes: set its domain")
            exc.column = cls
            raise exc
        return tuple(str(v) for v in found.values)

    def check(self, data: Dataset, params: dict[str, Any]) -> list[Problem]:
        try:
            cls = self.class_column(data, params)
            if data.spec(cls).kind != "categorical":
                return [Problem(f"the class column {cls!r} must be categorical", param="class_column")]
            classes = self.classes(data, cls)
        except ParameterError as exc:
            return [Problem(str(exc), param="class_column", column=getattr(exc, "column", None))]
        problems = []
        if len(classes) < 2:
            problems.append(Problem(f"class column {cls!r} needs at least two public classes",
                                    param="class_column"))
        if (category_codes(data.frame[cls], classes) < 0).any():
            problems.append(Problem(f"class column {cls!r} has values outside its public list of classes; add "
                                    "them to its domain", param="class_column", column=cls))
        return problems + super().check(data, params)

    def _extra_checks(self, data: Dataset, params: dict, enc: Encoding) -> list[Problem]:
        """Weak shapes, from public quantities only (dp_pca/weakness.py): classes, attributes, ε."""
        try:
            n_classes = len(self.classes(data, self.class_column(data, params)))
        except ParameterError:
            return []
        msg = lda_weakness(enc.p1, enc.p2, n_classes, _eps(params))
        return [Problem(msg, level="warning", param="epsilon")] if msg else []

    def domain_needs(self, data: Dataset, params: dict[str, Any]) -> list:
        needs = super().domain_needs(data, params)
        try:
            cls = self.class_column(data, params)
        except ParameterError:
            return needs
        return needs + domain_needs_of(data, [cls])

    def statistics(self, rng, x: np.ndarray, y: np.ndarray, k: int, enc: Encoding,
                   epsilon: Fraction, max_rows: int = 1) -> lda.NoisyClassStats:
        """The noisy statistics with this mechanism's sensitivity, times c rows per person: scale c·Δ/ε."""
        return lda.noisy_class_stats(rng, x, y, k, max_rows * self.stats_sensitivity(enc.p1, enc.p2) / epsilon)

    def _run(self, data: Dataset, *, rng, **params: Any) -> Iterator[Progress | Release]:
        yield Progress(0.02, "encoding the columns on their public domains")
        cls = self.class_column(data, params)
        classes = self.classes(data, cls)
        enc = self.encoding(data, params)
        eps = _eps(params)
        bounded, unit = self.bounded(data, params, rng)  # at most c rows per person, in a random order
        x, clamped = enc.encode(bounded.data.frame)
        y = category_codes(bounded.data.frame[cls], classes)
        yield Progress(0.05, "noisy class statistics")
        stats = self.statistics(rng, x, y, len(classes), enc, eps, unit.max_rows)
        del x, y  # the sampling below reads only the noisy statistics
        n_records = int(params["records"]) if params.get("records") else max(1, int(np.maximum(stats.counts, 0)
                                                                                     .sum()))
        yield Progress(0.1, f"drawing {n_records:,} synthetic records")
        sx, sy = yield from _sample_with_progress(stats, enc, n_records, rng)
        table = enc.decode(sx)
        table[cls] = pd.Categorical.from_codes(sy, categories=list(classes))
        columns = enc.columns + (cls,)
        labels = {**enc.labels, cls: classes}
        cost = self.declared_cost(data, params)
        delta = unit.max_rows * self.stats_sensitivity(enc.p1, enc.p2)
        note = {**self._base_note(enc, params, data), "class column": cls, "classes": list(classes),
                "sensitivity": str(delta),
                "sensitivity (paper's formula, one record replaced)": str(sens.paper_lda_sensitivity(enc.p1,
                                                                                                     enc.p2)),
                "noise scale": float(stats.scale), "grid": 2.0 ** -stats.grid_exponent,
                "noisy class counts": {c: int(v) for c, v in zip(classes, stats.counts)},
                "synthetic records": n_records,
                "sampling": "the paper's greedy L1 matching of the noisy statistics, in parallel streams"}
        record = {"columns": list(enc.columns), "class column": cls, "rows": data.n_rows, "clamped values": clamped,
                  **bound_record(bounded)}
        yield Progress(1.0, "done")
        yield Release(mechanism=self.name, table=table[list(columns)], cost=cost, params=dict(params),
                      claims=self._claims(data, params, columns, labels), note=note, record=record,
                      warnings=self._warnings(enc, clamped) + bound_warnings(bounded, unit),
                      rows_used=bounded.kept)

    def measures(self, release: Release, train: Dataset, test: Dataset | None) -> dict[str, float]:
        """Classification by LDA and a decision tree trained on the synthetic records and tested on held-out
        records (else on the records themselves), and entropy / KL divergence against the records."""
        from ppdp_gui.engine.metrics.component_analysis import lda_release_measures

        params = dict(release.params)
        enc = self.encoding(train, params)
        cls = release.record["class column"]
        return lda_release_measures(release.table, train.frame, (test or train).frame, cls, enc)

    def reference_measures(self, train: Dataset, test: Dataset | None) -> dict[str, float]:
        """BA (each classifier on the raw training records), LA (majority class) and the records' own entropy."""
        from ppdp_gui.engine.metrics.component_analysis import lda_reference_measures

        cls = train.class_column
        if not cls:
            return {}
        try:
            enc = plan_encoding(train, chosen_columns(train, {}, exclude=(cls,)))
        except ParameterError:
            return {}
        return lda_reference_measures(train.frame, (test or train).frame, cls, enc)


def _sample_with_progress(stats, enc, n_records, rng):
    """Run the greedy sampler, relaying its progress into [0.1, 0.95] (closing this closes the sampler)."""
    gen = lda.greedy_steps(stats, enc, n_records, rng)
    try:
        while True:
            try:
                fraction = next(gen)
            except StopIteration as stop:
                return stop.value
            yield Progress(0.1 + 0.85 * fraction, "drawing synthetic records")
    finally:
        gen.close()


__all__ = ["DPPCA", "DPLDA", "LaplaceRecords", "ExponentialRecords", "REPLACED", "ADDED_OR_REMOVED"]
