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
from ppdp_gui.engine.bigdata.source import N, quote, typed_values
from ppdp_gui.engine.data.schema import Dataset
from ppdp_gui.engine.data.writer import neutral_text
from ppdp_gui.engine.mechanisms.kanon.mondrian_core import partition
from ppdp_gui.engine.data.qi_coding import code_quasi_identifier, publish_groups
from ppdp_gui.engine.taxonomy import Taxonomy


def tuples(data, names: list[str]) -> tuple[Dataset, list[np.ndarray], np.ndarray]:
    """The distinct QI tuples as a small typed Dataset (sorted by their text), their texts and row counts."""
    got = data.table.group_counts({f"q{j}": quote(n) for j, n in enumerate(names)})
    got = got.sort_values([f"q{j}" for j in range(len(names))], kind="stable").reset_index(drop=True)
    texts = [got[f"q{j}"].astype(str).to_numpy() for j in range(len(names))]
    cols = {}
    for name, t in zip(names, texts):
        uniq, inverse = np.unique(t, return_inverse=True)
        cols[name] = typed_values(data, name, pd.Series(uniq)).to_numpy()[inverse.ravel()]
    schema = tuple(_flat_in_file_order(data, data.spec(n)) for n in names)
    small = Dataset(frame=pd.DataFrame(cols, columns=names), schema=schema)
    return small, texts, got[N].to_numpy(dtype=np.int64)


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
    small, texts, weight = tuples(data, names)
    qis = [code_quasi_identifier(small, name, grid_width) for name in names]
    labels = partition(np.column_stack([q.codes for q in qis]), k, mode="strict",
                       hierarchies=[q.hierarchy for q in qis], weights=weight)
    published, intervals, _ = publish_groups(qis, labels)
    sizes = np.bincount(labels, weights=weight).astype(np.int64)
    records = _records(data, names, texts, labels, published)
    figures = _figures(published, intervals, {q.name: list(q.domain) for q in qis}, weight, names, k)
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


def _figures(published, intervals, domains, weight, names, k) -> dict[str, float]:
    """kanon_measures' figures from the weighted tuples (the rows are never in memory)."""
    from ppdp_gui.engine.metrics.information_loss import average_class_size, cell_loss, discernibility
    n = float(weight.sum())
    per = [float((cell_loss(pd.Series(published[q]), intervals[q], domains[q]) * weight).sum() / n) for q in names]
    key = pd.DataFrame({q: np.asarray(published[q]).astype(str) for q in names})
    group = key.groupby(names, sort=False).ngroup().to_numpy()
    sizes = np.bincount(group, weights=weight).astype(np.int64)
    return {"NCP %": 100.0 * float(np.mean(per)) if per else 0.0,
            "C_avg": average_class_size(sizes, k), "discernibility": discernibility(sizes)}
