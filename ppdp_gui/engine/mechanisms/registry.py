"""Names -> mechanism classes. Adding a mechanism is a module plus one line here.

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
    "Marginal synthesizer": "ppdp_gui.engine.mechanisms.marginals:MarginalSynthesizer",
}


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
