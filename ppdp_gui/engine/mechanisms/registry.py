"""Names -> mechanism classes, and where each DP mechanism's audit tables are built.

Adding a mechanism is a module, one line in `_ENTRIES` and, for a DP mechanism, one line in `_AUDITS` (the
statistical audit's neighbouring tables, engine/verify) — see docs/adding_a_mechanism.md and the conformance kit
(tests/test_conformance.py), which checks every entry.

The modules are named by strings and imported on first use (start-up stays fast), so a bundler that follows
`import` statements cannot see them: `modules()` is the explicit list the PyInstaller build hands it as hidden
imports (packaging/bundle_hints.py; tests/test_package_files.py checks that it covers every mechanism).
"""

from __future__ import annotations

import importlib
import importlib.util

from ppdp_gui.engine.errors import ParameterError

# name shown to the user -> "module:ClassName" (imported on first use so start-up stays fast)
_ENTRIES: dict[str, str] = {
    "Laplace histogram": "ppdp_gui.engine.mechanisms.laplace:LaplaceHistogram",
    "DiffGen": "ppdp_gui.engine.mechanisms.diffgen:DiffGen",
    "Mondrian": "ppdp_gui.engine.mechanisms.kanon.mondrian:Mondrian",
    "TDS": "ppdp_gui.engine.mechanisms.kanon.tds:TDS",
    "Global recoding": "ppdp_gui.engine.mechanisms.kanon.globalrec:GlobalRecoding",
    "Local recoding": "ppdp_gui.engine.mechanisms.kanon.local:LocalRecoding",
    "Fragmentation": "ppdp_gui.engine.mechanisms.fragmentation:Fragmentation",
    "KRIMP synthetic": "ppdp_gui.engine.mechanisms.krimp:KrimpSynthetic",
    "DP-PCA": "ppdp_gui.engine.mechanisms.dp_pca:DPPCA", "DP-LDA": "ppdp_gui.engine.mechanisms.dp_pca:DPLDA",
    "Laplace on records": "ppdp_gui.engine.mechanisms.dp_pca:LaplaceRecords",
    "Exponential on records": "ppdp_gui.engine.mechanisms.dp_pca:ExponentialRecords",
}


# name -> "module:function" returning the verifier's audit tables (`Scenario`s, engine/verify) of a DP mechanism;
# named by strings like the mechanisms (the verifier is imported only by whoever audits)
_AUDITS: dict[str, str] = {
    "Laplace histogram": "ppdp_gui.engine.verify.scenarios:laplace_scenarios",
    "DiffGen": "ppdp_gui.engine.verify.scenarios:diffgen_scenarios",
    "DP-PCA": "ppdp_gui.engine.verify.scenarios_records:dp_pca_scenarios",
    "DP-LDA": "ppdp_gui.engine.verify.scenarios_records:dp_lda_scenarios",
    "Laplace on records": "ppdp_gui.engine.verify.scenarios_records:record_baseline_scenarios",
    "Exponential on records": "ppdp_gui.engine.verify.scenarios_records:record_baseline_scenarios",
    "Marginal synthesizer": "ppdp_gui.engine.verify.scenarios_marginals:marginal_scenarios",
}


def audit_tables(name: str) -> str | None:
    """The "module:function" building the audit tables of the mechanism registered as `name`, or None."""
    return _AUDITS.get(name)


def names() -> list[str]:
    """Mechanisms whose module is present in this build, in menu order."""
    out = []
    for name, target in _ENTRIES.items():
        module = target.split(":")[0]
        if importlib.util.find_spec(module) is not None:
            out.append(name)
    return out


def modules() -> list[str]:
    """Every registered mechanism's module, in menu order without repeats (hidden imports for a bundler)."""
    return list(dict.fromkeys(target.split(":")[0] for target in _ENTRIES.values()))


def get(name: str):
    """The mechanism class registered under `name`."""
    try:
        target = _ENTRIES[name]
    except KeyError:
        raise ParameterError(f"unknown mechanism {name!r}; available: {', '.join(names())}") from None
    module, cls = target.split(":")
    return getattr(importlib.import_module(module), cls)


def create(name: str):
    return get(name)()
