"""ppdp_gui: publish privacy-preserving versions of sensitive tables."""

__version__ = "0.1.0"
