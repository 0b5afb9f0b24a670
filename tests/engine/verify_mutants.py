"""Planted bugs: mutation copies of the DP mechanisms that the verifier must catch (issue 17, part 2).

A mutant is a *copy* of a mechanism's source with one textual change, imported under a private package name
(`ppdp_mutant_<tag>`), so the shipped mechanisms carry no hook and no flag: the bug is exactly the code a
careless edit would produce. Each textual change must match the source exactly once, so a mutant that no longer
applies (the code moved on) fails loudly instead of silently testing the original. The halved noise scale is
planted from outside, through the verifier's `noise_factor` (engine.verify.ScaledNoise).

Never registered, never shipped: this module lives in the tests.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
from dataclasses import dataclass, field
from pathlib import Path

MECHANISMS = "ppdp_gui.engine.mechanisms"


class _MutantFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports `<root>.<sub>…` from the source of `ppdp_gui.engine.mechanisms.<sub>…` with the mutations applied
    and the copied package's own absolute imports pointed at the copy."""

    def __init__(self, root: str, package: str, mutations: dict[str, list[tuple[str, str]]]):
        self.root, self.package, self.mutations = root, package, mutations
        self.applied: set[str] = set()

    def _original(self, fullname: str) -> str:
        return MECHANISMS + fullname[len(self.root):]

    def find_spec(self, fullname, path=None, target=None):
        if fullname == self.root:
            return importlib.util.spec_from_loader(fullname, self, origin=f"/mutants/{fullname}/__init__.py",
                                                   is_package=True)
        if not fullname.startswith(self.root + "."):
            return None
        spec = importlib.util.find_spec(self._original(fullname))
        if spec is None or spec.origin is None:
            return None
        return importlib.util.spec_from_loader(fullname, self, origin=f"/mutants/{fullname.replace('.', '/')}.py",
                                               is_package=spec.submodule_search_locations is not None)

    def create_module(self, spec):
        return None

    def get_source(self, fullname: str) -> str:
        if fullname == self.root:
            return ""
        original = self._original(fullname)
        text = Path(importlib.util.find_spec(original).origin).read_text(encoding="utf-8")
        for old, new in self.mutations.get(original, []):
            if text.count(old) != 1:
                raise AssertionError(f"mutation does not apply exactly once to {original}: {old!r}")
            text = text.replace(old, new)
            self.applied.add(old)
        return text.replace(f"{MECHANISMS}.{self.package}", f"{self.root}.{self.package}")

    def exec_module(self, module):
        source = self.get_source(module.__name__)
        module.__file__ = module.__spec__.origin
        exec(compile(source, module.__file__, "exec"), module.__dict__)


@dataclass
class Mutant:
    """One planted bug: which mechanism, what was changed, and how to run the verifier on it."""

    tag: str
    mechanism: str  # registry name (the copy keeps it)
    bug: str  # the six kinds of issue 17
    words: str
    module: str = ""  # the original module of the mechanism class ("" for a wrapper-only mutant)
    cls: str = ""
    mutations: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    noise_factor: float = 1.0
    audits: tuple[str, ...] = ()  # the audit tables that should catch it (the test runs only these)

    def load(self):
        """The mutated mechanism class (the original class when nothing is mutated)."""
        if not self.mutations:
            return getattr(importlib.import_module(self.module), self.cls)
        root = f"ppdp_mutant_{self.tag}"
        package = self.module[len(MECHANISMS) + 1:].split(".")[0]
        if root not in sys.modules:
            finder = _MutantFinder(root, package, self.mutations)
            sys.meta_path.insert(0, finder)
        copy = root + self.module[len(MECHANISMS):]
        return getattr(importlib.import_module(copy), self.cls)


LAPLACE = f"{MECHANISMS}.laplace"
DG_ALGO = f"{MECHANISMS}.diffgen.algorithm"
DG_MECH = f"{MECHANISMS}.diffgen.mechanism"
DG_SCORES = f"{MECHANISMS}.diffgen.scores"

ADDED = ("one patient added",)
AGE = ("extreme age added",)
COUNTS = ("class majority flipped",)
GAIN = ("InfoGain choice calibration",)

MUTANTS = [
    # -- Laplace histogram -------------------------------------------------------------------------------------
    Mutant("lap_half", "Laplace histogram", "noise scale halved", "every noise scale × 1/2 (ScaledNoise)",
           LAPLACE, "LaplaceHistogram", noise_factor=0.5, audits=ADDED),
    Mutant("lap_twice", "Laplace histogram", "budget spent twice",
           "the note gets a noisy total drawn with its own ε, on top of the ε of the counts", LAPLACE,
           "LaplaceHistogram", {LAPLACE: [
               ("        del true  # nothing below may depend on the exact counts\n",
                "        total = int(rng.geometric_noise_counts(np.array([true.sum()]), params[\"epsilon\"])[0])\n"
                "        del true\n"),
               ('            "count column": count_name,\n        }',
                '            "count column": count_name,\n            "noisy total": total,\n        }')]},
           audits=ADDED),
    Mutant("lap_count", "Laplace histogram", "a count copied un-noised into the note",
           "the note states how many records were counted (the exact number of rows)", LAPLACE, "LaplaceHistogram",
           {LAPLACE: [('            "cells": int(released.size),\n',
                       '            "cells": int(released.size),\n            "records counted": int(data.n_rows),\n')]},
           audits=AGE),
    Mutant("lap_domain", "Laplace histogram", "a domain taken from the data",
           "a numeric column's bins span the smallest to the largest value in the table", LAPLACE,
           "LaplaceHistogram", {LAPLACE: [("                lo, hi, integer = found.low, found.high, found.integer\n",
                                           "                lo, hi, integer = float(x.min()), float(x.max()), "
                                           "found.integer\n")]}, audits=AGE),
    Mutant("lap_rng", "Laplace histogram", "numpy's unseeded global RNG",
           "the counts' noise comes from np.random instead of the NoiseSource", LAPLACE, "LaplaceHistogram",
           {LAPLACE: [("        noisy = rng.geometric_noise_counts(true, params[\"epsilon\"], sensitivity=sensitivity)\n",
                       "        noisy = true + np.rint(np.random.laplace(0.0, sensitivity / params[\"epsilon\"], "
                       "true.shape)).astype(np.int64)\n")]}, audits=AGE),
    # -- DiffGen -----------------------------------------------------------------------------------------------
    Mutant("dg_half", "DiffGen", "noise scale halved", "every noise scale × 1/2 (ScaledNoise)",
           DG_MECH, "DiffGen", noise_factor=0.5, audits=COUNTS),
    Mutant("dg_twice", "DiffGen", "budget spent twice",
           "the counts use the whole ε (scale 1/ε) although ε/2 already went to the generalisation", DG_MECH,
           "DiffGen", {DG_ALGO: [("    scale = 2.0 / float(epsilon)\n", "    scale = 1.0 / float(epsilon)\n")]},
           audits=COUNTS),
    Mutant("dg_lnk", "DiffGen", "InfoGain sensitivity ln K", "InfoGain's sensitivity is ln K instead of log2 K",
           DG_MECH, "DiffGen", {DG_SCORES: [("        return math.log2(n_classes)\n",
                                             "        return math.log(n_classes)\n")]}, audits=GAIN),
    Mutant("dg_count", "DiffGen", "a count copied un-noised into the note",
           "the note's 'released records' is the exact number of rows, not the sum of the noisy counts", DG_MECH,
           "DiffGen", {DG_MECH: [('            "released records": released_records,\n',
                                  '            "released records": int(data.n_rows),\n')]}, audits=AGE),
    Mutant("dg_domain", "DiffGen", "a domain taken from the data",
           "a numeric quasi-identifier's bounds are its smallest and largest value", DG_MECH, "DiffGen",
           {DG_MECH: [("        bounds[col], source[col] = (b.low, b.high), (b.source if b.is_public else \"data\")\n",
                       "        x0 = numeric_values(data.frame[col])\n"
                       "        bounds[col], source[col] = (float(x0.min()), float(x0.max())), b.source\n")]},
           audits=AGE),
    Mutant("dg_rng", "DiffGen", "numpy's unseeded global RNG",
           "the split point inside the chosen interval is drawn with np.random", DG_MECH, "DiffGen",
           {DG_ALGO: [("    g = int(rng.integers(int(edges[j]) + 1, int(edges[j + 1]) + 1))\n",
                       "    g = int(np.random.randint(int(edges[j]) + 1, int(edges[j + 1]) + 1))\n")]}, audits=AGE),
]
