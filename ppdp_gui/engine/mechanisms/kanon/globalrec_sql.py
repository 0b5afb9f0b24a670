"""Global recoding of a large table: one GROUP BY feeds the lattice search, one query writes the records.

The lattice search (kanon/search.py) never looks at rows, only at `Encoded`: the distinct combinations of the
quasi-identifiers' values (and the sensitive value) with their row counts — the group-size histogram from which
every node's classes are formed. Here that histogram is `SELECT qi…, COUNT(*) … GROUP BY qi…` (Adult resampled
to 10⁷ rows still has about 20,000 combinations), so the search, its quality models and its result are exactly
the in-memory ones.

The released records are a query (bigdata/output.py): one join of every row to its combination of
quasi-identifier values (`tuple_join`, one hash key), a small table holding each combination's labels at the
chosen levels (formula-neutralised for CSV), its class and whether it is suppressed (then shown as '*'); every
other non-identifier column as it is; ordered by class (suppressed last) and at random inside a class, as in
memory.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ppdp_gui.engine.bigdata.output import SqlRecords, joined_records, labels_column
from ppdp_gui.engine.bigdata.source import N, quote, typed_values
from ppdp_gui.engine.data.writer import neutral_text
from ppdp_gui.engine.mechanisms.kanon.lattice import Encoded, qi_levels, taxonomy_for


def encode_large(data, names: list[str], sensitive: str | None) -> Encoded:
    """`lattice.encode` by a SQL GROUP BY: tuples sorted by leaf positions (then sensitive code)."""
    qis = [qi_levels(name, taxonomy_for(data, name)) for name in names]
    keys = {f"q{j}": quote(n) for j, n in enumerate(names)}
    if sensitive:
        keys["s"] = quote(sensitive)
    got = data.table.group_counts(keys)
    pos = []
    for j, (name, lev) in enumerate(zip(names, qis)):
        texts, inverse = np.unique(got[f"q{j}"].astype(str).to_numpy(), return_inverse=True)
        pos.append(lev.index.positions(typed_values(data, name, pd.Series(texts)))[inverse.ravel()])
    s_codes, n_s, values = None, 0, []
    if sensitive:
        typed = typed_values(data, sensitive, got["s"].astype(str)).astype(str)
        s_codes, uniq = pd.factorize(typed, sort=True)
        s_codes, n_s, values = s_codes.astype(np.int64), len(uniq), [str(v) for v in uniq]
    order = np.lexsort(([] if s_codes is None else [s_codes]) + pos[::-1]) if len(got) else np.zeros(0, int)
    leaf = np.column_stack([p[order] for p in pos]) if pos else np.zeros((len(got), 0), dtype=np.int32)
    enc = Encoded.from_counts(qis, leaf, got[N].to_numpy(dtype=np.int64)[order],
                              None if s_codes is None else s_codes[order], n_s)
    enc.sensitive_values = values
    enc.qi_texts = [got[f"q{j}"].astype(str).to_numpy()[order] for j in range(len(names))]  # for the records
    return enc


def records(data, enc: Encoded, node, marker: str) -> SqlRecords:
    """The released rows of one evaluated node as SQL (see the module docstring)."""
    table, names = data.table, [q.name for q in enc.qis]
    tag = f"gr{id(enc) & 0xFFFFFF:x}"
    # the classes: one row per distinct QI combination (its values as text), its class id and suppressed flag
    cls_of_tuple = node.cls
    gone_of_tuple = node.verdict.suppressed[cls_of_tuple]
    combos = pd.DataFrame({f"v{j}": enc.qi_texts[j] for j in range(len(names))})
    combos["g"], combos["gone"] = cls_of_tuple, gone_of_tuple
    combos = combos.drop_duplicates([f"v{j}" for j in range(len(names))]).reset_index(drop=True)
    plain, neutral = {}, {}
    for j, (q, lev) in enumerate(zip(enc.qis, node.levels)):
        texts = np.unique(enc.qi_texts[j])
        pos = q.index.positions(typed_values(data, q.name, pd.Series(texts)))
        labels = np.asarray(q.labels[lev], dtype=object)[q.code_of_leaf[lev][pos]].astype(str)
        at = np.searchsorted(texts.astype(str), combos[f"v{j}"].to_numpy(dtype=str))  # each combination's label
        gone = combos["gone"].to_numpy(dtype=bool)  # a suppressed combination shows the marker
        combos[f"l{j}"] = labels_column(np.where(gone, marker, labels[at]))
        combos[f"s{j}"] = labels_column(np.where(gone, neutral_text(marker),
                                                 np.array([neutral_text(t) for t in labels], dtype=object)[at]))
        plain[q.name], neutral[q.name] = f"c.l{j}", f"c.s{j}"
    table.register(f"{tag}_classes", combos)
    return joined_records(data, table, names, f"{tag}_classes", "c", plain, neutral, tag, marker,
                          order_by="ORDER BY c.gone, c.g, random()")
