"""`ppdp-gui [FILE]`: start the window, optionally opening a table or project given on the command line."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    from PySide6.QtCore import QCoreApplication
    from PySide6.QtWidgets import QApplication

    from ppdp_gui.engine.data.leftovers import clean_leftovers
    clean_leftovers()  # temporary files of writes a kill or power cut interrupted (never anything else)
    argv = list(sys.argv if argv is None else argv)
    QCoreApplication.setOrganizationName("ppdp_gui")
    QCoreApplication.setApplicationName("ppdp_gui")
    app = QApplication.instance() or QApplication(argv)
    from ppdp_gui.gui.main_window import MainWindow

    window = MainWindow()
    window.show()
    files = [a for a in argv[1:] if not a.startswith("-")]
    if files:
        window.open_path(files[0])
    return app.exec()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
