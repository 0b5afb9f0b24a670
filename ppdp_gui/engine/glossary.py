"""Plain words for every figure the engine reports, keyed by the figure's name — for the window, the guide and advice.

Mechanisms name their figures freely ("CA %", "NCP %", "C_avg"); a custodian who does not code should never have
to guess what they mean. Each entry gives a short title, one plain sentence, the exact formula (for a tooltip,
for whoever checks), which direction is better, and what kind of figure it is (utility, risk, size of the
release, a reference line). The advice on a simulation (engine/advice.py) reads the directions from here, so a
new mechanism's figure gets advice by adding one entry — no view knows a mechanism. Unknown names still get a
direction guessed from their words ("accuracy" up, "error" / "loss" / "risk" down), and are shown as they are.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Better = Literal["higher", "lower"]
Kind = Literal["utility", "risk", "size", "reference", "release", "custodian", "other"]


@dataclass(frozen=True)
class Figure:
    title: str
    meaning: str
    formula: str = ""
    better: Better | None = None
    kind: Kind = "other"
    unit: str = ""  # said after the number ("pairs of rows"); a name ending in "%" is a percentage

    def tooltip(self) -> str:
        return self.meaning + (f"\nHow it is computed: {self.formula}" if self.formula else "")


_RISK_ANY = "Chance that someone who knows a person is in the table picks out that person's row"

FIGURES: dict[str, Figure] = {
    # utility against the true data (for the custodian)
    "CA %": Figure("Classification accuracy", "How often a model trained on the release predicts the class of people "
                   "it has not seen correctly (higher is better).",
                   "correct predictions / held-out rows × 100; a decision tree trained on the released groups "
                   "(weighted by their counts), tested on a held-out part of your table", "higher", "utility"),
    "F-measure tree %": Figure("Prediction quality (decision tree)", "How well a decision tree trained on the release "
                               "predicts the class of people it has not seen (higher is better).",
                               "weighted F1 = Σ over classes of share × 2·precision·recall / (precision + recall)",
                               "higher", "utility"),
    "F-measure 5-NN %": Figure("Prediction quality (nearest neighbours)", "How well a 5-nearest-neighbour model "
                               "trained on the release predicts the class of people it has not seen.",
                               "weighted F1 of a 5-nearest-neighbour classifier", "higher", "utility"),
    "NCP %": Figure("Information loss", "How much the published values were widened, on average: 0 % is the exact "
                    "data, 100 % hides everything (lower is better).",
                    "NCP = mean over rows and quasi-identifiers of (width of the published range or group) / "
                    "(width of the column's whole domain) × 100", "lower", "utility"),
    "information loss %": Figure("Information loss", "How much the published values were widened, on average, over "
                                 "all fragments: 0 % is the exact data (lower is better).",
                                 "mean over rows and quasi-identifiers of published width / domain width × 100",
                                 "lower", "utility"),
    "mean abs error": Figure("Average error of a count", "How far a released count is from the true count, on "
                             "average (lower is better).", "mean over all combinations of |noisy count − true count|",
                             "lower", "utility"),
    "max abs error": Figure("Largest error of a count", "The worst difference between a released count and the true "
                            "count.", "max over all combinations of |noisy count − true count|", "lower", "utility"),
    "total error": Figure("Error of the total", "How far the released counts, added up, are from the number of rows "
                          "in your table.", "|Σ noisy counts − rows of your table|", "lower", "utility"),
    "C_avg": Figure("Group size compared with k", "1 means groups are just big enough; 2 means twice as big as "
                    "needed, which costs detail (lower is better). Counted in persons when k counts persons.",
                    "C_avg = (rows / groups) / k; with a person column, (persons per group, averaged) / k",
                    "lower", "utility", unit="× k"),
    "discernibility": Figure("Pairs of look-alike rows", "How many pairs of rows the release shows alike (each row "
                             "paired with every row of its group, itself included): the bigger the groups, the more "
                             "pairs and the less detail. Compare it between releases of the same table (lower is "
                             "better).",
                             "discernibility DM = Σ over groups of (group size)² (a suppressed row is paired with "
                             "every row of the table)", "lower", "utility", unit="pairs of rows"),
    "class distortion": Figure("Changed class values", "Rows whose class value was changed so that the fragments "
                               "cannot be joined back together.", "rows with released class ≠ true class",
                               "lower", "utility"),
    "class distortion %": Figure("Changed class values", "Share of the published class values that were changed.",
                                 "changed class values / (rows × fragments) × 100", "lower", "utility"),
    # references drawn as lines in a simulation
    "BA %": Figure("Accuracy on the original data", "The same model trained on your original table: the best a "
                   "release can hope for.", "decision tree on the raw training part, tested on the held-out part",
                   "higher", "reference"),
    "LA %": Figure("Accuracy of always guessing", "Always predicting the most common class: a useful release does "
                   "better than this.", "share of the most common class in the held-out part × 100", "higher",
                   "reference"),
    # risk from the released groups (for the custodian)
    "highest re-identification risk %": Figure("Highest re-identification risk", _RISK_ANY + ", in the smallest "
                                               "group (lower is better).", "100 / size of the smallest group "
                                               "(prosecutor model)", "lower", "risk"),
    "average re-identification risk %": Figure("Average re-identification risk", _RISK_ANY + ", averaged over all "
                                               "rows.", "100 × groups / rows", "lower", "risk"),
    "share of records with risk above 10 %": Figure("Rows at risk", "Share of rows in groups of fewer than 10 rows, "
                                                    "whose risk is above 10 % (lower is better).",
                                                    "rows in groups with 1/size > 0.1, / all rows × 100", "lower",
                                                    "risk"),
    # the same, each patient counted once (metrics/person_risk.py): the dossier's residual risk per patient
    "patients in the release": Figure("Patients in the release", "Different patients (the person column) whose rows "
                                      "are in the release's groups.", "distinct person ids of the released rows",
                                      None, "risk"),
    "average re-identification risk per patient %": Figure(
        "Average risk per patient", "Each patient's risk (the largest over the groups their rows are in), averaged "
        "over patients: each patient counts once, however many rows they have.",
        "100 × mean over patients of max over their groups of 1 / patients in the group", "lower", "risk"),
    "share of patients with risk above 10 %": Figure(
        "Patients at risk", "Share of patients with a row in a group of fewer than 10 patients (lower is better).",
        "patients whose risk is above 0.1, / all patients × 100", "lower", "risk"),
    "smallest group (rows)": Figure("Smallest group", "Rows in the smallest group of rows sharing the same published "
                                    "quasi-identifiers (higher is safer).", "min over groups of the group size",
                                    "higher", "risk"),
    "smallest group (persons)": Figure("Smallest group", "Persons (the person column) whose rows are in the "
                                       "smallest group sharing the same published quasi-identifiers (higher is "
                                       "safer).", "min over groups of the distinct persons in the group", "higher",
                                       "risk"),
    "smallest group": Figure("Smallest group", "Rows in the smallest group of a fragment (higher is safer).",
                             "min over fragments and groups of the group size", "higher", "risk"),
    "groups": Figure("Groups", "Groups of rows that share the same published quasi-identifier values.",
                     "distinct combinations of the published quasi-identifiers", None, "other"),
    # attacker models and population uniqueness (metrics/risk_models.py; for the custodian, before and after)
    "prosecutor: records at risk %": Figure(
        "Rows at risk (someone knows the person is in the table)", "Share of rows that someone who knows a person "
        "is in the table could pick out with a chance above the threshold (lower is better).",
        "rows in groups with 1 / group size > threshold, / all rows × 100", "lower", "risk"),
    "prosecutor: highest risk %": Figure(
        "Highest risk (someone knows the person is in the table)", "The best chance of picking out one person's "
        "row, in the smallest group (lower is better).", "100 / size of the smallest group", "lower", "risk"),
    "prosecutor: success rate %": Figure(
        "People re-identified (someone knows the person is in the table)", "If someone tried this for every person "
        "in the table, the share they would find correctly, on average (lower is better).",
        "groups / rows × 100", "lower", "risk"),
    "journalist: records at risk %": Figure(
        "Rows at risk (someone matches a public register)", "The same, for someone who does not know who is in the "
        "table and matches names from a register of the population. Without such a register your table stands in "
        "for it, so the figure equals the one above (an upper bound).",
        "rows whose group has 1 / (its size in the population) > threshold, / all rows × 100", "lower", "risk"),
    "journalist: highest risk %": Figure(
        "Highest risk (someone matches a public register)", "The best chance of one match being right, for "
        "someone matching a register of the population (lower is better).",
        "100 / smallest group size in the population", "lower", "risk"),
    "journalist: success rate %": Figure(
        "People re-identified (someone matches a public register)", "Share of the table's people such a person "
        "would find correctly, on average (lower is better).",
        "max(groups / Σ population group sizes, Σ (group size / population group size) / rows) × 100", "lower",
        "risk"),
    "marketer: success rate %": Figure(
        "People re-identified (someone matches everybody at once)", "Share of the table's people found correctly "
        "by someone who links the whole table to a register and does not care who in particular (lower is "
        "better).", "Σ over groups of (size in the table / size in the population) / rows × 100", "lower",
        "risk"),
    "sample uniques %": Figure(
        "Rows unique in your table", "Share of rows whose combination of quasi-identifiers no other row has.",
        "rows in groups of size 1 / rows × 100", "lower", "risk"),
    "population uniques %": Figure(
        "People unique in the population (estimate)", "Estimated share of all people in the population who are "
        "the only one with their combination of quasi-identifiers: such a person is found for sure by anyone who "
        "knows that combination (lower is better).",
        "population-uniqueness models (Pitman, Zayatz, SNB); Dankar's rule picks one: Pitman when the table holds "
        "10 % of the population or less, else the smaller of Zayatz and SNB", "lower", "risk"),
    # the release itself (public: read from the released table)
    "rows released": Figure("Rows released", "How many rows the released table has.", "rows of the main released "
                            "table", "lower", "size"),
    "total of the counts": Figure("Records the counts stand for", "The released counts added up: how many records "
                                  "the table of counts stands for (noise included).", "Σ of the count column",
                                  None, "release"),
    "columns released": Figure("Columns released", "How many columns the released table has.", "columns of the main "
                               "released table", None, "release"),
    "further tables": Figure("Further tables", "Tables published beside the main one (fragments, or the counts "
                             "behind synthetic records).", "", None, "release"),
    # compared with the true data (for the custodian)
    "rows in your table": Figure("Rows in your table", "How many rows the release was made from. For you only: "
                                 "it is not published.", "rows read − rows dropped for missing values", None,
                                 "custodian"),
    "records added by noise": Figure("Records added by the noise", "How many more records the counts stand for than "
                                     "your table has (negative: fewer). Noise on every combination, empty ones "
                                     "too, adds records.", "Σ counts − rows of your table", None, "custodian"),
    # global recoding's quality models (ARX's names), per column and aggregated
    "Loss (geometric, ARX)": Figure("Information loss as ARX reports it", "ARX's 'Loss' figure: how much the "
                                    "published values were widened, 0 is the exact data and 1 hides everything "
                                    "(lower is better).", "(Π over quasi-identifiers of (1 + their average "
                                    "widening))^(1/d) − 1, d quasi-identifiers (ARX's Loss)", "lower", "utility"),
    "Precision %": Figure("Generalisation level", "How high up its taxonomy each published value was taken, on "
                          "average: 0 % is the exact value, 100 % is '*' (lower is better).",
                          "mean over rows and quasi-identifiers of level / height of the taxonomy × 100 (Sweeney's "
                          "precision)", "lower", "utility"),
    "Non-uniform entropy %": Figure("Information lost (entropy)", "How hard it is, from a published value, to tell "
                                    "which original value it was, compared with '*' everywhere: 0 % is the exact "
                                    "data, 100 % hides everything (lower is better).",
                                    "per column: mean over rows of −log₂ P(original value | published value), "
                                    "divided by its value for '*'; averaged over the columns × 100 (ARX's "
                                    "non-uniform entropy)", "lower",
                                    "utility"),
    "suppressed rows": Figure("Rows hidden (shown as *)", "Rows whose quasi-identifiers are all replaced by '*' "
                              "so that the others can keep more detail; they stay in the file.",
                              "rows in groups smaller than k (or failing l, t or a risk limit), within the "
                              "suppression limit", "lower", "utility"),
    "suppressed %": Figure("Rows hidden (shown as *)", "Share of rows whose quasi-identifiers are all replaced by "
                           "'*' (within the suppression limit you set).", "suppressed rows / rows × 100", "lower",
                           "utility"),
    # DP-PCA, DP-LDA and the record baselines (seed 003): released records against the original ones
    "F-norm": Figure("Distance from the original records", "How far the released records are from the original "
                     "ones, all rows and columns together, on a 0–1 scale per column (lower is better).",
                     "‖X̃ − X‖_F: square root of the sum over rows and encoded columns of (released − original)², "
                     "numbers scaled by their public bounds, categories one-hot", "lower", "utility"),
    "MSE": Figure("Average squared error per value", "How far a released value is from the original, on average, "
                  "on a 0–1 scale per column (lower is better).",
                  "‖X̃ − X‖²_F / (rows × encoded columns)", "lower", "utility"),
    "F-norm (noisy matrix)": Figure("Distance of the noisy matrix", "The same distance measured on the noisy "
                                    "matrix before it is put back into the columns' public ranges, as the paper "
                                    "measures the noise (lower is better).", "‖X̃ − X‖_F before clamping",
                                    "lower", "utility"),
    "MSE (noisy matrix)": Figure("Average squared error of the noisy matrix", "The average squared error before "
                                 "the values are put back into the columns' public ranges (lower is better).",
                                 "‖X̃ − X‖²_F / (rows × encoded columns), before clamping", "lower", "utility"),
    "categories kept %": Figure("Categories kept", "Share of the released category values that equal the original "
                                "row's value (higher is better).",
                                "mean over rows and categorical columns of [released category = original] × 100",
                                "higher", "utility"),
    "ACA LDA %": Figure("Classification accuracy (LDA)", "How often a linear discriminant model trained on the "
                        "release predicts the class of held-out original rows correctly (higher is better).",
                        "correct predictions / held-out rows × 100", "higher", "utility"),
    "ACA tree %": Figure("Classification accuracy (decision tree)", "How often a decision tree trained on the "
                         "release predicts the class of held-out original rows correctly (higher is better).",
                         "correct predictions / held-out rows × 100", "higher", "utility"),
    "AUC LDA": Figure("Ranking quality (LDA)", "How well the linear discriminant model trained on the release "
                      "ranks held-out rows of one class above the others: 0.5 is guessing, 1 is perfect.",
                      "area under the ROC curve, one class against the rest, averaged over the classes",
                      "higher", "utility"),
    "AUC tree": Figure("Ranking quality (decision tree)", "How well the decision tree trained on the release ranks "
                       "held-out rows of one class above the others: 0.5 is guessing, 1 is perfect.",
                       "area under the ROC curve, one class against the rest, averaged over the classes",
                       "higher", "utility"),
    "BA LDA %": Figure("Accuracy on the original data (LDA)", "The same linear discriminant model trained on your "
                       "original rows: the best a release can hope for.",
                       "correct predictions / held-out rows × 100, trained on the original training rows",
                       "higher", "reference"),
    "BA tree %": Figure("Accuracy on the original data (decision tree)", "The same decision tree trained on your "
                        "original rows: the best a release can hope for.",
                        "correct predictions / held-out rows × 100, trained on the original training rows",
                        "higher", "reference"),
    "entropy (bits)": Figure("Spread of the released values", "How evenly the released values of a column are "
                             "spread, averaged over the columns; compare it with the original rows' own figure.",
                             "mean over columns of −Σ p log₂ p, numbers counted in 10 bins of their public bounds",
                             None, "utility"),
    "entropy of the records (bits)": Figure("Spread of the original values", "The same spread measured on your "
                                            "original rows: the line a release is compared with.",
                                            "mean over columns of −Σ q log₂ q", None, "reference"),
    "KL divergence (bits)": Figure("Difference of the distributions", "How different each released column's "
                                   "distribution is from the original one, averaged over the columns: 0 is the "
                                   "same (lower is better).",
                                   "mean over columns of D(P‖Q) = Σ p log₂(p / q), half a row added to every cell",
                                   "lower", "utility"),
    # KRIMP synthetic data (seed 004): how close the generated rows are to the original ones (custodian only)
    "anonymity score": Figure("Anonymity score", "How many original rows reappear in the generated table, rare "
                              "rows weighing more (lower is safer).",
                              "AS = Σ over support levels s of (1/s) × P(an original row of support s is generated)",
                              "lower", "other"),
    "normalised anonymity score": Figure("Anonymity score (0 to 1)", "The anonymity score divided by its value "
                                         "for a copy of the table: 0 means no original row reappears, 1 that "
                                         "every one does (lower is safer).", "NAS = AS(generated) / AS(original)",
                                         "lower", "other"),
    "generated rows equal to some original row %": Figure("Generated rows that are real rows", "Share of the "
                                                          "generated rows equal to some row of your table.",
                                                          "generated rows equal to an original row / generated "
                                                          "rows × 100", "lower", "other"),
    "risk: generated rows copying a unique original row %": Figure(
        "Generated rows copying a unique row", "Share of the generated rows equal to a row that occurs "
        "only once in your table: such a row can point at one person (lower is safer).",
        "generated rows equal to an original row of support 1 / generated rows × 100", "lower", "risk"),
    "risk: generated rows copying an original row of support < min_sup %": Figure(
        "Generated rows copying a rare row", "Share of the generated rows equal to an original row shared by fewer "
        "rows than the minimum support: a pattern KRIMP could not have learnt, so a copy is chance or a leak "
        "(lower is safer).", "generated rows equal to an original row of support < min_sup / generated rows × 100",
        "lower", "risk"),
    "equal frequent itemsets %": Figure("Frequent patterns kept", "Share of your table's frequent value "
                                        "combinations that are also frequent in the generated table (higher is "
                                        "better).", "|F(original) ∩ F(generated)| / |F(original)| × 100",
                                        "higher", "utility"),
    "avg support difference of equal itemsets %": Figure(
        "Frequency error of kept patterns", "How far the frequency of a kept pattern is from its frequency in your "
        "table, on average, in % of the rows (lower is better).",
        "mean over common frequent itemsets of |support in original − support in generated| × 100", "lower",
        "utility"),
    "avg support of new itemsets %": Figure(
        "Frequency of invented patterns", "How frequent, on average, the patterns are that only the generated "
        "table has, in % of its rows (lower is better).",
        "mean over itemsets frequent only in the generated table of their support × 100", "lower", "utility"),
    "dissimilarity (code tables)": Figure(
        "Difference of the two tables", "How differently KRIMP compresses the two tables: 0 means they look alike "
        "to it (lower is better).",
        "DS = max over the two tables D of (L(D, CT_other) − L(D, CT_own)) / L(D, CT_own)",
        "lower", "utility"),
    "compression ratio L(D,CT)/L(D,ST) %": Figure(
        "Compression achieved", "The size of your table encoded with the patterns KRIMP found, against its size "
        "with no patterns: lower means more structure was found.",
        "L(D, CT) / L(D, ST) × 100 (ST: the code table of single values)", "lower", "other"),
    "code-table elements per generated row": Figure(
        "Patterns per generated row", "How many of the learnt patterns were put together to make a generated row, "
        "on average.", "mean over generated rows of the code-table elements used", None, "other"),
}

#: figures named after a column: 'NCP % age' -> the information loss of age
_PER_COLUMN = {"NCP % ": ("Information loss of {}",
                          ("How much the published values of {} were widened, on average: 0 % is the exact data, "
                           "100 % hides everything (lower is better)."),
                          ("mean over rows of (values or width under the published value − 1 step) / (values or "
                           "width of the whole column − 1 step) × 100; a hidden row counts as '*'"),
                          "lower", "utility")}

_HIGHER = ("accuracy", "f-measure", "f1", "ca %", "ba %", "smallest group")
_LOWER = ("error", "loss", "risk", "distortion", "ncp", "discernibility", "penalty")


def figure(name: str) -> Figure:
    """The entry for `name`; an unknown name gets itself as title and a direction guessed from its words."""
    found = FIGURES.get(name)
    if found is not None:
        return found
    for prefix, (title, meaning, formula, direction, kind_) in _PER_COLUMN.items():
        if name.startswith(prefix) and len(name) > len(prefix):
            column = name[len(prefix):]
            return Figure(title.format(column), meaning.format(column), formula, direction, kind_)
    low = name.lower()
    better: Better | None = ("higher" if any(w in low for w in _HIGHER) else
                             "lower" if any(w in low for w in _LOWER) else None)
    kind: Kind = "risk" if "risk" in low else ("utility" if better else "other")
    return Figure(name, "", "", better, kind)


def unit(name: str) -> str:
    """What follows a figure's number: "%" for a name ending in "%", else the glossary's unit ("pairs of rows")."""
    return "%" if name.rstrip().endswith("%") else figure(name).unit


def with_unit(name: str, text: str) -> str:
    """'11.2 %', '5,566,280 pairs of rows': a formatted number with its unit."""
    u = unit(name)
    return f"{text} {u}" if u else text


def better(name: str) -> Better | None:
    return figure(name).better


def label(name: str) -> str:
    """'Information loss (NCP %)': the plain title with the name the figure has in files and the CLI."""
    f = figure(name)
    return name if f.title == name else f"{f.title} ({name})"
