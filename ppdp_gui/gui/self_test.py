"""`ppdp-gui --self-test OUT`: the smoke test of the PyInstaller bundle (packaging/smoke.sh runs it).

A built application folder can lack a module, a data file or a working worker process without any unit test
noticing, because the tests run from the source tree. So the bundle drives its own window as a user would: open the
bundled Adult sample (its ARX hierarchies attach themselves), choose DiffGen (Mondrian if DiffGen is not built in),
run a release through the worker process, export it with its release note, close. One line per step with the
seconds since the process started (``PPDP_T0``, a Unix time set by the caller, else this module's import);
exit code 0 only if every step did what it should. The ledger and settings live in OUT, so nothing is charged to
the user's real budget.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

_IMPORTED = time.time()


class SelfTestFailed(Exception):
    pass


def _elapsed() -> float:
    try:
        return time.time() - float(os.environ["PPDP_T0"])
    except (KeyError, ValueError):
        return time.time() - _IMPORTED


def _say(step: str) -> None:
    print(f"[{_elapsed():6.2f} s] {step}", flush=True)


def _pump_until(app, condition, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise SelfTestFailed(f"timed out after {seconds:.0f} s waiting for {what}")
        app.processEvents()
        time.sleep(0.005)


def run(out: Path) -> None:
    """The steps; raises SelfTestFailed naming the first one that did not work."""
    out.mkdir(parents=True, exist_ok=True)
    os.environ["PPDP_LEDGER"] = str(out / "ledger.sqlite")
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv[:1])
    from ppdp_gui.engine.mechanisms import registry
    from ppdp_gui.engine.package_files import sample_table
    from ppdp_gui.gui.main_window import MainWindow

    window = MainWindow(settings=QSettings(str(out / "settings.ini"), QSettings.IniFormat))
    window.show()
    app.processEvents()
    _say("window shown")
    try:
        _steps(app, window, registry, sample_table(), out)
    finally:
        window.close()
        app.processEvents()


def _steps(app, w, registry, sample: Path, out: Path) -> None:
    w.open_path(str(sample))
    _pump_until(app, lambda: w.session.dataset is not None, 120, "the sample to load")
    data = w.session.dataset
    attached = [c.name for c in data.schema if c.taxonomy is not None]
    _say(f"sample loaded: {data.n_rows:,} rows; taxonomies attached to {len(attached)} columns")
    if data.n_rows != 30162 or not attached:
        raise SelfTestFailed("the bundled sample or its hierarchies were not found")
    w.data_view.confirm_button.click()  # the sample's roles and kinds as shipped: "Confirm roles and kinds"

    mechanism = "DiffGen" if "DiffGen" in registry.names() else "Mondrian"
    w.mechanism_view.combo.setCurrentText(mechanism)
    params = dict(w.mechanism_view.panel.values())
    params.update({"h": 6} if mechanism == "DiffGen" else {"k": 10})
    w.mechanism_view.panel.set_values(params)
    preview = w.mechanism_view.refresh_preview()
    if preview.errors:
        raise SelfTestFailed("cannot run: " + "; ".join(p.message for p in preview.errors))

    w.go_to(w.run_view)
    w.run_view.start()
    job, worker = w.run_view._job, {}

    def finished() -> bool:
        if job is not None and getattr(job, "pid", None):
            worker["pid"] = job.pid
        return not w.run_view.running

    _pump_until(app, finished, 600, "the release")
    if len(w.session.releases) != 1:
        raise SelfTestFailed(f"the release failed: {w.run_view.message.text()}")
    if worker.get("pid") in (None, os.getpid()):
        raise SelfTestFailed("the release did not run in a worker process")
    _say(f"{mechanism} release made in worker process {worker['pid']}")

    target = out / "release.csv"
    w.go_to(w.export_view)
    w.export_view.path_edit.setText(str(target))
    w.export_view.report_check.setChecked(True)
    w.export_view.export_button.click()
    _pump_until(app, lambda: not w.export_view._busy, 300, "the export")
    note = out / "release.csv.release-note.json"
    if not target.is_file() or not note.is_file():
        raise SelfTestFailed(f"the export did not write {target} and its release note")
    _say(f"exported {target.stat().st_size:,} bytes and the release note to {out}")


def main(argv: list[str]) -> int:
    args = argv[argv.index("--self-test") + 1:]
    out = Path(args[0] if args and not args[0].startswith("-") else "ppdp_self_test")
    try:
        run(out)
    except SelfTestFailed as exc:
        _say(f"SELF-TEST FAILED: {exc}")
        return 1
    _say("self-test passed")
    return 0
