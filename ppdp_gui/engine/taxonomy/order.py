"""Natural order of labels: numbers inside labels compare as numbers, so bands read 0-4, 5-9, 10-14.

Text order puts '10-14' before '5-9' and '[100, 200)' before '[20, 30)', which is how categories came out of
sorted() before. `natural_key` splits a label into numbers and text: numbers compare by value (a minus sign counts
only where it cannot be a range dash: '-5', '[-10, 0)', but not the dash of '0-4'), text case-insensitively, and a
number sorts before text at the same place (so '*' and 'Unknown' come after the bands). Use it wherever categories
are listed for people: `sorted(labels, key=natural_key)`.
"""

from __future__ import annotations

import re
from typing import Iterable

_TOKEN = re.compile(r"(?:(?<![0-9.])-)?[0-9]+(?:\.[0-9]+)?")


def natural_key(label) -> tuple:
    """A sort key for `label` (any value; compared as its text)."""
    text = str(label)
    key: list[tuple] = []
    pos = 0
    for match in _TOKEN.finditer(text):
        if match.start() > pos:
            part = text[pos:match.start()]
            key.append((1, part.lower(), part))
        key.append((0, float(match.group())))
        pos = match.end()
    if pos < len(text):
        part = text[pos:]
        key.append((1, part.lower(), part))
    return (tuple(key), text)


def natural_sorted(labels: Iterable) -> list:
    """`labels` in natural order (see `natural_key`)."""
    return sorted(labels, key=natural_key)
