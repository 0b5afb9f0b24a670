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
from ppdp_gui.engine.bigdata.source import N, quote
from ppdp_gui.engine.bigdata.large_dataset import typed_values
from ppdp_gui.engine.data.writer import neutral_text
from ppdp_gui.engine.mechanisms.kanon.lattice import Encoded, qi_levels, taxonomy_for


def encode_large(data, names: list[str], sensitive: str | None) -> Encoded:
    """`lattice.encode` by a SQL GROUP BY: tuples sorted by leaf positions (then sensitive code, then person).
    With a person column the person is one more key (as `Encoded` keys its tuples in memory), so the search
    counts distinct persons per class exactly as in memory."""
    from ppdp_gui.engine.mechanisms.kanon import common
    qis = [qi_levels(name, taxonomy_for(data, name)) for name in names]
    keys = {f"q{j}": quote(n) for j, n in enumerate(names)}
    if sensitive:
        keys["s"] = quote(sensitive)
    person = common.large_person(data)
    if person is not None:
        got = _person_tuples(data, keys, person)
    else:
        got = data.table.group_counts(keys)
    # each column's few distinct texts are typed and placed once (with persons there are about as many tuples as
    # rows: a hash factorisation, not a sort of every text)
    pos, text_codes, text_values = [], [], []
    for j, (name, lev) in enumerate(zip(names, qis)):
        codes, texts = pd.factorize(got[f"q{j}"].astype(str), use_na_sentinel=False)
        texts = np.asarray(texts, dtype=object).astype(str)
        pos.append(lev.index.positions(typed_values(data, name, pd.Series(texts)))[codes])
        text_codes.append(codes.astype(np.int64))
        text_values.append(texts)
    s_codes, n_s, values = None, 0, []
    if sensitive:
        raw, texts = pd.factorize(got["s"].astype(str), use_na_sentinel=False)
        typed = typed_values(data, sensitive, pd.Series(np.asarray(texts, dtype=object))).astype(str)
        s_codes, uniq = pd.factorize(typed, sort=True)
        s_codes, n_s, values = s_codes.astype(np.int64)[raw], len(uniq), [str(v) for v in uniq]
    p_codes = weight = None
    if person is not None:  # -1: a tuple of persons seen in no other tuple, `w` of them
        lone = got["lone"].to_numpy(dtype=bool)
        p_codes = np.full(len(got), -1, dtype=np.int64)
        p_codes[~lone] = pd.factorize(got["p"][~lone], use_na_sentinel=False)[0]
        weight = got["w"].to_numpy(dtype=np.int64)
    order = np.lexsort(([] if p_codes is None else [p_codes]) + ([] if s_codes is None else [s_codes])
                       + pos[::-1]) if len(got) else np.zeros(0, int)
    leaf = np.column_stack([p[order] for p in pos]) if pos else np.zeros((len(got), 0), dtype=np.int32)
    # a node's class ids are cached (8 bytes a tuple each): with persons there can be about as many tuples as rows,
    # so the cache is held to about 256 MB rather than to 256 entries
    entries = int(max(16, min(256, (256 << 20) // max(1, 8 * len(got)))))
    enc = Encoded.from_counts(qis, leaf, got[N].to_numpy(dtype=np.int64)[order],
                              None if s_codes is None else s_codes[order], n_s, cache_entries=entries,
                              persons=None if p_codes is None else p_codes[order],
                              person_weight=None if weight is None else weight[order])
    enc.sensitive_values = values
    enc.qi_texts = [(c[order], v) for c, v in zip(text_codes, text_values)]  # for the records: (code, texts)
    return enc


def _person_tuples(data, keys: dict[str, str], person: str) -> pd.DataFrame:
    """The tuples keyed by the person too, as in memory, with the persons whose rows all share one tuple counted
    rather than listed: their tuples are merged (p NULL, lone 1, w persons), since a class holds each of them once
    and no other class holds them. Columns: the keys, p, lone, n (rows), w (persons). With patients who keep their
    quasi-identifiers across visits this is about a tuple per combination of values, not one per patient."""
    from ppdp_gui.engine.bigdata.persons import person_sql
    table = data.table
    cols = list(keys)
    base, weight = table.weighted("src")  # the file's distinct rows with their counts, when it repeats rows
    src = {k: e.replace("src.", "s.") for k, e in keys.items()}
    inner = (f"SELECT {', '.join(f'{e} AS {quote(k)}' for k, e in src.items())}, "
             f"{person_sql(table, person, 's')} AS p, {f'SUM({weight})' if weight else 'COUNT(*)'} AS n "
             f"FROM {base} AS s GROUP BY {', '.join(str(i + 1) for i in range(len(keys) + 1))}")
    counted = f"SELECT *, COUNT(*) OVER (PARTITION BY p) AS c FROM ({inner}) AS t"
    shown = ", ".join(quote(k) for k in cols)
    got = table.query(f"SELECT {shown}, CASE WHEN c = 1 THEN NULL ELSE p END AS p, CASE WHEN c = 1 THEN 1 ELSE 0 "
                      f"END AS lone, SUM(n) AS {quote(N)}, COUNT(*) AS w FROM ({counted}) AS g "
                      f"GROUP BY {', '.join(str(i + 1) for i in range(len(cols) + 2))}")
    return got


def records(data, enc: Encoded, node, marker: str) -> SqlRecords:
    """The released rows of one evaluated node as SQL (see the module docstring)."""
    table, names = data.table, [q.name for q in enc.qis]
    tag = f"gr{id(enc) & 0xFFFFFF:x}"
    # the classes: one row per distinct QI combination (its values as text), its class id and suppressed flag
    cls_of_tuple = node.cls
    gone_of_tuple = node.verdict.suppressed[cls_of_tuple]
    key = np.zeros(enc.n_tuples, dtype=np.int64)
    for codes, texts in enc.qi_texts:  # one row per distinct combination of texts (tuples repeat it per person)
        key = pd.factorize(key * max(1, len(texts)) + codes)[0].astype(np.int64)
    first = np.flatnonzero(~pd.Series(key).duplicated().to_numpy())
    combos = pd.DataFrame({f"v{j}": texts[codes[first]] for j, (codes, texts) in enumerate(enc.qi_texts)})
    combos["g"], combos["gone"] = cls_of_tuple[first], gone_of_tuple[first]
    plain, neutral = {}, {}
    for j, (q, lev) in enumerate(zip(enc.qis, node.levels)):
        codes, texts = enc.qi_texts[j]
        pos = q.index.positions(typed_values(data, q.name, pd.Series(texts)))
        labels = np.asarray(q.labels[lev], dtype=object)[q.code_of_leaf[lev][pos]].astype(str)
        at = codes[first]  # each combination's label
        gone = combos["gone"].to_numpy(dtype=bool)  # a suppressed combination shows the marker
        combos[f"l{j}"] = labels_column(np.where(gone, marker, labels[at]))
        combos[f"s{j}"] = labels_column(np.where(gone, neutral_text(marker),
                                                 np.array([neutral_text(t) for t in labels], dtype=object)[at]))
        plain[q.name], neutral[q.name] = f"c.l{j}", f"c.s{j}"
    table.register(f"{tag}_classes", combos)
    return joined_records(data, table, names, f"{tag}_classes", "c", plain, neutral, tag, marker,
                          order_by="ORDER BY c.gone, c.g, random()")
