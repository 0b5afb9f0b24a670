"""Where does the GUI thread spend a long gap? A QApplication that times every event it delivers at the top level
(slots of queued signals, timers, paint and layout requests all arrive as events), so that the longest gap of
bench_gui_heartbeat.py can be laid beside the events that filled it; optionally each slow event is profiled
with cProfile to name the functions inside it.

Used by `bench_gui_heartbeat.py --events` (timing only: a few µs per event) and `--profile` (cProfile per event:
slower, so the durations it prints are inflated; read it for where, not for how long).
"""

from __future__ import annotations

import cProfile
import os
import io
import pstats
import time

from PySide6.QtCore import QEvent
from PySide6.QtWidgets import QApplication


def _describe(receiver) -> str:
    try:
        name = receiver.objectName()
    except RuntimeError:  # deleted meanwhile
        return "(deleted)"
    kind = type(receiver).__name__
    return f"{kind}({name})" if name else kind


def _event_name(kind: int) -> str:
    try:
        return QEvent.Type(kind).name
    except ValueError:
        return str(kind)


class TimedApplication(QApplication):
    """Records (start, end, receiver, event type) of each top-level event that took `keep_ms` or more, and with
    `profile` the ten functions that took the most cumulative time inside it."""

    def __init__(self, argv, *, keep_ms: float = 3.0, profile: bool = False, profile_ms: float = 20.0):
        super().__init__(argv)
        self.keep_s = keep_ms / 1000
        self.profile = profile
        self.profile_s = profile_ms / 1000
        self.events: list[tuple[float, float, str, str, str]] = []
        self._depth = 0

    def notify(self, receiver, event):  # noqa: D102 - Qt's virtual
        if self._depth:
            return super().notify(receiver, event)
        kind = int(event.type())
        self._depth += 1
        prof = cProfile.Profile() if self.profile else None
        start = time.perf_counter()
        if prof is not None:
            prof.enable()
        try:
            return super().notify(receiver, event)
        finally:
            if prof is not None:
                prof.disable()
            end = time.perf_counter()
            self._depth -= 1
            if end - start >= self.keep_s:
                text = ""
                if prof is not None and end - start >= self.profile_s:
                    out = io.StringIO()
                    pstats.Stats(prof, stream=out).sort_stats(os.environ.get("PROFILE_SORT", "cumulative")).print_stats(18)
                    text = out.getvalue()
                self.events.append((start, end, _describe(receiver), _event_name(kind), text))

    def clear(self) -> None:
        self.events.clear()

    def report_gap(self, beats: list[float]) -> None:
        """Print the events that overlap the longest gap between two beats."""
        if len(beats) < 2:
            return
        gaps = [b - a for a, b in zip(beats, beats[1:])]
        i = gaps.index(max(gaps))
        a, b = beats[i], beats[i + 1]
        inside = [e for e in self.events if e[1] > a and e[0] < b]
        busy = sum(min(e[1], b) - max(e[0], a) for e in inside)
        print(f"    longest gap {1000 * (b - a):.1f} ms: {len(inside)} slow events inside, {1000 * busy:.1f} ms "
              f"in them (the rest: smaller events, other threads holding the GIL)")
        for start, end, receiver, kind, text in inside:
            print(f"      +{1000 * (start - a):6.1f} ms  {1000 * (end - start):6.1f} ms  {kind:<22} {receiver}")
            if text:
                lines = [ln for ln in text.splitlines() if ln.strip()][3:]
                print("\n".join("          " + ln[:150] for ln in lines[:24]))
