"""Strict Mondrian on a large table: partition the distinct quasi-identifier tuples, weighted by their counts.

Strict Mondrian never separates rows with equal values, and every choice it makes (the widest or most rewarding
dimension, the median run, the hierarchy-aligned cut, whether both halves keep k rows) reads only counts per
(partition, value). So partitioning the distinct QI tuples with their row counts as weights
(`mondrian_core.partition(…, weights=)`) gives exactly the classes of the expanded table: one
`SELECT qi…, COUNT(*) … GROUP BY qi…` (`TableSource.histogram`, the same count the plan read), then the
in-memory partitioner on that histogram. Memory grows with the
number of distinct QI tuples, not with rows (Adult resampled to 10⁷ rows: about 20,000 tuples); a table whose QI
tuples are themselves too many for memory would need the median of every partition as a SQL quantile per level,
which is not done.

What differs from the in-memory Mondrian: relaxed mode and l-diversity are not offered (both can separate rows
with equal QI values). A categorical QI without a taxonomy gets its flat tree in the order its values first
appear in the file, as in memory (read with one window query, `TableSource.first_seen`). The released records
are a query like global recoding's (bigdata/output.py): the tuples' published labels (ENUMs) through one keyed
join, other columns as they are, rows grouped by class and shuffled inside it; their recount reads the
histogram when it holds every released column.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from ppdp_gui.engine.bigdata.output import SqlRecords, joined_records, labels_column
from ppdp_gui.engine.bigdata.source import N, quote
from ppdp_gui.engine.bigdata.large_dataset import typed_values
from ppdp_gui.engine.data.schema import Dataset
from ppdp_gui.engine.data.writer import neutral_text
from ppdp_gui.engine.mechanisms.kanon.mondrian_core import partition
from ppdp_gui.engine.data.qi_coding import code_quasi_identifier, publish_groups
from ppdp_gui.engine.taxonomy import Taxonomy


def tuples(data, names: list[str]):
    """(the distinct QI tuples as a small typed Dataset sorted by their text, their texts, rows per pair, the
    persons (each pair's person, -1 for a pair of patients counted, not listed, and how many it stands for) or
    None, the tuple of each pair). Without a person column a pair is a tuple; with one it
    is a (QI tuple, person) and there can be about as many as rows, so each column's texts are factorised once
    (not sorted) and the tuples read from integer keys."""
    from ppdp_gui.engine.mechanisms.kanon import common
    keys = {f"q{j}": quote(n) for j, n in enumerate(names)}
    person = common.large_person(data)
    if person is not None:  # patients whose rows share one tuple are counted in it (p -1, w of them)
        from ppdp_gui.engine.mechanisms.kanon.globalrec_sql import _person_tuples
        got = _person_tuples(data, keys, person)
    else:
        got = data.table.group_counts(keys)
    codes, values = [], []
    key = np.zeros(len(got), dtype=np.int64)
    for j in range(len(names)):
        c, u = pd.factorize(got[f"q{j}"].astype(str), use_na_sentinel=False)
        u = np.asarray(u, dtype=object).astype(str)
        rank = np.empty(len(u), dtype=np.int64)
        rank[np.argsort(u, kind="stable")] = np.arange(len(u))  # codes in the texts' sorted order
        codes.append(rank[c])
        values.append(np.sort(u))
        key = pd.factorize(key * max(1, len(u)) + rank[c])[0].astype(np.int64)
    tid = key  # dense tuple ids of the pairs
    first = np.flatnonzero(~pd.Series(tid).duplicated().to_numpy())
    order = np.lexsort([codes[j][first] for j in range(len(names))][::-1]) if names else np.arange(len(first))
    renumber = np.empty(len(first), dtype=np.int64)
    renumber[order] = np.arange(len(first))  # tuples sorted by their texts, as before persons
    tid, first = renumber[tid], first[order]
    texts = [values[j][codes[j][first]] for j in range(len(names))]
    cols = {}
    for j, name in enumerate(names):
        cols[name] = typed_values(data, name, pd.Series(values[j])).to_numpy()[codes[j][first]]
    schema = tuple(_flat_in_file_order(data, data.spec(n)) for n in names)
    small = Dataset(frame=pd.DataFrame(cols, columns=names), schema=schema)
    persons = None
    if person is not None:
        lone = got["lone"].to_numpy(dtype=bool)
        codes = np.full(len(got), -1, dtype=np.int64)
        codes[~lone] = pd.factorize(got["p"][~lone], use_na_sentinel=False)[0]
        persons = (codes, got["w"].to_numpy(dtype=np.int64))
    return small, texts, got[N].to_numpy(dtype=np.int64), persons, tid


def _flat_in_file_order(data, spec):
    """A categorical QI without a taxonomy gets, in memory, a flat tree in the order its values first appear
    (qi_coding.code_quasi_identifier: `pd.unique`); the tuples here are sorted, so that order is read from the
    file and given as the taxonomy (the same tree, so the same cuts)."""
    if spec.taxonomy is not None or spec.kind == "numeric":
        return spec
    values = typed_values(data, spec.name, data.table.first_seen(spec.name)).astype(str)
    return replace(spec, taxonomy=Taxonomy.flat(spec.name, pd.unique(values)))


def run_large(data, k: int, grid_width: float):
    """(QICodes, published labels per tuple, intervals, group sizes, SqlRecords, figures) of strict Mondrian."""
    names = list(data.quasi_identifiers)
    small, texts, weight, persons, tid = tuples(data, names)
    qis = [code_quasi_identifier(small, name, grid_width) for name in names]
    codes = np.column_stack([q.codes for q in qis])
    rows = np.bincount(tid, weights=weight, minlength=len(small.frame)).astype(np.int64)  # rows per QI tuple
    if persons is None:
        labels = partition(codes, k, mode="strict", hierarchies=[q.hierarchy for q in qis], weights=rows)
    else:  # one weighted row per (tuple, person): strict cuts keep a tuple whole, so its pairs share a class
        by_pair = partition(codes[tid], k, mode="strict", hierarchies=[q.hierarchy for q in qis], weights=weight,
                            persons=persons[0], person_weight=persons[1])
        labels = np.empty(len(small.frame), dtype=np.int64)
        labels[tid] = by_pair
    published, intervals, _ = publish_groups(qis, labels)
    sizes = np.bincount(labels, weights=rows).astype(np.int64)
    records = _records(data, names, texts, labels, published)
    figures = _figures(published, intervals, {q.name: list(q.domain) for q in qis}, rows, names, k,
                       None if persons is None else (tid, *persons))
    return qis, published, intervals, sizes, records, figures


def _records(data, names, texts, labels, published) -> SqlRecords:
    table = data.table
    tag = f"mo{id(published) & 0xFFFFFF:x}"
    frame = pd.DataFrame({f"v{j}": texts[j].astype(object) for j in range(len(names))})
    frame["g"] = labels
    for j, name in enumerate(names):
        lab = np.asarray(published[name]).astype(str)
        frame[f"l{j}"] = labels_column(lab)
        frame[f"s{j}"] = labels_column([neutral_text(t) for t in lab])
    table.register(f"{tag}_tuples", frame)
    plain = {n: f"t.l{j}" for j, n in enumerate(names)}
    neutral = {n: f"t.s{j}" for j, n in enumerate(names)}
    return joined_records(data, table, names, f"{tag}_tuples", "t", plain, neutral, tag, None,
                          order_by="ORDER BY t.g, random()")


def _figures(published, intervals, domains, weight, names, k, persons=None) -> dict[str, float]:
    """kanon_measures' figures from the weighted tuples (the rows are never in memory); with `persons` (the tuple
    and the person of every (tuple, person) pair) C_avg counts a class's distinct persons, as in memory."""
    from ppdp_gui.engine.metrics.information_loss import average_class_size, cell_loss, discernibility
    n = float(weight.sum())
    per = [float((cell_loss(pd.Series(published[q]), intervals[q], domains[q]) * weight).sum() / n) for q in names]
    key = pd.DataFrame({q: np.asarray(published[q]).astype(str) for q in names})
    group = key.groupby(names, sort=False).ngroup().to_numpy()
    sizes = np.bincount(group, weights=weight).astype(np.int64)
    units = sizes  # C_avg in what k counts (persons), discernibility in rows: as kanon_measures in memory
    if persons is not None:  # (tuple of each pair, its person or -1, persons it stands for)
        from ppdp_gui.engine.mechanisms.kanon.models import distinct_per_class
        units = distinct_per_class(group[persons[0]], persons[1], len(sizes), persons[2])
    return {"NCP %": 100.0 * float(np.mean(per)) if per else 0.0,
            "C_avg": average_class_size(units, k), "discernibility": discernibility(sizes)}
