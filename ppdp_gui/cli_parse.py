"""The `ppdp` command's option values read once, at the entry: NAME=VALUE pairs, roles, public domains, taxonomy
builds, budget caps. Each bad value is one ParameterError naming the option (cli.py prints it as one line)."""

from __future__ import annotations

from fractions import Fraction

from ppdp_gui.engine.errors import ParameterError


def parse_pairs(items: list[str] | None, what: str) -> dict[str, str]:
    """["a=1", "b=x"] -> {"a": "1", "b": "x"}; a missing '=' is a ParameterError naming the option."""
    out: dict[str, str] = {}
    for item in items or []:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise ParameterError(f"--{what} expects NAME=VALUE, got {item!r}")
        out[name.strip()] = value.strip()
    return out


def parse_role(text: str):
    from ppdp_gui.engine.errors import DataError
    from ppdp_gui.engine.persistence.project import parse_role as _parse
    try:
        return _parse(text, "--role")
    except DataError:
        raise ParameterError(f"unknown role {text!r}; use one of identifier, person, quasi-identifier, sensitive, "
                             "class, insensitive (or qi, id, sa)") from None


def parse_domain(column: str, text: str):
    """'0:120' or '0:120:int' -> numeric bounds; 'a,b,c' -> a category list (all public, stated by the user);
    'icd9' or 'icd10' -> the code system's list of categories shipped with the package."""
    from ppdp_gui.engine.data.domains import CODE_SYSTEMS, Domain, code_system_domain
    from ppdp_gui.engine.errors import DataError
    if text.strip().lower().replace("-", "") in CODE_SYSTEMS:
        return code_system_domain(text)
    parts = text.split(":")
    try:
        if len(parts) in (2, 3) and all(p.strip() for p in parts[:2]):
            lo, hi = float(parts[0]), float(parts[1])
            integer = len(parts) == 3 and parts[2].strip().lower() in ("int", "integer", "whole")
            if len(parts) == 3 and not integer:
                raise ParameterError(f"--domain {column}={text}: the third part may only be 'int'")
            return Domain(low=lo, high=hi, integer=integer)
        values = [v.strip() for v in text.split(",") if v.strip()]
        return Domain(categories=tuple(values))
    except ValueError:
        raise ParameterError(f"--domain {column}={text}: bounds must be numbers, e.g. 0:120") from None
    except DataError as exc:
        raise ParameterError(f"--domain {column}={text}: {exc}") from None


def parse_builds(items: list[str] | None, files: dict[str, str]) -> dict[str, str]:
    """--build-taxonomy COL=SPEC ... -> {column: spec}, each spec checked now (before the table is read) by the
    engine's own parser, so a typo is one line naming the column and the accepted forms."""
    from ppdp_gui.engine.taxonomy.from_spec import parse_spec
    out: dict[str, str] = {}
    for col, text in parse_pairs(items, "build-taxonomy").items():
        if col in files:
            raise ParameterError(f"column {col!r} has both --taxonomy {files[col]} and --build-taxonomy {text}; "
                                 "give one of them")
        parse_spec(col, text)
        out[col] = text
    return out


def parse_fraction(text: str) -> Fraction:
    try:
        value = Fraction(str(text).strip())
    except (ValueError, ZeroDivisionError):
        raise ParameterError(f"{text!r} is not a number (use e.g. 1, 0.5 or 1/2)") from None
    if value <= 0:
        raise ParameterError(f"the budget cap must be positive, got {text}")
    return value
