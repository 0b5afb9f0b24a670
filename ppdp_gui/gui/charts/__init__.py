"""pyqtgraph charts: utility against privacy from sweeps, and equivalence-class sizes. Mechanism-agnostic."""

from ppdp_gui.gui.charts.histogram_chart import HistogramChart, size_histogram
from ppdp_gui.gui.charts.sweep_chart import SweepChart

__all__ = ["HistogramChart", "SweepChart", "size_histogram"]
