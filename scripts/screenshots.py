"""Render every step of the window to PNG in docs/screenshots/ (offscreen), driving the real workflow on the
bundled Adult sample: load (its ARX taxonomies attach themselves), a mechanism, a run, a simulation and an export;
then on a generated hospital-shaped table (tests/engine/clinical_helpers.py): the role reasons, the check of
columns that could identify patients, and the risk tab of a Mondrian release.

    QT_QPA_PLATFORM=offscreen .venv/bin/python scripts/screenshots.py [--scale 2] [--out docs/screenshots]
        [--only 2_taxonomies,6_export]

With --scale 2 (QT_SCALE_FACTOR=2) it checks the window is readable at 200 %. The ledger is a temporary one,
so taking screenshots spends nothing on your real budget.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def wait_until(app, condition, timeout: float = 120.0) -> None:
    end = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > end:
            raise TimeoutError("the window did not reach the expected state in time")
        app.processEvents()
        time.sleep(0.01)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(REPO / "docs" / "screenshots"))
    ap.add_argument("--scale", type=float, default=1.0, help="QT_SCALE_FACTOR (2 = 200 %%)")
    ap.add_argument("--mechanism", default=None, help="default: DiffGen if registered, else Mondrian")
    ap.add_argument("--only", default="", help="comma-separated shot names to save (e.g. 2_taxonomies,6_export); "
                                               "the steps they need still run, the others are skipped")
    args = ap.parse_args(argv)
    only = {n.strip() for n in args.only.split(",") if n.strip()}

    def wanted(name: str) -> bool:
        return not only or name in only or any(o.startswith(name) for o in only)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    if args.scale != 1:
        os.environ["QT_SCALE_FACTOR"] = str(args.scale)
    tmp = Path(tempfile.mkdtemp(prefix="ppdp_shots_"))
    os.environ["PPDP_LEDGER"] = str(tmp / "ledger.sqlite")

    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication(sys.argv[:1])
    from ppdp_gui.engine.mechanisms import registry
    from ppdp_gui.engine.package_files import sample_table
    from ppdp_gui.gui.main_window import MainWindow

    mechanism = args.mechanism or ("DiffGen" if "DiffGen" in registry.names() else "Mondrian")

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    suffix = "" if args.scale == 1 else f"_x{args.scale:g}"
    settings = QSettings(str(tmp / "settings.ini"), QSettings.IniFormat)
    w = MainWindow(settings=settings)
    w.resize(1280, 820)
    w.show()

    def shot(name: str) -> None:
        if only and name not in only:
            return
        # the window does its work one piece per event-loop turn (views/common.soon): let it settle, as a user
        # looking at the screen would
        end = time.monotonic() + 0.6
        while time.monotonic() < end:
            app.processEvents()
            time.sleep(0.01)
        path = out / f"{name}{suffix}.png"
        w.grab().save(str(path))
        print(path)

    w.open_path(str(sample_table()))
    wait_until(app, lambda: w.session.dataset is not None)
    shot("1_data")
    confirm = getattr(w.data_view, "confirm_button", None)  # "Confirm roles and kinds", as before a DP release
    if confirm is not None and confirm.isEnabled():
        confirm.click()
    w.go_to(w.taxonomy_view)  # the sample's hierarchies were attached when it opened
    w.taxonomy_view.select("education")
    shot("2_taxonomies")
    w.go_to(w.mechanism_view)
    w.mechanism_view.combo.setCurrentText(mechanism)
    w.mechanism_view.refresh_preview()
    shot("3_mechanism")
    w.go_to(w.run_view)
    shot("4_run_ready")
    w.run_view.start()
    wait_until(app, lambda: not w.run_view.running, 600)
    w.go_to(w.results_view)
    shot("5_results_table")
    w.results_view.tabs.setCurrentIndex(1)
    shot("5_results_figures")
    w.results_view.tabs.setCurrentWidget(w.results_view.risk)
    wait_until(app, lambda: w.results_view.risk.comparison is not None)
    shot("5_results_risk")
    panel = w.results_view.sweep
    w.results_view.tabs.setCurrentWidget(panel)
    if not wanted("5_results_simulation"):
        panel = None
    swept = None if panel is None else "h" if panel.param_combo.findData("h") >= 0 else None  # DiffGen's h
    if panel is not None:
        if swept:
            panel.param_combo.setCurrentIndex(panel.param_combo.findData(swept))
            panel.grid_edit.setText("2, 4, 6, 8, 10, 12, 15")
        panel.repeats.setValue(3)
        panel.start()
        wait_until(app, lambda: not panel.running, 900)
        shot("5_results_simulation")
    w.go_to(w.export_view)
    w.export_view.path_edit.setText(str(tmp / "adult_release.csv"))
    w.export_view.pdf_check.setChecked(True)  # the PDF copies, as `ppdp run --pdf` writes them
    w.export_view.export()
    wait_until(app, lambda: not w.export_view._busy, 120)
    shot("6_export")
    if wanted("7_guide"):
        w.go_to(w.run_view)
        guide = w.open_guide()
        guide.browser.scrollToAnchor("counts")
        app.processEvents()
        path = out / f"7_guide{suffix}.png"
        guide.grab().save(str(path))
        print(path)
        guide.close()
    if wanted("8_"):
        clinical(app, w, tmp, shot)
    if wanted("9_"):
        person(app, w, tmp, shot)
    w.close()
    return 0


def clinical(app, w, tmp: Path, shot) -> None:
    """The hospital-shaped table: why each role was guessed, a patient number that would be published, the risk
    before and after a Mondrian release (k = 10 on race, gender, age, payer and admission type)."""
    import numpy as np

    from ppdp_gui.engine.data.schema import Role
    sys.path.insert(0, str(REPO / "tests" / "engine"))
    from clinical_helpers import diabetes_like
    frame = diabetes_like(5000, seed=7)
    weight = np.full(len(frame), "?", dtype=object)
    weight[::100] = "[75-100)"
    frame.insert(5, "weight", weight)
    path = tmp / "diabetic_data.csv"
    frame.to_csv(path, index=False)
    w.open_path(str(path))
    wait_until(app, lambda: w.session.dataset is not None and w.session.dataset.source.path == str(path))
    w.go_to(w.data_view)
    w.data_view.columns.setCurrentCell(list(w.session.dataset.frame.columns).index("patient_nbr"), 0)
    shot("8_clinical_data")

    def role(column, value):
        combo = w.data_view.role_combo(column)
        combo.setCurrentIndex(combo.findData(value))
    for column in ("race", "gender", "age", "payer_code", "admission_type_id"):
        role(column, Role.QUASI_IDENTIFIER)
    role("patient_nbr", Role.INSENSITIVE)
    w.go_to(w.mechanism_view)
    w.mechanism_view.combo.setCurrentText("Mondrian")
    w.mechanism_view.panel.editor("k").setValue(10)
    w.go_to(w.run_view)
    shot("8_clinical_run_check")
    role("patient_nbr", Role.IDENTIFIER)
    w.go_to(w.run_view)
    w.run_view.start()
    wait_until(app, lambda: not w.run_view.running, 600)
    w.go_to(w.results_view)
    w.results_view.tabs.setCurrentWidget(w.results_view.risk)
    w.results_view.risk.set_population(fraction=0.05)
    wait_until(app, lambda: w.results_view.risk.comparison is not None and not w.results_view.risk.busy)
    shot("8_clinical_risk")


def person(app, w, tmp: Path, shot) -> None:
    """An encounters table (several rows per patient): patient_nbr guessed the person column, with its reason,
    and the Run step saying that k counts patients (issue 25)."""
    sys.path.insert(0, str(REPO / "tests" / "engine"))
    from test_person_kanon import hospital
    path = tmp / "encounters.csv"
    hospital().to_csv(path, index=False)
    w.open_path(str(path))
    wait_until(app, lambda: w.session.dataset is not None and w.session.dataset.source.path == str(path))
    w.go_to(w.data_view)
    w.data_view.columns.setCurrentCell(1, 0)
    w.data_view.columns.setCurrentCell(0, 0)
    shot("9_person_role")
    w.go_to(w.mechanism_view)
    w.mechanism_view.combo.setCurrentText("Mondrian")
    w.mechanism_view.panel.editor("k").setValue(5)
    w.go_to(w.run_view)
    shot("9_person_run")


if __name__ == "__main__":
    sys.exit(main())
