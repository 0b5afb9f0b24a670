"""The `ppdp` command: the same engine as the GUI, without a window."""


def main(argv=None) -> int:
    raise SystemExit("ppdp: the command line is being built")
