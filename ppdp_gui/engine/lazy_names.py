"""Names of a package imported on first use (PEP 562), so that importing one light module of a package (a schema,
a tree) does not pull in its heavy neighbours' libraries before the window appears (benchmarks/bench_start.py)."""

from __future__ import annotations

from importlib import import_module
from typing import Callable


def lazy_getattr(package: str, where: dict[str, str], namespace: dict) -> Callable[[str], object]:
    """A module `__getattr__` for `package`: `where` maps each public name to the submodule defining it; a name is
    imported once, then kept in the package's `namespace` (its globals)."""

    def __getattr__(name: str):
        if name in where:
            value = getattr(import_module(f"{package}.{where[name]}"), name)
            namespace[name] = value
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
