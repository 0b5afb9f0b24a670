"""Identity of the people, not of the spelling: sketches that survive a custodian's routine edits of a file.

The exact identity and the whole-row sketch (fingerprint.py) bind one spelling of the rows over all columns: a
dropped or renamed column, a header written ``Sex`` instead of ``sex``, or ``MALE`` instead of ``Male`` changes
every row and made a "new" table with a fresh budget (issue 27, finding 1). This module adds, per known dataset:

- **canonical cells**: each cell hashed after folding what a routine edit changes: text is stripped, runs of
  white space become one space, letters are case-folded; a number stands for its value (``1``, ``1.0``, ``01``
  are one value). Header names are folded the same way;
- **per-column value sketches**: a keyed bottom-k sample of each column's distinct values, so that a column of the
  new table is matched to a known column by its *values* (a renamed column is found, an unreleased column
  rewritten in every row is recognised as edited);
- **column-subset row samples**: for the rows restricted to all columns, to all but one, and (up to
  `PAIR_COLUMNS` columns) to all but two, a consistent sample of the distinct restricted rows (those whose public
  hash falls under a threshold fixed by the table's size), stored as keyed hashes. A row restricted to a set of
  columns is the *sum* of its canonical cells, so it does not depend on column names or order: renamed and
  reordered columns give the same restricted rows, and a table with a column added, dropped or rewritten is
  compared on the columns both share.

Matching a new table against a known one: its columns are paired with the known ones (same folded name with
similar values first, then by values alone); the known columns left unpaired (dropped or rewritten) must be a set
the known dataset kept a sample for (at most two); the new table's rows restricted to the paired columns are then
compared with that sample in both directions, as `fingerprint.containment` does for whole rows.

A restricted row only says "same person" when rows like it are rare: two samples of the same population share
every row of a low-information table (age and sex). So a column subset is used only while (a) its restricted rows
are mostly distinct (`MIN_DISTINCT`) and (b) the product of its columns' distinct counts is at least
`MIN_SPACE` times the rows (a random row of another table coincides with one of these by chance rarely). The false
match and missed match rates of these thresholds, measured on the shipped data, are in docs/trust.md.

Only keyed hashes are stored (SipHash-2-4 under a key derived from the ledger key): without the key a stored sample
cannot be tested against a guessed row. Tables wider than `MAX_COLUMNS` columns or larger than `MAX_CELLS` cells
get no subset samples (their whole-row identity still applies); so do the large-table engine's tables, whose rows
are never held in memory.
"""

from __future__ import annotations

import hashlib
import hmac
import io
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
import pandas as pd

from ppdp_gui.engine.privacy.fingerprint import _NA_HASH, _cell_hashes, _hash_values, _mix64, _text_hashes

#: subset samples are kept for tables of at most this many columns …
MAX_COLUMNS = 64
#: … and cells (the canonical cells of a table are held in memory while it is identified: 8 bytes each)
MAX_CELLS = 12_000_000
#: all-but-two subsets are kept up to this many columns (1 + m + m(m-1)/2 samples)
PAIR_COLUMNS = 16
#: at most this many known columns may be missing (dropped or rewritten) from a new table that matches
MAX_REMOVED = 2
#: rows summed over the column subsets tried against one known table, at most (about 0.1 s per 10 million)
MAX_WORK = 40_000_000
#: expected number of distinct restricted rows in each stored sample
SAMPLE = 128
#: distinct values kept per column (the column pairing's bottom-k sample)
VALUE_K = 64
#: a column of the new table is the same column as a known one when this share of values is shared
SAME_VALUES = 0.9
#: a column with the same folded name is the same column unless fewer than this share of values are shared
SAME_NAME_VALUES = 0.5
#: a match on a column subset counts (as a near copy) from this containment on: above the whole-row threshold
#: (records.NEAR_COPY_CONTAINMENT, 0.5), because a subset's rows carry less information than whole rows (two
#: disjoint 2,000-row samples of Mushroom reached 0.504 once in 20 at 0.5; none at this level, docs/trust.md)
SUBSET_CONTAINMENT = 0.7
#: a column subset identifies people only while this share of its restricted rows are distinct …
MIN_DISTINCT = 0.8
#: … and its columns' distinct counts multiply to at least this many times the rows
MIN_SPACE = 20.0

_CELL_SALT = 0xD6E8FEB86659FD93  # Python ints: uint64 arrays combine with them as uint64
_PUBLIC_SALT = 0xA0761D6478BD642F
_TOP = float(1 << 64)


# ---- canonical cells ------------------------------------------------------------------------------------------
def fold_name(name) -> str:
    """A header as a custodian reads it: stripped, inner white space one space, case-folded."""
    return " ".join(str(name).split()).casefold()


def _fold_text(values: pd.Series) -> pd.Series:
    return values.astype(str).str.strip().str.replace(r"\s+", " ", regex=True).str.casefold()


def _canonical_cells(series: pd.Series) -> np.ndarray:
    """One uint64 per cell: text folded (white space, case), numbers by value; NA its own marker."""
    dtype = series.dtype
    if pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype):
        return _cell_hashes(series)
    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    if len(uniques):
        table = _hash_values(_fold_text(pd.Series(uniques, dtype=object)).astype(object).to_numpy())
    else:
        table = np.zeros(0, np.uint64)
    table = np.append(table, np.uint64(_NA_HASH))
    return table[np.where(codes < 0, len(table) - 1, codes)]


@dataclass
class CellHashes:
    """The canonical cells of a table, one row per column (folded names), mixed so that sums are row hashes."""

    names: list[str]
    cells: np.ndarray  # (columns, rows) uint64
    #: positions of the columns no release ever reads (identifiers, the person column: Role.never_released); the
    #: rows restricted to the others get a sample of their own, so rewriting or dropping any number of them
    #: still matches
    unreleased: tuple[int, ...] = ()

    @property
    def n_rows(self) -> int:
        return int(self.cells.shape[1]) if self.cells is not None and self.cells.ndim == 2 else 0

    @property
    def available(self) -> bool:
        return self.cells is not None

    def release(self) -> None:
        """Drop the matrix (8 bytes a cell) once the table is registered: an identity handed back to a window or
        kept in a plan then no longer holds it."""
        self.cells = None


def cell_hashes(frame: pd.DataFrame, unreleased=()) -> CellHashes | None:
    """The table's canonical cells, or None for a table too wide or too large to keep subset samples for.
    `unreleased`: the names of the columns no release reads (see CellHashes)."""
    n, m = frame.shape
    if m == 0 or n == 0 or m > MAX_COLUMNS or m * n > MAX_CELLS:
        return None
    cells = np.empty((m, n), dtype=np.uint64)
    for j in range(m):  # a loop over columns; each column is vectorised
        h = _canonical_cells(frame.iloc[:, j])
        h ^= _CELL_SALT
        cells[j] = _mix64(h)
    skip = set(unreleased)
    return CellHashes([fold_name(c) for c in frame.columns], cells,
                      tuple(j for j, c in enumerate(frame.columns) if c in skip))


# ---- keyed values -------------------------------------------------------------------------------------------
def _sub_key(key: bytes, purpose: bytes) -> str:
    return hmac.new(key, b"ppdp-sketch-v3-" + purpose, hashlib.sha256).digest()[:16].decode("latin-1")


def keyed(values: np.ndarray, key: bytes, purpose: bytes) -> np.ndarray:
    """SipHash-2-4 of each uint64 under a key derived from the ledger key (sorted, distinct)."""
    values = np.unique(np.asarray(values, dtype=np.uint64))
    if not len(values):
        return values
    out = _text_hashes(values.astype("<u8").view("S8").astype(object), _sub_key(key, purpose), encoding="latin-1")
    return np.unique(out)


def _public(values: np.ndarray) -> np.ndarray:
    x = np.asarray(values, dtype=np.uint64) ^ _PUBLIC_SALT
    return _mix64(x)


def _threshold(n_distinct: int) -> np.uint64:
    if n_distinct <= SAMPLE:
        return np.uint64((1 << 64) - 1)
    return np.uint64(int(_TOP * SAMPLE / n_distinct))


def _sample(rows: np.ndarray, threshold: np.uint64) -> np.ndarray:
    return rows[_public(rows) <= threshold]


# ---- the stored sketch --------------------------------------------------------------------------------------
@dataclass
class RobustSketch:
    """What a known dataset keeps for matching edited copies (see the module docstring). Keyed values only."""

    n_rows: int
    threshold: np.uint64
    names: list[str]  # folded header names (the pairing prefers equal names)
    values: list[np.ndarray]  # per column: keyed bottom-k of distinct values
    n_values: list[int]  # per column: distinct values
    samples: dict[tuple[int, ...], np.ndarray] = field(default_factory=dict)  # removed columns -> keyed sample

    def to_bytes(self) -> bytes:
        arrays = {"meta": np.array([self.n_rows, int(self.threshold)], dtype=np.uint64),
                  "n_values": np.array(self.n_values, dtype=np.int64),
                  "names": np.array(self.names, dtype=np.str_)}
        for j, v in enumerate(self.values):
            arrays[f"v{j}"] = v
        for removed, s in self.samples.items():
            arrays["s" + "_".join(map(str, removed))] = s
        buf = io.BytesIO()
        np.savez_compressed(buf, **arrays)
        return buf.getvalue()

    @classmethod
    def from_bytes(cls, blob: bytes) -> "RobustSketch":
        with np.load(io.BytesIO(blob), allow_pickle=False) as z:
            meta = z["meta"]
            names = [str(s) for s in z["names"]]
            values = [z[f"v{j}"] for j in range(len(names))]
            samples = {}
            for k in z.files:
                if k.startswith("s"):
                    samples[tuple(int(t) for t in k[1:].split("_") if t)] = z[k]
            return cls(int(meta[0]), np.uint64(meta[1]), names, values, [int(x) for x in z["n_values"]], samples)


def column_values(cells: CellHashes, key: bytes) -> list[np.ndarray]:
    """Each column's distinct values, keyed and sorted (all of them: the new table's side of the pairing)."""
    return [keyed(col, key, b"values") for col in cells.cells]


def build(cells: CellHashes, key: bytes, values: list[np.ndarray] | None = None) -> RobustSketch:
    """The sketch stored for a dataset when it is first charged."""
    m = len(cells.names)
    values = values if values is not None else column_values(cells, key)
    total = cells.cells.sum(axis=0, dtype=np.uint64)
    threshold = _threshold(len(np.unique(total)))
    removals: list[tuple[int, ...]] = [()] + [(j,) for j in range(m)]
    if m <= PAIR_COLUMNS:
        removals += list(combinations(range(m), 2))
    if len(cells.unreleased) > 2:
        removals.append(tuple(sorted(cells.unreleased)))
    samples = {}
    for removed in removals:
        if len(removed) >= m:
            continue
        rows = total - cells.cells[list(removed)].sum(axis=0, dtype=np.uint64) if removed else total
        samples[removed] = keyed(_sample(rows, threshold), key, b"rows")
    return RobustSketch(cells.n_rows, threshold, list(cells.names), [v[:VALUE_K] for v in values],
                        [len(v) for v in values], samples)


# ---- matching -----------------------------------------------------------------------------------------------
def _shared(new_values: np.ndarray, known: np.ndarray, known_n: int) -> tuple[float, float]:
    """The two containments of a new column's (all) keyed values and a known column's bottom-k, larger first."""
    if not len(new_values) or not len(known):
        return 0.0, 0.0
    pos = np.minimum(np.searchsorted(new_values, known), len(new_values) - 1)
    both = int((new_values[pos] == known).sum())
    region = len(new_values) if known_n <= len(known) else int(np.searchsorted(new_values, known[-1], "right"))
    a, b = both / len(known), both / region if region else 0.0
    return max(a, b), min(a, b)


def pair_columns(sketch: RobustSketch, names: list[str], values: list[np.ndarray]) -> dict[int, int]:
    """{known column: new column}: equal folded names with similar values first, then values alone (greedy by
    similarity). A known column left out was dropped or rewritten.

    Similar is the larger containment (a table of fewer rows has fewer of a column's values); among equally
    similar candidates the one that also holds more of the other's values wins, so a column added with one
    value ("1") that lies among a known column's values never takes that column from its renamed copy."""
    scores = []
    for j, (kv, kn) in enumerate(zip(sketch.values, sketch.n_values)):
        for i, nv in enumerate(values):
            s, t = _shared(nv, kv, kn)
            same_name = names[i] == sketch.names[j]
            if (same_name and s >= SAME_NAME_VALUES) or s >= SAME_VALUES:
                scores.append((not same_name, -s, -t, abs(i - j), j, i))
    pairs: dict[int, int] = {}
    used: set[int] = set()
    for *_, j, i in sorted(scores):
        if j not in pairs and i not in used:
            pairs[j] = i
            used.add(i)
    return pairs


def _space_ok(sketch: RobustSketch, kept: list[int], n_rows: int) -> bool:
    space = 1.0
    for j in kept:
        space *= max(sketch.n_values[j], 1)
        if space >= MIN_SPACE * max(n_rows, 1):
            return True
    return False


def match(sketch: RobustSketch, cells: CellHashes, values: list[np.ndarray], key: bytes) -> float:
    """The larger containment of the people of a known dataset (its sketch) and of a new table (its cells), on the
    columns they share; 0 when no column subset they share can tell people apart (see the module docstring)."""
    pairs = pair_columns(sketch, cells.names, values)
    m = len(sketch.names)
    missing = set(j for j in range(m) if j not in pairs)
    # the stored column subsets that leave out the missing columns and at most one more (a column rewritten with
    # similar values), and the subset without the columns no release reads; the largest subsets first. Bounded
    # (about m + 2 passes over the rows) so that a monthly extract of other patients is ruled out quickly.
    tries = sorted((r for r in sketch.samples if missing <= set(r) and
                    (len(r) <= len(missing) + 1 or len(r) > MAX_REMOVED)), key=lambda r: (len(r), r))
    best = 0.0
    work = 0
    for removed in tries:
        work += cells.n_rows
        if work > MAX_WORK and removed != tries[0]:
            break  # a very large table: the smallest subsets only (each try is a pass over its rows)
        stored = sketch.samples.get(removed)
        kept = [j for j in range(m) if j not in removed]
        if stored is None or not len(stored) or not kept or not _space_ok(sketch, kept, sketch.n_rows):
            continue
        # the share of distinct known restricted rows, estimated from the sample's size
        full = int(sketch.threshold) == (1 << 64) - 1
        est = len(stored) if full else len(stored) * _TOP / int(sketch.threshold)
        if est < MIN_DISTINCT * sketch.n_rows:
            continue
        rows = cells.cells[[pairs[j] for j in kept]].sum(axis=0, dtype=np.uint64)
        sample = _sample(rows, sketch.threshold)
        if len(sample) > 10 and len(np.unique(sample)) < MIN_DISTINCT * len(sample):
            continue  # the new table's restricted rows repeat: they cannot tell people apart either
        got = keyed(sample, key, b"rows")
        if not len(got):
            continue
        both = int(np.isin(stored, got, assume_unique=True).sum())
        best = max(best, both / len(stored), both / len(got))
        if best >= 1.0:
            break
    return best if best >= SUBSET_CONTAINMENT else 0.0


# ---- persons ------------------------------------------------------------------------------------------------
def person_hashes(frame: pd.DataFrame, column: str, key: bytes) -> np.ndarray:
    """The keyed hashes of the distinct person ids (folded as cells are), sorted: who is in the table."""
    return keyed(_canonical_cells(frame[column]), key, b"persons")
