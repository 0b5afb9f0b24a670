"""The worker process's side of a job (Qt-free: the child imports only this module, tasks.py and the engine).

Why a process: engine code holds the GIL for tens to hundreds of milliseconds at a time (a 5-million-row
release for over a second), which a worker *thread* cannot hide from the event loop. In a separate process the
GUI's interpreter only ever waits on a pipe.

Wire format (both directions): `send(conn, obj)` pickles with protocol 5 and sends large buffers (numpy and
Arrow column data) out of band, each as its own message, so neither side copies them into one big pickle or
holds the GIL for a long loads/dumps. Released tables above `FILE_ROWS` rows go through a Parquet file in the
job's private temporary folder instead (written in the child; read in the parent by pyarrow, which releases the
GIL) — see benchmarks/bench_gui_heartbeat.py for the measured figures.

Messages from the child: ("progress", fraction, text), ("result", obj), ("error", type name, message, traceback,
{path, line, column, reason}).
"""

from __future__ import annotations

import dataclasses
import os
import pickle
import sys
import time
import traceback
from pathlib import Path
from typing import Any, Callable

FILE_ROWS = 1_000_000  # tables with more rows travel as a Parquet file
PROGRESS_INTERVAL = 0.05  # seconds between progress messages (the GUI shows no more than that)


# -- framing -------------------------------------------------------------------------------------------------
def send(conn, obj: Any) -> None:
    """`obj` pickled with protocol 5, its large buffers sent out of band (see the module docstring)."""
    buffers: list[pickle.PickleBuffer] = []
    head = pickle.dumps(obj, protocol=5, buffer_callback=buffers.append)
    conn.send_bytes(len(buffers).to_bytes(4, "little") + head)
    for buf in buffers:
        conn.send_bytes(buf.raw())


def receive(conn) -> Any:
    first = conn.recv_bytes()
    n = int.from_bytes(first[:4], "little")
    buffers = [conn.recv_bytes() for _ in range(n)]
    return pickle.loads(memoryview(first)[4:], buffers=buffers)


# -- big tables through Parquet ----------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class TableFile:
    """Stands in for a DataFrame written to `path`; the parent reads it back with `load_tables`."""

    path: str


def _to_file(frame, folder: str | None, name: str):
    if folder is None or len(frame) < FILE_ROWS:
        return frame
    path = Path(folder) / f"{name}.parquet"
    frame.to_parquet(path, index=True)
    return TableFile(str(path))


def _from_file(value):
    if isinstance(value, TableFile):
        import pandas as pd
        return pd.read_parquet(value.path)
    return value


def _map_release(release, convert):
    table = convert(release.table, "table")
    extra = {k: convert(v, f"extra_{i}") for i, (k, v) in enumerate((release.extra_tables or {}).items())}
    return dataclasses.replace(release, table=table, extra_tables=extra)


def _with_release(obj, change):
    """Apply `change` to the Release inside `obj` (a Release or an object with a .release field)."""
    from ppdp_gui.engine.mechanisms.base import Release
    if isinstance(obj, Release):
        return change(obj)
    release = getattr(obj, "release", None)
    if isinstance(release, Release):
        return dataclasses.replace(obj, release=change(release))
    return obj


def _picklable_release(release):
    """`apply_to` may be a closure (it only serves measures, computed here already): dropped if it cannot travel."""
    if release.apply_to is not None:
        try:
            pickle.dumps(release.apply_to, protocol=5)
        except Exception:  # noqa: BLE001 - any pickling failure means it stays behind
            release = dataclasses.replace(release, apply_to=None)
    return release


def pack_result(obj, folder: str | None):
    return _with_release(obj, lambda r: _map_release(_picklable_release(r), lambda f, n: _to_file(f, folder, n)))


def load_tables(obj):
    """Parent side: read back every TableFile of a packed result."""
    return _with_release(obj, lambda r: _map_release(r, lambda f, _n: _from_file(f)))


# -- the child's main function ----------------------------------------------------------------------------------
def child_main(conn, make_gen: Callable[..., Any], args: tuple, folder: str | None) -> None:
    """Runs in the worker process: drive `make_gen(*args)`, stream throttled progress, send the result or error."""
    try:
        send(conn, ("started", os.getpid(), sorted(m for m in ("PySide6", "shiboken6", "pyqtgraph", "superqt")
                                                       if m in sys.modules)))
        from ppdp_gui.engine.mechanisms.base import Progress
        result, last, pending = None, 0.0, None
        for item in make_gen(*args):
            if isinstance(item, Progress):
                now = time.monotonic()
                if now - last >= PROGRESS_INTERVAL:
                    send(conn, ("progress", float(item.fraction), item.message))
                    last, pending = now, None
                else:
                    pending = item
            else:
                result = item
        if pending is not None:
            send(conn, ("progress", float(pending.fraction), pending.message))
        send(conn, ("result", pack_result(result, folder)))
    except BaseException as exc:  # noqa: BLE001 - every failure goes back to the window as a message
        where = {k: getattr(exc, k, None) for k in ("path", "line", "column", "reason")}
        where = {k: v if v is None or isinstance(v, int) else str(v) for k, v in where.items()}
        try:
            send(conn, ("error", type(exc).__name__, str(exc), traceback.format_exc(), where))
        except Exception:  # noqa: BLE001 - the parent may be gone; nothing more to do
            pass
    finally:
        conn.close()


def rebuild_error(type_name: str, message: str, where: dict | None = None) -> BaseException:
    """An exception of the same class as the child's (engine errors and built-ins), for the error dialog; a
    DataError keeps its path, line, column and reason (`where`)."""
    import builtins

    from ppdp_gui.engine import errors
    cls = getattr(errors, type_name, None)
    if isinstance(cls, type) and issubclass(cls, errors.PpdpError):
        exc = errors.PpdpError.__new__(cls)
        Exception.__init__(exc, message)  # DataError's message already holds its path/line/column
        if issubclass(cls, errors.DataError):
            exc.path = exc.line = exc.column = None
            exc.reason = message
            if where and where.get("reason") is not None:
                exc.path, exc.line, exc.column, exc.reason = (where.get(k) for k in ("path", "line", "column",
                                                                                        "reason"))
        return exc
    cls = getattr(builtins, type_name, None)
    if isinstance(cls, type) and issubclass(cls, Exception):
        try:
            return cls(message)
        except Exception:  # noqa: BLE001 - built-ins with odd signatures
            pass
    return RuntimeError(f"{type_name}: {message}")
