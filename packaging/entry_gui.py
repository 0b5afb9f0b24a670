"""The bundle's window executable (dist/ppdp_gui/ppdp_gui): the same `main` as the `ppdp-gui` command."""

import sys

from ppdp_gui.gui.app import main

if __name__ == "__main__":
    sys.exit(main())
