"""Independent checks run on released tables before they may be exported."""

from ppdp_gui.engine.checks.anonymity import check_release

__all__ = ["check_release"]
