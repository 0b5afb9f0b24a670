"""Taxonomy editor widget: edit one column's generalisation tree, undoably; import/export ARX; build intervals."""

from ppdp_gui.gui.taxonomy_editor.editor import TaxonomyEditor
from ppdp_gui.gui.taxonomy_editor.model import TaxonomyModel

__all__ = ["TaxonomyEditor", "TaxonomyModel"]
