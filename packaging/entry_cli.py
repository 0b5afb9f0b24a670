"""The bundle's command-line executable (dist/ppdp_gui/ppdp): the same `main` as the `ppdp` command."""

import sys

from ppdp_gui.cli import main

if __name__ == "__main__":
    sys.exit(main())
