"""Privacy accounting: the persistent budget ledger (SQLite, exact fractions), dataset fingerprints, and an
in-memory accountant for mechanisms that split their ε."""

from ppdp_gui.engine.privacy.accountant import BudgetAccountant, split_budget
from ppdp_gui.engine.privacy.fingerprint import content_hash
from ppdp_gui.engine.privacy.ledger import DatasetSummary, Ledger, LedgerEntry, default_ledger_path

__all__ = ["BudgetAccountant", "DatasetSummary", "Ledger", "LedgerEntry", "content_hash", "default_ledger_path",
           "split_budget"]
