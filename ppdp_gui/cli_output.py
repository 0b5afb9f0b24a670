"""What every `ppdp` command prints: its results on standard output, its warnings on standard error, each flushed
at once (a long run shows its lines as they come). One place, so that the commands (cli.py, cli_inspect.py,
cli_ledger.py, cli_governance.py) say things alike and none imports another for it."""

from __future__ import annotations

import sys
from typing import Any


def say(*parts: Any) -> None:
    print(*parts, flush=True)


def warn(message: str) -> None:
    if message[:9].lower() == "warning: ":  # engine notes may start with it already: say it once
        message = message[9:]
    print(f"ppdp: warning: {message}", file=sys.stderr, flush=True)
