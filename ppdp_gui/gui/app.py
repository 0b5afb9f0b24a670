"""`ppdp-gui [FILE | --sample]`: start the window, optionally opening a table or project given on the command line.

`--sample` opens the bundled Adult sample (found inside the package, so it works from the bundle too);
`--self-test OUT` is the bundle's smoke test (gui/self_test.py, run by packaging/smoke.sh).
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    import multiprocessing
    # First of all: in the PyInstaller bundle the worker processes (the fork server, the resource tracker) are
    # started from this same executable; freeze_support runs their code and exits instead of opening a window.
    multiprocessing.freeze_support()
    argv = list(sys.argv if argv is None else argv)
    from ppdp_gui.gui import lazy_pandas
    lazy_pandas.install()  # the window shows before pandas is imported (benchmarks/bench_start.py)
    if "--self-test" in argv:
        from ppdp_gui.gui.self_test import main as self_test
        return self_test(argv)

    from PySide6.QtCore import QCoreApplication
    from PySide6.QtWidgets import QApplication

    from ppdp_gui.engine.data.leftovers import clean_leftovers
    clean_leftovers()  # temporary files of writes a kill or power cut interrupted (never anything else)
    QCoreApplication.setOrganizationName("ppdp_gui")
    QCoreApplication.setApplicationName("ppdp_gui")
    app = QApplication.instance() or QApplication(argv)
    from ppdp_gui.gui.main_window import MainWindow

    window = MainWindow()
    window.show()
    files = [a for a in argv[1:] if not a.startswith("-")]
    if "--sample" in argv[1:] and not files:
        from ppdp_gui.engine.package_files import sample_table
        files = [str(sample_table())]
    if files:
        window.open_path(files[0])
    return app.exec()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
