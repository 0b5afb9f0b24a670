"""Taxonomy trees: model, ARX hierarchy CSV in/out, auto-builders, coverage and generalisation."""

from ppdp_gui.engine.taxonomy.tree import Taxonomy

__all__ = ["Taxonomy"]
