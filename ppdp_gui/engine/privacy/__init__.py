"""Privacy accounting: the persistent budget ledger (SQLite, exact fractions, budget groups of near copies),
and dataset identities from raw rows."""

from ppdp_gui.engine.privacy.fingerprint import canonical_row_hashes, content_hash
from ppdp_gui.engine.privacy.ledger import Ledger, default_ledger_path
from ppdp_gui.engine.privacy.ledger_types import (ADD_REMOVE, DEFAULT_CAP, NEAR_COPY_CONTAINMENT, REPLACE, Budget,
                                                  DatasetIdentity, LedgerEntry)

__all__ = ["ADD_REMOVE", "DEFAULT_CAP", "NEAR_COPY_CONTAINMENT", "REPLACE", "Budget", "DatasetIdentity", "Ledger",
           "LedgerEntry", "canonical_row_hashes", "content_hash", "default_ledger_path"]
