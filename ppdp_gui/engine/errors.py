"""One exception family, so the GUI and CLI can show any engine failure as a clear message."""

from __future__ import annotations


class PpdpError(Exception):
    """Base of every error the engine raises on purpose; its message is meant for the user."""


class DataError(PpdpError):
    """A file or table cannot be used; says where (file, line, column) when known."""

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None,
                 column: int | str | None = None):
        where = []
        if path is not None:
            where.append(str(path))
        if line is not None:
            where.append(f"line {line}")
        if column is not None:
            where.append(f"column {column}")
        full = f"{', '.join(where)}: {message}" if where else message
        super().__init__(full)
        self.path, self.line, self.column, self.reason = path, line, column, message


class TaxonomyError(PpdpError):
    """A taxonomy (generalisation hierarchy) is malformed or does not fit the data."""


class ParameterError(PpdpError):
    """A mechanism parameter is missing, of the wrong type, or out of range."""


class BudgetError(PpdpError):
    """The privacy budget for a dataset would be exceeded; raised before any work is done."""


class MechanismError(PpdpError):
    """A mechanism could not produce a release (e.g. no partition satisfies k)."""


class CheckError(PpdpError):
    """An independent check of a release failed (e.g. a class smaller than k); the release must not be exported."""


class Cancelled(PpdpError):
    """The user cancelled a running job."""
