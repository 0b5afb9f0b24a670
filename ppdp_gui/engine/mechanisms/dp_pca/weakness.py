"""When DP-LDA is weak, said before the run from public quantities only (the number of public classes, the
attributes chosen and ε), never from the table's rows.

DP-LDA adds Laplace noise of scale S/ε to every class sum (S: `sensitivity.lda_sensitivity`, which grows with the
square of the attributes). A class mean is that sum divided by the rows of the class, so its noise is S/(ε·n_c) on
variables scaled to [0, 1]. For the means to stand out from the noise by a tenth of the variables' range, each
class needs n_c ≥ 10·S/ε rows. Jiang et al. (seed 003) ran 2 classes on ~30,000 Adult records, where that holds at
every ε they tried but the smallest; on the review's tables (10 classes at ε = 0.25; 5 classes on 297 rows) it
does not, and the synthetic records classified at chance or as the majority class. The warning states the need
and leaves the comparison with the table's size to the custodian, who knows it; it does not read it.
"""

from __future__ import annotations

from fractions import Fraction

from ppdp_gui.engine.mechanisms.dp_pca.sensitivity import lda_sensitivity

#: the class means should stand out from their noise by this share of the variables' [0, 1] range
SEPARATION = Fraction(1, 10)
#: below this many rows in all, the need is not worth a warning (any table it matters for is that small anyway)
WARN_ABOVE = 5_000


def rows_needed(p1: int, p2: int, n_classes: int, epsilon) -> tuple[int, int]:
    """(rows per class, rows in all) for DP-LDA's class means to be resolved at `epsilon`."""
    per_class = lda_sensitivity(p1, p2) / (Fraction(epsilon) * SEPARATION)
    per = int(-(-per_class.numerator // per_class.denominator))
    return per, per * int(n_classes)


def lda_weakness(p1: int, p2: int, n_classes: int, epsilon) -> str | None:
    """A plain warning when DP-LDA needs more rows than a small table has, else None."""
    per, total = rows_needed(p1, p2, n_classes, epsilon)
    if total <= WARN_ABOVE:
        return None
    return (f"DP-LDA is weak on this shape: at ε = {float(epsilon):g} with {p1 + p2} attributes and {n_classes} "
            f"classes, each class needs about {per:,} records ({total:,} in all) before its average stands out "
            "from the noise. With fewer, the synthetic records classify little better than always guessing the "
            "most common class. Choose fewer columns, fewer classes or a larger ε (the paper tested 2 classes "
            "on about 30,000 records).")
