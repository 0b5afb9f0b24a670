"""Global recoding (full-domain generalisation) with row suppression: the release ARX makes by default.

Every quasi-identifier is generalised to one level of its taxonomy for all rows (age in 5-year bands, ZIP to three
digits …) and the rows of classes that still fail the privacy models are suppressed, up to a limit. The levels are
the optimum of the chosen quality model over the whole lattice of level vectors (search.py), found exactly with
pruning up to 100,000 nodes and by a documented heuristic above that. Privacy models combine: k-anonymity,
l-diversity (distinct, entropy, recursive (c, l)), t-closeness (equal, ordered or hierarchical distance) and
highest / average re-identification risk (models.py); each becomes a typed claim the checker recounts on the file.

Suppressed rows stay in the table, every quasi-identifier replaced by '*' (ARX's convention): such a row says
nothing about its quasi-identifiers and so matches everyone; its other columns keep the table's totals right. The
`Suppression` claim declares the marker; the checker leaves those rows out of the other recounts and checks their
share. Rows are returned grouped by class (suppressed rows last), in random order inside a class.

The release's record carries the lattice the search visited (`record["lattice"]`): nodes, levels, state, score,
suppressed rows; `preview_candidate` recomputes any node's release for the window's Search tab.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Iterator

import numpy as np
import pandas as pd

from ppdp_gui.engine.claims import KAnonymity, LDiversity, RiskBound, Suppression, TCloseness
from ppdp_gui.engine.bigdata.large_dataset import distinct_typed, has_missing, is_large
from ppdp_gui.engine.data.missing import numeric_blanks_fix
from ppdp_gui.engine.data.qi_coding import blank_cells_ok, taxonomy_values
from ppdp_gui.engine.data.schema import MISSING_LABEL, Dataset, Role
from ppdp_gui.engine.mechanisms.kanon.common import (blanks_problem, flat_problem, passed_through, person_problems,
                                                    unit_note, unit_sentence)
from ppdp_gui.engine.errors import MechanismError, ParameterError, TaxonomyError
from ppdp_gui.engine.mechanisms.base import (ParamSpec, PrivacyCost, Problem, Progress, Release,
                                             ReleaseShape)
from ppdp_gui.engine.mechanisms.kanon.family import KAnonMechanism
from ppdp_gui.engine.mechanisms.kanon.lattice import MAX_EXACT_NODES, Encoded, Lattice, encode, taxonomy_for
from ppdp_gui.engine.mechanisms.kanon.models import DISTANCES, DIVERSITIES, PrivacyModels, SensitiveDistance
from ppdp_gui.engine.mechanisms.kanon.quality import AGGREGATES, QUALITY_MODELS, Quality, aggregate, discernibility
from ppdp_gui.engine.mechanisms.kanon.search import Evaluator, NodeResult, SearchResult, search
from ppdp_gui.engine.metrics.risk import GROUPS, group_figures

MARKER = "*"


def lattice_problems(data: Dataset, k: int) -> tuple[list[Problem], int | None]:
    """Problems of the quasi-identifiers for full-domain generalisation (each needs a taxonomy that covers its
    values; categoricals without one get a flat tree) and the lattice's size (None if a QI has no taxonomy)."""
    problems: list[Problem] = []
    qis = data.quasi_identifiers
    if not qis:
        return [Problem("mark at least one column as a quasi-identifier (the columns an attacker could link on)")], None
    if data.n_rows < k:
        problems.append(Problem(f"the table has {data.n_rows} rows, fewer than k = {k}", param="k"))
    problems += person_problems(data, k)
    heights = []
    for name in qis:
        col = data.frame[name]
        blanks = has_missing(data, name)
        if blanks and not blank_cells_ok(data, name):  # a large table's number cells are SQL values
            problems.append(Problem(f"quasi-identifier {name!r} has missing values (empty number cells). "
                                    + numeric_blanks_fix(name) + ".", column=name))
            continue
        tax = taxonomy_for(data, name)
        if tax is None:
            problems.append(Problem(f"the number column {name!r} needs a taxonomy: build intervals in the "
                                    "Taxonomies step (“Numeric intervals”), or give an ARX hierarchy file (ppdp: "
                                    f"--taxonomy {name}=FILE.csv); Mondrian needs none"
                                    + ("; its empty cells are then published as “(missing)”" if blanks else ""),
                                    column=name))
            continue
        if blanks:  # "(missing)" under the root of its tree (qi_coding.taxonomy_with_blanks): k persons, or hidden
            problems.append(blanks_problem(name, True, None))
            col = taxonomy_values(data, name)
        flat = flat_problem(data, name)
        if flat is not None:
            problems.append(flat)
        try:
            tax.node_codes(distinct_typed(data, name) if is_large(data) else col)
        except TaxonomyError as exc:
            problems.append(Problem(str(exc), column=name))
            continue
        heights.append(tax.height)
    return problems, (Lattice(tuple(heights)).size if len(heights) == len(qis) else None)


def _models(params: dict[str, Any]) -> PrivacyModels:
    return PrivacyModels(k=int(params["k"]), l=int(params["l"] or 0), diversity=params["diversity"],
                         c=float(params["c"]), t=float(params["t"] or 0.0), distance=params["distance"],
                         max_risk=float(params["max_risk"] or 0.0) / 100, avg_risk=float(params["avg_risk"] or 0.0) / 100,
                         limit=float(params["suppression"]) / 100)


def _sensitive(data: Dataset, params: dict[str, Any]) -> str | None:
    if not (int(params.get("l") or 0) > 1 or float(params.get("t") or 0) > 0):
        return None
    if params.get("sensitive"):
        return params["sensitive"]
    sens = data.sensitive_columns
    return sens[0] if len(sens) == 1 else None


def _distance(data: Dataset, sens: str, enc: Encoded, distance: str) -> SensitiveDistance:
    values = enc.sensitive_values
    if enc.person is not None:  # each (person, value) once
        from ppdp_gui.engine.mechanisms.kanon.models import first_person_values
        first, weight = first_person_values(np.zeros(enc.n_tuples, dtype=np.int64), enc.sensitive, enc.n_sensitive,
                                            enc.person, getattr(enc, "person_weight", None))
        whole = np.bincount(enc.sensitive[first], weights=weight, minlength=enc.n_sensitive).astype(float)
    else:
        whole = np.bincount(enc.sensitive, weights=enc.count, minlength=enc.n_sensitive)
    spec = data.spec(sens)
    order = spec.taxonomy.leaf_values() if (distance == "ordered" and spec.kind != "numeric"
                                            and spec.taxonomy is not None) else None
    return SensitiveDistance(distance, values, whole, numeric=spec.kind == "numeric", order=order,
                             taxonomy=spec.taxonomy)


class GlobalRecoding(KAnonMechanism):
    name = "Global recoding"
    large_tables = True  # the lattice needs only the group-size histogram (kanon/globalrec_sql.py)
    summary = ("Generalises every quasi-identifier to one level of its taxonomy for all rows (e.g. age in 5-year "
               "bands) and suppresses the few rows that still stand out; the levels are the best the chosen "
               "quality model allows (optimal search over all level combinations).")
    params = (
        ParamSpec("k", "k (smallest group size)", "int", default=10, low=1, high=1000,
                  help="Every published combination of quasi-identifier values is shared by at least k rows — of k "
                       "different persons when the table has a Person column (1 = no group size requirement: only "
                       "the other models)."),
        ParamSpec("suppression", "Suppression limit (% of rows)", "float", default=5.0, low=0.0, high=100.0,
                  help="Rows of groups that still fail are suppressed (their quasi-identifiers shown as '*'), at "
                       "most this share of the table. 0 = generalise until every row passes."),
        ParamSpec("quality", "Quality model", "choice", default="Loss", choices=QUALITY_MODELS,
                  help="What the optimum minimises. Loss: how much of each hierarchy a value covers (ARX's "
                       "default); Precision: levels climbed; Non-uniform entropy: information lost per value; "
                       "Discernibility: sum of squared group sizes."),
        ParamSpec("aggregate", "Combine the quasi-identifiers", "choice", default=AGGREGATES[0], choices=AGGREGATES,
                  help="How per-column loss becomes one score: ARX's geometric form or the plain mean."),
        ParamSpec("l", "l (sensitive values per group, 0 = off)", "int", default=0, low=0, high=100, special=(0, "off"),
                  help="Also require l well-represented sensitive values in every group (l-diversity)."),
        ParamSpec("diversity", "l-diversity kind", "choice", default="distinct", choices=DIVERSITIES,
                  help="distinct: at least l values; entropy: entropy at least log(l); recursive: the most frequent "
                       "value is rarer than c times the l-th and rarer values together."),
        ParamSpec("c", "c of recursive (c, l)-diversity", "float", default=3.0, low=0.01, high=100.0,
                  help="Only for recursive l-diversity: smaller c is stricter."),
        ParamSpec("t", "t (t-closeness, 0 = off)", "float", default=0.0, low=0.0, high=1.0, special=(0, "off"),
                  help="Each group's distribution of the sensitive column must be within t of the whole table's "
                       "(earth mover's distance)."),
        ParamSpec("distance", "t-closeness distance", "choice", default="equal", choices=DISTANCES,
                  help="equal: all values equally far apart; ordered: numbers (or a taxonomy's order) by rank; "
                       "hierarchical: by the sensitive column's taxonomy."),
        ParamSpec("sensitive", "Sensitive column", "column", default=None, roles=(Role.SENSITIVE,), optional=True,
                  help="The column l-diversity and t-closeness protect (needed when the data has several)."),
        ParamSpec("max_risk", "Highest re-identification risk (%, 0 = off)", "float", default=0.0, low=0.0,
                  special=(0, "off"),
                  high=100.0, help="No released row may be re-identified with a probability above this "
                                   "(prosecutor model: 1 / its group's size)."),
        ParamSpec("avg_risk", "Average re-identification risk (%, 0 = off)", "float", default=0.0, low=0.0,
                  special=(0, "off"),
                  high=100.0, help="The mean risk over released rows (groups / rows) at most this; the smallest "
                                   "groups are suppressed first when needed."),
        ParamSpec("time_limit", "Time limit for very large lattices (s)", "float", default=60.0, low=1.0,
                  high=3600.0, help=f"Lattices above {MAX_EXACT_NODES:,} level combinations are searched by a "
                                    "heuristic for at most this long; its result is not proven optimal."),
    )

    # -- before a run ----------------------------------------------------------------------------------------
    def check(self, data: Dataset, params: dict[str, Any]) -> list[Problem]:
        problems, size = lattice_problems(data, params["k"])
        if size is not None and size > MAX_EXACT_NODES:
            problems.append(Problem(f"{size:,} level combinations: more than {MAX_EXACT_NODES:,}, so a heuristic "
                                    f"searches for up to {params['time_limit']:g} s and the result is not "
                                    "proven optimal", level="warning"))
        return problems + self._model_problems(data, params)

    def _model_problems(self, data: Dataset, params: dict[str, Any]) -> list[Problem]:
        problems = []
        if not (params["l"] > 1 or params["t"] > 0):
            if params["k"] < 2 and not params["max_risk"] and not params["avg_risk"]:
                problems.append(Problem("choose at least one privacy model: k of 2 or more, l, t or a risk "
                                        "threshold", param="k"))
            return problems
        sens = _sensitive(data, params)
        if sens is None:
            return [Problem("choose the sensitive column for l-diversity / t-closeness", param="sensitive")]
        if sens in data.quasi_identifiers:
            return [Problem(f"{sens!r} is a quasi-identifier; it cannot also be the sensitive column",
                            param="sensitive")]
        if has_missing(data, sens):
            problems.append(Problem(f"the sensitive column {sens!r} has missing values", column=sens))
        spec = data.spec(sens)
        if params["t"] > 0 and params["distance"] == "hierarchical":
            if spec.taxonomy is None:
                problems.append(Problem(f"the hierarchical distance needs a taxonomy for {sens!r}", column=sens,
                                        param="distance"))
            else:
                try:
                    spec.taxonomy.node_codes(data.frame[sens])
                except TaxonomyError as exc:
                    problems.append(Problem(str(exc), column=sens))
        if params["t"] > 0 and params["distance"] == "ordered" and spec.kind != "numeric":
            tax = spec.taxonomy
            if tax is None or not set(data.frame[sens].astype(str)) <= set(tax.leaf_values()):
                problems.append(Problem(f"the ordered distance needs numbers or a taxonomy listing every value of "
                                        f"{sens!r} in order", column=sens, param="distance"))
        return problems

    def published_columns(self, data: Dataset, params: dict[str, Any]) -> list[str]:
        """The columns published as they are (the identifying-column check looks at these)."""
        return passed_through(data)

    def describe_release(self, data: Dataset, params: dict[str, Any]) -> ReleaseShape:
        return ReleaseShape(sentences=(self.summary, unit_sentence(data, params["k"])))

    def cost(self, params: dict[str, Any]) -> PrivacyCost:
        p = params
        parts = []
        if p["l"] > 1:
            parts.append(f"{p['diversity']} l-diversity")
        if p["t"] > 0:
            parts.append(f"t = {p['t']:g}")
        if p["suppression"] > 0:
            parts.append(f"≤ {p['suppression']:g} % suppressed")
        return PrivacyCost(k=p["k"] if p["k"] > 1 else None, l=p["l"] if p["l"] > 1 else None, note=", ".join(parts))

    def claims_for(self, data: Dataset, params: dict[str, Any]) -> tuple:
        models = _models(params)
        sens = _sensitive(data, params) if models.needs_sensitive else None
        return tuple(_claims(data, params, models, list(data.quasi_identifiers), sens, data.person_column))

    # -- the run ---------------------------------------------------------------------------------------------
    def _prepare(self, data: Dataset, params: dict[str, Any]) -> tuple[Encoded, Evaluator, str | None]:
        models = _models(params)
        sens = _sensitive(data, params) if models.needs_sensitive else None
        if is_large(data):  # the group-size histogram by one SQL GROUP BY (kanon/globalrec_sql.py)
            from ppdp_gui.engine.mechanisms.kanon.globalrec_sql import encode_large
            enc = encode_large(data, data.quasi_identifiers, sens)
        else:
            enc = encode(data, data.quasi_identifiers, sens)
        distance = _distance(data, sens, enc, models.distance) if models.uses_t and sens else None
        quality = Quality(enc, params["quality"], params["aggregate"])
        return enc, Evaluator(enc, models, quality, distance), sens

    def _run(self, data: Dataset, *, rng, **params: Any) -> Iterator[Progress | Release]:
        yield Progress(0.02, "coding quasi-identifiers")
        enc, evaluate, sens = self._prepare(data, params)
        result: SearchResult | None = None
        for item in search(enc, evaluate, time_limit=float(params["time_limit"])):
            if isinstance(item, SearchResult):
                result = item
            else:
                yield Progress(0.05 + 0.8 * item.fraction, item.message)
        if result is None or result.best is None:
            raise MechanismError("no generalisation of the quasi-identifiers meets the privacy models within the "
                                 f"suppression limit of {params['suppression']:g} %; raise the limit or relax k, l, t "
                                 "or the risk thresholds")
        yield Progress(0.9, "generalising and suppressing")
        release = build_release(self, data, params, enc, evaluate, result.best, sens, rng)
        record = dict(release.record)
        record.update({"lattice": result.lattice, "evaluations": result.evaluations,
                       "search seconds": round(result.seconds, 3), "proven optimal": result.proven_optimal})
        warnings = list(release.warnings)
        if not result.proven_optimal:
            warnings.append(f"The lattice has {result.lattice['size']:,} level combinations: a heuristic searched "
                            "within the time limit, so these levels are anonymous but not proven optimal.")
        note = dict(release.note)
        note["search"] = "optimal (proven)" if result.proven_optimal else "heuristic (not proven optimal)"
        yield Release(mechanism=self.name, table=release.table, cost=release.cost, params=release.params,
                      claims=release.claims, note=note, record=record, warnings=tuple(warnings),
                      apply_to=release.apply_to, records=release.records, source_rows=release.source_rows)

    def preview_candidate(self, data: Dataset, params: dict[str, Any], candidate) -> dict:
        """The release one lattice node would give (for the Search tab): figures and its first rows."""
        params = self.resolve_params(**params)
        enc, evaluate, sens = self._prepare(data, params)
        levels = tuple(int(x) for x in candidate)
        if len(levels) != enc.d or any(not 0 <= lv <= q.height for lv, q in zip(levels, enc.qis)):
            raise ParameterError(f"levels {list(levels)} do not fit the quasi-identifiers' taxonomies")
        node = evaluate(levels)
        from ppdp_gui.engine.noise import NoiseSource
        release = build_release(self, data, params, enc, evaluate, node, sens, NoiseSource(0), check=False)
        figures = dict(release.record["figures"])
        return {"levels": dict(zip(release.record["quasi_identifiers"], levels)), "anonymous": node.anonymous,
                "figures": figures, "table": release.table.head(200), "warnings": list(release.warnings)}

    def measures(self, release: Release, train: Dataset, test: Dataset | None) -> dict[str, float]:
        out = dict(release.record.get("figures", {}))
        cls = train.class_column
        if cls is not None and test is not None and cls in release.table.columns and test.n_rows:
            from ppdp_gui.engine.metrics.fmeasure import release_f_measures
            out.update(release_f_measures(release, train, test))
        return out


def build_release(mech: GlobalRecoding, data: Dataset, params: dict[str, Any], enc: Encoded, evaluate: Evaluator,
                  node: NodeResult, sens: str | None, rng, check: bool = True) -> Release:
    """The released table, claims, note and record of one evaluated node."""
    models = evaluate.models
    names = [q.name for q in enc.qis]
    n = enc.n_rows
    if enc.row_tuple is None:  # a large table: the rows are a SQL query, written at export
        return _large_release(mech, data, params, enc, evaluate, node, sens, check)
    row_cls = node.cls[enc.row_tuple]
    gone = node.verdict.suppressed[row_cls]
    published, intervals, domains = {}, {}, {}
    for j, (q, lev) in enumerate(zip(enc.qis, node.levels)):
        code = q.code_of_leaf[lev][enc.leaf[enc.row_tuple, j]]
        text = np.asarray(q.labels[lev], dtype=object)
        inverse, cats = pd.factorize(np.r_[text, np.array([MARKER], dtype=object)])  # labels may repeat; '*' may be the root's label
        codes = inverse[code]
        codes[gone] = inverse[-1]
        published[q.name] = pd.Categorical.from_codes(codes, categories=pd.Index(cats, dtype=object))
        lo, hi = q.bounds(lev)
        intervals[q.name] = {str(t): [float(a), float(b)] for t, a, b in zip(text, lo, hi)}
        intervals[q.name][MARKER] = [0.0, float(q.n_leaves - 1)]
        domains[q.name] = [0.0, float(q.n_leaves - 1)]
    shown_marker = np.ones(n, dtype=bool)
    for name in names:
        shown_marker &= np.asarray(published[name]) == MARKER
    if check and shown_marker.any() and not shown_marker.all() and \
            int(shown_marker.sum()) > models.limit_rows(n):
        raise MechanismError(f"rows generalised to '{MARKER}' in every quasi-identifier look suppressed and exceed "
                             "the suppression limit; give the taxonomies' roots another label")
    perm = np.asarray(rng.permutation(n))
    group = np.where(gone, np.iinfo(np.int64).max, row_cls)
    order = perm[np.argsort(group[perm], kind="stable")]
    cols = {}
    for spec in data.schema:
        if spec.role.never_released:
            continue
        if spec.name in published:
            cols[spec.name] = pd.Series(published[spec.name][order])
        else:
            cols[spec.name] = data.frame[spec.name].iloc[order].reset_index(drop=True)
    table = pd.DataFrame(cols)
    release = _finish_release(mech, data, params, enc, evaluate, node, sens, table, intervals, domains)
    return dataclasses.replace(release, source_rows={"table": order})


def _large_release(mech, data, params, enc, evaluate, node, sens, check: bool) -> Release:
    """build_release for a large table: the records as SQL (kanon/globalrec_sql.py); the same claims and figures."""
    from ppdp_gui.engine.mechanisms.kanon.globalrec_sql import records
    intervals, domains = {}, {}
    shown_marker = np.ones(enc.n_tuples, dtype=bool)
    for j, (q, lev) in enumerate(zip(enc.qis, node.levels)):
        text = np.asarray(q.labels[lev], dtype=object)
        shown_marker &= text[q.code_of_leaf[lev][enc.leaf[:, j]]] == MARKER
        lo, hi = q.bounds(lev)
        intervals[q.name] = {str(t): [float(a), float(b)] for t, a, b in zip(text, lo, hi)}
        intervals[q.name][MARKER] = [0.0, float(q.n_leaves - 1)]
        domains[q.name] = [0.0, float(q.n_leaves - 1)]
    shown_marker |= node.verdict.suppressed[node.cls]
    marked = int(enc.count[shown_marker].sum())
    if check and 0 < marked < enc.n_rows and marked > evaluate.models.limit_rows(enc.n_rows):
        raise MechanismError(f"rows generalised to '{MARKER}' in every quasi-identifier look suppressed and exceed "
                             "the suppression limit; give the taxonomies' roots another label")
    rows = records(data, enc, node, MARKER)
    table = pd.DataFrame({c: pd.Series([], dtype=object) for c in rows.columns})
    release = _finish_release(mech, data, params, enc, evaluate, node, sens, table, intervals, domains)
    return dataclasses.replace(release, records=rows)


def _finish_release(mech, data, params, enc, evaluate, node, sens, table, intervals, domains) -> Release:
    models = evaluate.models
    names = [q.name for q in enc.qis]
    n = enc.n_rows
    claims = mech.declared_claims(data, params)
    figures = node_figures(enc, evaluate, node)
    levels = dict(zip(names, node.levels))
    note = {"quasi_identifiers": names, "levels": levels, "k": models.k, **unit_note(data.person_column),
            "suppression limit %": float(params["suppression"]), "suppression marker": MARKER,
            "quality model": params["quality"], "aggregate": params["aggregate"],
            "l": models.l if models.uses_l else None, "diversity": models.diversity if models.uses_l else None,
            "t": models.t if models.uses_t else None, "distance": models.distance if models.uses_t else None,
            "sensitive": sens, "groups": int(figures.get(GROUPS, 0))}
    record = {**note, "suppressed rows": node.n_suppressed, "figures": figures, "intervals": intervals,
              "domains": domains, "level labels": {q.name: sorted(set(map(str, q.labels[lev])))
                                                   for q, lev in zip(enc.qis, node.levels)}}
    warnings = []
    if node.n_suppressed:
        warnings.append(f"{node.n_suppressed:,} rows ({100 * node.n_suppressed / max(1, n):.2f} %) are suppressed: "
                        f"their quasi-identifiers are shown as '{MARKER}'.")

    def apply_to(frame: pd.DataFrame) -> pd.DataFrame:
        """Generalise unseen rows to the same levels (values outside a taxonomy become its root)."""
        out = frame.copy()
        for q, lev in zip(enc.qis, node.levels):
            values = frame[q.name].astype(str).where(frame[q.name].notna(), MISSING_LABEL)  # a blank number
            known = values.isin(set(q.index.tax.leaf_values())).to_numpy()
            texts = np.full(len(frame), q.index.tax.label(0), dtype=object)
            if known.any():
                pos = q.index.positions(values[known])
                texts[known] = np.asarray(q.labels[lev], dtype=object)[q.code_of_leaf[lev][pos]]
            out[q.name] = texts
        return out

    cost = mech.declared_cost(data, params)
    return Release(mechanism=mech.name, table=table, cost=cost, params=dict(params, sensitive=sens),
                   claims=claims, note=note, record=record, warnings=tuple(warnings), apply_to=apply_to)


def _claims(data: Dataset, params: dict[str, Any], models: PrivacyModels, names: list[str],
            sens: str | None, person: str | None = None) -> list:
    cols = tuple(names)
    claims: list = []
    if models.k > 1:
        claims.append(KAnonymity(models.k, cols, person=person))
    if models.uses_l and sens:
        claims.append(LDiversity(models.l, models.diversity, sens, cols,
                                 c=models.c if models.diversity == "recursive" else None, person=person))
    if models.uses_t and sens:
        spec = data.spec(sens) if sens in data.frame.columns else None  # declared before `check` refuses a bad one
        tax = None if spec is None else spec.taxonomy
        order = tuple(tax.leaf_values()) if (tax is not None and models.distance == "ordered" and
                                              spec.kind != "numeric") else ()
        hierarchy = tuple(tuple(p) for p in tax.to_paths()) if tax is not None and models.distance == \
            "hierarchical" else ()
        claims.append(TCloseness(models.t, sens, cols, models.distance, order=order, hierarchy=hierarchy,
                                 person=person))
    if models.max_risk > 0:
        claims.append(RiskBound("highest", models.max_risk, cols, person=person))
    if models.avg_risk > 0:
        claims.append(RiskBound("average", models.avg_risk, cols, person=person))
    claims.append(Suppression(models.limit, cols, MARKER))
    return claims


def node_figures(enc: Encoded, evaluate: Evaluator, node: NodeResult) -> dict[str, float]:
    """Every quality model of one node, per QI and aggregated, with its groups and risks (custodian figures)."""
    n = enc.n_rows
    out: dict[str, float] = {}
    how = evaluate.quality.how
    for model in ("Loss", "Precision", "Non-uniform entropy"):
        q = evaluate.quality if evaluate.quality.model == model else Quality(enc, model, how)
        per = q.per_qi_values(node.levels, node.cls, node.verdict)
        prefix = {"Loss": "NCP %", "Precision": "Precision %", "Non-uniform entropy": "Non-uniform entropy %"}[model]
        out[prefix] = 100 * float(np.mean(per)) if per.size else 0.0
        if model == "Loss":
            out["Loss (geometric, ARX)"] = float(aggregate(per, AGGREGATES[0]))
            for name, v in zip([qi.name for qi in enc.qis], per):
                out[f"NCP % {name}"] = 100 * float(v)
    sizes = node.verdict.unit_sizes[(node.verdict.sizes > 0) & ~node.verdict.suppressed]  # persons, if any
    out["discernibility"] = discernibility(node.verdict, n)
    out["suppressed rows"] = float(node.n_suppressed)
    out["suppressed %"] = 100 * node.n_suppressed / max(1, n)
    out.update(group_figures(sizes, persons=enc.person is not None))
    if sizes.size:
        out["C_avg"] = float(sizes.sum() / sizes.size / max(1, evaluate.models.k))
    return out
