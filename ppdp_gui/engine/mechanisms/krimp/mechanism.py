"""KRIMP synthetic: a new table generated from the patterns KRIMP finds in the original (seed 004).

The table (identifier columns left out) becomes itemsets (`encoding`), frequent itemsets of at least min_sup rows
are mined (`mining`), KRIMP picks the code table that compresses the data best (`compress`), and new records are
drawn from it (`generate`) and decoded to the original columns. No record of the original is published as such —
but this is *not* a formal privacy guarantee: a generated record can equal an original one, rare ones included,
and nothing bounds what the patterns reveal. The release says so in the window, the note and the CLI, and the
custodian's figures (normalised anonymity score, copied rare rows) measure how much it happened this time.
"""

from __future__ import annotations

import time
from typing import Any, Iterator

import numpy as np
import pandas as pd

from ppdp_gui.engine.data.schema import Dataset
from ppdp_gui.engine.errors import ParameterError
from ppdp_gui.engine.mechanisms.base import Mechanism, ParamSpec, PrivacyCost, Problem, Progress, Release
from ppdp_gui.engine.mechanisms.krimp.encoding import ItemTable, encode_frame

GUARANTEE = "synthetic, no formal privacy guarantee"
PLAIN = ("These records were generated: none is a copy of a source record by construction, but this is no formal "
         "privacy guarantee. A generated record can equal a real one (rare ones included), and the patterns the "
         "generator learnt (combinations shared by at least min_sup records) are reproduced on purpose.")
MAX_VALUES = 20  # numeric columns with more different values are cut into bins


def measure_names() -> dict[str, str]:
    """Figure names (as shown to the custodian) of a KRIMP synthetic release."""
    return {"nas": "normalised anonymity score", "as": "anonymity score",
            "rare": "risk: generated rows copying an original row of support < min_sup %",
            "unique": "risk: generated rows copying a unique original row %",
            "any": "generated rows equal to some original row %",
            "equal": "equal frequent itemsets %", "diff": "avg support difference of equal itemsets %",
            "new": "avg support of new itemsets %", "ds": "dissimilarity (code tables)",
            "ratio": "compression ratio L(D,CT)/L(D,ST) %", "pieces": "code-table elements per generated row"}


class KrimpSynthetic(Mechanism):
    name = "KRIMP synthetic"
    guarantee = GUARANTEE
    summary = ("Generates a new table from the patterns KRIMP finds in yours (combinations of values shared by "
               "at least min_sup records). No formal privacy guarantee: generated records can equal real ones; "
               "the results show how many did.")
    params = (
        ParamSpec("min_sup", "Minimum support (records sharing a pattern)", "int", default=10, low=1, high=10000,
                  help="Only combinations of values found in at least this many records are learnt; rarer "
                       "combinations appear only by chance. Higher: more privacy, less detail (like k)."),
        ParamSpec("n_records", "Records to generate (0 = as many as the original)", "int", default=0, low=0,
                  high=10_000_000, help="How many synthetic records to produce."),
        ParamSpec("candidates", "Candidate patterns", "choice", default="closed", choices=("closed", "all"),
                  help="closed: only patterns no larger pattern matches in support (far fewer, fast on wide "
                       "tables); all: every frequent pattern (the paper's default for narrow tables)."),
        ParamSpec("laplace", "Laplace correction", "float", default=0.001, low=1e-6, high=10.0, log_scale=True,
                  help="Added to every pattern's weight so every value stays possible; larger: more diversity, "
                       "weaker correlations."),
        ParamSpec("bins", "Bins for numbers", "int", default=5, low=2, high=100,
                  help=f"Numeric columns with more than {MAX_VALUES} different values are cut into this many "
                       "bins of about equal size (unless a taxonomy level is chosen)."),
        ParamSpec("taxonomy_level", "Taxonomy level for numbers (0 = bins)", "int", default=0, low=0, high=10,
                  help="≥ 1: numeric columns with a taxonomy are generalised this many levels above their "
                       "values instead of being binned."),
        ParamSpec("numbers_as", "Numbers published as", "choice", default="interval",
                  choices=("interval", "uniform value"),
                  help="interval: the bin's label, e.g. [20, 30); uniform value: a number drawn in the bin."),
        ParamSpec("prune", "Prune the code table", "bool", default=True,
                  help="KRIMP's post-acceptance pruning: smaller code tables, as the original release."),
    )

    # -- checks ---------------------------------------------------------------------------------------------
    @staticmethod
    def columns(data: Dataset) -> list[str]:
        return [c.name for c in data.schema if not c.role.never_released]

    def check(self, data: Dataset, params: dict[str, Any]) -> list[Problem]:
        problems = [Problem("KRIMP synthetic gives no formal privacy guarantee: generated records can equal real "
                            "ones. Check the risk figures in the results before you publish.", level="warning")]
        cols = self.columns(data)
        if not cols:
            return [Problem("every column is an identifier: nothing to generate")]
        if data.n_rows == 0:
            return [Problem("the table has no rows")]
        if params["min_sup"] > data.n_rows:
            problems.append(Problem(f"min_sup = {params['min_sup']} is more than the {data.n_rows} rows: nothing "
                                    "could be learnt", param="min_sup"))
        for name in cols:
            spec = data.spec(name)
            distinct = data.frame[name].nunique(dropna=True)
            if spec.kind != "numeric" and distinct > max(50, data.n_rows // 2):
                problems.append(Problem(f"{name!r} has {distinct:,} different values (free text or a record "
                                        "number?): mark it as an identifier to leave it out", level="warning",
                                        column=name))
        return problems

    def cost(self, params: dict[str, Any]) -> PrivacyCost:
        return PrivacyCost()  # no ε, no k: shown as "no formal guarantee"

    # -- run ------------------------------------------------------------------------------------------------
    def encode(self, data: Dataset, bins: int, taxonomy_level: int) -> ItemTable:
        cols = self.columns(data)
        numeric = [c for c in cols if data.spec(c).kind == "numeric"]
        gens = {}
        if taxonomy_level > 0:
            for c in numeric:
                tax = data.spec(c).taxonomy
                if tax is not None:
                    cut = tax.nodes_at_level(min(taxonomy_level, tax.height))
                    gens[c] = (lambda s, tax=tax, cut=cut: tax.generalise(_as_text(s), cut).astype(str),
                               f"taxonomy level {taxonomy_level}")
        return encode_frame(data.frame[cols], numeric=numeric, bins=bins, max_values=MAX_VALUES, generalisers=gens)

    def _run(self, data: Dataset, *, rng, min_sup: int, n_records: int, candidates: str, laplace: float,
             bins: int, taxonomy_level: int, numbers_as: str, prune: bool) -> Iterator[Progress | Release]:
        from ppdp_gui.engine.mechanisms.krimp import compress as C
        from ppdp_gui.engine.mechanisms.krimp.generate import generate_codes
        from ppdp_gui.engine.mechanisms.krimp.mining import mine

        times = {}
        yield Progress(0.01, "turning the table into itemsets")
        table = self.encode(data, bins, taxonomy_level)
        yield Progress(0.03, f"mining {candidates} patterns of at least {min_sup} records")
        t0 = time.perf_counter()
        cands = mine(table, min_sup, candidates)
        times["mining s"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        ct = yield from relay_progress_value(C.compress_iter(table, cands, prune=prune), 0.1, 0.6, "KRIMP: ")
        times["compression s"] = time.perf_counter() - t0
        n_out = int(n_records) or table.n_rows
        yield Progress(0.6, f"generating {n_out:,} records")
        t0 = time.perf_counter()
        codes, pieces = generate_codes(ct, table, n_out, rng, laplace)
        out = table.decode(codes, numeric_output=numbers_as, rng=rng)
        times["generation s"] = time.perf_counter() - t0
        yield Progress(0.7, "measuring how close and how revealing the new table is (for you only)")
        figures = yield from relay_progress_value(
            _figures(table, ct, codes, pieces, min_sup, candidates, prune), 0.7, 0.99, "")
        for name, col in zip(out.columns, table.columns):
            if col.how == "values" and data.spec(name).kind == "numeric":
                out[name] = pd.to_numeric(out[name], errors="coerce")
        note = {
            "privacy": PLAIN,
            "method": "KRIMP data generator (Vreeken, van Leeuwen & Siebes, ICDM 2007): patterns found by KRIMP "
                      "compression, records drawn from them",
            "min_sup": min_sup, "candidates": candidates, "laplace": laplace, "pruning": prune,
            "columns generated": list(out.columns),
            "numbers": {c.name: c.how for c in table.columns if c.numeric},
        }
        record = {
            **note,
            "rows in the source": table.n_rows, "rows generated": n_out, "items": table.n_items,
            "candidates mined": len(cands),
            "code table": {"non-singleton elements": len(ct.elements), "L(D,ST) bits": ct.L_ST_total,
                           "L(D,CT) bits": ct.total, "L(CT|D) bits": ct.L_CT_D, "L(D|CT) bits": ct.L_D_CT,
                           "ratio %": 100 * ct.ratio,
                           "largest elements": [[table.item_label(i) for i in e] for e in
                                                sorted(ct.elements, key=len, reverse=True)[:20]]},
            "bins": {c.name: list(c.edges) for c in table.columns if c.edges is not None},
            "seconds": times,
            "figures": figures,
        }
        warnings = []
        names = measure_names()
        if figures.get(names["rare"], 0) > 0:
            warnings.append(f"{figures[names['rare']]:.2f} % of the generated rows equal an original row shared by "
                            f"fewer than {min_sup} records (a rare record reproduced): check before publishing")
        yield Release(mechanism=self.name, table=out, cost=self.cost({}), params={
            "min_sup": min_sup, "n_records": n_records, "candidates": candidates, "laplace": laplace, "bins": bins,
            "taxonomy_level": taxonomy_level, "numbers_as": numbers_as, "prune": prune},
            claims=(), note=note, record=record, warnings=tuple(warnings))

    def measures(self, release: Release, train: Dataset, test: Dataset | None) -> dict[str, float]:
        return {k: float(v) for k, v in dict(release.record.get("figures", {})).items()}


def _as_text(values: pd.Series) -> pd.Series:
    """Numbers as a taxonomy file writes them: whole numbers without a decimal point ("39", not "39.0")."""
    x = pd.to_numeric(values, errors="coerce")
    if x.notna().all() and (x % 1 == 0).all():
        return x.astype("int64").astype(str)
    return values.astype(str)


def relay_progress_value(gen, lo: float, hi: float, prefix: str):
    """Like base.relay_progress, for generators that *return* their result (KRIMP's compress_iter)."""
    try:
        while True:
            item = next(gen)
            if isinstance(item, Progress):
                yield Progress(lo + (hi - lo) * min(max(item.fraction, 0.0), 1.0), prefix + item.message)
    except StopIteration as stop:
        return stop.value
    finally:
        gen.close()


def _figures(table: ItemTable, ct, codes: np.ndarray, pieces: np.ndarray, min_sup: int, candidates: str,
             prune: bool):
    """The custodian's figures (a generator returning them, yielding Progress)."""
    from ppdp_gui.engine.mechanisms.krimp import compress as C
    from ppdp_gui.engine.mechanisms.krimp.dissimilarity import dissimilarity
    from ppdp_gui.engine.mechanisms.krimp.mining import mine
    from ppdp_gui.engine.metrics import synthetic as S

    names = measure_names()
    orig = table.codes
    out = {names["nas"]: S.normalised_anonymity_score(orig, codes), names["as"]: S.anonymity_score(orig, codes)}
    leak = S.disclosure(orig, codes, min_sup)
    out[names["rare"]], out[names["unique"]], out[names["any"]] = leak["rare"], leak["unique"], leak["any"]
    out[names["ratio"]] = 100 * ct.ratio
    out[names["pieces"]] = float(np.mean(pieces)) if len(pieces) else 0.0
    yield Progress(0.2, "comparing frequent itemsets")
    gen_table = table.with_codes(codes)
    try:
        fo, fg = mine(table, min_sup, candidates), mine(gen_table, min_sup, candidates)
    except ParameterError:
        fo = fg = None
    if fo is not None:
        cmp = S.itemset_comparison(fo.as_set(), fg.as_set(), table.n_rows, gen_table.n_rows)
        out[names["equal"]] = cmp["equal %"]
        out[names["diff"]] = cmp["avg support difference of equal itemsets %"]
        out[names["new"]] = cmp["avg support of new itemsets %"]
        yield Progress(0.5, "compressing the generated table for the dissimilarity")
        ct_gen = yield from relay_progress_value(C.compress_iter(gen_table, fg, prune=prune), 0.5, 0.95, "")
        out[names["ds"]] = dissimilarity(table, ct, gen_table, ct_gen)
    return out
