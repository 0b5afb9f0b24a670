"""Fragmentation-based anonymisation of high-dimensional tables (Zakerzadeh, Aggarwal & Barker; seed 002).

The quasi-identifiers are split into fragments by FMRMR (each fragment predicts the class by itself, with little
redundancy inside), each fragment is made k-anonymous by Mondrian on its own few columns, and the class values
are adjusted so that joining fragments on the class column never yields a group smaller than k. The fragments
are published as separate tables that share only the class column: no row key, and each fragment's rows are in
their own random order, so the only way to link them is the approximate join on the class, which is checked.

With a person column (Role.PERSON) every fragment's classes hold the rows of at least k distinct persons (each
fragment's Mondrian counts persons) and the claims say so; the joins on the class count persons too: a join's
tuples are pairs of distinct persons, so one patient's several rows with a rare class value, which fill a joined
group in rows, count once (the strategies work on rows as the paper states them, then such pairs are repaired;
the recount before release counts persons). With l ≥ 2 the records then form a single segment (segments are cut
on row counts).
"""

from __future__ import annotations

import weakref
from typing import Any, Iterator

import numpy as np
import pandas as pd

from ppdp_gui.engine.claims import MAIN_TABLE, KAnonymity, LDiversity
from ppdp_gui.engine.data.schema import Dataset, Role
from ppdp_gui.engine.errors import CheckError, MechanismError
from ppdp_gui.engine.mechanisms.base import (ParamSpec, PrivacyCost, Problem, Progress, Release,
                                             ReleaseShape)
from ppdp_gui.engine.mechanisms.fragmentation import fmrmr
from ppdp_gui.engine.mechanisms.fragmentation.anonymise import (STRATEGIES, enforce_all, enforce_diverse,
                                                                join_violations, partition_all)
from ppdp_gui.engine.mechanisms.fragmentation.diversity import join_shortfalls
from ppdp_gui.engine.mechanisms.kanon import common
from ppdp_gui.engine.mechanisms.kanon.family import KAnonMechanism
from ppdp_gui.engine.mechanisms.kanon.common import GRID_PARAM, kanon_problems, unit_note, unit_sentence
from ppdp_gui.engine.mechanisms.kanon.mondrian_core import is_l_diverse
from ppdp_gui.engine.data.qi_coding import code_quasi_identifier, publish_groups

#: the last table's FMRMR split (weak reference to the table, its key, the split): the window plans again at every
#: change of k or ρ, and a new plan's mechanism is a new object, so the split is kept here, not on the mechanism
_LAST_SPLIT: dict = {}

AMBIGUOUS = "*"  # ρ-selectivity: a slot whose class is one of its group's published values, unknown which


def fragment_name(i: int) -> str:
    return f"fragment {i + 1}"


def assign_other_columns(frame: pd.DataFrame, fragments: list[list[str]], others: list[str]) -> list[list[str]]:
    """Non-QI columns (published as they are) go to the fragment holding the QI they say most about.

    The paper fragments further sensitive attributes after the QIs with FMRMR, which would put a column beside
    the fragment it is least redundant with, i.e. away from the QIs it predicts; a raw column that predicts
    another fragment's quasi-identifiers (Adult's education vs education-num) would then link the fragments.
    Keeping it with the QIs it resembles leaves the class as the only bridge between fragments."""
    out = [[] for _ in fragments]
    if not others:
        return out
    qis = [c for f in fragments for c in f]
    red = fmrmr.mutual_information_matrix(fmrmr.encode_columns(frame, others + qis))
    pos = {c: i for i, c in enumerate(others + qis)}
    for i, col in enumerate(others):
        link = [max(red[i, pos[c]] for c in f) for f in fragments]  # the QI it predicts best
        out[int(np.argmax(link))].append(col)
    return out


def group_ids(columns: list[pd.Categorical]) -> np.ndarray:
    """Dense id of each row's combination of published labels."""
    key = np.zeros(len(columns[0]), dtype=np.int64)
    for col in columns:
        codes = np.asarray(col.codes, dtype=np.int64)
        key = pd.factorize(key * (int(codes.max(initial=0)) + 1) + codes)[0].astype(np.int64)
    return key


def ec_level_classes(ec_sorted: np.ndarray, published: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Class column for ρ-selectivity: in each group (rows contiguous), one row per published value, then "*"."""
    n = len(ec_sorted)
    first = np.searchsorted(ec_sorted, ec_sorted, side="left")
    rank = np.arange(n) - first
    listed = np.argsort(~published, axis=1, kind="stable")  # published value codes first, in code order
    size = published.sum(axis=1)
    col = np.full(n, AMBIGUOUS, dtype=object)
    show = rank < size[ec_sorted]
    col[show] = values[listed[ec_sorted[show], rank[show]]]
    return col


class Fragmentation(KAnonMechanism):
    name = "Fragmentation"
    guarantee = "k-anonymity (per fragment)"
    summary = ("Splits the quasi-identifiers into fragments that each predict the class well, anonymises every "
               "fragment on its own (Mondrian) and adjusts class values so fragments cannot be re-joined into "
               "groups smaller than k. Keeps far more detail than anonymising many columns at once.")
    params = (
        ParamSpec("k", "k (smallest group size)", "int", default=40, low=2, high=1000,
                  help="Every fragment's groups, and every join of two fragments on the class, have ≥ k rows.",
                  more_private="higher"),
        ParamSpec("l", "l (class values per group, 0 = off)", "int", default=0, low=0, high=100, special=(0, "off"),
                  help="≥ 2: the paper's l-diversity extension with the class as the sensitive value: records are "
                       "first split into segments, and every group holds all class values of its segment.",
                  more_private="higher"),
        ParamSpec("strategy", "Non-reconstructability", "choice", default="dependency graph", choices=STRATEGIES,
                  help="How class values are adjusted so joins on the class stay k-anonymous (k-anonymity only). "
                       "naive: each group takes its majority class; dependency graph: only groups whose joins are "
                       "too small, as few changes as possible; ρ-selectivity: publish each group's set of class "
                       "values instead of one per row."),
        ParamSpec("rho", "ρ (share of k-anonymous joins)", "float", default=0.5, low=0.0, high=1.0,
                  help="ρ-selectivity only: the least share of the possible joins of two groups that must give "
                       "≥ k rows.", more_private="higher"),
        ParamSpec("n_fragments", "Number of fragments", "int", default=2, low=2, high=20,
                  help="The paper splits in two; more repeats the split on the largest fragment."),
        ParamSpec("max_segments", "Segments for l-diversity (0 = no limit)", "int", default=0, low=0, high=100000,
                  help="l ≥ 2 only: the records are first split top-down into segments that each keep ≥ k rows and "
                       "≥ l class values (the paper's step 2); 1 = a single segment, which keeps more detail when "
                       "every group holds all class values anyway (e.g. two classes and l = 2)."),
        ParamSpec("class_column", "Class column", "column", default=None, roles=(Role.CLASS,), optional=True,
                  help="The label shared by all fragments (default: the data's class column)."),
        GRID_PARAM,
    )

    # -- checks ---------------------------------------------------------------------------------------------
    def _class(self, data: Dataset, params: dict[str, Any]) -> str | None:
        return params.get("class_column") or data.class_column

    def check(self, data: Dataset, params: dict[str, Any]) -> list[Problem]:
        problems = kanon_problems(data, params["k"], params["grid_width"])
        cls = self._class(data, params)
        qis = data.quasi_identifiers
        if cls is None:
            problems.append(Problem("mark a column as the class (the label shared by the fragments)",
                                    param="class_column"))
            return problems
        if cls in qis:
            problems.append(Problem(f"{cls!r} is a quasi-identifier; it cannot also be the class",
                                    param="class_column"))
        if data.frame[cls].isna().any():
            problems.append(Problem(f"the class column {cls!r} has missing values", column=cls))
        if len(qis) < params["n_fragments"]:
            problems.append(Problem(f"{len(qis)} quasi-identifier(s) cannot make {params['n_fragments']} fragments",
                                    param="n_fragments"))
        raw = [c.name for c in data.schema if c.name != cls and c.name not in qis and not c.role.never_released]
        if raw:
            problems.append(Problem(f"{', '.join(raw)} will be published unchanged, each in the fragment it is "
                                    "most related to; if any could help link records, mark it as a "
                                    "quasi-identifier (or identifier, to drop it)", level="warning"))
        l = params["l"]
        if l and l > 1 and not data.frame[cls].isna().any() and \
                not is_l_diverse(data.frame[cls].astype(str).to_numpy(), l, "distinct"):
            problems.append(Problem(f"the whole table has fewer than {l} class values; lower l", param="l"))
        if l and l > 1 and params["strategy"] != "dependency graph":
            problems.append(Problem("with l ≥ 2 the class values are kept (the l-diversity extension); the "
                                    "non-reconstructability strategy is not used", level="warning", param="strategy"))
        return problems

    def describe_release(self, data: Dataset, params: dict[str, Any]) -> ReleaseShape:
        cls = self._class(data, params) or "the class"
        kept = tuple(c.name for c in data.schema if not c.role.never_released)
        return ReleaseShape(columns=kept, per_person=True, sentences=(
            f"The columns are split into {params['n_fragments']} separate tables (fragments) that share only "
            f"{cls}; each has one row per row of your table, in its own random order.",
            f"In every fragment the quasi-identifiers are replaced by ranges or groups shared by at least "
            f"{params['k']} rows, and joining two fragments on {cls} also gives groups of at least "
            f"{params['k']} rows.",
            "Some class values may be changed so that the fragments cannot be joined back together.",
            unit_sentence(data, params["k"])))

    def published_columns(self, data: Dataset, params: dict[str, Any]) -> list[str]:
        """The class (in every fragment, with few values changed) and every other non-QI, non-identifier column."""
        qis = set(data.quasi_identifiers)
        return [c.name for c in data.schema if not c.role.never_released and c.name not in qis]

    def cost(self, params: dict[str, Any]) -> PrivacyCost:
        p = params
        l = p["l"] if p["l"] and p["l"] > 1 else None
        how = "l-diversity extension" if l else p["strategy"] + (f", ρ = {p['rho']:g}" if
                                                                   p["strategy"] == "ρ-selectivity" else "")
        return PrivacyCost(k=p["k"], l=l, note=f"per fragment, joins on the class checked ({how})")

    def split(self, data: Dataset, params: dict[str, Any]) -> fmrmr.Fragmentation | None:
        """The FMRMR fragments of the quasi-identifiers (deterministic: the claims name them before the run and
        the run publishes them), made once per table and parameters; None when `check` refuses the class or the
        quasi-identifiers (it says why)."""
        cls, qis = self._class(data, params), data.quasi_identifiers
        if cls is None or cls not in data.frame.columns or cls in qis or len(qis) < params["n_fragments"] or \
                data.frame[[*qis, cls]].isna().any().any():
            return None
        key = (cls, tuple(qis), params["n_fragments"])
        made = _LAST_SPLIT.get("made")
        if made is None or made[0]() is not data or made[1] != key:
            numeric = {q for q in qis if data.spec(q).kind == "numeric"}
            made = (weakref.ref(data), key, fmrmr.fragment_features(data.frame, qis, cls, params["n_fragments"],
                                                                     numeric=numeric))
            _LAST_SPLIT["made"] = made
        return made[2]

    def claims_for(self, data: Dataset, params: dict[str, Any]) -> tuple:
        """k-anonymity (and with l ≥ 2 distinct l-diversity of the class) of every fragment on its own QIs."""
        split = self.split(data, params)
        if split is None:  # the plan and `run` refuse first (check)
            raise MechanismError("Fragmentation: the class column or the quasi-identifiers cannot be split into "
                                 "fragments; see the problems listed in the Mechanism step")
        if split is None:
            return ()
        l, cls, person = params["l"], self._class(data, params), data.person_column
        claims = []
        for f, names in enumerate(split.fragments):
            table = MAIN_TABLE if f == 0 else fragment_name(f)
            claims.append(KAnonymity(params["k"], tuple(names), table=table, person=person))
            if l and l > 1:
                claims.append(LDiversity(l, "distinct", cls, tuple(names), table=table, person=person))
        return tuple(claims)

    # -- run ------------------------------------------------------------------------------------------------
    def _run(self, data: Dataset, *, rng, k: int, l: int, strategy: str, rho: float, n_fragments: int,
             max_segments: int, class_column: str | None, grid_width: float) -> Iterator[Progress | Release]:
        frame = data.frame
        cls = class_column or data.class_column
        qis = data.quasi_identifiers
        use_l = bool(l and l > 1)
        yield Progress(0.05, "measuring mutual information")
        params = {"k": k, "l": l, "strategy": strategy, "rho": rho, "n_fragments": n_fragments,
                  "max_segments": max_segments, "class_column": class_column, "grid_width": grid_width}
        declared = self.declared_claims(data, params)
        split = self.split(data, params)
        frags = [list(f) for f in split.fragments]
        others = [c.name for c in data.schema if c.name != cls and c.name not in qis and not c.role.never_released]
        extra = assign_other_columns(frame, frags, others)

        yield Progress(0.2, "anonymising each fragment")
        coded = {q: code_quasi_identifier(data, q, grid_width) for q in qis}
        codes = [np.column_stack([coded[q].codes for q in f]) for f in frags]
        y, values = fmrmr.class_codes(frame[cls])
        person = data.person_column
        persons = common.person_codes(data)
        parts, segments = partition_all(codes, y, k, l=l if use_l else 0, max_segments=max_segments,
                                        persons=persons)
        # the groups a reader sees are rows sharing all published labels (partitions whose ranges snap to the
        # same cells merge), so the class condition is enforced on those
        published, ecs = [], []
        for f, names in enumerate(frags):
            cols, intervals, _ = publish_groups([coded[q] for q in names], parts[f])
            published.append((cols, intervals))
            ecs.append(group_ids([cols[q] for q in names]))
        merges = 0
        if use_l:
            yield Progress(0.6, f"keeping joins on {cls!r} k-anonymous and {l}-diverse")

            def republish(f, parts_f):
                cols, intervals, _ = publish_groups([coded[q] for q in frags[f]], parts_f)
                published[f] = (cols, intervals)
                return group_ids([cols[q] for q in frags[f]])
            ecs, enforced, merges = enforce_diverse(ecs, y, k, l, codes, republish, persons=persons)
        else:
            yield Progress(0.6, f"keeping joins on {cls!r} k-anonymous")
            enforced = enforce_all(ecs, y, k, strategy=strategy, rho=rho, order_rng=rng, persons=persons)

        yield Progress(0.8, "publishing fragments")
        tables, frag_meta, orders = [], [], []
        for f, names in enumerate(frags):
            ec = ecs[f]
            cols, intervals = published[f]
            perm = np.asarray(rng.permutation(len(ec)))
            order = perm[np.argsort(ec[perm], kind="stable")]  # own random order: rows do not line up
            orders.append(order)
            out = {q: pd.Series(cols[q][order]) for q in names}
            for c in extra[f]:
                out[c] = frame[c].iloc[order].reset_index(drop=True)
            if enforced.published is not None:
                out[cls] = ec_level_classes(ec[order], enforced.published[f], values)
            else:
                out[cls] = pd.Series(values[enforced.labels[f][order]], dtype=frame[cls].dtype)
            tables.append(pd.DataFrame(out))
            frag_meta.append({
                "table": fragment_name(f), "where": "table" if f == 0 else "extra_tables",
                "quasi_identifiers": names, "other_columns": extra[f], "k": k, "l": l if use_l else None,
                "sensitive": cls if use_l else None, "diversity": "distinct" if use_l else None,
                "class_distortion": enforced.distorted[f], "n_classes": int(ec.max()) + 1,
                "intervals": intervals, "domains": {q: list(coded[q].domain) for q in names},
            })

        yield Progress(0.9, "recounting every fragment and every join")
        rho_used = rho if strategy == "ρ-selectivity" and not use_l else None
        self._verify(tables, frag_meta, ecs, enforced, y, k, rho_used, l if use_l else 0,
                     None if persons is None else [persons[o] for o in orders], persons)
        per = "" if person is None else " of different persons (pairs of rows of one person count once)"
        record = {
            "quasi_identifiers": frag_meta[0]["quasi_identifiers"], "k": k, "l": l if use_l else None,
            "sensitive": cls if use_l else None, "diversity": "distinct" if use_l else None,
            "intervals": frag_meta[0]["intervals"], "domains": frag_meta[0]["domains"],
            "fragments": frag_meta, "class_column": cls,
            "strategy": "l-diversity extension" if use_l else strategy,
            "rho": rho_used,
            "class_distortion": int(sum(enforced.distorted)),
            "merged_groups": merges,  # l-diversity: groups merged to meet the join condition
            "class_published": "per group (ρ-selectivity: value set, other slots '*')"
            if enforced.published is not None else "per row",
            "segments": None if segments is None else int(segments.max()) + 1,
            "fmrmr": {"score": split.score, "seeds": list(split.seeds), "relevance": split.relevance,
                      "discretisation": "numbers: 3 states at mean ± sd/2 (Ding & Peng); categories: as is"},
            "generalisation": {q: coded[q].how for q in qis},
            "join": {
                "shared_columns": [cls], "row_key": None,
                "statement": (f"The {len(frags)} fragment tables share only the column {cls!r} and have no common "
                              "row identifier; each has its rows in its own random order. They can only be "
                              f"joined approximately, on {cls!r}, and every such join of two fragments was "
                              f"checked to give groups of at least k = {k} rows{per}.") if not use_l else (
                              f"The {len(frags)} fragment tables share only the column {cls!r} and have no common "
                              "row identifier; each has its rows in its own random order. They can only be "
                              f"joined approximately, on {cls!r}; joining the groups that hold someone's row in "
                              f"two fragments was checked to give at least k = {k} rows{per} and at least l = {l} "
                              f"values of {cls!r}."),
            },
        }
        note = {key: record[key] for key in ("k", "l", "class_column", "strategy", "rho", "class_published",
                                             "join", "generalisation")}
        note.update(unit_note(person))
        note["fragments"] = [{"table": m["table"], "quasi_identifiers": m["quasi_identifiers"],
                              "other_columns": m["other_columns"], "groups": m["n_classes"]} for m in frag_meta]
        yield Release(mechanism=self.name, table=tables[0], cost=self.declared_cost(data, params), params={
            "k": k, "l": l, "strategy": strategy, "rho": rho, "n_fragments": n_fragments, "max_segments": max_segments,
            "class_column": cls,
            "grid_width": grid_width}, claims=declared, note=note, record=record,
            extra_tables={fragment_name(f): t for f, t in enumerate(tables) if f > 0},
            source_rows={(MAIN_TABLE if f == 0 else fragment_name(f)): o for f, o in enumerate(orders)})

    @staticmethod
    def _verify(tables, frag_meta, ecs, enforced, y, k, rho, l=0, persons=None, row_persons=None) -> None:
        """Independent recount of every fragment (in persons, with `persons`: the ids of each table's rows), and
        the join condition on what was computed (in pairs of distinct persons, with `row_persons`: the person of
        each source row); else refuse."""
        from ppdp_gui.engine.checks.anonymity import check_release
        for i, (t, m) in enumerate(zip(tables, frag_meta)):
            res = check_release(t, m["quasi_identifiers"], k, sensitive=m["sensitive"], l=m["l"],
                                persons=None if persons is None else persons[i])
            if not res.ok:
                raise CheckError(f"Fragmentation: {m['table']} failed the independent check: {res.message}")
        if l:
            short = sum(len(p) for _, _, p in join_shortfalls(ecs, y, int(y.max()) + 1, k, l, row_persons))
            if short:
                raise MechanismError(f"Fragmentation: {short} pair(s) of groups holding the same records join on "
                                     f"the class into fewer than k = {k} rows (of different persons, with a person "
                                     f"column) or {l} class values")
            return
        bad = join_violations(ecs, enforced, int(y.max()) + 1, k, rho, row_persons)
        if bad:
            raise MechanismError(f"Fragmentation: {bad} pair(s) of groups can still be joined on the class into "
                                 f"fewer than k = {k} rows (of different persons, with a person column)")

    def measures(self, release: Release, train: Dataset, test: Dataset | None) -> dict[str, float]:
        from ppdp_gui.engine.mechanisms.fragmentation.measures import fragmentation_measures
        return fragmentation_measures(release, train, test)
