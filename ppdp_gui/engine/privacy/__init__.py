"""Privacy accounting: the persistent budget ledger (SQLite, exact fractions, budget groups of near copies),
dataset identities from raw rows, and an in-memory accountant for mechanisms that split their ε."""

from ppdp_gui.engine.privacy.accountant import BudgetAccountant, split_budget
from ppdp_gui.engine.privacy.fingerprint import canonical_row_hashes, content_hash
from ppdp_gui.engine.privacy.ledger import Ledger, default_ledger_path
from ppdp_gui.engine.privacy.records import (ADD_REMOVE, DEFAULT_CAP, NEAR_COPY_CONTAINMENT, REPLACE, Budget,
                                             DatasetIdentity, DatasetSummary, LedgerEntry)

__all__ = ["ADD_REMOVE", "DEFAULT_CAP", "NEAR_COPY_CONTAINMENT", "REPLACE", "Budget", "BudgetAccountant",
           "DatasetIdentity", "DatasetSummary", "Ledger", "LedgerEntry", "canonical_row_hashes", "content_hash",
           "default_ledger_path", "split_budget"]
