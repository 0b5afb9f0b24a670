"""Walk the window on scripts/hospital_extract.py's table as a nurse would, saving a screenshot and the visible
text of every step to /tmp/nurse2/ (or --out=DIR; offscreen). --follow follows the advice shown (masking for zip, intervals
for age, dates) before Run and Export. The ledger is a temporary one. --docs also writes the six
docs/screenshots/hospital_*.png (64 colours) from this walk's shots (the zip one from a --follow walk in --out's
"follow" sibling folder, when there).

    QT_QPA_PLATFORM=offscreen python scripts/hospital_walk.py /tmp/nurse2/hospital.csv --follow
"""
import os, sys, time, tempfile
from pathlib import Path
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
tmp = Path(tempfile.mkdtemp(prefix="nurse2_"))
os.environ["PPDP_LEDGER"] = str(tmp / "ledger.sqlite")
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication, QLabel, QListWidget, QPlainTextEdit, QTextEdit, QTextBrowser, QAbstractButton, QMessageBox
from ppdp_gui.gui.main_window import MainWindow
OUT = Path(next((a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--out=")), "/tmp/nurse2"))
OUT.mkdir(parents=True, exist_ok=True)
def settle(t=0.8):
    end = time.monotonic() + t
    while time.monotonic() < end:
        app.processEvents(); time.sleep(0.01)
def wait_until(cond, timeout=300):
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end: raise TimeoutError
        app.processEvents(); time.sleep(0.02)
def dump(widget, name):
    lines = []
    for lab in widget.findChildren(QLabel):
        if lab.isVisible() and lab.text().strip():
            lines.append("LABEL: " + lab.text())
    for lw in widget.findChildren(QListWidget):
        if lw.isVisible():
            for i in range(lw.count()):
                lines.append(f"LIST[{lw.objectName()}]: " + lw.item(i).text())
    for te in widget.findChildren(QPlainTextEdit) + widget.findChildren(QTextEdit):
        if te.isVisible() and te.toPlainText().strip():
            lines.append("TEXT: " + te.toPlainText()[:3000])
    for b in widget.findChildren(QAbstractButton):
        if b.isVisible():
            lines.append(f"BUTTON{'' if b.isEnabled() else '(disabled)'}: " + b.text())
    (OUT / f"{name}.txt").write_text("\n".join(lines))
def shot(w, name):
    settle()
    w.grab().save(str(OUT / f"{name}.png"))
    dump(w, name)
    print("shot", name, flush=True)

def main():
    global app
    app = QApplication.instance() or QApplication(sys.argv[:1])
    w = MainWindow(settings=QSettings(str(tmp / "s.ini"), QSettings.IniFormat))
    w.resize(1280, 860); w.show()
    path = [a for a in sys.argv[1:] if not a.startswith("--")][0] if [a for a in sys.argv[1:] if not a.startswith("--")] else "/tmp/nurse2/hospital.csv"
    w.open_path(path)
    wait_until(lambda: w.session.dataset is not None)
    w.go_to(w.data_view)
    shot(w, "01_data")
    w.go_to(w.taxonomy_view); shot(w, "02_taxonomies")
    w.go_to(w.mechanism_view); shot(w, "03_mechanism")
    print("mechanism:", w.mechanism_view.combo.currentText())
    if "--follow" in sys.argv:  # age stays numeric: its blanks are "(missing)" under the root of its intervals
        w.data_view.confirm_button.click()
        tv = w.taxonomy_view; w.go_to(tv)
        tv.select("zip"); settle(); print("zip builder:", tv.builder_name(), tv.build_button.isEnabled())
        tv.build_button.click(); settle(); shot(w, "02b_zip")
        tv.select("age"); settle(); tv.choose_builder("intervals"); print("age build:", tv.build_button.isEnabled())
        tv.build_button.click(); settle()
        for c in ("admit_date", "discharge_date"):
            tv.select(c); settle(); tv.choose_builder("dates"); tv.build_button.click(); settle()
        shot(w, "02c_taxonomies")
        w.go_to(w.mechanism_view); shot(w, "03b_mechanism")
    w.go_to(w.run_view); shot(w, "04_run")
    if w.run_view.run_button.isEnabled():
        w.run_view.start()
        wait_until(lambda: not w.run_view.running, 600)
        shot(w, "05_run_done")
        w.go_to(w.results_view); shot(w, "06_results")
        w.results_view.tabs.setCurrentIndex(1); shot(w, "06b_figures")
        w.results_view.tabs.setCurrentWidget(w.results_view.risk)
        wait_until(lambda: w.results_view.risk.comparison is not None, 300); shot(w, "06c_risk")
        w.results_view.tabs.setCurrentIndex(0)
        w.go_to(w.export_view)
        w.export_view.path_edit.setText(str(tmp / "release.csv"))
        shot(w, "07_export_before")
        w.export_view.export()
        wait_until(lambda: not w.export_view._busy, 300)
        shot(w, "08_export")
        print(sorted(p.name for p in tmp.iterdir()))
    else:
        print("RUN DISABLED")
    w.close()
    if "--docs" in sys.argv:
        docs_screenshots()


DOCS = {"hospital_1_data": "01_data", "hospital_2_zip_mask": "../follow/02b_zip", "hospital_3_mechanism": "03_mechanism",
        "hospital_4_run": "04_run", "hospital_5_figures": "06b_figures", "hospital_6_export": "08_export"}


def docs_screenshots():
    from PIL import Image
    docs = Path(__file__).resolve().parents[1] / "docs" / "screenshots"
    for name, shot_name in DOCS.items():
        src = (OUT / f"{shot_name}.png").resolve()
        if src.exists():
            Image.open(src).convert("RGB").quantize(64).save(docs / f"{name}.png", optimize=True)
            print("docs", name, flush=True)

if __name__ == '__main__':
    main()
