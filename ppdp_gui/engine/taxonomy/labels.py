"""Labels the trees and the table share, with no imports: the table's schema (data/schema.py, above this package)
and the tree builders (icd.py, from_spec.py) read the same words from here."""

#: what a missing value of a categorical column reads as under the default policy: a leaf of the trees built for
#: such a column, and part of every stated list of values (data/domains.py)
MISSING_LABEL = "(missing)"
