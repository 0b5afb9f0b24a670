"""How much of a table of noisy counts will be noise, said before the run from public quantities only.

A DP table of counts gives every cell of its domain a noisy count — cells nobody has too (releasing only the
occupied ones would tell who is there). Each empty cell comes out with E[max(0, Z)] records on average (Z the
integer noise), so a release with many cells and few records per cell is mostly noise: on the diabetes extract
DiffGen released 152,477 count rows standing for 461,310 records from 101,766 rows, and race came out almost
uniform. A custodian must hear this before spending ε.

What the estimate reads (`Mechanism.noise_estimate` builds it; the mechanisms do it in their own packages):
the public domains and taxonomy sizes, ε, h, the mechanism's noise scale and the number of cells the release
will have (exactly, or at most). Never the table's rows: the custodian states the size they expect ("a table of
about N records", the window fills in the open table's rows for them to change), and the share of noise is worked
out for that N. None of it goes into the release note: it is for the custodian, in the Run step and the figures.

With C cells, N records and m = E[max(0, Z)]: the noise adds about m records to every cell that holds nobody or
only a few people (a cell with c people gains E[max(−c, Z)], between 0 and m, and nearly m while c is small beside
the noise scale). Records of real people cluster: a few cells hold most of them and most cells of a fine cut hold
nobody or a handful, so nearly every cell gains about m — the likely figure is C·m (`added_for`). (An earlier
version assumed the records spread evenly, leaving only C·e^(−N/C) cells empty; on Adult under DiffGen it was 3 to
7 times below the records the noise really added — h = 10, ε = 0.25: about 9,700 against 43,000–174,000 — because
it counted no cell as empty once N exceeded C.) The share of noise is C·m over N plus it. A mechanism that chooses
its cells at random during the run (DiffGen) gives a likely C and the most it can be; the warning rests on the
likely C (the most is rarely reached). tests/engine/test_noise_estimate_realised.py holds the estimate against the
records DiffGen's runs add on a real table.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

#: above this share of records coming from noise, the Run step warns (half the table would be noise)
NOISE_WARNING_SHARE = 0.5


def _n(value: float) -> str:
    return f"{value:,.0f}"


@dataclass(frozen=True)
class NoiseEstimate:
    """The cells a table of noisy counts will have and the records noise adds to each empty one.

    `cells`: count cells of the release (combinations × classes) — exact when `exact`, else the likely number
    (DiffGen: over random draws of its h specialisations), with `at_most` the most it can have;
    `per_empty_cell`: E[max(0, Z)] for the mechanism's noise scale `scale`; `columns`: (column, values it will have
    at most) for the per-column line; `fixes`: what makes it less noisy, in the window's words (the mechanism's)."""

    cells: int
    per_empty_cell: float
    scale: float
    columns: tuple[tuple[str, int], ...] = ()
    exact: bool = False
    fixes: tuple[str, ...] = ()
    at_most: int | None = None

    @property
    def added(self) -> float:
        """Records the noise would add if every cell were empty: C·m."""
        return self.cells * self.per_empty_cell

    def added_for(self, records: int) -> float:
        """Records the noise adds to a table of `records` records (the custodian's stated size): about C·m, nearly
        every cell holding nobody or few people beside the noise (records cluster: see the module docstring). The
        size only enters the share (`share`), not the records added."""
        c = float(self.cells)
        return c * self.per_empty_cell if c else 0.0

    def share(self, records: int) -> float:
        """Expected share of the released records that come from noise alone, for a table of `records` records."""
        added = self.added_for(records)
        total = max(int(records), 0) + added
        return added / total if total else 0.0

    def warns(self, records: int | None) -> bool:
        return records is not None and self.share(records) >= NOISE_WARNING_SHARE

    def _cells_text(self) -> str:
        if self.exact:
            return f"{_n(self.cells)} cells"
        most = f", up to {_n(self.at_most)}" if self.at_most is not None and self.at_most > self.cells else ""
        return f"about {_n(self.cells)} cells (likely{most}: the groups are chosen at random during the run)"

    def _with(self, cells: int) -> "NoiseEstimate":
        return replace(self, cells=cells, at_most=None)

    def share_range(self, records: int) -> tuple[float, float | None]:
        """The share of noise with the likely number of cells and, when the cells are not exact, with the most
        (None when exact or the most is not larger): a run can land anywhere between, and the custodian must see
        both — 'about 0 %' alone was read as 'no noise' on a table whose run came out 39 % noise."""
        most = self._with(self.at_most).share(records) if (
            not self.exact and self.at_most is not None and self.at_most > self.cells) else None
        return self.share(records), most

    def sentences(self, records: int | None) -> list[str]:
        """The plain lines the Run step and the figures show (for the custodian only)."""
        lines = [f"The table will have {self._cells_text()}, each with a noisy count; a cell nobody has gets "
                 f"{self.per_empty_cell:.2g} records on average from the noise."]
        if self.columns:
            lines.append("Values per column (at most): " + ", ".join(f"{c} {_n(v)}" for c, v in self.columns) + ".")
        if records is not None:
            likely, most = self.share_range(records)
            added = self.added_for(records)
            text = (f"For a table of about {_n(records)} records (the size you state): about {likely:.0%} of the "
                    f"released records would come from the noise alone ({_n(added)} "
                    f"record{'' if round(added) == 1 else 's'} added to cells that hold nobody or only a few)")
            if most is not None:
                worst = self._with(self.at_most).added_for(records)
                text += (f" with the likely number of cells, and up to {most:.0%} ({_n(worst)} records) if the run "
                         f"reaches the most, {_n(self.at_most)} cells")
            lines.append(text + ".")
        return lines

    def warning(self, records: int | None) -> str | None:
        """The Run step's warning when the table would be mostly noise, with the fix; None otherwise."""
        if not self.warns(records):
            return None
        fix = (", ".join(self.fixes[:-1]) + (" or " if len(self.fixes) > 1 else "") + self.fixes[-1]
               if self.fixes else "fewer cells")
        return (f"About {self.share(records):.0%} of this table would be noise: about {_n(self.cells)} cells for "
                f"about {_n(records)} records, so most cells hold nobody and get their count from the noise alone. "
                f"To make it less noisy, try {fix}.")


def positive_noise_mean(scale: float) -> float:
    """E[max(0, Z)] for discrete Laplace noise Z with P(z) ∝ e^(−|z|/scale): α / (1 − α²), α = e^(−1/scale)."""
    alpha = math.exp(-1.0 / scale)
    return alpha / -math.expm1(-2.0 / scale)


def most_cells(sizes: list[list[int]], budget: int) -> tuple[int, list[int]]:
    """The largest product of per-column sizes when `budget` refinements are shared among the columns:
    `sizes[a][s]` is the most values column a can have after s of them (non-decreasing in s). Returns the product
    and the sizes chosen. Exact over every way of sharing them (dynamic programming, columns × budget²)."""
    best = {0: (1, [])}  # refinements used -> (product, sizes chosen)
    for column in sizes:
        nxt: dict[int, tuple[int, list[int]]] = {}
        for used, (product, chosen) in best.items():
            for s in range(0, min(len(column) - 1, budget - used) + 1):
                cand = (product * column[s], chosen + [column[s]])
                key = used + s
                if key not in nxt or cand[0] > nxt[key][0]:
                    nxt[key] = cand
        best = nxt
    product, chosen = max(best.values(), key=lambda pc: pc[0])
    return product, chosen
