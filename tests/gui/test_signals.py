"""A guard on the Qt binding itself: emitting the app's own signals must not change the reference counts of
True, False or small ints. PySide6 6.12.0 decremented them on every emit, which on Python 3.11 (no immortal
objects) ends in 'bool_dealloc: deallocating True or False' and an aborted process after enough jobs."""

from __future__ import annotations

import gc
import sys

from PySide6.QtCore import QObject, Signal


class _Emitter(QObject):
    flag = Signal(bool)
    number = Signal(int)


def test_emitting_signals_keeps_reference_counts(qtbot):
    emitter, got = _Emitter(), []
    emitter.flag.connect(got.append)
    emitter.number.connect(got.append)
    gc.collect()
    before = (sys.getrefcount(True), sys.getrefcount(False), sys.getrefcount(5))
    for _ in range(200):
        emitter.flag.emit(True)
        emitter.flag.emit(False)
        emitter.number.emit(5)
    got.clear()
    gc.collect()
    after = (sys.getrefcount(True), sys.getrefcount(False), sys.getrefcount(5))
    assert all(a >= b - 20 for a, b in zip(after, before)), (before, after)
