"""Marginal synthesizer: an ε-DP synthetic table drawn from noisy low-order marginals (MST-style, McKenna,
Miklau & Sheldon 2021), in numpy and pure ε-DP.

1. Cells from public domains only (domain.py): numeric columns binned on their public bounds, categories from
   their public lists or taxonomies; a column whose domain only the data could give is refused (`domain_needs`).
2. Structure: with a class column, "tree around the class" measures (class, parent, child) tables along a
   spanning tree of the other columns (a tree-augmented naive Bayes model); "star around the class" measures
   (class, column) for every column (naive Bayes: no selection, no budget spent on it); "tree" is MST's own
   structure, pairs along a spanning tree. Trees are chosen privately (structure.py: exponential mechanism,
   score sensitivity 4) with SELECT_SHARE of ε.
3. Measurement: the K tables with discrete Laplace noise of scale K/ε_measure on every cell (model.py).
4. Estimation and sampling (model.py): a consistent tree model (non-negative least-squares projection of each
   row onto the model's count of its parents), then records drawn along the tree. Post-processing only.

Accounting: pure ε-DP, δ = 0, for one record added or removed — the exponential-mechanism rounds and the noisy
tables compose sequentially: ε = ε_select + ε_measure exactly (the note lists the shares). No zCDP conversion:
integer noise on counts needs none, and the ledger adds ε as for every other ε-DP release. Per person (a column
marked Person): at most c rows of each person are used (engine/mechanisms/contribution.py) and the whole run is
at ε/c per row (group privacy), so one person's rows together cost ε.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Iterator

import numpy as np
import pandas as pd

from ppdp_gui.engine.claims import PublicSchema
from ppdp_gui.engine.data.domains import DomainNeed
from ppdp_gui.engine.data.schema import Dataset, Role
from ppdp_gui.engine.errors import ParameterError
from ppdp_gui.engine.mechanisms.base import ParamSpec, Problem, Progress, Release, ReleaseShape
from ppdp_gui.engine.mechanisms.contribution import (GROUP_PRIVACY, MAX_ROWS, DPMechanism, bound_record,
                                                     bound_warnings)
from ppdp_gui.engine.mechanisms.marginals.domain import build_columns
from ppdp_gui.engine.mechanisms.marginals.model import Clique, estimate, first_marginal, sample, true_table
from ppdp_gui.engine.mechanisms.marginals.widen import NEVER, WHEN_NOISE_ALLOWS, WIDEN_SHARE, widen
from ppdp_gui.engine.mechanisms.marginals.structure import SENSITIVITY, orient, pair_scores, private_tree
from ppdp_gui.engine.noise.intervals import note_entry
from ppdp_gui.engine.noise.sampler import exact_epsilon

TAN, STAR, TREE = "tree around the class", "star around the class", "tree"
STRUCTURES = (TAN, STAR, TREE)
SELECT_SHARE = Fraction(1, 10)  # of ε for choosing the tree; the rest measures the tables
MAX_TABLE_CELLS = 2_000_000
TABLES = "noisy tables"


def tables_frame(measured, noisy, by_name) -> pd.DataFrame:
    """The measured tables in one long table: which table, the cell's labels joined by " | ", its noisy count."""
    parts = []
    for cols in measured:
        counts = noisy[cols]
        idx = np.unravel_index(np.arange(counts.size), counts.shape)
        labels = [np.asarray(by_name[c].axis.labels, dtype=object)[i] for c, i in zip(cols, idx)]
        cell = labels[0] if len(labels) == 1 else np.array([" | ".join(t) for t in zip(*labels)], dtype=object)
        parts.append(pd.DataFrame({"table": " × ".join(cols), "cell": cell, "noisy count": counts.reshape(-1)}))
    return pd.concat(parts, ignore_index=True)


def synth_columns(data: Dataset, params: dict[str, Any]) -> list[str]:
    """The chosen columns, else every column that may be released (never the identifiers or the person)."""
    chosen = list(params.get("columns") or ())
    if chosen:
        return chosen
    return [c.name for c in data.schema if not c.role.never_released]


def class_of(data: Dataset, params: dict[str, Any], columns: list[str]) -> str | None:
    cls = params.get("class_column") or data.class_column
    if params.get("structure") == TREE:
        return None
    if not cls:
        raise ParameterError(f"'{params.get('structure')}' needs a class column: mark one column's role as Class, "
                             "choose it, or choose the structure 'tree'")
    if cls not in columns:
        raise ParameterError(f"the class column {cls!r} is not among the columns to synthesise")
    return cls


def budget(epsilon, structure: str, n_columns: int) -> dict[str, Any]:
    """Exact shares of ε and the noise scale of every table (public: ε, structure, number of columns)."""
    eps = exact_epsilon(epsilon)
    select = eps * SELECT_SHARE if structure in (TAN, TREE) and n_columns > (3 if structure == TAN else 2) else 0
    tables = 2 * n_columns - 3 if structure == TAN else n_columns - 1
    measure = eps - select
    return {"epsilon": eps, "epsilon select": Fraction(select), "epsilon measure": measure,
            "tables": tables, "noise scale": Fraction(tables) / measure if tables else Fraction(0),
            "rounds": max((n_columns - (2 if structure == TAN else 1)), 0) if select else 0}


class MarginalSynthesizer(DPMechanism):
    name = "Marginal synthesizer"
    per_person = GROUP_PRIVACY  # with a person column: everything runs at ε/c per row
    cost_note = ("pure ε-DP (δ = 0): ε/10 chooses the tree of a 'tree' structure (exponential mechanism), the rest "
                 "noises the measured tables (discrete Laplace)")
    summary = ("Synthetic records drawn from noisy tables of two to four columns at a time (MST-style): the "
               "pairs to measure are chosen at random with a tenth of ε, each table gets integer Laplace noise.")
    params = (
        ParamSpec("epsilon", "Privacy budget ε", "float", default=1.0, low=0.001, high=10.0, log_scale=True,
                  help="Smaller ε: more privacy, noisier tables, less faithful synthetic records.",
                  formula="ε/10 picks the tree (exponential mechanism, score sensitivity 4, ε/10/(rounds) per "
                          "round); 9ε/10 noises the K tables, each cell + integer noise of scale K/(9ε/10)",
                  more_private="lower"),
        ParamSpec("columns", "Columns to synthesise", "columns", default=(),
                  help="Empty: every column that may be released (identifiers and the person column never are)."),
        ParamSpec("class_column", "Class column", "column", default="", optional=True, roles=(Role.CLASS,),
                  column_kind="categorical",
                  help="The label the synthetic records should predict well; empty: the column whose role is Class."),
        ParamSpec("structure", "Tables measured", "choice", default=TAN, choices=STRUCTURES,
                  help="'tree around the class': the class with two other columns at a time (best for "
                       "prediction); 'star around the class': the class with each column; 'tree': pairs of "
                       "columns (no class needed)."),
        ParamSpec("detail", "Tables of four columns", "choice", default=WHEN_NOISE_ALLOWS,
                  choices=(WHEN_NOISE_ALLOWS, NEVER),
                  help="With a tree around the class, a column's table also holds its parent's parent when the "
                       "noise is small beside the records (read from the noisy counts already measured: no extra "
                       "privacy cost)."),
        ParamSpec("bins", "Bins per numeric column", "int", default=20, low=2, high=1000,
                  help="Numbers are cut into this many equal ranges of their public bounds (whole numbers with "
                       "fewer values than this keep one cell per value)."),
        ParamSpec("records", "Records to draw", "int", default=0, low=0, high=50_000_000,
                  help="How many synthetic records to draw; 0: as many as the noisy total."),
        ParamSpec("publish_tables", "Also publish the noisy tables", "bool", default=False,
                  help="Export the measured noisy counts beside the records (no extra privacy cost: they are what "
                       "the records are drawn from), so a data user can check them against the error bars."),
        MAX_ROWS,
    )

    # -- plan ------------------------------------------------------------------------------------------------
    def check(self, data: Dataset, params: dict[str, Any]) -> list[Problem]:
        cols = synth_columns(data, params)
        if len(cols) < 2:
            return [Problem("choose at least two columns to synthesise", param="columns")]
        if len(set(cols)) != len(cols):
            return [Problem("a column is chosen twice", param="columns")]
        bad = [c for c in cols if data.spec(c).role.never_released]
        if bad:
            return [Problem(f"column {bad[0]!r} is an identifier or the person column: it is never released",
                            param="columns", column=bad[0])]
        try:
            cls = class_of(data, params, cols)
            columns = build_columns(data, cols, params["bins"])
        except ParameterError as exc:
            return [Problem(str(exc), param="columns", column=getattr(exc, "column", None))]
        sizes = {c.name: c.size for c in columns}
        biggest = max(sizes.values()) ** 2 * (sizes[cls] if cls and params["structure"] == TAN else 1)
        if biggest > MAX_TABLE_CELLS:
            return [Problem(f"a measured table could have {biggest:,} cells: use fewer bins or coarser taxonomies",
                            param="bins")]
        return self.contribution_problems(data, params)

    def domain_needs(self, data: Dataset, params: dict[str, Any]) -> list[DomainNeed]:
        """Every synthesised column's domain: bounds for numbers, the list of values for categories."""
        return [DomainNeed(c, "bounds" if data.spec(c).kind == "numeric" else "categories")
                for c in synth_columns(data, params) if c in data.frame.columns]

    def describe_release(self, data: Dataset, params: dict[str, Any]) -> ReleaseShape:
        cols = tuple(c for c in synth_columns(data, params) if c in data.frame.columns)
        return ReleaseShape(columns=cols, noisy=True, sentences=(
            "Every row is a synthetic record drawn from noisy tables of two to four columns at a time: the rows "
            "are not the people of your table, and only combinations of the measured tables are kept faithful.",
            "Numbers are drawn uniformly inside their range of the public bounds."))

    def count_noise_per_epsilon(self, data: Dataset, params: dict[str, Any]) -> Fraction | None:
        """Each measured table's counts: scale K/ε_measure = K/(share · ε) (the published noisy tables)."""
        params = self.resolve_params(**{k: v for k, v in params.items() if k != "epsilon"})
        split = budget(1, params["structure"], len(synth_columns(data, params)))
        return split["noise scale"] * self.unit(data, params).max_rows

    # -- run -------------------------------------------------------------------------------------------------
    def _run(self, data: Dataset, *, rng, **params: Any) -> Iterator[Progress | Release]:
        names = synth_columns(data, params)
        cls = class_of(data, params, names)
        structure = params["structure"]
        yield Progress(0.05, "coding the columns on their public domains")
        columns = build_columns(data, names, params["bins"])
        by_name = {c.name: c for c in columns}
        sizes = {c.name: c.size for c in columns}
        bounded, unit = self.bounded(data, params, rng)  # at most c rows per person (none without a person column)
        codes = {c.name: c.codes(bounded.data.frame[c.name]) for c in columns}
        split = budget(self.row_epsilon(params, unit), structure, len(names))  # ε/c per row: group privacy
        others = [c for c in names if c != cls]
        yield Progress(0.2, "choosing which tables to measure")
        if structure == STAR:
            cliques = [Clique((cls,), c) for c in others]
        elif structure == TAN:
            edges = [tuple(others)] if len(others) == 2 else []  # one possible tree: nothing to choose
            if split["rounds"]:
                scores = pair_scores(codes, sizes, others, codes[cls], sizes[cls])
                edges = private_tree(others, scores, split["epsilon select"], rng)
            tree = orient(others, edges)
            cliques = [Clique((cls,), others[0])] + [Clique((cls, p), c) for p, c in tree]
        else:
            edges = []
            if split["rounds"]:
                edges = private_tree(names, pair_scores(codes, sizes, names, None, 1), split["epsilon select"], rng)
            else:
                edges = [(names[0], names[1])]
            cliques = [Clique((p,), c) for p, c in orient(names, edges)]
        first = cls if cls else names[0]
        scale = split["noise scale"]
        noisy = {}

        def measure(cols):  # integer noise of scale K/ε_measure; a wrong scale is planted by wrapping rng
            table = true_table(codes, sizes, cols)
            noisy[cols] = table + rng.discrete_laplace(scale, size=table.shape)

        yield Progress(0.4, f"noisy counts of {split['tables']} tables")
        if structure == TAN:  # the (class, column) pairs first: the priors of the larger tables, and the total
            for c in others:
                measure((cls, c))
            total = first_marginal(cls, [Clique((cls,), c) for c in others],
                                   [noisy[(cls, c)] for c in others]).sum()
            cliques = cliques[:1] + widen(cliques[1:], tree, sizes, float(scale), total, params["detail"])
            measured = [(cls, c) for c in others] + [q.columns for q in cliques[1:]]
        else:
            measured = [q.columns for q in cliques]
        for cols in measured:
            if cols not in noisy:
                measure(cols)
        codes.clear()  # the coded rows are not needed again (the closure above keeps the dict)
        yield Progress(0.6, "fitting a consistent model")
        pairs = {c: noisy[(cls, c)] for c in others[1:]} if structure == TAN else {}  # others[0]: a clique
        model = estimate(first, cliques, [noisy[q.columns] for q in cliques], cls, float(scale), pairs)
        n = int(params["records"]) or int(round(model.total))
        yield Progress(0.75, f"drawing {n:,} records")
        drawn = sample(model, sizes, n, rng)
        table = pd.DataFrame({c: by_name[c].values(drawn[c], rng) for c in names})
        labels = {c.name: c.axis.labels for c in columns if not c.numeric}
        cost = self.declared_cost(data, params)
        claims = [*self.declared_claims(data, params), PublicSchema(tuple(names), labels)]
        note = {
            "columns": list(names), "class_column": cls or "", "structure": structure,
            "measured tables": [list(cols) for cols in measured],
            "cells": {c.name: list(c.axis.labels) for c in columns},
            "epsilon": str(split["epsilon"]), "epsilon select": str(split["epsilon select"]),
            "epsilon measure": str(split["epsilon measure"]), "selection rounds": split["rounds"],
            "selection score sensitivity": SENSITIVITY,
            "noise": "discrete Laplace (two-sided geometric), integer, sampled exactly",
            "noise scale": float(scale), "noise scale (exact)": str(scale),
            "noisy total": round(model.total), "records drawn": n,
            "four-column tables": (f"{params['detail']}: a (class, parent, child) table also holds the parent's "
                                   f"parent when its cells × the noise scale ≤ {WIDEN_SHARE:g} × the noisy total "
                                   "of the pair tables (post-processing of published counts, no budget)"
                                   if structure == TAN else "none"),
            "accounting": "pure ε-DP (δ = 0), sequential composition of the selection rounds and the tables",
            **self.unit_note(data, params),
        }
        extra = {}
        if params["publish_tables"]:
            extra[TABLES] = tables_frame(measured, noisy, by_name)
            note.update(note_entry(scale))  # the error bars of the published noisy counts
            claims.append(PublicSchema(("table", "cell", "noisy count"), table=TABLES))
        yield Progress(1.0, "done")
        yield Release(mechanism=self.name, table=table, cost=cost, params=dict(params), claims=tuple(claims),
                      note=note, extra_tables=extra, warnings=bound_warnings(bounded, unit),
                      record={"class_column": cls or "", "columns": list(names), **bound_record(bounded)})

    # -- figures for the custodian (computed from the records: never in the release note) ----------------------
    def measures(self, release: Release, train: Dataset, test: Dataset | None) -> dict[str, float]:
        """CA: a tree trained on the synthetic records, tested on the real test part (as DiffGen's CA)."""
        cls = release.record.get("class_column")
        if test is None or not cls:
            return {}
        from ppdp_gui.engine.metrics.classification import classification_accuracy
        feats = [c for c in release.record["columns"] if c != cls]
        synth = release.table.copy()
        for c in feats:  # categories as text on both sides, numbers as numbers
            if not pd.api.types.is_numeric_dtype(synth[c]):
                synth[c] = synth[c].astype(str)
        return {"CA %": 100.0 * classification_accuracy(synth, test.frame, cls, features=feats)}

    def reference_measures(self, train: Dataset, test: Dataset | None) -> dict[str, float]:
        cls = train.class_column
        if test is None or not cls:
            return {}
        from ppdp_gui.engine.metrics.classification import baseline_accuracy, lower_bound_accuracy
        return {"BA %": 100.0 * baseline_accuracy(train.frame, test.frame, cls),
                "LA %": 100.0 * lower_bound_accuracy(train.frame, test.frame, cls)}
